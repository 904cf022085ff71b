/**
 * bench/object-storage: the 22 TPC-H queries over a catalog on object storage (a throwaway Ceph RGW,
 * tests/helpers/rgw.ts) against the same data in a local catalog, in one run (issue 17).
 *
 * - Data: the shared TPC-H SF0.01 `.tbl.gz` files, imported into the local catalog (`default.tpch`)
 *   with `floe admin import`'s path, then copied to the RGW catalog (`lake.tpch`) with CTAS. DuckDB's
 *   `tpch` extension is not installed here and cannot be downloaded, so no larger scale is generated.
 * - Floe runs embedded in this process (PGlite), default workers and threads; the RGW runs beside it
 *   on the same machine (memstore OSD: RAM, no disk).
 * - Local: each query once to warm up, then `--runs` runs; the median. Warm cache: the same on RGW
 *   once every file is cached. Cold cache: before each run the cache is emptied (`evictAll`), so every
 *   file is fetched again. Totals are sums of medians.
 *   Beside it (informational), the warm run with `storage.cache.verify_etags` off: no HEAD per file.
 * - CTAS: `CREATE TABLE … AS SELECT * FROM default.tpch.lineitem` into the RGW catalog and into a
 *   local schema, alternating, `--runs` each; the medians.
 * - Fetch throughput: the cache emptied, one query per table at once (every data file fetched), bytes
 *   fetched / wall time; against a raw `@aws-sdk/client-s3` download of the same objects with the
 *   cache's concurrency (`storage.cache.concurrency`), which is the limit.
 * - The cache's resident bytes are polled every 5 ms through the run and its own peak is read at the
 *   end; both must stay at or under the budget (`--cache-mb`, default 64).
 *
 *   npm run bench -- object-storage [--runs N] [--cache-mb N]
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { GetObjectCommand, ListObjectsV2Command } from '@aws-sdk/client-s3';
import { Floe } from '../index.js';
import { DEFAULT_CONFIG } from '../server/config.js';
import { startRgw } from '../tests/helpers/rgw.js';
import { TPCH_TABLES } from '../tests/grammar/tpch-duckdb.js';
import { TPCH_DIR } from '../tests/grammar/corpus.js';
import { atMost, writeBenchResult, type Target } from './report.js';

const args = new Map<string, string>();
for (let i = 2; i < process.argv.length; i += 2) args.set(process.argv[i]!.replace(/^--/, ''), process.argv[i + 1] ?? '');
const RUNS = Number(args.get('runs') ?? 3);
const BUDGET = Math.round(Number(args.get('cache-mb') ?? 64) * 2 ** 20);
const CONCURRENCY = DEFAULT_CONFIG.storage.cache.concurrency;
const ICEBERG_TYPES: Readonly<Record<string, string>> = { INTEGER: 'int', VARCHAR: 'string', DATE: 'date', 'DECIMAL(15,2)': 'decimal(15,2)' };
const QUERIES = Array.from({ length: 22 }, (_, i) => `q${String(i + 1).padStart(2, '0')}`);
const BUCKET = 'benchwh';

const round = (x: number, digits = 2): number => Math.round(x * 10 ** digits) / 10 ** digits;
const median = (xs: readonly number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
const log = (s: string): void => console.error(`[object-storage ${new Date().toISOString().slice(11, 19)}] ${s}`);
const sum = (xs: readonly number[]): number => xs.reduce((a, b) => a + b, 0);

async function timed(run: () => Promise<unknown>): Promise<number> {
  const s = performance.now();
  await run();
  return performance.now() - s;
}

async function main(): Promise<void> {
  const rgw = await startRgw();
  const dataDir = mkdtempSync(join(tmpdir(), 'floe-bench-os-'));
  let floe: Floe | undefined;
  try {
    await rgw.createBucket(BUCKET);
    floe = await Floe.open({
      dataDir,
      config: (c) => ({ ...c, storage: { ...c.storage, cache: { ...c.storage.cache, max_bytes: BUDGET } } }),
    });
    const f = floe;
    const cache = f.state.fileCache;
    let peakSeen = 0;
    let polling = true;
    const poll = (async () => {
      while (polling) {
        peakSeen = Math.max(peakSeen, cache.stats().residentBytes);
        await new Promise((r) => setTimeout(r, 5));
      }
    })();

    log('loading TPC-H SF0.01 into the local catalog');
    await f.sql('CREATE SCHEMA default.tpch');
    await f.sql('CREATE SCHEMA default.ctas');
    for (const [table, columns] of Object.entries(TPCH_TABLES)) {
      await f.sql(`CREATE TABLE default.tpch.${table} (${columns.map(([n, ty]) => `${n} ${ICEBERG_TYPES[ty]}`).join(', ')})`);
      await f.import(`default.tpch.${table}`, join(TPCH_DIR, 'sf0.01', `${table}.tbl.gz`));
    }
    const admin = { tenantId: 'default', principalId: 'bench', roles: ['tenant_admin'] };
    await f.state.catalog.createCatalog(admin, {
      name: 'lake', warehouseLocation: `s3://${BUCKET}/wh`,
      storage: {
        profile: { type: 's3', bucket: BUCKET, keyPrefix: 'wh', region: rgw.region, endpoint: rgw.endpoint, pathStyleAccess: true, credentialSource: 'access-key' },
        secret: { type: 's3-keys', accessKeyId: rgw.accessKeyId, secretAccessKey: rgw.secretAccessKey },
      },
    });
    await f.sql('CREATE SCHEMA lake.tpch');
    await f.sql('CREATE SCHEMA lake.ctas');
    log('copying it to the RGW catalog (CTAS)');
    for (const table of Object.keys(TPCH_TABLES)) await f.sql(`CREATE TABLE lake.tpch.${table} AS SELECT * FROM default.tpch.${table}`);

    log('lineitem CTAS, local and RGW, alternating');
    const ctasLocal: number[] = [];
    const ctasRgw: number[] = [];
    for (let i = 0; i < RUNS; i++) {
      ctasLocal.push(await timed(() => f.sql(`CREATE TABLE default.ctas.lineitem_${i} AS SELECT * FROM default.tpch.lineitem`)));
      ctasRgw.push(await timed(() => f.sql(`CREATE TABLE lake.ctas.lineitem_${i} AS SELECT * FROM default.tpch.lineitem`)));
    }

    const run = (catalog: string, q: string) => f.sql(readFileSync(join(TPCH_DIR, 'queries', `${q}.sql`), 'utf8'), { catalog, schema: 'tpch' });
    const queries: Record<string, { local_ms: number; warm_ms: number; warm_no_etag_check_ms: number; cold_ms: number; rows: number }> = {};
    for (const q of QUERIES) {
      const local = await run('default', q);
      const remote = await run('lake', q);
      if (JSON.stringify(local.rows) !== JSON.stringify(remote.rows)) throw new Error(`${q}: the RGW catalog answered other rows than the local one`);
      const l: number[] = [];
      const w: number[] = [];
      const c: number[] = [];
      const u: number[] = [];
      for (let i = 0; i < RUNS; i++) {
        l.push(await timed(() => run('default', q)));
        w.push(await timed(() => run('lake', q)));
        cache.verifyVersions = false;
        u.push(await timed(() => run('lake', q)));
        cache.verifyVersions = true;
        cache.evictAll();
        c.push(await timed(() => run('lake', q)));
      }
      queries[q] = { local_ms: round(median(l)), warm_ms: round(median(w)), warm_no_etag_check_ms: round(median(u)), cold_ms: round(median(c)), rows: local.rowCount };
      log(`${q}: ${local.rowCount} rows, local ${round(median(l), 1)} ms, warm ${round(median(w), 1)} ms, cold ${round(median(c), 1)} ms`);
    }

    log('fetch throughput: Floe cache against a raw SDK download of the same objects');
    const s3 = rgw.client();
    const keys: { key: string; size: number }[] = [];
    let token: string | undefined;
    do {
      const r = await s3.send(new ListObjectsV2Command({ Bucket: BUCKET, Prefix: 'wh/tpch/', ContinuationToken: token }));
      for (const o of r.Contents ?? []) if (o.Key?.endsWith('.parquet')) keys.push({ key: o.Key, size: o.Size ?? 0 });
      token = r.NextContinuationToken;
    } while (token !== undefined);
    const dataBytes = sum(keys.map((k) => k.size));
    const floeRates: number[] = [];
    const rawRates: number[] = [];
    let fetchedPerRun = 0;
    for (let i = 0; i < RUNS; i++) {
      cache.evictAll();
      const before = cache.stats().bytesFetched;
      const ms = await timed(() => Promise.all(Object.entries(TPCH_TABLES).map(([table, columns]) => f.sql(`SELECT count(${columns[0]![0]}) FROM lake.tpch.${table}`))));
      fetchedPerRun = cache.stats().bytesFetched - before;
      floeRates.push(fetchedPerRun / 2 ** 20 / (ms / 1000));
      let next = 0;
      const rawMs = await timed(() => Promise.all(Array.from({ length: CONCURRENCY }, async () => {
        while (next < keys.length) {
          const k = keys[next++]!;
          const r = await s3.send(new GetObjectCommand({ Bucket: BUCKET, Key: k.key }));
          await (r.Body as { transformToByteArray(): Promise<Uint8Array> }).transformToByteArray();
        }
      })));
      rawRates.push(dataBytes / 2 ** 20 / (rawMs / 1000));
    }
    s3.destroy();

    polling = false;
    await poll;
    const stats = cache.stats();
    const localTotal = sum(Object.values(queries).map((q) => q.local_ms));
    const warmTotal = sum(Object.values(queries).map((q) => q.warm_ms));
    const warmNoCheckTotal = sum(Object.values(queries).map((q) => q.warm_no_etag_check_ms));
    const coldTotal = sum(Object.values(queries).map((q) => q.cold_ms));
    const ctasRatio = median(ctasRgw) / median(ctasLocal);
    const peak = Math.max(peakSeen, stats.peakResidentBytes);
    const metrics = {
      scale_factor: 0.01,
      data: 'shared TPC-H SF0.01 .tbl.gz (DuckDB tpch extension not available offline)',
      runs: RUNS,
      store: 'Ceph RGW 16.2, one node, memstore OSD, same machine',
      cache_budget_bytes: BUDGET,
      local_total_ms: round(localTotal), warm_total_ms: round(warmTotal),
      // Informational: warm with storage.cache.verify_etags off (no HEAD per cached file).
      warm_no_etag_check_total_ms: round(warmNoCheckTotal), warm_no_etag_check_ratio: round(warmNoCheckTotal / localTotal, 3), cold_total_ms: round(coldTotal),
      warm_ratio: round(warmTotal / localTotal, 3), cold_ratio: round(coldTotal / localTotal, 3),
      lineitem_ctas_local_ms: round(median(ctasLocal)), lineitem_ctas_rgw_ms: round(median(ctasRgw)), lineitem_ctas_ratio: round(ctasRatio, 3),
      lineitem_ctas_local_runs_ms: ctasLocal.map((x) => round(x)), lineitem_ctas_rgw_runs_ms: ctasRgw.map((x) => round(x)),
      data_files: keys.length, data_bytes: dataBytes, fetched_bytes_per_cold_scan: fetchedPerRun,
      floe_fetch_mb_per_s: round(median(floeRates)), raw_sdk_mb_per_s: round(median(rawRates)),
      fetch_vs_raw: round(median(floeRates) / median(rawRates), 3),
      resident_peak_polled_bytes: peakSeen, resident_peak_bytes: stats.peakResidentBytes,
      cache: stats,
      queries,
    };
    const targets: Record<string, Target> = {
      warm_ratio: atMost(round(warmTotal / localTotal, 3), 1.15),
      cold_ratio: atMost(round(coldTotal / localTotal, 3), 2.5),
      lineitem_ctas_ratio: atMost(round(ctasRatio, 3), 1.5),
      resident_peak_over_budget: atMost(peak / BUDGET, 1),
    };
    writeBenchResult('object-storage', metrics, targets,
      `TPC-H SF0.01 local ${round(localTotal)} ms, RGW warm ${round(warmTotal)} ms, cold ${round(coldTotal)} ms; lineitem CTAS ${round(ctasRatio)}x; fetch ${round(median(floeRates), 1)} MB/s vs raw SDK ${round(median(rawRates), 1)} MB/s`);
  } finally {
    await floe?.close();
    await rgw.stop();
    rmSync(dataDir, { recursive: true, force: true });
  }
}

await main();
