/**
 * Property: for random single-scan aggregate and select queries over lineitem (seven year files),
 * the fragment plan with splitting forced (partial + final aggregates, or a union of scan parts)
 * gives the rows DuckDB gives for the query text.
 */
import t from 'tap';
import fc from 'fast-check';
import { DuckDBInstance } from '@duckdb/node-api';
import { Parser } from '../../grammar/index.js';
import { bindStatement, fragmentQuery, planScans } from '../../engine/planner/index.js';
import { TPCH_TABLES, loadTpch, rows, runPlan, tpchRequest } from './planner-fixtures.js';

const GROUP_KEYS = ['l_returnflag', 'l_linestatus', 'l_shipmode', 'year(l_shipdate)', 'l_linenumber'];
const AGGREGATES = [
  'count(*)', 'sum(l_quantity)', 'min(l_discount)', 'max(l_comment)', 'avg(l_extendedprice)', 'count(l_comment) FILTER (WHERE l_quantity > 25)',
  'min(DISTINCT l_tax)', 'sum(l_extendedprice * (1 - l_discount))', 'max(l_shipdate)', 'avg(l_linenumber)', 'count(DISTINCT l_suppkey)',
];
const WHERES = [
  "l_shipdate < DATE '1994-06-01'", 'l_quantity >= 30', "l_shipmode IN ('AIR', 'RAIL')", "l_shipdate BETWEEN DATE '1995-01-01' AND DATE '1996-12-31'",
  'l_discount > 0.05', 'l_orderkey < 0', "l_shipmode LIKE 'R%'", "l_comment LIKE 'ca%'", "l_shipdate >= '1998-01-01'",
];
const COLUMNS = ['l_orderkey', 'l_partkey', 'l_quantity', 'l_shipdate', 'l_comment', 'upper(l_shipmode) AS mode'];

const aggregateQuery = fc.record({
  keys: fc.subarray(GROUP_KEYS, { maxLength: 3 }),
  aggs: fc.subarray(AGGREGATES, { minLength: 1, maxLength: 4 }),
  where: fc.option(fc.subarray(WHERES, { minLength: 1, maxLength: 2 }), { nil: undefined }),
  having: fc.option(fc.constantFrom('count(*) > 100', 'sum(l_quantity) > 1000', 'min(l_discount) = 0'), { nil: undefined }),
  order: fc.boolean(),
  limit: fc.option(fc.integer({ min: 1, max: 20 }), { nil: undefined }),
}).map(({ keys, aggs, where, having, order, limit }) => {
  const items = [...keys.map((k, i) => (k.includes('(') ? `${k} AS k${i}` : k)), ...aggs.map((a, i) => `${a} AS a${i}`)];
  let sql = `SELECT ${items.join(', ')} FROM lineitem`;
  if (where !== undefined) sql += ` WHERE ${where.join(' AND ')}`;
  if (keys.length > 0) sql += ` GROUP BY ${keys.map((_, i) => String(i + 1)).join(', ')}`;
  if (having !== undefined) sql += ` HAVING ${having}`;
  // LIMIT only with a total order, so the rows are determined.
  if (order || limit !== undefined) sql += ` ORDER BY ${items.map((_, i) => String(i + 1)).join(', ')}`;
  if (limit !== undefined && keys.length > 0) sql += ` LIMIT ${limit}`;
  return sql;
});

const selectQuery = fc.record({
  cols: fc.subarray(COLUMNS, { minLength: 1, maxLength: 3 }),
  where: fc.subarray(WHERES, { minLength: 1, maxLength: 2 }),
  top: fc.option(fc.record({ limit: fc.integer({ min: 1, max: 30 }), offset: fc.option(fc.integer({ min: 1, max: 5 }), { nil: undefined }), desc: fc.boolean(), byName: fc.boolean() }), { nil: undefined }),
}).map(({ cols, where, top }) => {
  let sql = `SELECT ${cols.join(', ')} FROM lineitem WHERE ${where.join(' AND ')}`;
  if (top !== undefined) {
    // A total order over the output, by ordinals or by output names, so the top rows are determined.
    const keys = cols.map((c, i) => (top.byName ? (c.includes(' AS ') ? c.split(' AS ')[1]! : c) : String(i + 1)) + (top.desc ? ' DESC' : ''));
    sql += ` ORDER BY ${keys.join(', ')} LIMIT ${top.limit}${top.offset === undefined ? '' : ` OFFSET ${top.offset}`}`;
  }
  return sql;
});

/**
 * Equal rows, but for the last printed digit of a double: doubles are printed to 10 significant
 * digits, and a split average may differ from DuckDB's single pass in the last binary digit
 * (DuckDB divides in long double; docs/planner.md), which moves that digit when the value lies on
 * a rounding boundary. DECIMAL and integer cells must be equal.
 */
function sameRows(actual: readonly string[][], expected: readonly string[][]): boolean {
  const sameCell = (a: string, e: string): boolean => {
    if (a === e) return true;
    if (!a.startsWith('~') || !e.startsWith('~')) return false;
    const x = Number(a.slice(1));
    const y = Number(e.slice(1));
    return Math.abs(x - y) <= 1e-9 * Math.max(Math.abs(x), Math.abs(y));
  };
  return actual.length === expected.length && actual.every((row, i) => row.length === expected[i]!.length && row.every((cell, j) => sameCell(cell, expected[i]![j]!)));
}

t.test('split plans give DuckDB answers', async (t) => {
  const db = await DuckDBInstance.create(':memory:');
  const c = await db.connect();
  const { files, fileTables } = await loadTpch(c, ['lineitem']);
  const tableOf = new Map(TPCH_TABLES.map((x) => [`lake.tpch.${x}`, x] as const));
  const parser = new Parser();
  const request = tpchRequest(parser);
  const query = fc.oneof({ weight: 3, arbitrary: aggregateQuery }, { weight: 2, arbitrary: selectQuery });
  const parts = fc.integer({ min: 2, max: 5 });
  const planOf = (sql: string, maxFragmentsPerScan: number) => {
    const bound = bindStatement(parser.parse(sql), request);
    if (bound.kind !== 'bound') throw new Error('unbound');
    return fragmentQuery(bound.query, planScans(bound.query, [files.get('lineitem')!]), { maxFragmentsPerScan, minRowsPerFragment: 1 });
  };
  let split = 0;
  await fc.assert(
    fc.asyncProperty(query, parts, async (sql, parts) => {
      const expected = await rows(c, sql);
      const plan = planOf(sql, parts);
      if (plan.fragments.length > 1) split++;
      const actual = await runPlan(c, plan, fileTables, tableOf);
      const ordered = /ORDER BY/.test(sql);
      const same = ordered ? sameRows(actual, expected) : sameRows([...actual].sort(), [...expected].sort());
      if (!same) throw new Error(`${sql}\n${plan.fragments.map((f) => f.sql).join('\n')}\nexpected ${JSON.stringify(expected.slice(0, 3))}\nactual ${JSON.stringify(actual.slice(0, 3))}`);
    }),
    { numRuns: 60 },
  );
  t.comment(`${split} of the 60 random plans above were split`);
  // That the generated queries often split (so the property above tests split plans, not single
  // fragments) is counted over a fixed seed, planning only: the run's own count depends on its random
  // seed (25 to 52 of 60 over 2,000 seeds), and a check of the generator must not fail at random.
  const sampled = fc.sample(fc.tuple(query, parts), { numRuns: 60, seed: 1 });
  const splitSampled = sampled.filter(([sql, n]) => planOf(sql, n).fragments.length > 1).length;
  t.ok(splitSampled > 20, `${splitSampled} of 60 plans of a fixed sample are split`);
  c.closeSync();
});
