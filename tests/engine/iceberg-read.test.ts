/**
 * Reading the Spark / PyIceberg tables of ../shared/data/iceberg through the executor: scans built by
 * `engine/iceberg-io/read.ts` from `planScan` (locations remapped), run in locked-down workers. The
 * answers are the data README's facts.
 */
import t from 'tap';
import { mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { DuckDBInstance } from '@duckdb/node-api';
import * as os from 'node:os';
import * as path from 'node:path';
import { planScan } from '../../catalog/iceberg/scan.js';
import type { FileScanTask, SnapshotSelector } from '../../catalog/iceberg/scan.js';
import { findFieldByName, schema } from '../../catalog/iceberg/schema.js';
import { Types, nestedField } from '../../catalog/iceberg/types.js';
import { parseTableMetadata } from '../../catalog/iceberg/table-metadata.js';
import { createExecutor } from '../../engine/exec/index.js';
import type { TableScanInput } from '../../engine/fragments.js';
import { scanRelation } from '../../engine/fragments.js';
import { ICEBERG_DATA, metadataFiles, remappedIo, sharedTable } from '../iceberg/helpers.js';

const root = mkdtempSync(path.join(os.tmpdir(), 'floe-iceberg-read-'));
const exec = createExecutor({ workers: 2, spillDirectory: path.join(root, 'spill'), dataDirectories: [ICEBERG_DATA] });
t.teardown(async () => {
  await exec.close();
  rmSync(root, { recursive: true, force: true });
});

async function scanOf(name: string, options: { metadataIndex?: number; columns?: readonly string[]; selector?: SnapshotSelector } = {}): Promise<TableScanInput> {
  const table = sharedTable(name);
  const files = metadataFiles(table);
  const file = options.metadataIndex === undefined ? files.at(-1)! : files[options.metadataIndex]!;
  const metadata = parseTableMetadata(readFileSync(file, 'utf8'));
  const plan = await planScan(metadata, remappedIo(table), options.selector);
  const to = `${path.join(ICEBERG_DATA, table.dir)}/`;
  return {
    relation: scanRelation(0),
    tableName: name,
    schema: plan.schema,
    columns: options.columns === undefined ? 'all' : options.columns.map((c) => findFieldByName(plan.schema, c)!.id),
    tasks: plan.tasks,
    estimatedRows: plan.totalRecords,
    estimatedBytes: plan.tasks.reduce((n, x) => n + x.file.fileSizeInBytes, 0),
    locationMappings: table.originalPrefixes.map((from) => ({ from, to })),
    partitionSpecs: metadata.partitionSpecs,
  };
}

async function query(sql: string, scan: TableScanInput) {
  return exec.execute({ fragments: [{ id: 0, sql, scans: [scan], inputs: [] }] });
}

t.test('lineitem: v1 60,175 rows, v2 51,793 rows, Q6 on v2', async (t) => {
  const v1 = await scanOf('lineitem_iceberg', { metadataIndex: 0, columns: [] });
  t.same((await query('SELECT count(*) FROM __floe_scan_0', v1)).rows, [[60175]]);
  const v2 = await scanOf('lineitem_iceberg', { columns: ['l_extendedprice', 'l_discount', 'l_shipdate', 'l_quantity'] });
  t.same((await query('SELECT count(*) FROM __floe_scan_0', v2)).rows, [[51793]]);
  const q6 = await query(
    `SELECT sum(l_extendedprice * l_discount) AS revenue FROM __floe_scan_0
     WHERE l_shipdate >= CAST('1994-01-01' AS date) AND l_shipdate < CAST('1995-01-01' AS date)
       AND l_discount BETWEEN 0.05 AND 0.07 AND l_quantity < 24`,
    v2,
  );
  t.equal(Number(q6.rows[0]![0]).toFixed(4), '1077536.9101');
  t.ok(q6.metrics.bytesScanned > 0, 'bytes scanned come from the plan');
  // Time travel: the first snapshot from the v2 metadata.
  const first = await scanOf('lineitem_iceberg', { columns: [], selector: { kind: 'snapshot-id', snapshotId: 7817332053627255703n } });
  t.same((await query('SELECT count(*) FROM __floe_scan_0', first)).rows, [[60175]]);
});

// The data README says both tables end with rows d and e. The partitioned table has equality deletes
// only for b, c and f (none for id 1 / 'a' exists in its files), so by the spec's rules (1,'a')
// survives there (tests/iceberg/spark-tables-read-back.test.ts found the same by its own path).
for (const [name, expected] of [
  ['mytable', [[4, 'd', '2025-01-04'], [5, 'e', '2025-01-05']]],
  ['mytable_partitioned', [[1, 'a', '2025-01-01'], [4, 'd', '2025-01-04'], [5, 'e', '2025-01-05']]],
] as const) {
  t.test(`${name}: equality deletes applied whatever the projection`, async (t) => {
    const all = await scanOf(name);
    t.same((await query('SELECT * FROM __floe_scan_0 ORDER BY id', all)).rows, expected);
    const birOnly = await scanOf(name, { columns: ['bir'] });
    t.same((await query('SELECT bir FROM __floe_scan_0 ORDER BY bir', birOnly)).rows, expected.map((r) => [r[2]]));
    const none = await scanOf(name, { columns: [] });
    t.same((await query('SELECT count(*) FROM __floe_scan_0', none)).rows, [[expected.length]]);
    // An older snapshot sees rows deleted later.
    const older = await scanOf(name, { metadataIndex: 1, columns: ['id'] });
    const n = (await query('SELECT count(*) FROM __floe_scan_0', older)).rows[0]![0] as number;
    t.ok(n > expected.length, `older snapshot has ${n} rows`);
  });
}

t.test('partition_integer: rows and a partition filter', async (t) => {
  const scan = await scanOf('partition_integer');
  const r = await query('SELECT * FROM __floe_scan_0 ORDER BY partition_col', scan);
  t.same(r.columns, scan.schema.fields.map((f) => f.name));
  const cols = r.columns;
  const byName = (row: readonly unknown[], c: string) => row[cols.indexOf(c)];
  t.same(r.rows.map((row) => [byName(row, 'partition_col'), byName(row, 'user_id'), byName(row, 'event_type')]), [
    [42, 12345, 'click'],
    [1337, 67890, 'purchase'],
  ]);
  const f = await query('SELECT user_id FROM __floe_scan_0 WHERE partition_col = 42', scan);
  t.same(f.rows, [[12345]]);
});

t.test('partition_timestamptz: instants in UTC', async (t) => {
  const scan = await scanOf('partition_timestamptz');
  const r = await query('SELECT partition_col, user_id, event_type FROM __floe_scan_0 ORDER BY partition_col', scan);
  t.same(r.rows, [
    ['2023-05-15T14:30:45Z', 12345, 'click'],
    ['2023-08-22T09:15:20Z', 67890, 'purchase'],
  ]);
});

t.test('schema evolution by field id, name mapping, and position deletes', async (t) => {
  const dir = path.join(root, 'evolution');
  mkdirSync(dir, { recursive: true });
  const local = createExecutor({ workers: 1, spillDirectory: path.join(root, 'spill2'), dataDirectories: [dir] });
  t.teardown(() => local.close());
  const db = await DuckDBInstance.create(':memory:');
  const conn = await db.connect();
  // Old files: id 1 "a" INTEGER, id 2 "b" FLOAT, id 3 "c" VARCHAR (dropped later), id 5 decimal(9,2).
  await conn.run(`COPY (SELECT x::INTEGER AS a, (x / 2)::FLOAT AS b, 'c' || x AS c, (x * 1.25)::DECIMAL(9,2) AS d FROM range(5) t(x))
    TO '${dir}/old.parquet' (FORMAT parquet, FIELD_IDS {a: 1, b: 2, c: 3, d: 5})`);
  // A migrated file without field ids, where "a" was called "legacy_a".
  await conn.run(`COPY (SELECT (100 + x)::INTEGER AS legacy_a, 0.5::FLOAT AS b FROM range(2) t(x)) TO '${dir}/migrated.parquet' (FORMAT parquet)`);
  // New files: "a" renamed to "id" and widened to long; "b" widened to double; "note" (id 4) added.
  await conn.run(`COPY (SELECT (10 + x)::BIGINT AS id, 1.5::DOUBLE AS b, 'n' AS note, 2.50::DECIMAL(12,2) AS d FROM range(3) t(x))
    TO '${dir}/new.parquet' (FORMAT parquet, FIELD_IDS {id: 1, b: 2, note: 4, d: 5})`);
  // Position deletes: rows 0 and 3 of old.parquet, written with the file's manifest location.
  await conn.run(`COPY (SELECT 'file://${dir}/old.parquet' AS file_path, x::BIGINT AS pos FROM (VALUES (0), (3)) v(x))
    TO '${dir}/pos-deletes.parquet' (FORMAT parquet, FIELD_IDS {file_path: 2147483546, pos: 2147483545})`);
  conn.closeSync();
  const evolved = schema(3, [
    nestedField(1, 'id', Types.long, true),
    nestedField(2, 'b', Types.double),
    nestedField(4, 'note', Types.string),
    nestedField(5, 'd', Types.decimal(12, 2)),
  ]);
  const dataFile = (p: string, rows: number): FileScanTask => ({
    file: { content: 'data', filePath: `file://${p}`, fileFormat: 'PARQUET', partition: [], recordCount: rows, fileSizeInBytes: 1 },
    specId: 0, sequenceNumber: 1, snapshotId: 1n, positionDeletes: [], equalityDeletes: [],
  });
  const posDelete = {
    file: { content: 'position-deletes' as const, filePath: `${dir}/pos-deletes.parquet`, fileFormat: 'PARQUET', partition: [], recordCount: 2, fileSizeInBytes: 1 },
    specId: 0, sequenceNumber: 2, snapshotId: 2n,
  };
  const scan: TableScanInput = {
    relation: scanRelation(0),
    tableName: 't',
    schema: evolved,
    columns: 'all',
    tasks: [{ ...dataFile(`${dir}/old.parquet`, 5), positionDeletes: [posDelete] }, dataFile(`${dir}/migrated.parquet`, 2), dataFile(`${dir}/new.parquet`, 3)],
    nameMapping: JSON.stringify([{ 'field-id': 1, names: ['a', 'legacy_a', 'id'] }, { 'field-id': 2, names: ['b'] }, { 'field-id': 4, names: ['note'] }]),
    estimatedRows: 10,
    estimatedBytes: 3,
  };
  const r = await local.execute({ fragments: [{ id: 0, sql: 'SELECT * FROM __floe_scan_0 ORDER BY id', scans: [scan], inputs: [] }] });
  t.same(r.columns, ['id', 'b', 'note', 'd']);
  t.same(r.types, ['BIGINT', 'DOUBLE', 'VARCHAR', 'DECIMAL(12,2)']);
  t.same(r.rows, [
    [1, 0.5, null, '1.25'],
    [2, 1, null, '2.50'],
    [4, 2, null, '5.00'],
    [10, 1.5, 'n', '2.50'],
    [11, 1.5, 'n', '2.50'],
    [12, 1.5, 'n', '2.50'],
    [100, 0.5, null, null],
    [101, 0.5, null, null],
  ]);
});
