/**
 * A throwaway S3 store for tests: a one-node Ceph cluster (one monitor, one `memstore` OSD, one
 * RADOS Gateway) from Debian's packages (`ceph-mon`, `ceph-osd`, `radosgw`), started in a temp
 * directory per test suite and removed after it. RGW is a real S3 implementation: SigV4, multipart,
 * conditional writes, presigned URLs and STS `AssumeRole` (the user gets `roles=*` caps and the
 * gateway an `rgw sts key`), which an in-process fake would not enforce.
 *
 * Auth inside the cluster is off (`auth … required = none`), so no keyrings are needed; the S3 side
 * still checks signatures against the user's keys. Messenger v2 in `crc` mode, because `secure`
 * needs cephx. Everything binds to 127.0.0.1 (IPv6 may be missing here). Ready in about 10-15 s.
 *
 * Without the packages (or when the cluster cannot start) `onRgw` skips locally and fails with
 * CI=true, exactly as the PostgreSQL variant of the store-backed suites does.
 */
import { spawn, execFile, type ChildProcess } from 'node:child_process';
import { randomBytes, randomUUID } from 'node:crypto';
import { createWriteStream, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { promisify } from 'node:util';
import { CreateBucketCommand, S3Client } from '@aws-sdk/client-s3';
import type { Test } from 'tap';
import { onThrowawayService } from './throwaway-service.js';

const execFileAsync = promisify(execFile);

/** The region RGW's default zonegroup answers to (it accepts SigV4 scoped to it). */
export const RGW_REGION = 'us-east-1';

/**
 * Bounds for daemons and commands that hang, not speed targets: on a machine loaded by other test
 * files a Ceph command or the gateway's start can take minutes.
 */
const STARTUP_TIMEOUT_MS = 240_000;
const COMMAND_TIMEOUT_MS = 120_000;
const STOP_TIMEOUT_MS = 10_000;
const BINARIES = ['ceph-mon', 'ceph-osd', 'radosgw', 'radosgw-admin', 'monmaptool', 'ceph'] as const;

export interface RgwStore {
  /** `http://127.0.0.1:<port>`; needs path-style addressing. */
  readonly endpoint: string;
  readonly region: string;
  /** Keys of the S3 user `floe` (caps `roles=*`, so it may create roles and call STS). */
  readonly accessKeyId: string;
  readonly secretAccessKey: string;
  /** The cluster's directory (config, logs, daemon state). */
  readonly dir: string;
  /** An SDK client for the user, path-style, no retries beyond the SDK default. */
  client(): S3Client;
  /** Creates a bucket (names need 3+ characters). */
  createBucket(name: string): Promise<void>;
  /** Runs `radosgw-admin` against the cluster and returns its stdout (JSON for most commands). */
  admin(args: readonly string[]): Promise<string>;
  /** Stops the gateway only (to test an unreachable store); `stop` still cleans up. */
  stopGateway(): Promise<void>;
  /**
   * Starts the gateway again after `stopGateway`, on the same port with the same cluster (the
   * objects written before the stop are there), and resolves once it answers.
   */
  startGateway(): Promise<void>;
  /** Stops every daemon and removes the directory. Idempotent. */
  stop(): Promise<void>;
}

/** Why the store cannot run here, or undefined when the packages are installed. */
export function rgwUnavailableReason(): string | undefined {
  const pathDirs = (process.env.PATH ?? '/usr/bin:/bin').split(':');
  const missing = BINARIES.filter((b) => !pathDirs.some((d) => existsSync(path.join(d, b))));
  if (missing.length === 0) return undefined;
  return `Ceph RGW is not installed (missing ${missing.join(', ')}; apt-get install -y ceph-mon ceph-osd radosgw)`;
}

async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      const port = typeof address === 'object' && address !== null ? address.port : 0;
      server.close(() => resolve(port));
    });
  });
}

/** What a suite may change in the gateway's configuration. */
export interface RgwOptions {
  /**
   * Extra `[client.rgw]` settings, e.g. `{'rgw dns name': 'localhost'}` so that virtual-host
   * requests (`Host: <bucket>.localhost:<port>`) name their bucket in the host.
   */
  readonly gatewayConfig?: Readonly<Record<string, string>>;
}

function cephConf(dir: string, fsid: string, monPort: number, rgwPort: number, options: RgwOptions = {}): string {
  return `[global]
fsid = ${fsid}
mon host = [v2:127.0.0.1:${monPort}]
mon initial members = a
public addr = 127.0.0.1
cluster addr = 127.0.0.1
public network = 127.0.0.0/8
cluster network = 127.0.0.0/8
ms bind ipv4 = true
ms bind ipv6 = false
osd heartbeat addr = 127.0.0.1
auth cluster required = none
auth service required = none
auth client required = none
auth supported = none
ms mon client mode = crc
run dir = ${dir}/run
admin socket = ${dir}/run/$name.asok
pid file = ${dir}/run/$name.pid
log file = ${dir}/log/$name.log
keyring = ${dir}/keyring
osd pool default size = 1
osd pool default min size = 1
osd pool default pg num = 8
osd pool default pgp num = 8
osd pool default pg autoscale mode = off
osd crush chooseleaf type = 0
mon allow pool size one = true
mon allow pool delete = true
mon warn on pool no redundancy = false
mon data avail crit = 1
mon data avail warn = 2
[mon]
mon data = ${dir}/mon/$cluster-$id
[osd]
osd data = ${dir}/osd/$cluster-$id
osd objectstore = memstore
memstore device bytes = 2147483648
[client.rgw]
rgw frontends = beast endpoint=127.0.0.1:${rgwPort}
rgw data = ${dir}/rgw
rgw thread pool size = 64
rgw sts key = ${randomBytes(8).toString('hex')}
rgw s3 auth use sts = true
${Object.entries(options.gatewayConfig ?? {}).map(([k, v]) => `${k} = ${v}\n`).join('')}`;
}

/** Starts a cluster and returns once the gateway answers and the user exists. */
export async function startRgw(options: RgwOptions = {}): Promise<RgwStore> {
  const unavailable = rgwUnavailableReason();
  if (unavailable !== undefined) throw new Error(unavailable);
  const dir = mkdtempSync(path.join(tmpdir(), 'floe-rgw-'));
  for (const d of ['run', 'log', 'mon', 'osd/ceph-0', 'rgw']) mkdirSync(path.join(dir, d), { recursive: true });
  const conf = path.join(dir, 'ceph.conf');
  const fsid = randomUUID();
  const [monPort, rgwPort] = [await freePort(), await freePort()];
  writeFileSync(conf, cephConf(dir, fsid, monPort, rgwPort, options));
  // An empty keyring file: the daemons look for one even with auth off.
  writeFileSync(path.join(dir, 'keyring'), '');

  const daemons: { name: string; child: ChildProcess }[] = [];
  const killAll = (): void => {
    for (const d of daemons) if (d.child.exitCode === null && d.child.signalCode === null) d.child.kill('SIGKILL');
  };
  // A test process that dies without teardown must not leave daemons behind.
  process.once('exit', killAll);
  const run = async (cmd: string, args: readonly string[], timeoutMs = COMMAND_TIMEOUT_MS): Promise<string> => {
    const { stdout } = await execFileAsync(cmd, ['-c', conf, ...args], { timeout: timeoutMs, maxBuffer: 16 << 20 });
    return stdout;
  };
  const daemon = (name: string, cmd: string, args: readonly string[]): void => {
    const out = createWriteStream(path.join(dir, 'log', `${name}.out`));
    const child = spawn(cmd, ['-c', conf, '-f', ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
    child.stdout?.pipe(out);
    child.stderr?.pipe(out);
    daemons.push({ name, child });
  };
  const logTail = (name: string): string => {
    for (const f of [`${name}.out`]) {
      try {
        return readFileSync(path.join(dir, 'log', f), 'utf8').split('\n').filter((l) => l.trim() !== '').slice(-8).join('\n');
      } catch {
        /* no log yet */
      }
    }
    return '';
  };
  const dead = (): string | undefined => {
    const d = daemons.find((x) => x.child.exitCode !== null || x.child.signalCode !== null);
    return d === undefined ? undefined : `${d.name} exited (${d.child.exitCode ?? d.child.signalCode}): ${logTail(d.name)}`;
  };

  const stopDaemon = async (d: { name: string; child: ChildProcess }): Promise<void> => {
    if (d.child.exitCode !== null || d.child.signalCode !== null) return;
    const exited = new Promise<void>((resolve) => d.child.once('exit', () => resolve()));
    d.child.kill('SIGTERM');
    const timer = setTimeout(() => d.child.kill('SIGKILL'), STOP_TIMEOUT_MS);
    await exited;
    clearTimeout(timer);
  };
  let stopped = false;
  const stop = async (): Promise<void> => {
    if (stopped) return;
    stopped = true;
    // Gateway first, then the OSD, then the monitor: each depends on the next.
    for (const d of [...daemons].reverse()) await stopDaemon(d);
    process.removeListener('exit', killAll);
    rmSync(dir, { recursive: true, force: true });
  };

  try {
    await execFileAsync('monmaptool', ['--create', '--addv', 'a', `[v2:127.0.0.1:${monPort}]`, '--fsid', fsid, path.join(dir, 'monmap')]);
    await run('ceph-mon', ['--mkfs', '-i', 'a', '--monmap', path.join(dir, 'monmap')]);
    daemon('mon', 'ceph-mon', ['-i', 'a']);
    const osdId = (await run('ceph', ['--connect-timeout', '90', 'osd', 'create'])).trim();
    if (osdId !== '0') throw new Error(`unexpected OSD id ${osdId}`);
    await run('ceph-osd', ['-i', '0', '--mkfs']);
    daemon('osd', 'ceph-osd', ['-i', '0']);
    const endpoint = `http://127.0.0.1:${rgwPort}`;
    const startGateway = async (): Promise<void> => {
      daemon('rgw', 'radosgw', ['-n', 'client.rgw']);
      const deadline = Date.now() + STARTUP_TIMEOUT_MS;
      for (;;) {
        const why = dead();
        if (why !== undefined) throw new Error(why);
        try {
          const r = await fetch(`${endpoint}/`, { signal: AbortSignal.timeout(2000) });
          await r.arrayBuffer();
          if (r.status === 200) break;
        } catch {
          /* not listening yet */
        }
        if (Date.now() > deadline) throw new Error(`RGW did not answer within ${STARTUP_TIMEOUT_MS} ms: ${logTail('rgw')}`);
        await new Promise((r) => setTimeout(r, 250));
      }
    };
    await startGateway();
    const accessKeyId = `FLOE${randomBytes(8).toString('hex').toUpperCase()}`;
    const secretAccessKey = randomBytes(20).toString('base64url');
    await run('radosgw-admin', ['user', 'create', '--uid=floe', '--display-name=Floe tests', `--access-key=${accessKeyId}`, `--secret=${secretAccessKey}`]);
    await run('radosgw-admin', ['caps', 'add', '--uid=floe', '--caps=roles=*;users=*']);
    const client = (): S3Client => new S3Client({ endpoint, region: RGW_REGION, forcePathStyle: true, credentials: { accessKeyId, secretAccessKey } });
    return {
      endpoint, region: RGW_REGION, accessKeyId, secretAccessKey, dir, client,
      async createBucket(name) {
        const c = client();
        try {
          await c.send(new CreateBucketCommand({ Bucket: name }));
        } finally {
          c.destroy();
        }
      },
      admin: (args) => run('radosgw-admin', args),
      async stopGateway() {
        for (const gw of daemons.filter((d) => d.name === 'rgw')) await stopDaemon(gw);
      },
      async startGateway() {
        if (stopped) throw new Error('the cluster is stopped');
        const gw = daemons.filter((d) => d.name === 'rgw');
        if (gw.some((d) => d.child.exitCode === null && d.child.signalCode === null)) return;
        // The stopped gateway's entry goes, so that `dead()` does not report its exit.
        for (const d of gw) daemons.splice(daemons.indexOf(d), 1);
        await startGateway();
      },
      stop,
    };
  } catch (e) {
    await stop();
    throw e;
  }
}

/**
 * Runs `body` as a subtest with a fresh RGW started for it and stopped after it. The subtest is
 * skipped (locally) or failed (CI=true) when the store cannot start, with the reason.
 */
export async function onRgw(t: Test, name: string, body: (t: Test, rgw: RgwStore) => Promise<void>, options: RgwOptions = {}): Promise<void> {
  return onThrowawayService(t, name, { what: 'Ceph RGW', unavailableReason: rgwUnavailableReason, start: () => startRgw(options) }, body);
}
