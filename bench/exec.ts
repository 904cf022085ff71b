/**
 * Executor overhead: `SELECT 1` through the worker pool (fragment per query: connection, memory
 * limit, pending-result driving, wire conversion, structured clone back) against the same query on
 * one DuckDB connection in the main thread, in the same run; 32 concurrent clients. Also one
 * scan-heavy query (lineitem Q6 over the shared Iceberg table) through the pool against raw DuckDB
 * `read_parquet` over the same file.
 *
 * The machine is small and shared: read the ratios, not the absolute numbers.
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { fileURLToPath } from 'node:url';
import { DuckDBInstance } from '@duckdb/node-api';
import { planScan } from '../catalog/iceberg/scan.js';
import { parseTableMetadata } from '../catalog/iceberg/table-metadata.js';
import { createExecutor } from '../engine/exec/index.js';
import { scanRelation } from '../engine/fragments.js';
import { localPath } from '../engine/iceberg-io/read.js';
import { remapLocations } from '../storage-creds/file-io.js';
import { LocalFileIO } from '../storage-creds/local-file-io.js';
import { atLeast, atMost, percentile, writeBenchResult } from './report.js';

const ROOT = path.resolve(fileURLToPath(new URL('../../', import.meta.url)));
const ICEBERG = path.resolve(ROOT, '../shared/data/iceberg');
const CLIENTS = 32;
const DURATION_MS = Number(process.env['BENCH_MS'] ?? 4000);

async function closedLoop(run: () => Promise<unknown>): Promise<{ qps: number; p50: number; p99: number }> {
  const latencies: number[] = [];
  const end = performance.now() + DURATION_MS;
  await Promise.all(
    Array.from({ length: CLIENTS }, async () => {
      while (performance.now() < end) {
        const t0 = performance.now();
        await run();
        latencies.push(performance.now() - t0);
      }
    }),
  );
  latencies.sort((a, b) => a - b);
  return { qps: latencies.length / (DURATION_MS / 1000), p50: percentile(latencies, 50), p99: percentile(latencies, 99) };
}

const Q6 = `SELECT sum(l_extendedprice * l_discount) AS revenue FROM __floe_scan_0
  WHERE l_shipdate >= DATE '1994-01-01' AND l_shipdate < DATE '1995-01-01' AND l_discount BETWEEN 0.05 AND 0.07 AND l_quantity < 24`;

const root = mkdtempSync(path.join(os.tmpdir(), 'floe-bench-exec-'));
const workers = Number(process.env['BENCH_WORKERS'] ?? 2);
const exec = createExecutor({ workers, spillDirectory: path.join(root, 'spill'), dataDirectories: [ICEBERG] });
try {
  const raw = await (await DuckDBInstance.create(':memory:', { threads: String(workers) })).connect();
  const one = { fragments: [{ id: 0, sql: 'SELECT 1', scans: [], inputs: [] }] };
  await exec.execute(one);
  const direct = await closedLoop(() => raw.runAndReadAll('SELECT 1'));
  const pooled = await closedLoop(() => exec.execute(one));

  const tableDir = path.join(ICEBERG, 'lineitem_iceberg');
  const mappings = [{ from: './lineitem_iceberg/', to: `${tableDir}/` }, { from: 'lineitem_iceberg/', to: `${tableDir}/` }];
  const metadata = parseTableMetadata(readFileSync(path.join(tableDir, 'metadata/v2.metadata.json'), 'utf8'));
  const plan = await planScan(metadata, remapLocations(new LocalFileIO(), mappings));
  const scan = {
    relation: scanRelation(0), tableName: 'lineitem', schema: plan.schema, columns: 'all' as const, tasks: plan.tasks,
    estimatedRows: plan.totalRecords, estimatedBytes: 0, locationMappings: mappings,
  };
  const files = plan.tasks.map((x) => `'${localPath(x.file.filePath, mappings)}'`).join(', ');
  const rawQ6 = Q6.replace('__floe_scan_0', `read_parquet([${files}])`);
  const reps = 15;
  const time = async (f: () => Promise<unknown>): Promise<number> => {
    await f();
    const t0 = performance.now();
    for (let i = 0; i < reps; i++) await f();
    return (performance.now() - t0) / reps;
  };
  const rawMs = await time(() => raw.runAndReadAll(rawQ6));
  const poolMs = await time(() => exec.execute({ fragments: [{ id: 0, sql: Q6, scans: [scan], inputs: [] }] }));
  writeBenchResult(
    'exec',
    {
      clients: CLIENTS, workers, durationMs: DURATION_MS,
      select1: { pooled, direct },
      q6: { poolMs, rawMs, ratio: poolMs / rawMs },
      note: '2 shared cores; numbers are noisy, compare ratios',
    },
    {
      select1PooledQps: atLeast(pooled.qps, 1000),
      select1PooledP99Ms: atMost(pooled.p99, 25),
      q6RatioToRaw: atMost(poolMs / rawMs, 1.3),
    },
    `SELECT 1 pooled ${Math.round(pooled.qps)}/s p99 ${pooled.p99.toFixed(1)} ms (direct ${Math.round(direct.qps)}/s); Q6 ${poolMs.toFixed(1)} ms vs raw ${rawMs.toFixed(1)} ms`,
  );
} finally {
  await exec.close();
  rmSync(root, { recursive: true, force: true });
}
