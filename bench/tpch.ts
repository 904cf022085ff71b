/**
 * bench/tpch: the 22 TPC-H queries through a real `floe serve` over HTTP against raw DuckDB over
 * the same Iceberg data files, in one run; then `SELECT 1` with 32 concurrent clients (issue 5).
 *
 * - The server is the compiled CLI in its own process on PostgreSQL (127.0.0.1:5432) when it
 *   answers, else on embedded PGlite; the result names the backend.
 * - Data is loaded through Floe: tables created over HTTP, then `floe admin import` (the operator's
 *   path, the same write path as INSERT) of the shared SF0.01 `.tbl.gz` files, or of an SF1-shaped
 *   set generated deterministically by DuckDB (bench/tpch/generate.ts) as Parquet in a temp folder.
 * - The baseline is DuckDB in this process with `threads` = Floe's workers × threads per worker,
 *   over `read_parquet([...])` views of each table's current data files, read from the catalog
 *   (REST loadTable → manifests): the files Floe reads, nothing else.
 * - Each query: one warm-up each, then `--runs` alternating Floe/DuckDB runs; the median of each.
 * - `SELECT 1`: `--clients` closed loops for `--seconds` after a warm-up; every statement is
 *   recorded in query history, and the run checks the rows landed. `SELECT 1` is a constant query,
 *   answered by the coordinator; the same load of `SELECT 1 + 1`, which a worker runs, is reported
 *   beside it (informational).
 *
 *   npm run bench -- tpch [--sf 0.01|1|both] [--runs N] [--seconds N] [--clients N] [--backend pglite|postgres]
 *                         [--workers N] [--threads N]
 *
 * The server runs with `query.workers` = --workers (default: the configuration's) and
 * `query.threads_per_worker` = --threads (default: the core count, not the configuration's 1).
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { spawnSync } from 'node:child_process';
import { availableParallelism, tmpdir } from 'node:os';
import { join } from 'node:path';
import { Pool } from 'undici';
import pg from 'pg';
import { DuckDBInstance, type DuckDBConnection } from '@duckdb/node-api';
import { createPostgresDatabase } from '../tests/helpers/stores.js';
import { CLI, startCli, type RunningServer } from '../tests/helpers/cli.js';
import { TPCH_TABLES } from '../tests/grammar/tpch-duckdb.js';
import { TPCH_DIR } from '../tests/grammar/corpus.js';
import { DEFAULT_CONFIG } from '../server/config.js';
import { tableMetadataFromJson } from '../catalog/iceberg/table-metadata.js';
import { planScan } from '../catalog/iceberg/scan.js';
import { LocalFileIO } from '../storage-creds/local-file-io.js';
import { localPath } from '../engine/iceberg-io/read.js';
import { atLeast, atMost, percentile, writeBenchResult, type Target } from './report.js';
import { generateSf1 } from './tpch/generate.js';

const PgClient = pg.Client;

const args = new Map<string, string>();
for (let i = 2; i < process.argv.length; i += 2) args.set(process.argv[i]!.replace(/^--/, ''), process.argv[i + 1] ?? '');
const SF = args.get('sf') ?? 'both';
const RUNS = Number(args.get('runs') ?? 3);
const SECONDS = Number(args.get('seconds') ?? 10);
const CLIENTS = Number(args.get('clients') ?? 32);
const WORKERS = Number(args.get('workers') ?? DEFAULT_CONFIG.query.workers);
// DuckDB threads per worker: every core by default (`query.threads_per_worker`; the configuration's
// own default of 1 leaves a single-fragment query, most of TPC-H, one core: docs/performance.md).
const THREADS = Number(args.get('threads') ?? Math.max(DEFAULT_CONFIG.query.threads_per_worker, Math.min(16, availableParallelism())));
const WARMUP_SECONDS = 2;
/** Beside `SELECT 1` (answered by the coordinator), the smallest statement a DuckDB worker runs. */
const WORKER_PROBE = 'SELECT 1 + 1';

const CLIENT_ID = 'floe_bench_admin';
const CLIENT_SECRET = 'fcs_bench-secret-0123456789abcdefghij';
const ICEBERG_TYPES: Readonly<Record<string, string>> = { INTEGER: 'int', VARCHAR: 'string', DATE: 'date', 'DECIMAL(15,2)': 'decimal(15,2)' };
const QUERIES = Array.from({ length: 22 }, (_, i) => `q${String(i + 1).padStart(2, '0')}`);

const round = (x: number, digits = 2): number => Math.round(x * 10 ** digits) / 10 ** digits;
const median = (xs: readonly number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
const log = (s: string): void => console.error(`[tpch ${new Date().toISOString().slice(11, 19)}] ${s}`);

interface Backend {
  readonly name: 'pglite' | 'postgres';
  readonly env: Record<string, string>;
  /** The store's connection string (PostgreSQL), to count history rows where they landed. */
  readonly url?: string;
  drop(): Promise<void>;
}

async function backend(): Promise<Backend> {
  if (args.get('backend') !== 'pglite') {
    const db = await createPostgresDatabase();
    if (db) return { name: 'postgres', env: { FLOE_DATABASE_URL: db.url }, url: db.url, drop: () => db.drop() };
    if (args.get('backend') === 'postgres') throw new Error('PostgreSQL does not answer on 127.0.0.1:5432');
  }
  return { name: 'pglite', env: {}, drop: async () => undefined };
}

function serverEnv(b: Backend): Record<string, string> {
  return {
    FLOE_BOOTSTRAP_CLIENT_ID: CLIENT_ID, FLOE_BOOTSTRAP_CLIENT_SECRET: CLIENT_SECRET, FLOE_LOG_LEVEL: 'warn',
    FLOE__QUERY__WORKERS: String(WORKERS), FLOE__QUERY__THREADS_PER_WORKER: String(THREADS),
    FLOE__QUERY__DEFAULT_SCHEMA: 'tpch',
    ...b.env,
  };
}

class Client {
  readonly pool: Pool;
  constructor(readonly url: string, readonly token: string, connections = 4) {
    this.pool = new Pool(url, { connections, pipelining: 1 });
  }

  static async connect(server: RunningServer, connections?: number): Promise<Client> {
    const body = new URLSearchParams({ grant_type: 'client_credentials', client_id: CLIENT_ID, client_secret: CLIENT_SECRET }).toString();
    const r = await fetch(`${server.url}/v1/oauth/tokens`, { method: 'POST', body, headers: { 'content-type': 'application/x-www-form-urlencoded' } });
    const token = ((await r.json()) as { access_token?: string }).access_token;
    if (!token) throw new Error(`no token: ${r.status}`);
    return new Client(server.url, token, connections);
  }

  async json(method: 'GET' | 'POST', path: string, body?: unknown): Promise<{ status: number; body: any }> {
    const r = await this.pool.request({
      method, path, headers: { authorization: `Bearer ${this.token}`, 'content-type': 'application/json' },
      ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
    });
    const text = await r.body.text();
    return { status: r.statusCode, body: text.length > 0 ? JSON.parse(text) : undefined };
  }

  async sql(sql: string): Promise<{ rows: unknown[][]; row_count: number }> {
    const r = await this.json('POST', '/api/query', { sql, schema: 'tpch' });
    if (r.status !== 200) throw new Error(`${r.status} ${JSON.stringify(r.body)} for ${sql.slice(0, 80)}`);
    return r.body;
  }

  close(): Promise<void> {
    return this.pool.close();
  }
}

/** `floe admin import` of each table's file, as a child process (the server is stopped for PGlite). */
function importAll(dataDir: string, env: Record<string, string>, files: ReadonlyMap<string, string>): Record<string, number> {
  const ms: Record<string, number> = {};
  for (const [table, file] of files) {
    const started = performance.now();
    const r = spawnSync(process.execPath, [CLI, 'admin', 'import', '--data-dir', dataDir, '--table', `tpch.${table}`, file], {
      env: { ...process.env, ...env }, encoding: 'utf8', timeout: 20 * 60_000,
    });
    if (r.status !== 0) throw new Error(`import of ${table} failed (${r.status}):\n${r.stdout}\n${r.stderr}`);
    ms[table] = Math.round(performance.now() - started);
    log(r.stdout.trim());
  }
  return ms;
}

/** The data files of each table's current snapshot, read from the catalog like a Floe scan plans them. */
async function currentFiles(client: Client): Promise<Map<string, string[]>> {
  const out = new Map<string, string[]>();
  for (const table of Object.keys(TPCH_TABLES)) {
    const r = await client.json('GET', `/v1/default/namespaces/tpch/tables/${table}`);
    if (r.status !== 200) throw new Error(`loadTable ${table}: ${r.status} ${JSON.stringify(r.body)}`);
    const metadata = tableMetadataFromJson(r.body.metadata);
    const plan = await planScan(metadata, new LocalFileIO());
    if (plan.tasks.some((t) => t.positionDeletes.length + t.equalityDeletes.length > 0)) throw new Error(`${table} has delete files`);
    out.set(table, plan.tasks.map((t) => localPath(t.file.filePath)));
  }
  return out;
}

async function rawDuckDB(files: ReadonlyMap<string, readonly string[]>, threads: number): Promise<{ instance: DuckDBInstance; connection: DuckDBConnection }> {
  const instance = await DuckDBInstance.create(':memory:', { threads: String(threads) });
  const connection = await instance.connect();
  for (const [table, paths] of files) {
    await connection.run(`CREATE VIEW ${table} AS SELECT * FROM read_parquet([${paths.map((p) => `'${p.replaceAll("'", "''")}'`).join(', ')}])`);
  }
  return { instance, connection };
}

interface QueryTiming {
  readonly floe_ms: number;
  readonly duckdb_ms: number;
  readonly ratio: number;
  readonly rows: number;
  readonly floe_runs_ms: readonly number[];
  readonly duckdb_runs_ms: readonly number[];
}

async function timeQueries(client: Client, raw: DuckDBConnection): Promise<Record<string, QueryTiming>> {
  const out: Record<string, QueryTiming> = {};
  for (const q of QUERIES) {
    const sql = readFileSync(join(TPCH_DIR, 'queries', `${q}.sql`), 'utf8');
    const ours = await client.sql(sql);
    const theirs = await raw.runAndReadAll(sql);
    if (ours.row_count !== theirs.currentRowCount) throw new Error(`${q}: Floe ${ours.row_count} rows, DuckDB ${theirs.currentRowCount}`);
    const f: number[] = [];
    const d: number[] = [];
    for (let i = 0; i < RUNS; i++) {
      let s = performance.now();
      await client.sql(sql);
      f.push(performance.now() - s);
      s = performance.now();
      await raw.runAndReadAll(sql);
      d.push(performance.now() - s);
    }
    const fm = median(f);
    const dm = median(d);
    out[q] = { floe_ms: round(fm), duckdb_ms: round(dm), ratio: round(fm / dm), rows: ours.row_count, floe_runs_ms: f.map((x) => round(x)), duckdb_runs_ms: d.map((x) => round(x)) };
    log(`${q}: ${ours.row_count} rows, Floe ${round(fm, 1)} ms, DuckDB ${round(dm, 1)} ms, ratio ${round(fm / dm)}`);
  }
  return out;
}

interface LoadResult {
  readonly requests: number;
  readonly errors: number;
  readonly perSecond: number;
  readonly p50Ms: number;
  readonly p99Ms: number;
  /** Requests sent, warm-up included (each one a history row). */
  readonly sent: number;
}

/** `clients` closed loops of `sql` for `seconds`, after a warm-up; latencies of the timed part. */
async function closedLoops(client: Client, sql: string, seconds: number): Promise<LoadResult> {
  const pool = new Pool(client.url, { connections: CLIENTS, pipelining: 1 });
  const body = JSON.stringify({ sql });
  const headers = { authorization: `Bearer ${client.token}`, 'content-type': 'application/json' };
  const latencies: number[] = [];
  let errors = 0;
  let sent = 0;
  const run = async (until: number, record: boolean): Promise<void> => {
    while (performance.now() < until) {
      const started = performance.now();
      try {
        sent++;
        const r = await pool.request({ method: 'POST', path: '/api/query', headers, body });
        await r.body.arrayBuffer();
        if (r.statusCode !== 200 && record) errors++;
      } catch {
        if (record) errors++;
      }
      if (record) latencies.push(performance.now() - started);
    }
  };
  await Promise.all(Array.from({ length: CLIENTS }, () => run(performance.now() + WARMUP_SECONDS * 1000, false)));
  const started = performance.now();
  await Promise.all(Array.from({ length: CLIENTS }, () => run(started + seconds * 1000, true)));
  const elapsed = (performance.now() - started) / 1000;
  await pool.close();
  latencies.sort((a, b) => a - b);
  return { requests: latencies.length, errors, perSecond: Math.round(latencies.length / elapsed), p50Ms: round(percentile(latencies, 50)), p99Ms: round(percentile(latencies, 99)), sent };
}

/**
 * Completed statements of text `sql` in query history. On PostgreSQL they are counted in the store
 * itself (the write-behind flusher has written them); on PGlite (one process's store) through
 * `system.query_history`, which answers at most 500 rows, so only a lower bound.
 */
async function historyCount(client: Client, b: Backend, sql: string): Promise<number> {
  const text = `'${sql.replaceAll("'", "''")}'`;
  if (b.url !== undefined) {
    const pg = new PgClient({ connectionString: b.url });
    await pg.connect();
    try {
      const r = await pg.query(`SELECT count(*)::int AS n FROM query_history WHERE sql = ${text} AND status = 'completed'`);
      return Number(r.rows[0].n);
    } finally {
      await pg.end();
    }
  }
  const r = await client.sql(`SELECT count(*) FROM system.query_history WHERE sql = ${text} AND status = 'completed'`);
  return Number(r.rows[0]![0]);
}

/** A load of `sql` and the count of its statements that reached history (waits up to 10 s for them). */
async function loadWithHistory(client: Client, b: Backend, sql: string, seconds: number): Promise<LoadResult & { recorded: number }> {
  const before = await historyCount(client, b, sql);
  const result = await closedLoops(client, sql, seconds);
  let recorded = 0;
  const deadline = Date.now() + 10_000;
  do {
    recorded = (await historyCount(client, b, sql)) - before;
    if (recorded >= result.sent) break;
    await new Promise((done) => setTimeout(done, 200));
  } while (Date.now() < deadline);
  return { ...result, recorded };
}

interface ScaleResult {
  readonly sf: string;
  readonly load: Record<string, unknown>;
  readonly queries: Record<string, QueryTiming>;
  readonly floe_total_ms: number;
  readonly duckdb_total_ms: number;
  readonly ratio: number;
}

async function runScale(sf: string, b: Backend): Promise<{ scale: ScaleResult; client?: Client; server?: RunningServer; dataDir: string }> {
  const dataDir = mkdtempSync(join(tmpdir(), `floe-bench-tpch-${sf}-`));
  const env = serverEnv(b);
  let files: Map<string, string>;
  let generateMs = 0;
  let generated: Record<string, number> | undefined;
  if (sf === '0.01') {
    files = new Map(Object.keys(TPCH_TABLES).map((t) => [t, join(TPCH_DIR, 'sf0.01', `${t}.tbl.gz`)]));
  } else {
    const folder = mkdtempSync(join(tmpdir(), 'floe-bench-tpch-sf1-data-'));
    const started = performance.now();
    generated = await generateSf1(folder, join(TPCH_DIR, 'sf0.01'), WORKERS * THREADS);
    generateMs = Math.round(performance.now() - started);
    log(`generated SF1-shaped data in ${generateMs} ms: ${JSON.stringify(generated)}`);
    files = new Map(Object.keys(TPCH_TABLES).map((t) => [t, join(folder, `${t}.parquet`)]));
  }
  // Tables with the TPC-H types, created over HTTP; then the server stops for the imports (PGlite
  // is one process's store) and starts again over the loaded warehouse.
  let server = await startCli(['--port', '0', '--data-dir', dataDir], env);
  try {
    const ddl = await Client.connect(server);
    await ddl.sql('CREATE SCHEMA tpch');
    for (const [table, columns] of Object.entries(TPCH_TABLES)) {
      await ddl.sql(`CREATE TABLE tpch.${table} (${columns.map(([n, ty]) => `${n} ${ICEBERG_TYPES[ty]}`).join(', ')})`);
    }
    await ddl.close();
  } finally {
    await server.stop();
  }
  const importMs = importAll(dataDir, env, files);
  if (sf !== '0.01') rmSync(files.get('lineitem')!.replace(/lineitem\.parquet$/, ''), { recursive: true, force: true });
  server = await startCli(['--port', '0', '--data-dir', dataDir], env);
  const running = server;
  // A failed run stops its server (a stray `floe serve` would skew every later figure).
  const failed = async (e: unknown): Promise<never> => {
    await running.stop();
    throw e;
  };
  const client = await Client.connect(server).catch(failed);
  const tableFiles = await currentFiles(client).catch(failed);
  const raw = await rawDuckDB(tableFiles, WORKERS * THREADS).catch(failed);
  try {
    const queries = await timeQueries(client, raw.connection).catch(failed);
    const floe = Object.values(queries).reduce((n, q) => n + q.floe_ms, 0);
    const duck = Object.values(queries).reduce((n, q) => n + q.duckdb_ms, 0);
    log(`SF${sf}: Floe ${round(floe)} ms, DuckDB ${round(duck)} ms, ratio ${round(floe / duck)}`);
    return {
      scale: {
        sf, queries, floe_total_ms: round(floe), duckdb_total_ms: round(duck), ratio: round(floe / duck),
        load: { import_ms: importMs, data_files: Object.fromEntries([...tableFiles].map(([t, f]) => [t, f.length])), ...(generated ? { generate_ms: generateMs, generated_rows: generated } : {}) },
      },
      client, server, dataDir,
    };
  } finally {
    raw.connection.closeSync();
    raw.instance.closeSync();
  }
}

const metrics: Record<string, unknown> = { workers: WORKERS, threads_per_worker: THREADS, duckdb_threads: WORKERS * THREADS, runs: RUNS };
const targets: Record<string, Target> = {};
const summary: string[] = [];
const scales = SF === 'both' ? ['0.01', '1'] : [SF];
for (const [i, sf] of scales.entries()) {
  // Each scale on its own store (a fresh PostgreSQL database, or a fresh PGlite folder).
  const b = await backend();
  metrics.backend = b.name;
  try {
    const r = await runScale(sf, b);
    metrics[`sf${sf}`] = r.scale;
    summary.push(`SF${sf} Floe ${Math.round(r.scale.floe_total_ms)} ms vs DuckDB ${Math.round(r.scale.duckdb_total_ms)} ms (${r.scale.ratio}x)`);
    if (sf === '1') targets.sf1_total_ratio_to_duckdb = atMost(r.scale.ratio, 1.3);
    else targets[`sf${sf.replace('.', '_')}_total_ratio_to_duckdb_info`] = { value: r.scale.ratio, target: 'informational', met: true };
    // SELECT 1 on the last server of the run (history is on; its rows are checked).
    if (i === scales.length - 1) {
      const { recorded, ...s1 } = await loadWithHistory(r.client!, b, 'SELECT 1', SECONDS);
      metrics.select1 = { clients: CLIENTS, seconds: SECONDS, ...s1, history_rows_recorded: recorded, answered_by: 'the coordinator (a constant query: docs/planner.md)' };
      log(`SELECT 1: ${JSON.stringify(metrics.select1)}`);
      summary.push(`SELECT 1 ${s1.perSecond}/s p50 ${s1.p50Ms} ms p99 ${s1.p99Ms} ms`);
      // The same load on the smallest statement a worker runs: the cost of a worker round trip.
      const { recorded: workerRecorded, ...w } = await loadWithHistory(r.client!, b, WORKER_PROBE, SECONDS);
      metrics.worker_probe = { sql: WORKER_PROBE, clients: CLIENTS, seconds: SECONDS, ...w, history_rows_recorded: workerRecorded };
      log(`${WORKER_PROBE}: ${JSON.stringify(metrics.worker_probe)}`);
      summary.push(`${WORKER_PROBE} (a worker) ${w.perSecond}/s p99 ${w.p99Ms} ms`);
      targets.worker_probe_per_second_info = { value: w.perSecond, target: 'informational', met: true };
      targets.select1_per_second = atLeast(s1.perSecond, 1000);
      targets.select1_p99_ms = atMost(s1.p99Ms, 25);
      targets.select1_history_recorded = { value: recorded, target: `>= ${s1.sent} (every request, warm-up included)`, met: recorded >= s1.sent && s1.errors === 0 };
    }
    await r.client?.close();
    await r.server?.stop();
    rmSync(r.dataDir, { recursive: true, force: true });
  } finally {
    await b.drop();
  }
}
// The full run is `tpch.json` (committed); a run of one scale writes `tpch-sf<sf>.json` beside it.
writeBenchResult(SF === 'both' ? 'tpch' : `tpch-sf${SF}`, metrics, targets, summary.join('; '));
