/**
 * Floe against DuckDB's own parser. Random expressions over every operator, written with and
 * without parentheses, and token mutations of the corpus queries: whenever both DuckDB and Floe
 * accept the text, DuckDB's parse tree of our unparsed SQL equals its tree of the original text (we
 * read the statement as DuckDB does). For expressions, whenever Floe accepts one, DuckDB accepts our
 * unparsed SQL.
 */
import t from 'tap';
import fc from 'fast-check';
import { DuckDBInstance } from '@duckdb/node-api';
import { createParser, toSql, lex, type TableRef } from '../../grammar/index.js';
import { loadTpchQueries, loadValidCorpus } from './corpus.js';

const parser = createParser({ cacheSize: 0 });
const SEED = Number(process.env.FLOE_FUZZ_SEED ?? Date.now() % 2 ** 31);
t.comment(`fast-check seed ${SEED} (rerun with FLOE_FUZZ_SEED=${SEED})`);

const instance = await DuckDBInstance.create(':memory:');
const connection = await instance.connect();
const serialize = await connection.prepare('SELECT json_serialize_sql($1::VARCHAR)');
t.teardown(() => {
  connection.closeSync();
  instance.closeSync();
});

/** DuckDB's parse tree without source positions, or undefined when DuckDB does not parse the text. */
async function duckdbTree(sql: string): Promise<string | undefined> {
  serialize.bindVarchar(1, sql);
  const r = await serialize.runAndReadAll();
  const tree = JSON.parse(String(r.getRows()[0]![0])) as { error: boolean };
  if (tree.error) return undefined;
  return JSON.stringify(tree, (k, v: unknown) => (k === 'query_location' ? undefined : v));
}

const BINARY = ['AND', 'OR', '=', '<>', '<', '<=', '>', '>=', '+', '-', '*', '/', '%', '||', 'IS DISTINCT FROM', 'IS NOT DISTINCT FROM', 'LIKE', 'NOT LIKE', 'ILIKE'];
const { expr } = fc.letrec<{ expr: string }>((tie) => ({
  expr: fc.oneof(
    { depthSize: 'small', withCrossShrink: true },
    fc.constantFrom('a', 'b', '1', '2.5', "'x'", 'NULL', 'TRUE', 't.c'),
    fc.tuple(tie('expr'), fc.constantFrom(...BINARY), tie('expr')).map(([l, o, r]) => `${l} ${o} ${r}`),
    tie('expr').map((e) => `NOT ${e}`),
    tie('expr').map((e) => `-${e}`),
    tie('expr').map((e) => `(${e})`),
    tie('expr').map((e) => `${e} IS NULL`),
    tie('expr').map((e) => `${e} IS NOT TRUE`),
    tie('expr').map((e) => `${e}::int`),
    fc.tuple(tie('expr'), tie('expr'), tie('expr')).map(([x, lo, hi]) => `${x} BETWEEN ${lo} AND ${hi}`),
    fc.tuple(tie('expr'), tie('expr')).map(([x, y]) => `${x} IN (${y}, 3)`),
    fc.tuple(tie('expr'), tie('expr')).map(([x, y]) => `${x} NOT IN (${y})`),
    fc.tuple(tie('expr'), tie('expr')).map(([x, y]) => `${x} = ANY (SELECT ${y})`),
    fc.tuple(tie('expr'), tie('expr')).map(([x, y]) => `CASE WHEN ${x} THEN ${y} END`),
    fc.tuple(tie('expr'), tie('expr')).map(([x, y]) => `CASE ${x} WHEN ${y} THEN 1 ELSE 2 END`),
    fc.tuple(tie('expr'), tie('expr')).map(([x, y]) => `${x} LIKE ${y} ESCAPE '!'`),
    fc.tuple(tie('expr'), tie('expr')).map(([x, y]) => `coalesce(${x}, ${y})`),
    tie('expr').map((e) => `+${e}`),
    tie('expr').map((e) => `${e}[1]`),
    tie('expr').map((e) => `EXISTS (SELECT ${e})`),
    tie('expr').map((e) => `CAST(${e} AS varchar)`),
    tie('expr').map((e) => `count(DISTINCT ${e}) FILTER (WHERE ${e})`),
    fc.constantFrom("DATE '2020-01-01'", 'INTERVAL 1 DAY', "INTERVAL '2' HOUR", '[1, 2]', "{'k': 1}"),
  ),
}));

t.test('Floe reads every expression as DuckDB does', async (t) => {
  let both = 0;
  let floeOnly = 0;
  await fc.assert(
    fc.asyncProperty(expr, async (e) => {
      const sql = `SELECT ${e} FROM t`;
      const r = parser.tryParse(sql);
      if (!r.ok) return true;
      const text = toSql(r.statement);
      const unparsed = await duckdbTree(text);
      if (unparsed === undefined) throw new Error(`DuckDB does not parse our unparsed SQL\n${sql}\n=> ${text}`);
      const original = await duckdbTree(sql);
      if (original === undefined) {
        floeOnly++;
        return true;
      }
      both++;
      if (unparsed !== original) throw new Error(`DuckDB reads it differently\n${sql}\n=> ${text}`);
      return true;
    }),
    { numRuns: 2500, seed: SEED },
  );
  t.ok(both >= 1000, `${both} expressions read identically (${floeOnly} accepted by Floe only)`);
});

t.test('mutated corpus queries: where DuckDB accepts the text, it reads our unparse the same way', async (t) => {
  const queries = [...loadValidCorpus().map((v) => v.sql), ...loadTpchQueries().map(([, sql]) => sql)].filter((sql) => {
    const r = parser.tryParse(sql);
    return r.ok && r.statement.kind === 'Query';
  });
  const tokens = queries.map((sql) => {
    const r = lex(sql);
    return r.ok ? r.tokens.starts.map((start, i) => sql.slice(start, r.tokens.ends[i])) : [sql];
  });
  const token = fc.constantFrom('(', ')', ',', '.', '=', '<', '+', '-', '*', '||', '::', '[', ']', 'a', 'b', '1', "'x'", 'NULL', 'AND', 'OR', 'NOT',
    'JOIN', 'LEFT', 'ON', 'USING', 'UNION', 'ALL', 'SELECT', 'FROM', 'WHERE', 'GROUP', 'BY', 'ORDER', 'LIMIT', 'AS', 'IN', 'IS', 'CASE', 'WHEN', 'THEN', 'END', 'DISTINCT', 'OVER');
  const mutation = fc.record({ op: fc.constantFrom('insert', 'delete', 'swap', 'replace', 'duplicate'), at: fc.nat(), other: fc.nat(), token });
  // Time travel is Floe-only syntax the engine resolves through the hook.
  const hook = (ref: TableRef): string | undefined => (ref.kind === 'Scan' && ref.timeTravel !== undefined ? '(SELECT 1 AS x)' : undefined);
  let compared = 0;
  await fc.assert(
    fc.asyncProperty(fc.nat({ max: queries.length - 1 }), fc.array(mutation, { minLength: 1, maxLength: 2 }), async (i, ms) => {
      const out = [...tokens[i]!];
      for (const m of ms) {
        const n = out.length;
        if (n === 0) break;
        const k = m.at % n;
        if (m.op === 'insert') out.splice(k, 0, m.token);
        else if (m.op === 'delete') out.splice(k, 1);
        else if (m.op === 'swap') [out[k], out[m.other % n]] = [out[m.other % n]!, out[k]!];
        else if (m.op === 'replace') out[k] = m.token;
        else out.splice(k, 0, out[k]!);
      }
      const sql = out.join(' ');
      const r = parser.tryParse(sql);
      if (!r.ok || r.statement.kind !== 'Query') return true;
      const original = await duckdbTree(sql);
      if (original === undefined) return true;
      const text = toSql(r.statement, { table: hook });
      const unparsed = await duckdbTree(text);
      if (unparsed === undefined) throw new Error(`DuckDB parses the text but not our unparse\n${sql}\n=> ${text}`);
      const timeTravel = /\bFOR\s+(VERSION|TIMESTAMP|SYSTEM_TIME)\b/i.test(sql);
      if (!timeTravel) {
        compared++;
        if (unparsed !== original) throw new Error(`DuckDB reads it differently\n${sql}\n=> ${text}`);
      }
      return true;
    }),
    { numRuns: 2500, seed: SEED },
  );
  // The count depends on the run's random seed: 193 to 251 (mean 215, sd 13) over 60 seeds, so
  // the former bound of 150 (4.9 sd below) failed about one run in a million. It only has to show
  // that the mutations are not nearly all refused; at 100 a seed falls short less than once in
  // 10^13 (Chernoff bound for 2,500 independent cases).
  t.ok(compared >= 100, `${compared} mutated queries read identically by DuckDB`);
});
