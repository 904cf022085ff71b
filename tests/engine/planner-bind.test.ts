/**
 * Binding scenarios: the needs loop, name defaults, CTE shadowing, views (expansion, nesting,
 * defaults, cycles), system tables, unknown tables and columns, time travel and column projection.
 */
import t from 'tap';
import { FloeError, Parser, unparseQuery } from '../../grammar/index.js';
import type { Statement } from '../../grammar/index.js';
import { schema } from '../../catalog/iceberg/schema.js';
import type { Snapshot } from '../../catalog/iceberg/snapshot.js';
import type { TableMetadata } from '../../catalog/iceberg/table-metadata.js';
import { nestedField, Types } from '../../catalog/iceberg/types.js';
import { bindStatement, classifyWorkload, explainPlan, fragmentQuery, planScans, summaryEstimate, tableKey } from '../../engine/planner/index.js';
import type { BindRequest, BindResult, BoundQuery, RelationFacts, TableName } from '../../engine/planner/index.js';
import { SYSTEM_TABLES, tpchFacts, tpchMetadata, tpchRequest } from './planner-fixtures.js';

const parser = new Parser();
const name = (n: string, ns = 'tpch', catalog = 'lake'): TableName => ({ catalog, namespace: [ns], name: n });

function bound(sql: string, request: BindRequest = tpchRequest(parser)): BoundQuery {
  const r = bindStatement(parser.parse(sql), request);
  if (r.kind !== 'bound') throw new Error(`needs ${JSON.stringify(r.tables)}`);
  return r.query;
}

function errorOf(fn: () => unknown): FloeError | undefined {
  try {
    fn();
    return undefined;
  } catch (e) {
    if (e instanceof FloeError) return e;
    throw e;
  }
}

t.test('needs loop: the binder asks for every unknown name at once, then binds', async (t) => {
  const facts = new Map<string, RelationFacts>();
  const request: BindRequest = { defaults: { catalog: 'lake', namespace: ['tpch'] }, facts, systemTables: SYSTEM_TABLES, parse: (s: string): Statement => parser.parse(s) };
  const sql = 'SELECT n_name, r_name FROM nation JOIN other.region ON n_regionkey = r_regionkey, v_cust';
  let r: BindResult = bindStatement(parser.parse(sql), request);
  t.equal(r.kind, 'needs');
  if (r.kind === 'needs') t.same(r.tables.map((x) => `${x.catalog}.${x.namespace.join('.')}.${x.name}`).sort(), ['lake.other.region', 'lake.tpch.nation', 'lake.tpch.v_cust']);
  facts.set(tableKey(name('nation')), { kind: 'table', metadata: tpchMetadata('nation') });
  facts.set(tableKey(name('region', 'other')), { kind: 'table', metadata: tpchMetadata('region') });
  facts.set(tableKey(name('v_cust')), { kind: 'view', sql: 'SELECT c_name FROM customer' });
  r = bindStatement(parser.parse(sql), request);
  t.equal(r.kind, 'needs', 'the view body needs its own tables');
  if (r.kind === 'needs') t.same(r.tables.map((x) => x.name), ['customer']);
  facts.set(tableKey(name('customer')), { kind: 'table', metadata: tpchMetadata('customer') });
  r = bindStatement(parser.parse(sql), request);
  t.equal(r.kind, 'bound');
  if (r.kind === 'bound') {
    t.same(r.query.scans.map((s) => s.table.name), ['nation', 'region', 'customer']);
    t.match(unparseQuery(r.query.relation), /FROM __floe_scan_0 AS nation JOIN __floe_scan_1 AS region .* \(SELECT c_name FROM __floe_scan_2 AS customer\) AS v_cust/);
  }
});

t.test('unknown tables and columns', async (t) => {
  const facts = tpchFacts();
  facts.set(tableKey(name('nope')), { kind: 'missing' });
  const req = tpchRequest(parser, facts);
  t.equal(errorOf(() => bound('SELECT * FROM nope', req))?.sqlState, '42P01');
  t.equal(errorOf(() => bound('SELECT * FROM system.nope', req))?.sqlState, '42P01');
  t.equal(errorOf(() => bound('SELECT n_nmae FROM nation', req))?.sqlState, '42703', 'unqualified');
  t.equal(errorOf(() => bound('SELECT n.n_nmae FROM nation n', req))?.sqlState, '42703', 'qualified by alias');
  t.equal(errorOf(() => bound('SELECT tpch.nation.bogus FROM nation', req))?.sqlState, '42703', 'qualified by schema.table');
  t.equal(errorOf(() => bound('SELECT x.n_name FROM nation', req))?.sqlState, '42703', 'unknown qualifier');
  t.equal(errorOf(() => bound('SELECT n_name FROM nation WHERE r_name = 1', req))?.sqlState, '42703', 'in WHERE');
  t.equal(errorOf(() => bound('SELECT n_name FROM nation WHERE n_regionkey IN (SELECT r_bogus FROM region)', req))?.sqlState, '42703', 'in a subquery');
  t.equal(errorOf(() => bound('SELECT a FROM (SELECT n_name AS b FROM nation) AS d', req))?.sqlState, '42703', 'over a derived table');
  t.equal(errorOf(() => bound('SELECT * FROM nation JOIN region USING (r_bogus)', req))?.sqlState, '42703', 'USING');
  // Correct forms of the same shapes bind.
  bound('SELECT n.n_name, tpch.nation.n_comment, lake.tpch.nation.n_nationkey FROM nation n, tpch.nation', req);
  bound('SELECT n_name AS nm FROM nation WHERE n_regionkey IN (SELECT r_regionkey FROM region WHERE r_regionkey = n_regionkey) ORDER BY nm', req);
  bound('SELECT b FROM (SELECT n_name AS b FROM nation) AS d', req);
  bound('SELECT d.x FROM (SELECT n_name FROM nation) AS d(x)', req);
  bound('SELECT n_regionkey AS k, count(*) FROM nation GROUP BY k HAVING count(*) > 1 ORDER BY k', req);
  bound('SELECT current_date, current_timestamp FROM nation', req);
  t.equal(errorOf(() => bound('SELECT 1 FROM nation', { ...req, defaults: { catalog: undefined, namespace: undefined } }))?.sqlState, '3D000');
});

t.test('schema.table column references are rewritten to the alias', async (t) => {
  const q = bound('SELECT tpch.nation.n_name, lake.tpch.nation.n_nationkey FROM lake.tpch.nation');
  t.equal(unparseQuery(q.relation), 'SELECT nation.n_name, nation.n_nationkey FROM __floe_scan_0 AS nation');
});

t.test('CTE names shadow tables; CTE columns are checked', async (t) => {
  const q = bound('WITH nation AS (SELECT r_name AS n_name FROM region) SELECT n_name FROM nation');
  t.same(q.scans.map((s) => s.table.name), ['region'], 'the CTE, not the table');
  t.equal(errorOf(() => bound('WITH x AS (SELECT r_name FROM region) SELECT n_name FROM x'))?.sqlState, '42703');
  const rec = bound('WITH RECURSIVE c(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM c WHERE n < 5) SELECT n FROM c');
  t.equal(rec.scans.length, 0);
});

t.test('views: nesting, defaults, column names, cycles', async (t) => {
  const facts = tpchFacts();
  facts.set(tableKey(name('v1')), { kind: 'view', sql: 'SELECT n_name, n_regionkey FROM nation WHERE n_nationkey < 10' });
  facts.set(tableKey(name('v2', 'reports')), { kind: 'view', sql: 'SELECT n_name AS who FROM v1', defaultCatalog: 'lake', defaultNamespace: ['tpch'] });
  facts.set(tableKey(name('v3')), { kind: 'view', sql: 'SELECT r_name FROM region', columnNames: ['region_name'] });
  facts.set(tableKey(name('loop_a')), { kind: 'view', sql: 'SELECT * FROM loop_b' });
  facts.set(tableKey(name('loop_b')), { kind: 'view', sql: 'SELECT * FROM loop_a' });
  facts.set(tableKey(name('broken')), { kind: 'view', sql: 'SELEC nonsense' });
  const req = tpchRequest(parser, facts);
  const q = bound('SELECT who FROM reports.v2', req);
  t.same(q.scans.map((s) => s.table.name), ['nation']);
  t.same(q.scans[0]!.columns, [1, 2, 3], 'only n_nationkey, n_name, n_regionkey are read');
  t.equal(q.features.scans, 1);
  bound('SELECT region_name FROM v3', req);
  t.equal(errorOf(() => bound('SELECT r_name FROM v3', req))?.sqlState, '42703', 'the view renames the column');
  t.equal(errorOf(() => bound('SELECT * FROM loop_a', req))?.code, 'INVALID_STATE');
  t.match(errorOf(() => bound('SELECT * FROM broken', req))?.message, /view lake\.tpch\.broken cannot be parsed: syntax error/);
  t.equal(errorOf(() => bound('SELECT * FROM v1 FOR VERSION AS OF 1', req))?.code, 'INVALID_PARAMETER');
});

t.test('system tables resolve to provider relations', async (t) => {
  const q = bound("SELECT query_id, status FROM system.query_history WHERE status = 'failed' ORDER BY query_id");
  t.same(q.systemScans.map((s) => s.table), ['query_history']);
  t.equal(q.scans.length, 0);
  t.match(unparseQuery(q.relation), /FROM __floe_system_0 AS query_history/);
  bound('SELECT * FROM lake.system.tables t JOIN system.namespaces n ON t.schema = n.namespace');
  t.equal(errorOf(() => bound('SELECT bogus FROM system.tables'))?.sqlState, '42703');
});

function withSnapshots(m: TableMetadata): TableMetadata {
  const old = schema(0, [nestedField(1, 'r_regionkey', Types.int, true), nestedField(2, 'r_title', Types.string, true), nestedField(3, 'r_comment', Types.string, true)]);
  const current = { ...m.schemas[0]!, schemaId: 1 };
  const snap = (id: bigint, ts: number, schemaId: number, records: string): Snapshot => ({
    snapshotId: id, sequenceNumber: Number(id), timestampMs: ts, manifestList: `/m/${id}.avro`, summary: new Map([['operation', 'append'], ['total-records', records]]), schemaId,
  });
  return {
    ...m,
    schemas: [old, current],
    currentSchemaId: 1,
    snapshots: [snap(1n, 1_000, 0, '3'), snap(2n, 2_000, 1, '5')],
    currentSnapshotId: 2n,
    refs: new Map([['main', { type: 'branch', snapshotId: 2n }], ['v1', { type: 'tag', snapshotId: 1n }], ['dev', { type: 'branch', snapshotId: 1n }]]),
    snapshotLog: [{ timestampMs: 1_000, snapshotId: 1n }, { timestampMs: 2_000, snapshotId: 2n }],
  };
}

t.test('time travel: snapshot ids, tags, branches and timestamps choose snapshot and schema', async (t) => {
  const facts = tpchFacts((x) => (x === 'region' ? withSnapshots(tpchMetadata(x)) : tpchMetadata(x)));
  const req = tpchRequest(parser, facts);
  const cur = bound('SELECT r_name FROM region', req).scans[0]!;
  t.same(cur.selector, { kind: 'current' });
  t.equal(cur.snapshot?.snapshotId, 2n);
  const byId = bound('SELECT r_title FROM region FOR VERSION AS OF 1', req).scans[0]!;
  t.same(byId.selector, { kind: 'snapshot-id', snapshotId: 1n });
  t.equal(byId.schema.schemaId, 0, 'the snapshot schema: r_title, before the rename');
  t.equal(errorOf(() => bound('SELECT r_name FROM region FOR VERSION AS OF 1', req))?.sqlState, '42703');
  const tag = bound("SELECT r_title FROM region FOR VERSION AS OF 'v1'", req).scans[0]!;
  t.same(tag.selector, { kind: 'ref', name: 'v1' });
  t.equal(tag.schema.schemaId, 0);
  const branch = bound("SELECT r_name FROM region FOR VERSION AS OF 'dev'", req).scans[0]!;
  t.equal(branch.snapshot?.snapshotId, 1n);
  t.equal(branch.schema.schemaId, 1, 'branches read with the current schema');
  const ts = bound("SELECT r_title FROM region FOR TIMESTAMP AS OF TIMESTAMP '1970-01-01 00:00:01.500'", req).scans[0]!;
  t.same(ts.selector, { kind: 'timestamp', timestampMs: 1500 });
  t.equal(ts.snapshot?.snapshotId, 1n);
  const tsz = bound("SELECT r_name FROM region FOR TIMESTAMP AS OF '1970-01-01T01:00:02+01:00'", req).scans[0]!;
  t.equal(tsz.snapshot?.snapshotId, 2n);
  t.equal(errorOf(() => bound('SELECT * FROM region FOR VERSION AS OF 99', req))?.code, 'NOT_FOUND');
  t.equal(errorOf(() => bound("SELECT * FROM region FOR VERSION AS OF 'nope'", req))?.code, 'NOT_FOUND');
  t.equal(errorOf(() => bound("SELECT * FROM region FOR TIMESTAMP AS OF '1969-01-01 00:00:00'", req))?.code, 'NOT_FOUND');
  t.equal(errorOf(() => bound('SELECT * FROM region FOR TIMESTAMP AS OF r_name', req))?.code, 'INVALID_PARAMETER');
  t.equal(summaryEstimate(bound('SELECT * FROM region r1, region FOR VERSION AS OF 1 AS r2', req)), 8, 'summaries: 5 + 3 rows');
});

t.test('projection: the columns each scan reads', async (t) => {
  const cols = (sql: string): unknown[] => bound(sql).scans.map((s) => s.columns);
  t.same(cols('SELECT n_name FROM nation'), [[2]]);
  t.same(cols('SELECT count(*) FROM nation'), [[1]], 'count(*) reads one column');
  t.same(cols('SELECT * FROM nation'), ['all']);
  t.same(cols('SELECT n.* FROM nation n JOIN region r ON n_regionkey = r_regionkey'), ['all', [1]]);
  t.same(cols('SELECT r_name FROM region r WHERE EXISTS (SELECT 1 FROM nation n WHERE n.n_regionkey = r.r_regionkey)'), [[1, 2], [3]]);
  t.same(cols('SELECT n_name FROM nation NATURAL JOIN region'), ['all', 'all']);
});

t.test('predicates pushed to scans (inner sides only)', async (t) => {
  const preds = (sql: string): unknown[] => bound(sql).scans.map((s) => s.predicates.map((p) => p.kind === 'compare' ? `${p.fieldId}${p.op}${String(p.value)}` : p.kind === 'in' ? `${p.fieldId} in ${p.values.length}` : p.kind === 'is-null' ? `${p.fieldId} null ${p.negated}` : `${p.fieldId} like ${p.prefix}%`));
  t.same(preds("SELECT 1 FROM nation WHERE n_nationkey >= 3 AND 7 > n_nationkey AND n_name IN ('A', 'B') AND n_comment IS NOT NULL"), [['1>=3', '1<7', '2 in 2', '4 null true']]);
  t.same(preds('SELECT 1 FROM nation n LEFT JOIN region r ON n_regionkey = r_regionkey AND r_regionkey = 2 WHERE n_nationkey = 1 AND r_name IS NULL'), [['1=1'], ['1=2']]);
  t.same(preds('SELECT 1 FROM nation WHERE n_nationkey = 1 OR n_nationkey = 2'), [[]], 'OR is not pushed');
  t.same(preds("SELECT 1 FROM nation WHERE n_name LIKE 'CAN%' AND n_comment LIKE '%x%' AND n_name NOT LIKE 'B%' AND n_name ILIKE 'c%' AND n_comment LIKE 'a_b%'"), [['2 like CAN%']], 'only case-sensitive prefix patterns');
  t.same(preds("SELECT 1 FROM orders WHERE o_orderdate BETWEEN DATE '1995-01-01' AND CAST('1995-12-31' AS DATE)"), [['5>=9131', '5<=9495']]);
});

t.test('predicates pass through derived tables and views that only rename and filter', async (t) => {
  const facts = tpchFacts();
  facts.set(tableKey(name('recent_orders')), { kind: 'view', sql: "SELECT o_orderkey AS k, o_orderdate, o_totalprice * 2 AS doubled FROM orders WHERE o_orderstatus = 'F'" });
  facts.set(tableKey(name('order_totals')), { kind: 'view', sql: 'SELECT o_orderdate, sum(o_totalprice) AS total FROM orders GROUP BY o_orderdate' });
  facts.set(tableKey(name('all_orders')), { kind: 'view', sql: 'SELECT * FROM orders' });
  const req = tpchRequest(parser, facts);
  const preds = (sql: string): string[][] => bound(sql, req).scans.map((s) => s.predicates.map((p) => (p.kind === 'compare' ? `${p.fieldId}${p.op}${String(p.value)}` : p.kind)));
  t.same(preds("SELECT k FROM recent_orders WHERE o_orderdate >= DATE '1995-01-01' AND k < 100 AND doubled > 5"), [['3=F', '5>=9131', '1<100']], 'renamed columns map back; computed ones are not pushed');
  t.same(preds("SELECT * FROM all_orders WHERE o_custkey = 7"), [['2=7']]);
  t.same(preds("SELECT * FROM (SELECT o_custkey AS c FROM orders) AS d(cust) WHERE cust = 7"), [['2=7']], 'through alias column lists');
  t.same(preds("SELECT * FROM order_totals WHERE o_orderdate = DATE '1995-01-01'"), [[]], 'not through an aggregate');
  t.same(preds('SELECT * FROM (SELECT o_custkey FROM orders ORDER BY o_totalprice LIMIT 10) AS d WHERE o_custkey = 7'), [[]], 'not through ORDER BY … LIMIT');
  t.same(preds('SELECT * FROM customer LEFT JOIN all_orders ON c_custkey = o_custkey WHERE o_orderkey = 5'), [[], []], 'not onto the null side of an outer join');
  t.same(bound('SELECT * FROM (SELECT o_custkey, o_orderdate FROM orders) AS d', req).scans[0]!.columns, [2, 5], '* over a derived table reads only its columns');
});

t.test('classification from a bound query', async (t) => {
  const q = bound('SELECT n_name, count(*) FROM nation JOIN region ON n_regionkey = r_regionkey GROUP BY n_name');
  t.equal(classifyWorkload(q.features, 30).workloadClass, 'medium');
  const w = bound('SELECT n_name, sum(n_nationkey) OVER (PARTITION BY n_regionkey), count(*) FROM nation GROUP BY n_name, n_regionkey, n_nationkey');
  t.equal(classifyWorkload(w.features, 25).workloadClass, 'batch');
});

t.test('statements with a query part, and plans without table scans', async (t) => {
  t.same(bound('INSERT INTO region SELECT * FROM region WHERE r_regionkey > 2').scans.map((s) => s.table.name), ['region']);
  t.equal(errorOf(() => bound('CREATE VIEW v AS SELECT bogus FROM region'))?.sqlState, '42703', 'a view is checked when created');
  t.equal(bound('CREATE TABLE t2 AS SELECT r_name FROM region').scans.length, 1);
  t.equal(errorOf(() => bindStatement(parser.parse('DROP TABLE region'), tpchRequest(parser)))?.code, 'UNSUPPORTED_STATEMENT');
  const one = bound('SELECT 1 AS x');
  t.same(fragmentQuery(one, planScans(one, [])), { fragments: [{ id: 0, sql: 'SELECT 1 AS x', scans: [], inputs: [] }] });
  const sys = bound('SELECT status, count(*) FROM system.query_history GROUP BY status');
  const plan = fragmentQuery(sys, planScans(sys, []), { maxFragmentsPerScan: 4, minRowsPerFragment: 1 });
  t.equal(plan.fragments.length, 1);
  t.equal(plan.fragments[0]!.sql, 'SELECT status, count(*) FROM __floe_system_0 AS query_history GROUP BY status');
  t.same(plan.fragments[0]!.systemScans, [{ relation: '__floe_system_0', table: 'query_history', columns: SYSTEM_TABLES.get('query_history')!.columns }]);
});

t.test('EXPLAIN lines', async (t) => {
  const q = bound("SELECT n_name FROM nation WHERE n_nationkey BETWEEN 3 AND 7 AND n_name <> 'X'");
  const scans = planScans(q, [[]]);
  const plan = fragmentQuery(q, scans);
  const lines = explainPlan(q, scans, classifyWorkload(q.features, 0), plan);
  t.match(lines[0], /^Workload: interactive .* priority high, timeout 30 s, memory cap 1\.0 GiB$/);
  t.equal(lines[1], "Scan lake.tpch.nation (no snapshot (empty), current): 0 of 0 files, ~0 rows, 0 bytes; reads n_nationkey, n_name; prunes by n_nationkey >= 3 AND n_nationkey <= 7 AND n_name <> X");
  t.match(lines[2], /^Fragment 0: SELECT n_name FROM __floe_scan_0 AS nation WHERE/);
});
