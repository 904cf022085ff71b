/** Runs the compiled `floe` CLI as a real process. */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';

export const CLI = fileURLToPath(new URL('../../server/cli.js', import.meta.url));

/**
 * `floe serve` and the admin commands at the test's own OS priority: password hashing and batch
 * fragments would otherwise run at nice 19 (hashing under SCHED_IDLE too) and starve while other
 * test files use the CPU (see `withTestPriorities` in tests/helpers/server.ts). A caller's `env`
 * may set them again.
 */
export const TEST_PRIORITY_ENV: Readonly<Record<string, string>> = {
  FLOE__PRINCIPALS__PASSWORD_HASHING__NICENESS: '0',
  FLOE__PRINCIPALS__PASSWORD_HASHING__IDLE_POLICY: 'false',
  FLOE__WORKLOAD__MLFQ__BACKGROUND_NICENESS: '0',
};

/**
 * How long `floe serve` may take to print its banner. A first start on a fresh data directory
 * (PGlite's initdb and every migration) took 100-140 s with a load average of 30 on 2 cores; the
 * bound is there to fail a server that never starts, not to measure one.
 */
const START_TIMEOUT_MS = 240_000;

export interface RunningServer {
  readonly process: ChildProcess;
  readonly url: string;
  /** Everything printed to stdout up to the moment the server was listening. */
  readonly banner: string;
  stop(signal?: NodeJS.Signals): Promise<number | null>;
}

/**
 * Starts `floe serve` and resolves once it prints where it serves (or rejects if it exits, or has
 * not started within `startTimeoutMs`, default `START_TIMEOUT_MS`, in which case it is killed).
 */
export function startCli(args: readonly string[], env: NodeJS.ProcessEnv = {}, options: { readonly startTimeoutMs?: number } = {}): Promise<RunningServer> {
  const child = spawn(process.execPath, [CLI, 'serve', ...args], { env: { ...process.env, ...TEST_PRIORITY_ENV, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  let err = '';
  const startTimeoutMs = options.startTimeoutMs ?? START_TIMEOUT_MS;
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`floe serve did not start in ${startTimeoutMs / 1000} s:\n${out}\n${err}`));
    }, startTimeoutMs);
    child.stderr.on('data', (d: Buffer) => (err += d.toString()));
    child.stdout.on('data', (d: Buffer) => {
      out += d.toString();
      const m = /serving on (https?:\/\/[^\s]+)/.exec(out);
      // The banner is written in one piece; wait for its trailing newline.
      if (m && out.endsWith('\n')) {
        clearTimeout(timer);
        resolve({
          process: child, url: m[1]!, banner: out,
          stop: (signal = 'SIGTERM') => new Promise((done) => {
            if (child.exitCode !== null) return done(child.exitCode);
            child.once('exit', (code) => done(code));
            child.kill(signal);
          }),
        });
      }
    });
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`floe serve exited with ${code}:\n${out}\n${err}`));
    });
  });
}

export function runCli(args: readonly string[], env: NodeJS.ProcessEnv = {}): { status: number | null; stdout: string; stderr: string } {
  // The same bound as a server's start: an admin command on a fresh data directory initialises it.
  const r = spawnSync(process.execPath, [CLI, ...args], { env: { ...process.env, ...TEST_PRIORITY_ENV, ...env }, encoding: 'utf8', timeout: START_TIMEOUT_MS });
  return { status: r.status, stdout: r.stdout, stderr: r.stderr };
}

/** The `export NAME=value` lines of a banner as an environment. */
export function exportsOf(text: string): Record<string, string> {
  const env: Record<string, string> = {};
  for (const m of text.matchAll(/export (\w+)=(\S+)/g)) env[m[1]!] = m[2]!;
  return env;
}

/** `client_id: …` / `client_secret: …` lines printed by the admin commands. */
export function credentialsOf(text: string): { clientId: string; clientSecret: string } {
  const id = /client_id:\s+(\S+)/.exec(text)?.[1];
  const secret = /client_secret:\s+(\S+)/.exec(text)?.[1];
  if (!id || !secret) throw new Error(`no credentials in:\n${text}`);
  return { clientId: id, clientSecret: secret };
}
