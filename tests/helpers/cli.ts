/** Runs the compiled `floe` CLI as a real process. */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';

export const CLI = fileURLToPath(new URL('../../server/cli.js', import.meta.url));

export interface RunningServer {
  readonly process: ChildProcess;
  readonly url: string;
  /** Everything printed to stdout up to the moment the server was listening. */
  readonly banner: string;
  stop(signal?: NodeJS.Signals): Promise<number | null>;
}

/** Starts `floe serve` and resolves once it prints where it serves (or rejects if it exits). */
export function startCli(args: readonly string[], env: NodeJS.ProcessEnv = {}): Promise<RunningServer> {
  const child = spawn(process.execPath, [CLI, 'serve', ...args], { env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  let err = '';
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`floe serve did not start in 30 s:\n${out}\n${err}`)), 30_000);
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
  const r = spawnSync(process.execPath, [CLI, ...args], { env: { ...process.env, ...env }, encoding: 'utf8', timeout: 60_000 });
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
