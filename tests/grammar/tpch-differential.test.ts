/**
 * Differential test against DuckDB: each of the 22 TPC-H queries, parsed to IR and unparsed
 * (`toSql`), gives the same columns and rows in DuckDB over the SF0.01 tables as the original text;
 * so does the unparse with the engine's table hook replacing every table reference by a relation.
 * Also: for every query of the statement corpus, DuckDB's own parse tree of the unparsed SQL is the
 * one it builds from the original text (so our precedence and every construct mean what DuckDB
 * means), and what the planner reads from the TPC-H queries (query_type, plan features).
 */
import t from 'tap';
import { createParser, toSql, planFeatures, queryType, type TableRef } from '../../grammar/index.js';
import { loadTpchQueries, loadValidCorpus } from './corpus.js';
import { openTpch, TPCH_TABLES } from './tpch-duckdb.js';

const parser = createParser({ cacheSize: 0 });
const queries = loadTpchQueries();
t.equal(queries.length, 22, 'the 22 TPC-H queries');

const { instance, connection } = await openTpch();
t.teardown(() => {
  connection.closeSync();
  instance.closeSync();
});

/** Rows as canonical strings, sorted (ties under ORDER BY … LIMIT may come back in any order). */
async function run(sql: string): Promise<{ columns: string[]; rows: string[] }> {
  const r = await connection.runAndReadAll(sql);
  return { columns: r.columnNames(), rows: r.getRowsJson().map((row) => JSON.stringify(row)).sort() };
}

/** The engine's hook, as the engine would use it: every catalog table becomes a relation SQL. */
const hook = (ref: TableRef): string | undefined => {
  if (ref.kind !== 'Scan') return undefined;
  const name = ref.table.parts[ref.table.parts.length - 1]!.name.toLowerCase();
  if (!(name in TPCH_TABLES)) throw new Error(`unexpected table ${name}`);
  return `(SELECT * FROM main.${name})`;
};

for (const [name, sql] of queries) {
  t.test(name, async (t) => {
    const statement = parser.parse(sql);
    t.equal(statement.kind, 'Query');
    t.equal(queryType(statement), 'select');
    const expected = await run(sql);
    t.ok(expected.rows.length > 0, `${name} returns rows on SF0.01`);
    const unparsed = toSql(statement);
    t.same(await run(unparsed), expected, `${name}: toSql gives the same rows\n${unparsed}`);
    const hooked = toSql(statement, { table: hook });
    t.notOk(/\bFROM\s+lineitem\b/i.test(hooked) && !hooked.includes('main.lineitem'), 'the hook replaced the table references');
    t.same(await run(hooked), expected, `${name}: the table hook gives the same rows\n${hooked}`);
  });
}

t.test('plan features of TPC-H queries', async (t) => {
  const features = new Map(queries.map(([name, sql]) => [name, planFeatures(parser.parse(sql))]));
  t.same(features.get('q01'), { joins: 0, scans: 1, windowFunctions: 0, aggregates: 8 }, 'q01: one scan, eight aggregates');
  t.same(features.get('q06'), { joins: 0, scans: 1, windowFunctions: 0, aggregates: 1 }, 'q06');
  t.equal(features.get('q05')!.joins, 5, 'q05: six tables, five (comma) joins');
  t.equal(features.get('q05')!.scans, 6, 'q05: six scans');
  t.equal(features.get('q13')!.joins, 1, 'q13: one LEFT OUTER JOIN');
  t.equal(features.get('q15')!.scans, 2, 'q15: lineitem in the CTE (counted once, CTE references are not scans) and supplier');
});

t.test('DuckDB reads the unparsed SQL of every corpus query as it reads the original', async (t) => {
  const serialize = await connection.prepare('SELECT json_serialize_sql($1::VARCHAR)');
  const duckdbTree = async (sql: string): Promise<{ error: boolean; error_message?: string }> => {
    serialize.bindVarchar(1, sql);
    const r = await serialize.runAndReadAll();
    return JSON.parse(String(r.getRows()[0]![0])) as { error: boolean; error_message?: string };
  };
  /** DuckDB's parse tree without source positions. */
  const positionless = (v: unknown): unknown => {
    if (Array.isArray(v)) return v.map(positionless);
    if (v === null || typeof v !== 'object') return v;
    return Object.fromEntries(Object.entries(v).filter(([k]) => k !== 'query_location').map(([k, x]) => [k, positionless(x)]));
  };
  // Time travel is the engine's to resolve: the hook replaces those scans (DuckDB has no FOR VERSION AS OF).
  const timeTravel = (ref: TableRef): string | undefined => (ref.kind === 'Scan' && ref.timeTravel !== undefined ? '(SELECT 1 AS x)' : undefined);
  let same = 0;
  let ours = 0;
  const all: [string, string][] = [...loadValidCorpus().map((v): [string, string] => [v.id, v.sql]), ...queries];
  for (const [id, sql] of all) {
    const s = parser.parse(sql);
    if (s.kind !== 'Query') continue;
    const text = toSql(s, { table: timeTravel });
    const unparsed = await duckdbTree(text);
    t.notOk(unparsed.error, `${id}: DuckDB parses toSql: ${unparsed.error_message ?? 'ok'}\n${text}`);
    const original = await duckdbTree(sql.replace(/;\s*$/, ''));
    if (original.error) {
      ours++; // Floe-only syntax (time travel)
      continue;
    }
    t.same(positionless(unparsed), positionless(original), `${id}: the same DuckDB parse tree\n${sql}\n=> ${text}`);
    same++;
  }
  t.ok(same >= 150, `${same} queries read identically by DuckDB, ${ours} in Floe-only syntax`);
});
