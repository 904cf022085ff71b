/**
 * The 22 TPC-H queries, planned against TPC-H table facts and run fragment by fragment in a plain
 * in-memory DuckDB, give what DuckDB gives for the original text. Each scan relation is a view over
 * the "files" of its tasks (lineitem and orders are split into one DuckDB table per ship/order year,
 * with real column bounds, so pruning and splitting are exercised), projected to the scan's columns.
 * Run once with the default fragment options (one fragment at SF0.01) and once with splitting forced.
 */
import t from 'tap';
import { DuckDBInstance } from '@duckdb/node-api';
import { Parser } from '../../grammar/index.js';
import { bindStatement, fragmentQuery, planScans } from '../../engine/planner/index.js';
import type { FragmentOptions } from '../../engine/planner/index.js';
import { TPCH_TABLES, loadTpch, rows, runPlan, tpchQuery, tpchRequest } from './planner-fixtures.js';

t.test('TPC-H through the planner gives DuckDB answers', async (t) => {
  const db = await DuckDBInstance.create(':memory:');
  const c = await db.connect();
  const { files, fileTables } = await loadTpch(c);
  const tableOf = new Map(TPCH_TABLES.map((x) => [`lake.tpch.${x}`, x] as const));
  const parser = new Parser();
  const request = tpchRequest(parser);
  const forced: FragmentOptions = { maxFragmentsPerScan: 3, minRowsPerFragment: 1 };
  const splitQueries: number[] = [];
  for (let n = 1; n <= 22; n++) {
    const sql = tpchQuery(n);
    const expected = await rows(c, sql);
    const bound = bindStatement(parser.parse(sql), request);
    if (bound.kind !== 'bound') {
      t.fail(`q${n} needs ${JSON.stringify(bound.tables)}`);
      continue;
    }
    const planned = planScans(bound.query, bound.query.scans.map((s) => files.get(s.table.name)!));
    for (const [label, options] of [['default', undefined], ['split', forced]] as const) {
      const plan = fragmentQuery(bound.query, planned, options);
      if (label === 'default') t.equal(plan.fragments.length, 1, `q${n} is one fragment at SF0.01`);
      else if (plan.fragments.length > 1) splitQueries.push(n);
      let actual: string[][];
      try {
        actual = await runPlan(c, plan, fileTables, tableOf);
      } catch (e) {
        t.fail(`q${n} (${label}) failed: ${(e as Error).message}\n${plan.fragments.map((f) => f.sql).join('\n')}`);
        continue;
      }
      const same = JSON.stringify(actual) === JSON.stringify(expected) || JSON.stringify([...actual].sort()) === JSON.stringify([...expected].sort());
      t.ok(same, `q${n} (${label}, ${plan.fragments.length} fragment(s)) matches DuckDB`, same ? {} : { expected: expected.slice(0, 5), actual: actual.slice(0, 5), sql: plan.fragments.map((f) => f.sql) });
    }
  }
  t.ok(splitQueries.includes(1), `q1 runs as partial + final aggregates when forced (split: ${splitQueries.join(',')})`);
  // More single-scan shapes: ordinals and aliases in GROUP BY, global aggregates, FILTER, HAVING, unions.
  const extra = [
    'SELECT l_returnflag, count(*), sum(l_quantity), min(l_shipdate), max(l_comment), avg(l_extendedprice) FROM lineitem GROUP BY 1 ORDER BY 1',
    'SELECT count(*) AS n, avg(l_discount) FROM lineitem',
    "SELECT l_shipmode AS mode, sum(l_quantity) FILTER (WHERE l_returnflag = 'R') AS r, count(l_comment) FROM lineitem GROUP BY mode HAVING count(*) > 1000 ORDER BY r DESC",
    "SELECT lower(l_linestatus) || '!' AS st, max(l_extendedprice) - min(l_extendedprice) AS spread FROM lineitem WHERE l_shipdate < DATE '1995-06-01' GROUP BY l_linestatus ORDER BY st",
    'SELECT l_orderkey, l_linenumber, l_quantity FROM lineitem WHERE l_quantity >= 50',
    'SELECT o_orderkey, o_totalprice FROM orders WHERE o_totalprice > 400000 LIMIT 1000',
    'SELECT count(DISTINCT l_suppkey) FROM lineitem',
  ];
  for (const sql of extra) {
    const expected = await rows(c, sql);
    const bound = bindStatement(parser.parse(sql), request);
    if (bound.kind !== 'bound') throw new Error('unbound');
    const plan = fragmentQuery(bound.query, planScans(bound.query, bound.query.scans.map((s) => files.get(s.table.name)!)), forced);
    const actual = await runPlan(c, plan, fileTables, tableOf);
    t.same([...actual].sort(), [...expected].sort(), `${sql} (${plan.fragments.length} fragments)`);
    if (!sql.includes('DISTINCT')) t.ok(plan.fragments.length > 1, `split: ${sql}`);
    else t.equal(plan.fragments.length, 1, 'count(DISTINCT) stays one fragment');
  }
  // Pruning: q6 reads 1994's lineitem file only.
  const q6 = bindStatement(parser.parse(tpchQuery(6)), request);
  if (q6.kind === 'bound') {
    const [p] = planScans(q6.query, [files.get('lineitem')!]);
    t.equal(p!.tasks.length, 1, 'q6 keeps one lineitem file of seven');
    t.equal(p!.prunedFiles, files.get('lineitem')!.length - 1);
    t.ok(p!.estimatedRows < 60_175 / 3, `q6 estimate ${p!.estimatedRows} rows`);
  }
  c.closeSync();
});
