/**
 * The 22 TPC-H queries, planned against TPC-H table facts and run fragment by fragment in a plain
 * in-memory DuckDB, give what DuckDB gives for the original text. Each scan relation is a view over
 * the "files" of its tasks (lineitem and orders are split into one DuckDB table per ship/order year,
 * with real column bounds, so pruning and splitting are exercised), projected to the scan's columns.
 * Run once with the default fragment options (one fragment at SF0.01) and once with splitting forced.
 */
import t from 'tap';
import { DuckDBInstance } from '@duckdb/node-api';
import type { DuckDBConnection } from '@duckdb/node-api';
import { join } from 'node:path';
import { Parser } from '../../grammar/index.js';
import { toByteBuffer, parseDecimal } from '../../catalog/iceberg/conversions.js';
import type { IcebergValue } from '../../catalog/iceberg/conversions.js';
import { parseDate } from '../../catalog/iceberg/datetime.js';
import type { DataFile } from '../../catalog/iceberg/manifest.js';
import type { FileScanTask } from '../../catalog/iceberg/scan.js';
import type { PrimitiveType } from '../../catalog/iceberg/types.js';
import { bindStatement, fragmentQuery, planScans } from '../../engine/planner/index.js';
import type { FragmentOptions } from '../../engine/planner/index.js';
import type { FragmentPlan } from '../../engine/fragments.js';
import { fragmentRelation } from '../../engine/fragments.js';
import { TPCH_COLUMNS, TPCH_SF001, TPCH_TABLES, duckType, tpchQuery, tpchRequest } from './planner-fixtures.js';

/** Tables split into one "file" per year of this column. */
const SPLIT_BY: Readonly<Record<string, string>> = { lineitem: 'l_shipdate', orders: 'o_orderdate' };

async function rows(c: DuckDBConnection, sql: string): Promise<string[][]> {
  const reader = await c.runAndReadAll(sql);
  return reader.getRows().map((r) => r.map((v) => (typeof v === 'number' ? (Number.isInteger(v) ? String(v) : v.toPrecision(10)) : v === null ? 'NULL' : String(v))));
}

function boundValue(type: PrimitiveType, text: string): IcebergValue {
  switch (type.kind) {
    case 'long': return BigInt(text);
    case 'int': return Number(text);
    case 'decimal': return parseDecimal(text, type.scale);
    case 'date': return parseDate(text);
    default: return text;
  }
}

/** Loads SF0.01 and builds the data files (DuckDB tables) with their manifest facts. */
async function load(c: DuckDBConnection): Promise<{ files: Map<string, FileScanTask[]>; fileTables: Map<string, string> }> {
  const files = new Map<string, FileScanTask[]>();
  const fileTables = new Map<string, string>();
  for (const table of TPCH_TABLES) {
    const cols = TPCH_COLUMNS[table]!;
    const columns = `{${cols.map(([n, ty]) => `'${n}': '${duckType(ty)}'`).join(', ')}}`;
    await c.run(`CREATE TABLE ${table} AS SELECT * FROM read_csv('${join(TPCH_SF001, `${table}.tbl.gz`)}', delim='|', header=false, columns=${columns})`);
    const split = SPLIT_BY[table];
    const parts = split === undefined ? [{ name: `${table}_f0`, where: 'true' }] : (await rows(c, `SELECT DISTINCT year(${split}) FROM ${table} ORDER BY 1`)).map(([y]) => ({ name: `${table}_f${y}`, where: `year(${split}) = ${y}` }));
    const tasks: FileScanTask[] = [];
    for (const part of parts) {
      await c.run(`CREATE TABLE ${part.name} AS SELECT * FROM ${table} WHERE ${part.where}`);
      const stats = (await rows(c, `SELECT count(*), ${cols.map(([n]) => `min(${n})::VARCHAR, max(${n})::VARCHAR`).join(', ')} FROM ${part.name}`))[0]!;
      const recordCount = Number(stats[0]);
      const lowerBounds = new Map<number, Uint8Array>();
      const upperBounds = new Map<number, Uint8Array>();
      cols.forEach(([, ty], i) => {
        lowerBounds.set(i + 1, toByteBuffer(ty, boundValue(ty, stats[1 + 2 * i]!)));
        upperBounds.set(i + 1, toByteBuffer(ty, boundValue(ty, stats[2 + 2 * i]!)));
      });
      const counts = new Map(cols.map((_, i) => [i + 1, recordCount] as const));
      const file: DataFile = {
        content: 'data', filePath: `memory:///${part.name}.parquet`, fileFormat: 'PARQUET', partition: [], recordCount, fileSizeInBytes: recordCount * 100,
        valueCounts: counts, nullValueCounts: new Map(cols.map((_, i) => [i + 1, 0] as const)), lowerBounds, upperBounds,
      };
      fileTables.set(file.filePath, part.name);
      tasks.push({ file, specId: 0, sequenceNumber: 1, snapshotId: 1n, positionDeletes: [], equalityDeletes: [] });
    }
    files.set(table, tasks);
  }
  return { files, fileTables };
}

/** Runs a fragment plan the way the executor would, in one connection. */
async function runPlan(c: DuckDBConnection, plan: FragmentPlan, fileTables: Map<string, string>, tableOf: Map<string, string>): Promise<string[][]> {
  let result: string[][] = [];
  for (const f of plan.fragments) {
    for (const s of f.scans) {
      const names = s.columns === 'all' ? s.schema.fields.map((x) => x.name) : s.columns.map((id) => s.schema.fields.find((x) => x.id === id)!.name);
      const sources = s.tasks.map((task) => `SELECT ${names.join(', ')} FROM ${fileTables.get(task.file.filePath)!}`);
      const body = sources.length > 0 ? sources.join(' UNION ALL ') : `SELECT ${names.join(', ')} FROM ${tableOf.get(s.tableName)!} WHERE false`;
      await c.run(`CREATE OR REPLACE TEMP VIEW ${s.relation} AS ${body}`);
    }
    const last = f.id === plan.fragments[plan.fragments.length - 1]!.id;
    if (last) result = await rows(c, f.sql);
    else await c.run(`CREATE OR REPLACE TEMP TABLE ${fragmentRelation(f.id)} AS ${f.sql}`);
  }
  return result;
}

t.test('TPC-H through the planner gives DuckDB answers', async (t) => {
  const db = await DuckDBInstance.create(':memory:');
  const c = await db.connect();
  const { files, fileTables } = await load(c);
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
