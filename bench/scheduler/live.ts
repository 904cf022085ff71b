/**
 * bench/scheduler, part 3: live over HTTP on loopback against a running Floe (real server, PGlite
 * store, DuckDB worker pool), TPC-H sf0.01 loaded through SQL (CREATE TABLE + INSERT … VALUES from
 * the `.tbl.gz` files, then a 100× lineitem by CREATE TABLE … AS SELECT … FROM lineitem, range(100)).
 *
 * - interactive TPC-H Q6 latency alone, then while four batch streams (TPC-H Q1, Q3, Q9, Q18 over the
 *   100× lineitem, `svc.workload_class = batch`) saturate the workers: the MLFQ (time-sliced fragments,
 *   a slot reserved to interactive work, batch on background-lane threads at a lower OS priority)
 *   against FIFO (the same server with no time slicing, one effective level, no reserved slot and
 *   one lane: each fragment runs to its end in arrival order, what a bare worker pool does).
 *   Idle and loaded segments alternate (`rounds`), so a change in the machine's other load during
 *   the run falls on both alike. Target: p99 under load ≤ 1.5× idle;
 * - throughput of two weighted groups (weights 3 and 1 under a parent that runs 4 at once, 8 clients
 *   each, a half-second table-less query so the groups' queues stay full). Target: within ±10% of 3:1;
 * - the admission decision, timed inside the server for every query of the run: `admit`, and
 *   `rejectEarly`, which a query meets first (before planning: it answers a full queue). Judged on
 *   p99(admit) + p99(rejectEarly), a bound on one query's decision time. Target ≤ 1 ms;
 * - queue-full rejection end to end (HTTP request to 429 answer) of TPC-H Q6, a query that reads a
 *   table: the rejection comes before any catalog or store work of the query. Target p99 ≤ 5 ms.
 *
 * Wall clock on a shared, loaded 2-core machine: noisy.
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gunzipSync } from 'node:zlib';
import { Pool } from 'undici';
import { buildServer } from '../../server/app.js';
import { DEFAULT_CONFIG, validateConfig, type FloeConfig } from '../../server/config.js';
import { openState, type FloeState } from '../../server/state.js';
import type { WorkloadConfigSpec } from '../../engine/wlm/config.js';
import { percentile } from '../report.js';
import { createPostgresDatabase } from '../../tests/helpers/stores.js';

const DATA = new URL('../../../../shared/data/tpch/', import.meta.url).pathname;
const CLIENT_ID = 'floe_bench_admin';
const CLIENT_SECRET = 'fcs_bench-secret-0123456789abcdefghij';

/** TPC-H columns with the Iceberg types the tables are created with. */
const TABLES: Record<string, string> = {
  region: 'r_regionkey int, r_name string, r_comment string',
  nation: 'n_nationkey int, n_name string, n_regionkey int, n_comment string',
  supplier: 's_suppkey bigint, s_name string, s_address string, s_nationkey int, s_phone string, s_acctbal decimal(15,2), s_comment string',
  customer: 'c_custkey bigint, c_name string, c_address string, c_nationkey int, c_phone string, c_acctbal decimal(15,2), c_mktsegment string, c_comment string',
  part: 'p_partkey bigint, p_name string, p_mfgr string, p_brand string, p_type string, p_size int, p_container string, p_retailprice decimal(15,2), p_comment string',
  partsupp: 'ps_partkey bigint, ps_suppkey bigint, ps_availqty bigint, ps_supplycost decimal(15,2), ps_comment string',
  orders: 'o_orderkey bigint, o_custkey bigint, o_orderstatus string, o_totalprice decimal(15,2), o_orderdate date, o_orderpriority string, o_clerk string, o_shippriority int, o_comment string',
  lineitem: 'l_orderkey bigint, l_partkey bigint, l_suppkey bigint, l_linenumber int, l_quantity decimal(15,2), l_extendedprice decimal(15,2), l_discount decimal(15,2), l_tax decimal(15,2), l_returnflag string, l_linestatus string, l_shipdate date, l_commitdate date, l_receiptdate date, l_shipinstruct string, l_shipmode string, l_comment string',
};

const tpchQuery = (n: string): string => readFileSync(`${DATA}queries/q${n}.sql`, 'utf8').trim().replace(/;$/, '');
const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));
const r2 = (v: number) => Math.round(v * 100) / 100;

export interface Latencies { readonly count: number; readonly p50Ms: number; readonly p99Ms: number; readonly meanMs: number }
const summarize = (xs: readonly number[]): Latencies => {
  const s = [...xs].sort((a, b) => a - b);
  return { count: s.length, p50Ms: r2(percentile(s, 50)), p99Ms: r2(percentile(s, 99)), meanMs: r2(s.reduce((a, b) => a + b, 0) / Math.max(1, s.length)) };
};

/** The operator's workload section of the run; `fifo` turns time slicing off and keeps every query on one level. */
function workload(kind: 'mlfq' | 'fifo', quantumMs: number): WorkloadConfigSpec {
  return {
    resource_groups: {
      root: {
        subgroups: [
          { name: 'dashboards' },
          { name: 'etl' },
          { name: 'shared', hard_concurrency_limit: 4, scheduling_policy: 'weighted', subgroups: [{ name: 'a', scheduling_weight: 3 }, { name: 'b', scheduling_weight: 1 }] },
          { name: 'tiny', hard_concurrency_limit: 1, max_queued_queries: 0 },
        ],
      },
    },
    routing_rules: [
      { match_source: 'dashboard', target_group: 'root.dashboards' },
      { match_source: 'etl', target_group: 'root.etl' },
      { match_source: 'a', target_group: 'root.shared.a' },
      { match_source: 'b', target_group: 'root.shared.b' },
      { match_source: 'tiny', target_group: 'root.tiny' },
    ],
    // FIFO: no time slicing, every query on one level, no High-priority precedence, no reserved
    // slot, every worker thread at the server's priority.
    ...(kind === 'mlfq'
      ? { mlfq: { quantum_ms: quantumMs } }
      : {
        mlfq: { quantum_ms: 60_000, level_thresholds_seconds: [0, 1_000_000, 2_000_000, 3_000_000, 4_000_000], interactive_slots: 0, background_niceness: 0 },
        classes: { interactive: { priority: 'normal' } },
      }),
  };
}

interface LiveServer {
  readonly url: string;
  readonly state: FloeState;
  readonly token: string;
  readonly admitMs: number[];
  readonly rejectEarlyMs: number[];
  query(sql: string, opts?: { source?: string; session?: Record<string, string>; timeoutMs?: number; signal?: AbortSignal }): Promise<{ status: number; body: Record<string, unknown>; ms: number }>;
  close(): Promise<void>;
}

async function startServer(dataDir: string, kind: 'mlfq' | 'fifo', quantumMs: number, workers: number, databaseUrl: string | null): Promise<LiveServer> {
  const base: FloeConfig = {
    ...DEFAULT_CONFIG, data_dir: dataDir, logging: { level: 'silent' },
    store: { ...DEFAULT_CONFIG.store, database_url: databaseUrl },
    query: { ...DEFAULT_CONFIG.query, workers },
    workload: workload(kind, quantumMs),
  };
  const config = validateConfig(base);
  const state = await openState(config, { keyReloadIntervalMs: 0, bootstrapClientId: CLIENT_ID, bootstrapClientSecret: CLIENT_SECRET });
  // Time each admission decision inside the server (the bench's own wrapper, not the product's):
  // `admit`, and `rejectEarly`, which decides for a full queue before the query is planned.
  const admitMs: number[] = [];
  const rejectEarlyMs: number[] = [];
  const admit = state.wlm.admit.bind(state.wlm);
  state.wlm.admit = (request, options) => {
    const t0 = performance.now();
    const ticket = admit(request, options);
    admitMs.push(performance.now() - t0);
    return ticket;
  };
  const rejectEarly = state.wlm.rejectEarly.bind(state.wlm);
  state.wlm.rejectEarly = (request) => {
    const t0 = performance.now();
    const rejected = rejectEarly(request);
    rejectEarlyMs.push(performance.now() - t0);
    return rejected;
  };
  const app = await buildServer(state, { logger: false });
  const address = await app.listen({ host: '127.0.0.1', port: 0 });
  const form = new URLSearchParams({ grant_type: 'client_credentials', client_id: CLIENT_ID, client_secret: CLIENT_SECRET });
  const tr = await fetch(`${address}/v1/oauth/tokens`, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: form.toString() });
  const token = ((await tr.json()) as { access_token: string }).access_token;
  // The client shares this process's event loop with the server, so it is a keep-alive undici pool
  // (`request`), not `fetch`, whose WHATWG streams cost the loop as much as the server's own answer
  // to a rejected query does.
  const pool = new Pool(address, { connections: 64, pipelining: 1 });
  return {
    url: address, state, token, admitMs, rejectEarlyMs,
    async query(sql, opts = {}) {
      const t0 = performance.now();
      const r = await pool.request({
        method: 'POST', path: '/api/query', ...(opts.signal ? { signal: opts.signal } : {}),
        headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json', ...(opts.source ? { 'x-floe-source': opts.source } : {}) },
        body: JSON.stringify({ sql, schema: 'tpch', ...(opts.session ? { session: opts.session } : {}), ...(opts.timeoutMs ? { timeout_ms: opts.timeoutMs } : {}) }),
      });
      const body = (await r.body.json()) as Record<string, unknown>;
      return { status: r.statusCode, body, ms: performance.now() - t0 };
    },
    async close() {
      await pool.close();
      await app.close();
      await state.close();
    },
  };
}

/** A value of a `.tbl` field as a SQL literal of the column's type. */
function literal(value: string, type: string): string {
  if (type === 'string') return `'${value.replaceAll("'", "''")}'`;
  if (type === 'date') return `DATE '${value}'`;
  return value;
}

async function loadTpch(s: LiveServer): Promise<{ rows: number; ms: number }> {
  const t0 = performance.now();
  const ok = async (sql: string): Promise<void> => {
    const r = await s.query(sql);
    if (r.status !== 200) throw new Error(`${sql.slice(0, 80)}: ${r.status} ${JSON.stringify(r.body)}`);
  };
  await ok('CREATE SCHEMA tpch');
  let rows = 0;
  for (const [name, columns] of Object.entries(TABLES)) {
    await ok(`CREATE TABLE tpch.${name} (${columns})`);
    const types = columns.split(', ').map((c) => c.split(' ').slice(1).join(' '));
    const lines = gunzipSync(readFileSync(`${DATA}sf0.01/${name}.tbl.gz`)).toString('utf8').split('\n').filter((l) => l.length > 0);
    for (let at = 0; at < lines.length; at += 5000) {
      const values = lines.slice(at, at + 5000).map((line) => `(${line.split('|').slice(0, types.length).map((v, i) => literal(v, types[i]!)).join(', ')})`);
      await ok(`INSERT INTO tpch.${name} VALUES ${values.join(', ')}`);
    }
    rows += lines.length;
  }
  await ok(`CREATE TABLE tpch.lineitem_big AS SELECT l.* FROM tpch.lineitem l, range(${BATCH_SCALE}) r(i)`);
  return { rows, ms: Math.round(performance.now() - t0) };
}

const INTERACTIVE = tpchQuery('06');
const BATCH_NAMES = ['q01', 'q03', 'q09', 'q18'];
/** The batch queries read lineitem × this (sf0.01 × 100 ≈ 6M rows: each query needs more than a second of CPU). */
const BATCH_SCALE = 100;
const BATCH = ['01', '03', '09', '18'].map((n) => tpchQuery(n).replaceAll(/\blineitem\b/g, 'lineitem_big'));
const BATCH_SESSION = { 'svc.workload_class': 'batch' };

/** Interactive Q6 every `gapMs` for `durationMs`, with `streams` batch clients looping over the batch queries. */
async function segment(s: LiveServer, streams: number, durationMs: number, gapMs: number, offset: number): Promise<{ latencies: number[]; batchCompleted: number; errors: number }> {
  let stop = false;
  let batchCompleted = 0;
  let errors = 0;
  const batch = Array.from({ length: streams }, async (_, k) => {
    for (let i = k + offset; !stop; i++) {
      const r = await s.query(BATCH[i % BATCH.length]!, { source: 'etl', session: BATCH_SESSION });
      if (r.status === 200) batchCompleted += 1;
      else errors += 1;
    }
  });
  if (streams > 0) await sleep(500); // the batch load builds up
  const latencies: number[] = [];
  const end = performance.now() + durationMs;
  while (performance.now() < end) {
    const r = await s.query(INTERACTIVE, { source: 'dashboard' });
    if (r.status !== 200) errors += 1;
    latencies.push(r.ms);
    await sleep(gapMs);
  }
  stop = true;
  await Promise.all(batch);
  return { latencies, batchCompleted, errors };
}

/**
 * Interactive latency idle and under batch load, in `rounds` alternating segments (idle `idleMs`,
 * then loaded `loadMs`): the machine is shared, and its other load drifts; alternating puts the
 * drift on both sides instead of on whichever phase happened to run during it.
 */
async function interactiveRounds(s: LiveServer, rounds: number, idleMs: number, loadMs: number, streams: number, gapMs: number): Promise<{ alone: Latencies; loaded: Latencies & { batchCompleted: number; errors: number } }> {
  const idle: number[] = [];
  const loaded: number[] = [];
  let batchCompleted = 0;
  let errors = 0;
  for (let r = 0; r < rounds; r++) {
    const a = await segment(s, 0, idleMs, gapMs, 0);
    idle.push(...a.latencies);
    errors += a.errors;
    const b = await segment(s, streams, loadMs, gapMs, r);
    loaded.push(...b.latencies);
    batchCompleted += b.batchCompleted;
    errors += b.errors;
  }
  return { alone: summarize(idle), loaded: { ...summarize(loaded), batchCompleted, errors } };
}

/** Two weighted groups (3:1) under a parent running 4 at once, 8 clients each. */
async function weightedGroups(s: LiveServer, durationMs: number): Promise<{ weights: number[]; completed: number[]; ratio: number; targetRatio: number; runningSamples: string[] }> {
  const completed = [0, 0];
  let stop = false;
  // A query with no tables: the server's own work per query (planning against the store) is small
  // beside its CPU, so the groups' queues stay full and the policy, not the clients, sets the share.
  const sql = 'SELECT sum(i) FROM range(30000000) t(i)';
  const clients = ['a', 'b'].flatMap((group, g) => Array.from({ length: 8 }, async () => {
    while (!stop) {
      const r = await s.query(sql, { source: group });
      if (r.status === 200 && !stop) completed[g]! += 1;
    }
  }));
  const runningSamples: string[] = [];
  const samples = 4;
  for (let i = 0; i < samples; i++) {
    await sleep(durationMs / samples);
    runningSamples.push(s.state.wlm.resourceGroupRows().filter((r) => r.path.startsWith('/root/shared/')).map((r) => `${r.path} ${r.running} running ${r.queued} queued`).join(', '));
  }
  stop = true;
  await Promise.all(clients);
  return { weights: [3, 1], completed, ratio: r2(completed[0]! / Math.max(1, completed[1]!)), targetRatio: 3, runningSamples };
}

/**
 * Rejections of a full queue, timed end to end over HTTP, while one long query holds the group. The
 * rejected query is TPC-H Q6 (it reads lineitem): it is refused before it is planned.
 */
async function queueFull(s: LiveServer, count: number): Promise<Latencies & { statuses: Record<string, number> }> {
  const gone = new AbortController();
  const hold = s.query('SELECT sum(i) FROM range(100000000000) t(i)', { source: 'tiny', signal: gone.signal }).catch(() => undefined);
  for (let i = 0; i < 500 && (s.state.wlm.resourceGroupRows().find((r) => r.path === '/root/tiny')?.running ?? 0) < 1; i++) await sleep(10);
  const latencies: number[] = [];
  const statuses: Record<string, number> = {};
  for (let i = 0; i < count; i++) {
    const r = await s.query(INTERACTIVE, { source: 'tiny' });
    statuses[String(r.status)] = (statuses[String(r.status)] ?? 0) + 1;
    latencies.push(r.ms);
  }
  gone.abort(); // the client goes away: the server cancels the long query
  await hold;
  for (let i = 0; i < 500 && (s.state.wlm.resourceGroupRows().find((r) => r.path === '/root/tiny')?.running ?? 0) > 0; i++) await sleep(10);
  return { ...summarize(latencies), statuses };
}

export interface HttpLiveResult {
  /** The metadata store the servers ran on. */
  readonly backend: 'pglite' | 'postgres';
  readonly load: { rows: number; ms: number };
  readonly quantumMs: number;
  readonly workers: number;
  readonly rounds: number;
  readonly batchQueryMs: Record<string, number>;
  readonly interactiveAlone: Record<'mlfq' | 'fifo', Latencies>;
  readonly interactiveUnderLoad: Record<'mlfq' | 'fifo', Latencies & { batchCompleted: number; errors: number }>;
  readonly p99UnderLoadOverIdle: Record<'mlfq' | 'fifo', number>;
  readonly weightedGroups: { weights: number[]; completed: number[]; ratio: number; targetRatio: number; runningSamples: string[] };
  readonly admission: { readonly admit: Latencies & { maxMs: number }; readonly rejectEarly: Latencies & { maxMs: number }; readonly p99BoundMs: number };
  readonly queueFullRejection: Latencies & { statuses: Record<string, number> };
  readonly mlfqAfter: unknown;
}

/**
 * `backend`: PostgreSQL (a fresh database on 127.0.0.1:5432, dropped after) when it answers, as in
 * `bench/tpch`: it is the deployment for load (docs/performance.md: PGlite's WASM runs on the
 * server's event loop). `pglite` forces the embedded store; `postgres` fails without a server.
 */
export async function httpLive(options: { quantumMs?: number; workers?: number; durationMs?: number; rounds?: number; backend?: 'pglite' | 'postgres' | 'auto' } = {}): Promise<HttpLiveResult> {
  const quantumMs = options.quantumMs ?? 20;
  const workers = options.workers ?? 2;
  /** Loaded time per executor in all; idle time is half of it. */
  const durationMs = options.durationMs ?? 24_000;
  const rounds = options.rounds ?? 4;
  const database = options.backend === 'pglite' ? undefined : await createPostgresDatabase();
  if (database === undefined && options.backend === 'postgres') throw new Error('PostgreSQL does not answer on 127.0.0.1:5432');
  const databaseUrl = database?.url ?? null;
  const dir = mkdtempSync(join(tmpdir(), 'floe-bench-scheduler-'));
  try {
    let s = await startServer(dir, 'mlfq', quantumMs, workers, databaseUrl);
    let load: { rows: number; ms: number };
    const batchQueryMs: Record<string, number> = {};
    let mlfq: Awaited<ReturnType<typeof interactiveRounds>>;
    let weighted: Awaited<ReturnType<typeof weightedGroups>>;
    let rejection: Latencies & { statuses: Record<string, number> };
    let mlfqAfter: unknown;
    try {
      load = await loadTpch(s);
      for (let i = 0; i < 5; i++) await s.query(INTERACTIVE, { source: 'dashboard' });
      for (const [i, sql] of BATCH.entries()) {
        const r = await s.query(sql, { source: 'etl', session: BATCH_SESSION });
        if (r.status !== 200) throw new Error(`${BATCH_NAMES[i]}: ${r.status} ${JSON.stringify(r.body)}`);
        batchQueryMs[BATCH_NAMES[i]!] = r2(r.ms);
      }
      mlfq = await interactiveRounds(s, rounds, durationMs / 2 / rounds, durationMs / rounds, 4, 5);
      weighted = await weightedGroups(s, 8_000);
      rejection = await queueFull(s, 300);
      mlfqAfter = s.state.wlm.mlfqStats();
    } finally {
      await s.close();
    }
    const mlfqAdmit = [...s.admitMs];
    const mlfqEarly = [...s.rejectEarlyMs];
    s = await startServer(dir, 'fifo', quantumMs, workers, databaseUrl);
    let fifo: Awaited<ReturnType<typeof interactiveRounds>>;
    try {
      for (let i = 0; i < 5; i++) await s.query(INTERACTIVE, { source: 'dashboard' });
      fifo = await interactiveRounds(s, rounds, durationMs / 2 / rounds, durationMs / rounds, 4, 5);
    } finally {
      await s.close();
    }
    const decision = (xs: number[]): Latencies & { maxMs: number } => {
      const sorted = [...xs].sort((a, b) => a - b);
      const r3 = (v: number) => Math.round(v * 1000) / 1000;
      return { ...summarize(sorted), p50Ms: r3(percentile(sorted, 50)), p99Ms: r3(percentile(sorted, 99)), meanMs: r3(sorted.reduce((a, b) => a + b, 0) / Math.max(1, sorted.length)), maxMs: r2(sorted.at(-1) ?? 0) };
    };
    const admitDecision = decision([...mlfqAdmit, ...s.admitMs]);
    const earlyDecision = decision([...mlfqEarly, ...s.rejectEarlyMs]);
    return {
      backend: databaseUrl === null ? 'pglite' : 'postgres',
      load, quantumMs, workers, rounds, batchQueryMs,
      interactiveAlone: { mlfq: mlfq.alone, fifo: fifo.alone },
      interactiveUnderLoad: { mlfq: mlfq.loaded, fifo: fifo.loaded },
      p99UnderLoadOverIdle: { mlfq: r2(mlfq.loaded.p99Ms / mlfq.alone.p99Ms), fifo: r2(fifo.loaded.p99Ms / fifo.alone.p99Ms) },
      weightedGroups: weighted,
      admission: { admit: admitDecision, rejectEarly: earlyDecision, p99BoundMs: Math.round((admitDecision.p99Ms + earlyDecision.p99Ms) * 1000) / 1000 },
      queueFullRejection: rejection,
      mlfqAfter,
    };
  } finally {
    rmSync(dir, { recursive: true, force: true });
    await database?.drop();
  }
}
