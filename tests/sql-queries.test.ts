/**
 * Queries through the whole engine (parse → bind through the catalog → plan files → classify →
 * admit → DuckDB workers): plain expressions with exact values, system.query_history, and the
 * Spark-written tables of ../shared/data/iceberg registered with location remapping, whose
 * answers the data README gives (equality deletes and partition filters included), plus time
 * travel and EXPLAIN.
 */
import t from 'tap';
import { fileURLToPath } from 'node:url';
import { readdirSync } from 'node:fs';
import { Floe, isFloeError } from '../index.js';

const shared = fileURLToPath(new URL('../../../shared/data/iceberg/', import.meta.url));
const floe = await Floe.open({ config: (c) => ({ ...c, query: { ...c.query, data_directories: [shared] } }) });
t.teardown(() => floe.close());
const admin = { tenantId: 'default', principalId: 'test', roles: ['tenant_admin'] };

/** Registers a Spark table under `spark.<name>`, its original prefix remapped to the shared folder. */
async function register(name: string, dir: string, originalPrefix: string): Promise<void> {
  const metadataDir = `${shared}${dir}/metadata`;
  const latest = readdirSync(metadataDir).filter((f) => f.endsWith('.metadata.json')).sort((a, b) => version(a) - version(b)).at(-1)!;
  await floe.state.catalog.registerTable(admin, 'spark', ['tables'], { name, metadataLocation: `file://${metadataDir}/${latest}` });
  void originalPrefix;
}
function version(file: string): number {
  const m = /^v?(\d+)/.exec(file);
  return m ? Number(m[1]) : 0;
}

await floe.state.catalog.createCatalog(admin, {
  name: 'spark', warehouseLocation: `file://${shared}`,
  locationMappings: [
    { from: './lineitem_iceberg/', to: `${shared}lineitem_iceberg/` },
    { from: 'lineitem_iceberg/', to: `${shared}lineitem_iceberg/` },
    { from: 'data/persistent/equality_deletes/', to: `${shared}equality_deletes/` },
  ],
});
await floe.state.catalog.createNamespace(admin, 'spark', ['tables']);

t.test('expressions keep their exact values and types', async (t) => {
  const r = await floe.sql("SELECT 1 + 1 AS two, 9007199254740993::BIGINT AS big, 12.50::DECIMAL(10,2) AS price, DATE '2024-02-29' AS d, 'x' AS s");
  t.same(r.columns, ['two', 'big', 'price', 'd', 's']);
  t.same(r.types, ['INTEGER', 'BIGINT', 'DECIMAL(10,2)', 'DATE', 'VARCHAR']);
  t.same(r.rows, [[2, '9007199254740993', '12.50', '2024-02-29', 'x']]);
  for (const q of ['SELECT 1 / 0 AS x', 'SELECT 7 % 0', 'SELECT 1.5 / (2 - 2)']) {
    const zero = await floe.sql(q).then(() => undefined, (e: unknown) => e);
    t.match(zero, { code: 'DIVISION_BY_ZERO', sqlState: '22012' }, q);
  }
  t.same((await floe.sql('SELECT 7 / 2 AS half, 7 % 4 AS rest, CASE WHEN 0 = 0 THEN 1 ELSE 1 / 0 END AS lazy')).rows, [[3.5, 3, 1]]);
});

t.test('system.query_history is readable in SQL', async (t) => {
  await floe.sql('SELECT 42');
  const r = await floe.sql("SELECT count(*) AS n, max(query_type) AS qt FROM system.query_history WHERE sql = 'SELECT 42'");
  t.same(r.rows, [[1, 'select']]);
  t.same(r.types, ['BIGINT', 'VARCHAR']);
});

t.test('the Spark lineitem table: both snapshots and TPC-H Q6', async (t) => {
  await register('lineitem', 'lineitem_iceberg', './lineitem_iceberg');
  const now = await floe.sql('SELECT count(*) FROM spark.tables.lineitem');
  t.same(now.rows, [[51793]], 'v2: 51,793 rows');
  const q6 = await floe.sql(`SELECT sum(l_extendedprice * l_discount) AS revenue FROM spark.tables.lineitem
    WHERE l_shipdate >= DATE '1994-01-01' AND l_shipdate < DATE '1995-01-01' AND l_discount BETWEEN 0.05 AND 0.07 AND l_quantity < 24`);
  t.equal(Number(q6.rows[0]![0]).toFixed(4), '1077536.9101');
  const meta = (await floe.state.catalog.loadTable(admin, 'spark', { namespace: ['tables'], name: 'lineitem' })).metadata;
  const first = meta.snapshots[0]!.snapshotId;
  const old = await floe.sql(`SELECT count(*) FROM spark.tables.lineitem FOR VERSION AS OF ${first}`);
  t.same(old.rows, [[60175]], 'time travel to v1: 60,175 rows');
});

t.test('equality deletes, with and without the equality columns', async (t) => {
  await register('eq', 'equality_deletes/warehouse/mydb/mytable', 'data/persistent/equality_deletes');
  const all = await floe.sql('SELECT id, name, bir FROM spark.tables.eq ORDER BY id');
  t.same(all.rows, [[4, 'd', '2025-01-04'], [5, 'e', '2025-01-05']]);
  const projection = await floe.sql('SELECT bir FROM spark.tables.eq ORDER BY bir');
  t.same(projection.rows, [['2025-01-04'], ['2025-01-05']]);
  await register('eq_part', 'equality_deletes/warehouse/mydb/mytable_partitioned', 'data/persistent/equality_deletes');
  // The partitioned copy's delete files cover b, c and f only (no delete for 'a' exists in its
  // files; tests/engine/iceberg-read.test.ts reads them the same way), so (1, 'a') survives there.
  const part = await floe.sql("SELECT id FROM spark.tables.eq_part WHERE name IN ('d', 'e', 'a', 'b') ORDER BY id");
  t.same(part.rows, [[1], [4], [5]]);
});

t.test('EXPLAIN shows the class and the fragments; history records the group', async (t) => {
  const e = await floe.sql('EXPLAIN SELECT count(*) FROM spark.tables.lineitem');
  t.equal(e.columns[0], 'plan');
  t.match(String(e.rows[0]![0]), /workload class: interactive/);
  t.ok(e.rows.some((r) => /scan __floe_scan_0 = spark\.tables\.lineitem/.test(String(r[0]))));
  const h = await floe.state.history.list({ tenantId: 'default', principalId: 'x', isTenantAdmin: true }, { limit: 100, queryType: 'select' });
  const q6 = h.find((r) => String(r.sql).includes('l_discount BETWEEN'));
  t.match(q6, { status: 'completed', resource_group: '/root', workload_class: 'interactive', priority: 3, rows_produced: 1 });
  t.ok(Number(q6?.bytes_scanned) > 0, 'bytes scanned recorded');
  t.ok(Number(q6?.fragments) >= 1, 'fragments recorded');
});

t.test('unknown tables and columns, and escapes', async (t) => {
  const missing = await floe.sql('SELECT * FROM spark.tables.nope').then(() => undefined, (e: unknown) => e);
  t.match(missing, { code: 'UNDEFINED_TABLE', sqlState: '42P01' });
  const column = await floe.sql('SELECT nope FROM spark.tables.eq').then(() => undefined, (e: unknown) => e);
  t.match(column, { code: 'UNDEFINED_COLUMN', sqlState: '42703' });
  const escape = await floe.sql("SELECT * FROM read_csv('/etc/passwd')").then(() => undefined, (e: unknown) => e);
  t.match(escape, { code: 'PERMISSION_DENIED', sqlState: '42501' });
});
