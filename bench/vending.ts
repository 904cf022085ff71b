/**
 * Credential vending and remote signing over real HTTP on loopback, with the server in its own
 * process (`floe serve`) on PostgreSQL and its catalog on a throwaway Ceph RGW with STS:
 * - vended loads (GET …/tables/{t} with `X-Iceberg-Access-Delegation: vended-credentials`) at 32
 *   clients with the STS session cache warm: loads/s and p99;
 * - sign requests (POST …/tables/{t}/sign, a GET of a table file) at 32 clients: requests/s, p99;
 * - a baseline in the same run: the plain load of the same table at 32 clients (the response
 *   cache serves it), and the ratios to it;
 * - the machine's floor in the same run: `GET /health` at 32 clients (token check, no table, a
 *   few bytes back), the least an authenticated request costs here; its p99 is the shortest tail
 *   any route can have on this machine with the load generator beside the server;
 * - the same vended load with the session cache off (a second server with
 *   `storage.vending.cache_sessions = false`, one STS AssumeRole per load): p99 and the ratio.
 * Each measurement runs BENCH_REPEATS times (default 3) for BENCH_SECONDS (default 3), the three
 * of the warm server interleaved, and keeps the median run, as the machine may be shared. Each run
 * also reports CPU time per request of the server, of PostgreSQL's backends for the bench's
 * database and of this process (the load generator), and the load average at start and end:
 * on a loaded machine compare CPU per request and ratios to the baseline, not absolute rates.
 * Targets: vended loads >= 2,000/s with p99 <= 20 ms; signs >= 5,000/s with p99 <= 10 ms.
 *
 * Profiling: BENCH_CPU_PROF_DIR=<dir> writes a V8 CPU profile of each server when it stops;
 * BENCH_ONLY=plain,vended,sign,cold measures only those and prints them (no result file).
 */
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { Pool } from 'undici';
import { createPostgresDatabase } from '../tests/helpers/stores.js';
import { startCli, type RunningServer } from '../tests/helpers/cli.js';
import { startRgw } from '../tests/helpers/rgw.js';
import { prepareVendingRole, vendingProfile } from '../tests/helpers/vending.js';
import { atLeast, atMost, percentile, writeBenchResult } from './report.js';

const CLIENT_ID = 'floe_bench_admin';
const CLIENT_SECRET = 'fcs_bench-secret-0123456789abcdefghij';
const SECONDS = Number(process.env.BENCH_SECONDS ?? 3);
const REPEATS = Number(process.env.BENCH_REPEATS ?? 3);
const CLIENTS = 32;
const BUCKET = 'benchvending';
const PROFILE_DIR = process.env.BENCH_CPU_PROF_DIR;
const CPU_PROFILE_HOOK = new URL('./support/cpu-profile.js', import.meta.url).href;
/**
 * BENCH_ONLY=floor|plain|vended|sign|cold (comma-separated) measures only those, for profiling one path;
 * such a run writes no result file.
 */
const ONLY = process.env.BENCH_ONLY !== undefined ? new Set(process.env.BENCH_ONLY.split(',')) : undefined;
const EMPTY: Run = { requests: 0, failures: 0, perSecond: Number.NaN, p50Ms: Number.NaN, p99Ms: Number.NaN, serverCpuUsPerRequest: undefined, clientCpuUsPerRequest: Number.NaN, storeCpuUsPerRequest: undefined };
/** The bench's PostgreSQL database, whose backends' CPU each run counts. */
let database: string | undefined;

interface Run {
  readonly requests: number;
  readonly failures: number;
  readonly perSecond: number;
  readonly p50Ms: number;
  readonly p99Ms: number;
  /**
   * CPU time (user + system) per request, in microseconds, of the server process and of this one
   * (the load generator). Throughput on a shared machine depends on what else runs; CPU per request
   * does much less, so it is what to compare between runs.
   */
  readonly serverCpuUsPerRequest: number | undefined;
  readonly clientCpuUsPerRequest: number;
  /** The same for PostgreSQL's backends serving the bench's database (audit inserts, table lookups). */
  readonly storeCpuUsPerRequest: number | undefined;
  readonly allRunsPerSecond?: readonly number[];
}

/** A process's CPU time (user + system) so far in microseconds, from /proc (Linux), else undefined. */
function processCpuUs(pid: number | undefined): number | undefined {
  if (pid === undefined) return undefined;
  try {
    // Fields after the command (which may hold spaces) start at state; utime and stime are 14 and 15.
    const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
    return ((Number(fields[11]) + Number(fields[12])) / CLOCK_TICKS_PER_SECOND) * 1e6;
  } catch {
    return undefined;
  }
}
/** USER_HZ: 100 on every Linux Node supports. */
const CLOCK_TICKS_PER_SECOND = 100;

/**
 * CPU time so far of each PostgreSQL backend connected to `database` (a local server: its process
 * titles read `postgres: <cluster>: <user> <database> <client> <state>`), by pid; empty elsewhere.
 */
function storeCpuUs(database: string): ReadonlyMap<number, number> {
  const out = new Map<number, number>();
  let pids: string[];
  try {
    pids = readdirSync('/proc').filter((d) => /^\d+$/.test(d));
  } catch {
    return out;
  }
  for (const pid of pids) {
    try {
      const title = readFileSync(`/proc/${pid}/cmdline`, 'utf8');
      if (!title.startsWith('postgres: ') || !title.includes(` ${database} `)) continue;
      const cpu = processCpuUs(Number(pid));
      if (cpu !== undefined) out.set(Number(pid), cpu);
    } catch {
      // gone meanwhile
    }
  }
  return out;
}

function storeCpuSince(database: string | undefined, before: ReadonlyMap<number, number> | undefined): number | undefined {
  if (database === undefined || before === undefined) return undefined;
  let total = 0;
  for (const [pid, cpu] of storeCpuUs(database)) total += cpu - (before.get(pid) ?? 0);
  return total;
}

/** Runs `op` from CLIENTS loops for SECONDS; `op` resolves true for a success. */
async function measureOnce(serverPid: number | undefined, op: () => Promise<boolean>): Promise<Run> {
  const latencies: number[] = [];
  let failures = 0;
  const storeCpu0 = database !== undefined ? storeCpuUs(database) : undefined;
  const serverCpu0 = processCpuUs(serverPid);
  const clientCpu0 = process.cpuUsage();
  const start = performance.now();
  const end = start + SECONDS * 1000;
  await Promise.all(Array.from({ length: CLIENTS }, async () => {
    while (performance.now() < end) {
      const t0 = performance.now();
      if (await op()) latencies.push(performance.now() - t0);
      else failures++;
    }
  }));
  const elapsed = (performance.now() - start) / 1000;
  const clientCpu = process.cpuUsage(clientCpu0);
  const serverCpu1 = processCpuUs(serverPid);
  // The audit rows of this run are written behind: wait for the last batch before reading the store's CPU.
  await new Promise((r) => setTimeout(r, 300));
  const storeCpu = storeCpuSince(database, storeCpu0);
  const total = latencies.length + failures;
  latencies.sort((a, b) => a - b);
  return {
    requests: latencies.length, failures, perSecond: latencies.length / elapsed, p50Ms: percentile(latencies, 50), p99Ms: percentile(latencies, 99),
    serverCpuUsPerRequest: serverCpu0 !== undefined && serverCpu1 !== undefined ? (serverCpu1 - serverCpu0) / total : undefined,
    clientCpuUsPerRequest: (clientCpu.user + clientCpu.system) / total,
    storeCpuUsPerRequest: storeCpu !== undefined ? storeCpu / total : undefined,
  };
}

type Measured = 'floor' | 'plain' | 'vended' | 'sign' | 'cold';

/**
 * Measures each op REPEATS times after one warm-up run, interleaved (plain, vended, sign, plain,
 * …) so that each sees the same share of whatever else the shared machine runs, and keeps each
 * op's median run by throughput.
 */
async function measureInterleaved(serverPid: number | undefined, ops: ReadonlyMap<Measured, () => Promise<boolean>>): Promise<ReadonlyMap<Measured, Run>> {
  const chosen = [...ops].filter(([what]) => ONLY === undefined || ONLY.has(what));
  for (const [, op] of chosen) await measureOnce(serverPid, op); // warm-up (JIT, connections, caches)
  const runs = new Map<Measured, Run[]>(chosen.map(([what]) => [what, []]));
  for (let i = 0; i < REPEATS; i++) {
    for (const [what, op] of chosen) runs.get(what)!.push(await measureOnce(serverPid, op));
  }
  const out = new Map<Measured, Run>();
  for (const [what] of ops) {
    const list = runs.get(what);
    if (list === undefined) {
      out.set(what, EMPTY);
      continue;
    }
    const sorted = [...list].sort((a, b) => a.perSecond - b.perSecond);
    out.set(what, { ...sorted[Math.floor(sorted.length / 2)]!, allRunsPerSecond: list.map((r) => Math.round(r.perSecond)) });
  }
  return out;
}

async function main(): Promise<void> {
  const loadStart = loadavg()[0];
  const db = await createPostgresDatabase();
  if (db === undefined) throw new Error('bench/vending needs PostgreSQL on 127.0.0.1:5432');
  database = new URL(db.url).pathname.slice(1);
  const rgw = await startRgw();
  const dataDir = mkdtempSync(join(tmpdir(), 'floe-bench-vending-'));
  const servers: RunningServer[] = [];
  const pools: Pool[] = [];
  const serve = async (cacheSessions: boolean): Promise<{ server: RunningServer; pool: Pool; token: string }> => {
    const server = await startCli(['--port', '0', '--data-dir', dataDir], {
      FLOE_DATABASE_URL: db.url, FLOE__STORE__POOL_SIZE: '32', UV_THREADPOOL_SIZE: process.env.UV_THREADPOOL_SIZE ?? '16', FLOE_LOG_LEVEL: 'silent',
      FLOE_BOOTSTRAP_CLIENT_ID: CLIENT_ID, FLOE_BOOTSTRAP_CLIENT_SECRET: CLIENT_SECRET, FLOE__STORAGE__VENDING__CACHE_SESSIONS: String(cacheSessions),
      AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: 'true',
      // BENCH_CPU_PROF_DIR=<dir>: the servers write a V8 CPU profile there when they stop.
      ...(PROFILE_DIR !== undefined ? { NODE_OPTIONS: `${process.env.NODE_OPTIONS ?? ''} --import ${CPU_PROFILE_HOOK}`, BENCH_CPU_PROF_DIR: PROFILE_DIR } : {}),
    });
    servers.push(server);
    const pool = new Pool(server.url, { connections: CLIENTS, pipelining: 1 });
    pools.push(pool);
    const r = await pool.request({ method: 'POST', path: '/v1/oauth/tokens', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: new URLSearchParams({ grant_type: 'client_credentials', client_id: CLIENT_ID, client_secret: CLIENT_SECRET }).toString() });
    return { server, pool, token: ((await r.body.json()) as { access_token: string }).access_token };
  };
  try {
    await prepareVendingRole(rgw, BUCKET);
    const warm = await serve(true);
    const call = async (pool: Pool, token: string, method: 'GET' | 'POST', path: string, body?: unknown, headers: Record<string, string> = {}): Promise<{ status: number; json: any }> => {
      const r = await pool.request({ method, path, headers: { authorization: `Bearer ${token}`, ...headers, ...(body !== undefined ? { 'content-type': 'application/json' } : {}) }, ...(body !== undefined ? { body: JSON.stringify(body) } : {}) });
      const text = await r.body.text();
      return { status: r.statusCode, json: text === '' ? undefined : JSON.parse(text) };
    };
    const created = await call(warm.pool, warm.token, 'POST', '/v1/catalogs', { name: 'lake', 'storage-profile': vendingProfile(rgw, BUCKET, 'wh') });
    if (created.status !== 201) throw new Error(`catalog: ${created.status} ${JSON.stringify(created.json)}`);
    await call(warm.pool, warm.token, 'POST', '/v1/lake/namespaces', { namespace: ['bench'] });
    const schema = { type: 'struct', 'schema-id': 0, fields: [{ id: 1, name: 'id', type: 'long', required: true }, { id: 2, name: 'v', type: 'string', required: false }] };
    const table = await call(warm.pool, warm.token, 'POST', '/v1/lake/namespaces/bench/tables', { name: 'events', schema });
    if (table.status !== 200) throw new Error(`table: ${table.status} ${JSON.stringify(table.json)}`);
    const path = '/v1/lake/namespaces/bench/tables/events';
    const metadataKey = (table.json['metadata-location'] as string).replace(/^s3:\/\/[^/]+\//, '');
    const signBody = JSON.stringify({ region: rgw.region, method: 'GET', uri: `${rgw.endpoint}/${BUCKET}/${metadataKey}`, headers: { 'x-amz-content-sha256': ['UNSIGNED-PAYLOAD'] } });

    const request = (pool: Pool, token: string, method: 'GET' | 'POST', p: string, extra: Record<string, string>, body?: string) => async (): Promise<boolean> => {
      const r = await pool.request({ method, path: p, headers: { authorization: `Bearer ${token}`, ...extra }, ...(body !== undefined ? { body } : {}) });
      await r.body.dump();
      return r.statusCode === 200;
    };
    const vended = { 'x-iceberg-access-delegation': 'vended-credentials' };
    if (!(await request(warm.pool, warm.token, 'GET', path, vended)())) throw new Error('a vended load failed');
    if (!(await request(warm.pool, warm.token, 'POST', `${path}/sign`, { 'content-type': 'application/json' }, signBody)())) throw new Error('a sign request failed');

    const warmRuns = await measureInterleaved(warm.server.process.pid, new Map([
      ['floor', request(warm.pool, warm.token, 'GET', '/health', {})],
      ['plain', request(warm.pool, warm.token, 'GET', path, {})],
      ['vended', request(warm.pool, warm.token, 'GET', path, vended)],
      ['sign', request(warm.pool, warm.token, 'POST', `${path}/sign`, { 'content-type': 'application/json' }, signBody)],
    ]));
    const floor = warmRuns.get('floor')!;
    const baseline = warmRuns.get('plain')!;
    const warmLoads = warmRuns.get('vended')!;
    const signs = warmRuns.get('sign')!;
    await warm.pool.close();
    await warm.server.stop();

    let coldLoads = EMPTY;
    if (ONLY === undefined || ONLY.has('cold')) {
      const cold = await serve(false);
      coldLoads = (await measureInterleaved(cold.server.process.pid, new Map([['cold', request(cold.pool, cold.token, 'GET', path, vended)]]))).get('cold')!;
    }
    const cpu = (r: Run): string => `CPU/request: server ${r.serverCpuUsPerRequest?.toFixed(0) ?? '?'} µs, PostgreSQL ${r.storeCpuUsPerRequest?.toFixed(0) ?? '?'} µs, client ${r.clientCpuUsPerRequest.toFixed(0)} µs`;
    if (ONLY !== undefined) {
      // A partial run (profiling one path): printed, not written as the benchmark's result.
      for (const [name, r] of Object.entries({ floor, plain: baseline, vended: warmLoads, sign: signs, cold: coldLoads })) {
        if (ONLY.has(name)) console.log(`${name}: ${Math.round(r.perSecond)}/s p50 ${r.p50Ms.toFixed(1)} ms p99 ${r.p99Ms.toFixed(1)} ms, ${cpu(r)}, runs ${JSON.stringify(r.allRunsPerSecond)}`);
      }
      console.log(`load average (1 min): start ${loadStart}, end ${loadavg()[0]}`);
      return;
    }

    const metrics = {
      clients: CLIENTS, seconds_per_run: SECONDS, repeats: REPEATS,
      floor_health: floor, baseline_plain_load: baseline, vended_load_warm: warmLoads, sign: signs, vended_load_cache_off: coldLoads,
      vended_load_warm_vs_plain_throughput: warmLoads.perSecond / baseline.perSecond,
      sign_vs_plain_throughput: signs.perSecond / baseline.perSecond,
      vended_load_warm_vs_plain_server_cpu: (warmLoads.serverCpuUsPerRequest ?? Number.NaN) / (baseline.serverCpuUsPerRequest ?? Number.NaN),
      sign_vs_plain_server_cpu: (signs.serverCpuUsPerRequest ?? Number.NaN) / (baseline.serverCpuUsPerRequest ?? Number.NaN),
      // The tails against the machine's floor (the same 32 clients on GET /health, same run).
      vended_load_p99_vs_floor_p99: warmLoads.p99Ms / floor.p99Ms,
      sign_p99_vs_floor_p99: signs.p99Ms / floor.p99Ms,
      vended_load_p99_cache_off_vs_warm: coldLoads.p99Ms / warmLoads.p99Ms,
      vended_load_p50_cache_off_vs_warm: coldLoads.p50Ms / warmLoads.p50Ms,
      // The machine is shared: its load when the run started and ended says how far to trust the tails.
      load_average_1m: { start: loadStart, end: loadavg()[0] },
    };
    writeBenchResult('vending', metrics, {
      vended_loads_per_s: atLeast(warmLoads.perSecond, 2000),
      vended_load_p99_ms: atMost(warmLoads.p99Ms, 20),
      signs_per_s: atLeast(signs.perSecond, 5000),
      sign_p99_ms: atMost(signs.p99Ms, 10),
    }, `vended load ${Math.round(warmLoads.perSecond)}/s p99 ${warmLoads.p99Ms.toFixed(1)} ms (cache off p99 ${coldLoads.p99Ms.toFixed(1)} ms, ${(coldLoads.p99Ms / warmLoads.p99Ms).toFixed(1)}x); sign ${Math.round(signs.perSecond)}/s p99 ${signs.p99Ms.toFixed(1)} ms; baseline plain load ${Math.round(baseline.perSecond)}/s p99 ${baseline.p99Ms.toFixed(1)} ms; floor GET /health ${Math.round(floor.perSecond)}/s p99 ${floor.p99Ms.toFixed(1)} ms; server CPU/request plain ${baseline.serverCpuUsPerRequest?.toFixed(0) ?? '?'} µs, vended ${warmLoads.serverCpuUsPerRequest?.toFixed(0) ?? '?'} µs, sign ${signs.serverCpuUsPerRequest?.toFixed(0) ?? '?'} µs; load average ${loadStart} → ${loadavg()[0]}`);
  } finally {
    for (const p of pools) await p.close().catch(() => undefined);
    for (const s of servers) await s.stop().catch(() => undefined);
    await rgw.stop();
    await db.drop();
    rmSync(dataDir, { recursive: true, force: true });
  }
}

await main();
