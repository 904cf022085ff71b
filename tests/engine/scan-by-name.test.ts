/**
 * Scans read files by column name when every file of a group stores the projected fields under one
 * name and one physical type, so DuckDB keeps the files' row counts for join ordering (a field-id
 * `schema` map hides them: every scan estimates 0 rows). Files that differ (a rename, a widening)
 * or nested fields still go through the map, and answers are the same either way.
 */
import t from 'tap';
import { mkdtempSync, rmSync } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { DuckDBInstance } from '@duckdb/node-api';
import type { FileScanTask } from '../../catalog/iceberg/scan.js';
import { schema } from '../../catalog/iceberg/schema.js';
import { Types, nestedField } from '../../catalog/iceberg/types.js';
import { createExecutor } from '../../engine/exec/index.js';
import type { TableScanInput } from '../../engine/fragments.js';
import { scanRelation } from '../../engine/fragments.js';
import { scanSql } from '../../engine/iceberg-io/read.js';

const dir = mkdtempSync(path.join(os.tmpdir(), 'floe-scan-by-name-'));
const exec = createExecutor({ workers: 1, spillDirectory: path.join(dir, 'spill'), dataDirectories: [dir] });
t.teardown(async () => {
  await exec.close();
  rmSync(dir, { recursive: true, force: true });
});

const db = await DuckDBInstance.create(':memory:');
const conn = await db.connect();
// Two files written alike (ids 1 "k" INTEGER, 2 "v" VARCHAR), 1000 rows each.
for (const part of [0, 1]) {
  await conn.run(`COPY (SELECT (x + ${part * 1000})::INTEGER AS k, 'v' || x AS v FROM range(1000) t(x)) TO '${dir}/same-${part}.parquet' (FORMAT parquet, FIELD_IDS {k: 1, v: 2})`);
}
// An older file where field 1 was called "old_k" and was narrower (SMALLINT), before a rename and widening.
await conn.run(`COPY (SELECT (5000 + x)::SMALLINT AS old_k, 'w' || x AS v FROM range(10) t(x)) TO '${dir}/old.parquet' (FORMAT parquet, FIELD_IDS {old_k: 1, v: 2})`);
conn.closeSync();

const task = (file: string, rows: number): FileScanTask => ({
  file: { content: 'data', filePath: `file://${dir}/${file}`, fileFormat: 'PARQUET', partition: [], recordCount: rows, fileSizeInBytes: 1 },
  specId: 0, sequenceNumber: 1, snapshotId: 1n, positionDeletes: [], equalityDeletes: [],
});
const scanOf = (files: readonly FileScanTask[]): TableScanInput => ({
  relation: scanRelation(0), tableName: 't',
  schema: schema(0, [nestedField(1, 'k', Types.int, true), nestedField(2, 'v', Types.string)]),
  columns: 'all', tasks: files, estimatedRows: files.reduce((n, f) => n + f.file.recordCount, 0), estimatedBytes: 1,
});

async function explain(scan: TableScanInput): Promise<string> {
  const r = await exec.execute({ fragments: [{ id: 0, sql: 'EXPLAIN SELECT k FROM __floe_scan_0 WHERE k > 10', scans: [scan], inputs: [] }] });
  return r.rows.map((row) => String(row[1])).join('\n');
}

t.test('files stored alike are read by name and keep their row counts', async (t) => {
  const plan = await explain(scanOf([task('same-0.parquet', 1000)]));
  t.match(plan, /~[1-9][\d,]* rows/, 'the scan has a row estimate');
  t.notMatch(plan, /~0 rows/, 'not the 0 rows of a field-id map');
  const scan = scanOf([task('same-0.parquet', 1000), task('same-1.parquet', 1000)]);
  const r = await exec.execute({ fragments: [{ id: 0, sql: 'SELECT count(*), sum(k), min(v) FROM __floe_scan_0 WHERE k >= 990', scans: [scan], inputs: [] }] });
  t.same(r.rows, [[1010, String(Array.from({ length: 1010 }, (_, i) => 990 + i).reduce((a, b) => a + b, 0)), 'v0']]);
});

t.test('a renamed and widened field falls back to the field-id map, with the same answers', async (t) => {
  const scan = { ...scanOf([task('same-0.parquet', 1000), task('old.parquet', 10)]), schema: schema(1, [nestedField(1, 'k', Types.long, true), nestedField(2, 'v', Types.string)]) };
  const r = await exec.execute({ fragments: [{ id: 0, sql: 'SELECT k, v FROM __floe_scan_0 WHERE k >= 998 ORDER BY k', scans: [scan], inputs: [] }] });
  t.same(r.types, ['BIGINT', 'VARCHAR']);
  t.same(r.rows, [[998, 'v998'], [999, 'v999'], ...Array.from({ length: 10 }, (_, i) => [5000 + i, `w${i}`])]);
});

t.test('scanSql reads by name only when every file stores every projected primitive field alike', async (t) => {
  const files = [task('same-0.parquet', 1000), task('same-1.parquet', 1000)];
  const same = new Map<number, { name: string; signature: string }>([[1, { name: 'k', signature: 'INT32' }], [2, { name: 'v', signature: 'BYTE_ARRAY' }]]);
  const paths = [`${dir}/same-0.parquet`, `${dir}/same-1.parquet`];
  const byName = scanSql(scanOf(files), { fileColumnsById: new Map(paths.map((p) => [p, same])) });
  t.notMatch(byName, /schema = MAP/);
  t.match(byName, /CAST\("k" AS INTEGER\)/);
  const renamed = new Map(same);
  renamed.set(1, { name: 'old_k', signature: 'INT32' });
  t.match(scanSql(scanOf(files), { fileColumnsById: new Map([[paths[0]!, same], [paths[1]!, renamed]]) }), /schema = MAP/, 'names differ');
  const retyped = new Map(same);
  retyped.set(1, { name: 'k', signature: 'INT64' });
  t.match(scanSql(scanOf(files), { fileColumnsById: new Map([[paths[0]!, same], [paths[1]!, retyped]]) }), /schema = MAP/, 'physical types differ');
  t.match(scanSql(scanOf(files), { fileColumnsById: new Map([[paths[0]!, same]]) }), /schema = MAP/, 'a file not inspected');
  t.match(scanSql(scanOf(files)), /schema = MAP/, 'nothing inspected');
});
