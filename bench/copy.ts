/**
 * bench/copy: bulk loading (issue 19). SF1 lineitem (≈ 6M rows) as CSV files and as Parquet files,
 * PUT into a stage with `floe sql` and loaded with COPY INTO through a real `floe serve` over HTTP,
 * against DuckDB's own `read_csv`/`read_parquet` of the same files into a table, in one run.
 *
 * - Data: lineitem of the SF1-shaped set bench/tpch generates with DuckDB (bench/tpch/generate.ts;
 *   the tpch extension cannot be installed offline), cast to the TPC-H column types and written by
 *   DuckDB as `--files` CSV files (header line) and as many Parquet files. The generated set is kept
 *   in `<tmp>/floe-bench-copy-sf1/` and reused by later runs.
 * - PUT: `floe sql -c "PUT file:///…/*.csv @bench/csv/"` (the users' client: presigned URLs,
 *   multipart above 64 MiB, four parts at a time), timed end to end, against a raw copy of the same
 *   files on the same disk (`copyFile`): throughput reported, no target.
 * - COPY: `COPY INTO tpch.lineitem_<fmt> FROM @bench/<fmt>/ FORCE = TRUE` over /api/query (FORCE:
 *   each run loads everything again), against DuckDB in this process with `threads` = Floe's
 *   workers × threads per worker, `CREATE TABLE … AS SELECT * FROM read_csv([…], <the
 *   same explicit dialect and types>)` / `read_parquet([…])` in a DuckDB database file, then
 *   CHECKPOINT (the previous run's table dropped before the clock starts); informational beside it,
 *   DuckDB's `COPY (SELECT * FROM <reader>) TO '….parquet'`, the output a Floe load makes. One warm-up
 *   each, then `--runs` alternating runs; medians compared as a ratio.
 * - Targets: COPY of Parquet ≤ 1.5× DuckDB, of CSV ≤ 2× DuckDB.
 *
 *   npm run bench -- copy [--runs N] [--files N] [--backend pglite|postgres] [--workers N] [--threads N]
 */
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, readdirSync, renameSync, rmSync, statSync } from 'node:fs';
import { spawnSync } from 'node:child_process';
import { availableParallelism, tmpdir } from 'node:os';
import { join } from 'node:path';
import { Pool } from 'undici';
import { DuckDBInstance } from '@duckdb/node-api';
import { createPostgresDatabase } from '../tests/helpers/stores.js';
import { CLI, startCli } from '../tests/helpers/cli.js';
import { TPCH_TABLES } from '../tests/grammar/tpch-duckdb.js';
import { TPCH_DIR } from '../tests/grammar/corpus.js';
import { DEFAULT_CONFIG } from '../server/config.js';
import { atMost, writeBenchResult } from './report.js';
import { generateSf1 } from './tpch/generate.js';

const args = new Map<string, string>();
for (let i = 2; i < process.argv.length; i += 2) args.set(process.argv[i]!.replace(/^--/, ''), process.argv[i + 1] ?? '');
const RUNS = Number(args.get('runs') ?? 3);
const FILES = Number(args.get('files') ?? 4);
const WORKERS = Number(args.get('workers') ?? DEFAULT_CONFIG.query.workers);
const THREADS = Number(args.get('threads') ?? Math.max(DEFAULT_CONFIG.query.threads_per_worker, Math.min(16, availableParallelism())));
const CLIENT_ID = 'floe_bench_admin';
const CLIENT_SECRET = 'fcs_bench-secret-0123456789abcdefghij';
const ICEBERG_TYPES: Readonly<Record<string, string>> = { INTEGER: 'int', VARCHAR: 'string', DATE: 'date', 'DECIMAL(15,2)': 'decimal(15,2)' };
const COLUMNS = TPCH_TABLES['lineitem']!;
const FORMATS = ['csv', 'parquet'] as const;
type Format = typeof FORMATS[number];

const log = (s: string): void => console.error(`[copy ${new Date().toISOString().slice(11, 19)}] ${s}`);
const median = (xs: readonly number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
const round = (x: number, digits = 2): number => Math.round(x * 10 ** digits) / 10 ** digits;
const sqlString = (s: string): string => `'${s.replaceAll("'", "''")}'`;

/** lineitem as `FILES` CSV and Parquet files, generated once and kept for later runs. */
async function dataFiles(): Promise<Record<Format, string[]>> {
  const root = join(tmpdir(), 'floe-bench-copy-sf1');
  const out = { csv: join(root, `csv-${FILES}`), parquet: join(root, `parquet-${FILES}`) };
  const listed = (dir: string) => (existsSync(dir) ? readdirSync(dir).filter((f) => !f.startsWith('.')).sort().map((f) => join(dir, f)) : []);
  if (listed(out.csv).length === FILES && listed(out.parquet).length === FILES) return { csv: listed(out.csv), parquet: listed(out.parquet) };
  mkdirSync(root, { recursive: true });
  const lineitem = join(root, 'lineitem.parquet');
  if (!existsSync(lineitem)) {
    const folder = mkdtempSync(join(tmpdir(), 'floe-bench-copy-gen-'));
    const started = performance.now();
    const counts = await generateSf1(folder, join(TPCH_DIR, 'sf0.01'), WORKERS * THREADS);
    log(`generated SF1-shaped data in ${Math.round(performance.now() - started)} ms (lineitem ${counts['lineitem']} rows)`);
    renameSync(join(folder, 'lineitem.parquet'), lineitem);
    rmSync(folder, { recursive: true, force: true });
  }
  const instance = await DuckDBInstance.create(':memory:', { threads: String(WORKERS * THREADS) });
  const c = await instance.connect();
  try {
    const typed = COLUMNS.map(([n, t]) => `${n}::${t} AS ${n}`).join(', ');
    await c.run(`CREATE TABLE li AS SELECT ${typed}, ntile(${FILES}) OVER (ORDER BY l_orderkey, l_linenumber) AS part FROM read_parquet(${sqlString(lineitem)})`);
    for (const dir of Object.values(out)) {
      rmSync(dir, { recursive: true, force: true });
      mkdirSync(dir, { recursive: true });
    }
    for (let i = 1; i <= FILES; i++) {
      const part = `(SELECT * EXCLUDE (part) FROM li WHERE part = ${i} ORDER BY l_orderkey, l_linenumber)`;
      await c.run(`COPY ${part} TO ${sqlString(join(out.csv, `lineitem-${i}.csv`))} (FORMAT csv, HEADER true)`);
      await c.run(`COPY ${part} TO ${sqlString(join(out.parquet, `lineitem-${i}.parquet`))} (FORMAT parquet)`);
    }
  } finally {
    c.closeSync();
    instance.closeSync();
  }
  return { csv: listed(out.csv), parquet: listed(out.parquet) };
}

class Client {
  readonly pool: Pool;
  constructor(readonly url: string, readonly token: string) {
    this.pool = new Pool(url, { connections: 2, pipelining: 1 });
  }

  static async connect(url: string): Promise<Client> {
    const body = new URLSearchParams({ grant_type: 'client_credentials', client_id: CLIENT_ID, client_secret: CLIENT_SECRET }).toString();
    const r = await fetch(`${url}/v1/oauth/tokens`, { method: 'POST', body, headers: { 'content-type': 'application/x-www-form-urlencoded' } });
    const token = ((await r.json()) as { access_token?: string }).access_token;
    if (!token) throw new Error(`no token: ${r.status}`);
    return new Client(url, token);
  }

  async sql(sql: string): Promise<{ rows: unknown[][] }> {
    const r = await this.pool.request({
      method: 'POST', path: '/api/query', headers: { authorization: `Bearer ${this.token}`, 'content-type': 'application/json' },
      body: JSON.stringify({ sql, schema: 'tpch', timeout_ms: 3_600_000 }), headersTimeout: 3_600_000, bodyTimeout: 3_600_000,
      // A fresh connection each time: a kept-alive one may be closed by the server while a PUT runs.
      reset: true,
    });
    const text = await r.body.text();
    if (r.statusCode !== 200) throw new Error(`${r.statusCode} ${text} for ${sql.slice(0, 80)}`);
    return JSON.parse(text) as { rows: unknown[][] };
  }

  close(): Promise<void> {
    return this.pool.close();
  }
}

function bytesOf(files: readonly string[]): number {
  return files.reduce((n, f) => n + statSync(f).size, 0);
}

/** `floe sql` PUT of every file of `dir` into `@bench/<fmt>/`; milliseconds. */
function put(url: string, files: readonly string[], format: Format): number {
  const dir = files[0]!.replace(/\/[^/]+$/, '');
  const started = performance.now();
  const r = spawnSync(process.execPath, [CLI, 'sql', '--url', url, '--client-id', CLIENT_ID, '--client-secret', CLIENT_SECRET, '-c', `PUT file://${dir}/*.${format} @bench/${format}/`], {
    encoding: 'utf8', timeout: 60 * 60_000,
  });
  const ms = performance.now() - started;
  if (r.status !== 0) throw new Error(`PUT failed (${r.status}):\n${r.stdout}\n${r.stderr}`);
  return ms;
}

/** The same bytes copied on the same disk, the floor of any upload to a file:// stage; milliseconds. */
function rawCopy(files: readonly string[]): number {
  const target = mkdtempSync(join(tmpdir(), 'floe-bench-copy-raw-'));
  try {
    const started = performance.now();
    for (const f of files) copyFileSync(f, join(target, f.replace(/^.*\//, '')));
    return performance.now() - started;
  } finally {
    rmSync(target, { recursive: true, force: true });
  }
}

async function main(): Promise<void> {
  const files = await dataFiles();
  const bytes = { csv: bytesOf(files.csv), parquet: bytesOf(files.parquet) };
  log(`data: ${FILES} CSV files ${round(bytes.csv / 2 ** 20, 1)} MiB, ${FILES} Parquet files ${round(bytes.parquet / 2 ** 20, 1)} MiB`);
  const db = args.get('backend') === 'pglite' ? undefined : await createPostgresDatabase();
  if (args.get('backend') === 'postgres' && db === undefined) throw new Error('PostgreSQL does not answer on 127.0.0.1:5432');
  const dataDir = mkdtempSync(join(tmpdir(), 'floe-bench-copy-'));
  const server = await startCli(['--port', '0', '--data-dir', dataDir], {
    FLOE_BOOTSTRAP_CLIENT_ID: CLIENT_ID, FLOE_BOOTSTRAP_CLIENT_SECRET: CLIENT_SECRET, FLOE_LOG_LEVEL: 'warn',
    FLOE__QUERY__WORKERS: String(WORKERS), FLOE__QUERY__THREADS_PER_WORKER: String(THREADS), FLOE__QUERY__DEFAULT_SCHEMA: 'tpch',
    ...(db === undefined ? {} : { FLOE_DATABASE_URL: db.url }),
  });
  const duckDir = mkdtempSync(join(tmpdir(), 'floe-bench-copy-duckdb-'));
  const instance = await DuckDBInstance.create(join(duckDir, 'bench.duckdb'), { threads: String(WORKERS * THREADS) });
  const duck = await instance.connect();
  let client: Client | undefined;
  try {
    client = await Client.connect(server.url);
    await client.sql('CREATE SCHEMA tpch');
    await client.sql("CREATE STAGE bench FILE_FORMAT = (TYPE = CSV, SKIP_HEADER = 1)");
    const metrics: Record<string, unknown> = { backend: db === undefined ? 'pglite' : 'postgres', workers: WORKERS, threads_per_worker: THREADS, files: FILES, runs: RUNS, bytes };
    const ratios: Partial<Record<Format, number>> = {};
    for (const format of FORMATS) {
      // PUT, against a raw copy of the same bytes.
      const putMs = put(server.url, files[format], format);
      const rawMs = rawCopy(files[format]);
      metrics[`put_${format}`] = { ms: Math.round(putMs), mib_per_s: round(bytes[format] / 2 ** 20 / (putMs / 1000)), raw_copy_ms: Math.round(rawMs), raw_copy_mib_per_s: round(bytes[format] / 2 ** 20 / (rawMs / 1000)), ratio_vs_raw: round(putMs / rawMs) };
      log(`PUT ${format}: ${Math.round(putMs)} ms (${round(bytes[format] / 2 ** 20 / (putMs / 1000))} MiB/s), raw copy ${Math.round(rawMs)} ms`);
      await client.sql(`CREATE TABLE tpch.lineitem_${format} (${COLUMNS.map(([n, t]) => `${n} ${ICEBERG_TYPES[t]}`).join(', ')})`);
      const copySql = `COPY INTO tpch.lineitem_${format} FROM @bench/${format}/ FORCE = TRUE${format === 'parquet' ? ' FILE_FORMAT = (TYPE = PARQUET)' : ''}`;
      const list = files[format].map(sqlString).join(', ');
      const reader = format === 'csv'
        ? `read_csv([${list}], auto_detect = false, header = true, delim = ',', quote = '"', escape = '"', columns = {${COLUMNS.map(([n, t]) => `'${n}': '${t}'`).join(', ')}})`
        : `read_parquet([${list}])`;
      const floeRun = async (): Promise<number> => {
        const started = performance.now();
        const r = await client!.sql(copySql);
        const ms = performance.now() - started;
        const loaded = r.rows.reduce((n, row) => n + Number(row[3]), 0);
        if (r.rows.length !== FILES || r.rows.some((row) => row[1] !== 'LOADED')) throw new Error(`COPY answered ${JSON.stringify(r.rows)}`);
        metrics[`rows_${format}`] = loaded;
        return ms;
      };
      const duckRun = async (): Promise<number> => {
        // Each run creates the table anew (dropping the last one's blocks is not part of a load).
        await duck.run(`DROP TABLE IF EXISTS lineitem_${format}`);
        await duck.run('CHECKPOINT');
        const started = performance.now();
        await duck.run(`CREATE TABLE lineitem_${format} AS SELECT * FROM ${reader}`);
        await duck.run('CHECKPOINT');
        return performance.now() - started;
      };
      // Informational: DuckDB writing the same rows as one Parquet file (what a Floe load produces).
      const duckParquetRun = async (): Promise<number> => {
        const out = join(duckDir, `lineitem_${format}.parquet`);
        rmSync(out, { force: true });
        const started = performance.now();
        await duck.run(`COPY (SELECT * FROM ${reader}) TO ${sqlString(out)} (FORMAT parquet)`);
        return performance.now() - started;
      };
      log(`warm-up ${format}`);
      await floeRun();
      await duckRun();
      const floeMs: number[] = [];
      const duckMs: number[] = [];
      const duckParquetMs: number[] = [];
      for (let i = 0; i < RUNS; i++) {
        floeMs.push(await floeRun());
        duckMs.push(await duckRun());
        duckParquetMs.push(await duckParquetRun());
        log(`${format} run ${i + 1}: Floe ${Math.round(floeMs[i]!)} ms, DuckDB table ${Math.round(duckMs[i]!)} ms, DuckDB to Parquet ${Math.round(duckParquetMs[i]!)} ms`);
      }
      const duckRows = Number((await duck.runAndReadAll(`SELECT count(*) FROM lineitem_${format}`)).getRowsJS()[0]![0]);
      if (duckRows !== metrics[`rows_${format}`]) throw new Error(`Floe loaded ${String(metrics[`rows_${format}`])} rows, DuckDB ${duckRows}`);
      ratios[format] = median(floeMs) / median(duckMs);
      metrics[`copy_${format}`] = { floe_ms: floeMs.map(Math.round), duckdb_ms: duckMs.map(Math.round), floe_median_ms: Math.round(median(floeMs)), duckdb_median_ms: Math.round(median(duckMs)), ratio: round(ratios[format]!), rows_per_s: Math.round(duckRows / (median(floeMs) / 1000)),
        duckdb_to_parquet_ms: duckParquetMs.map(Math.round), ratio_vs_duckdb_to_parquet: round(median(floeMs) / median(duckParquetMs)) };
    }
    const targets = { copy_parquet_vs_duckdb: atMost(round(ratios.parquet!), 1.5), copy_csv_vs_duckdb: atMost(round(ratios.csv!), 2) };
    const c = metrics['copy_csv'] as { floe_median_ms: number };
    const p = metrics['copy_parquet'] as { floe_median_ms: number };
    const pc = metrics['put_csv'] as { mib_per_s: number; raw_copy_mib_per_s: number };
    writeBenchResult('copy', metrics, targets,
      `SF1 lineitem ${String(metrics['rows_csv'])} rows: COPY CSV ${c.floe_median_ms} ms (${round(ratios.csv!)}x DuckDB), Parquet ${p.floe_median_ms} ms (${round(ratios.parquet!)}x); PUT CSV ${pc.mib_per_s} MiB/s (raw copy ${pc.raw_copy_mib_per_s})`);
  } finally {
    await client?.close();
    duck.closeSync();
    instance.closeSync();
    await server.stop();
    await db?.drop();
    rmSync(dataDir, { recursive: true, force: true });
    rmSync(duckDir, { recursive: true, force: true });
  }
}

await main();
