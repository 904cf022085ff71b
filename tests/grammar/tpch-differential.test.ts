/**
 * Differential test against DuckDB: each of the 22 TPC-H queries, parsed to IR and unparsed
 * (`toSql`), gives the same columns and rows in DuckDB over the SF0.01 tables as the original text;
 * so does the unparse with the engine's table hook replacing every table reference by a relation.
 * Also: DuckDB's parser accepts the unparsed SQL of every query of the statement corpus, and what
 * the planner reads from the TPC-H queries (query_type, plan features).
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

t.test('DuckDB parses the unparsed SQL of every corpus query', async (t) => {
  const serialize = await connection.prepare('SELECT json_serialize_sql($1::VARCHAR)');
  // Time travel is the engine's to resolve: the hook replaces those scans (DuckDB has no FOR VERSION AS OF).
  const timeTravel = (ref: TableRef): string | undefined => (ref.kind === 'Scan' && ref.timeTravel !== undefined ? '(SELECT 1 AS x)' : undefined);
  let checked = 0;
  for (const { id, sql } of loadValidCorpus()) {
    const s = parser.parse(sql);
    if (s.kind !== 'Query') continue;
    const text = toSql(s, { table: timeTravel });
    serialize.bindVarchar(1, text);
    const r = await serialize.runAndReadAll();
    const json = JSON.parse(String(r.getRows()[0]![0])) as { error: boolean; error_message?: string };
    t.notOk(json.error, `${id}: ${json.error_message ?? 'ok'}\n${text}`);
    checked++;
  }
  t.ok(checked >= 140, `${checked} corpus queries`);
});
