/**
 * The planner's fragment plans run on the real executor (engine/exec: locked-down DuckDB workers
 * reading Parquet by field id): TPC-H SF0.01 written as Parquet files with field ids (lineitem and
 * orders one file per year, with real bounds), all 22 queries planned with splitting forced and
 * with the defaults, against the original text run by the same executor over whole-table scans.
 */
import t from 'tap';
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DuckDBInstance } from '@duckdb/node-api';
import { Parser } from '../../grammar/index.js';
import { createExecutor } from '../../engine/exec/index.js';
import type { FragmentPlan, TableScanInput } from '../../engine/fragments.js';
import { bindStatement, fragmentQuery, planScans } from '../../engine/planner/index.js';
import { TPCH_TABLES, loadTpch, tpchMetadata, tpchQuery, tpchRequest } from './planner-fixtures.js';

const root = mkdtempSync(join(tmpdir(), 'floe-planner-exec-'));
const data = join(root, 'data');
mkdirSync(data);
const exec = createExecutor({ workers: 2, spillDirectory: join(root, 'spill'), dataDirectories: [data] });
t.teardown(async () => {
  await exec.close();
  rmSync(root, { recursive: true, force: true });
});

function normalize(rows: readonly (readonly unknown[])[]): string[] {
  return rows.map((r) => JSON.stringify(r.map((v) => (typeof v === 'number' && !Number.isInteger(v) ? v.toPrecision(10) : v))));
}

t.test('TPC-H plans give the executor the same answers as the original text', async (t) => {
  const db = await DuckDBInstance.create(':memory:');
  const c = await db.connect();
  const { files } = await loadTpch(c, TPCH_TABLES, data);
  c.closeSync();
  // The reference: the original text over whole-table scans named as the tables.
  const whole: TableScanInput[] = TPCH_TABLES.map((table) => {
    const metadata = tpchMetadata(table);
    const tasks = files.get(table)!;
    return {
      relation: table, tableName: `lake.tpch.${table}`, schema: metadata.schemas[0]!, columns: 'all', tasks,
      estimatedRows: tasks.reduce((n, x) => n + x.file.recordCount, 0), estimatedBytes: 0,
    };
  });
  const parser = new Parser();
  const request = tpchRequest(parser);
  let splitRuns = 0;
  for (let n = 1; n <= 22; n++) {
    const sql = tpchQuery(n);
    const reference: FragmentPlan = { fragments: [{ id: 0, sql, scans: whole, inputs: [] }] };
    const expected = await exec.execute(reference);
    const bound = bindStatement(parser.parse(sql), request);
    if (bound.kind !== 'bound') throw new Error('unbound');
    const scans = planScans(bound.query, bound.query.scans.map((s) => files.get(s.table.name)!));
    for (const options of [undefined, { maxFragmentsPerScan: 3, minRowsPerFragment: 1 }]) {
      const plan = fragmentQuery(bound.query, scans, options);
      if (plan.fragments.length > 1) splitRuns++;
      const actual = await exec.execute(plan);
      t.same(actual.columns, expected.columns, `q${n}: column names (${plan.fragments.length} fragments)`);
      t.same(actual.types, expected.types, `q${n}: column types`);
      t.same(normalize(actual.rows), normalize(expected.rows), `q${n}: rows`);
      t.equal(actual.metrics.fragments, plan.fragments.length);
    }
  }
  t.ok(splitRuns >= 1, `${splitRuns} split plans`);
});

t.test('a split aggregate over many files keeps names and types', async (t) => {
  const parser = new Parser();
  const request = tpchRequest(parser);
  const sql = "SELECT l_returnflag, count(*), sum(l_quantity) AS q, avg(l_discount), min(l_shipdate), max(l_comment) FROM lineitem WHERE l_shipdate >= DATE '1993-01-01' GROUP BY l_returnflag ORDER BY 1";
  const bound = bindStatement(parser.parse(sql), request);
  if (bound.kind !== 'bound') throw new Error('unbound');
  const db = await DuckDBInstance.create(':memory:');
  const c = await db.connect();
  const dir = join(root, 'split');
  mkdirSync(dir);
  const { files } = await loadTpch(c, ['lineitem'], dir);
  c.closeSync();
  const local = createExecutor({ workers: 2, spillDirectory: join(root, 'spill2'), dataDirectories: [dir] });
  t.teardown(() => local.close());
  const scans = planScans(bound.query, [files.get('lineitem')!]);
  t.equal(scans[0]!.prunedFiles, 1, '1992 is pruned');
  const split = await local.execute(fragmentQuery(bound.query, scans, { maxFragmentsPerScan: 3, minRowsPerFragment: 1 }));
  const single = await local.execute(fragmentQuery(bound.query, scans));
  t.equal(split.metrics.fragments, 4);
  t.same(split.columns, single.columns);
  t.same(split.types, single.types);
  t.same(normalize(split.rows), normalize(single.rows));
});
