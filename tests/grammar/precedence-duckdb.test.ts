/**
 * Operator precedence and associativity against DuckDB's own parser: random expressions over every
 * operator, written with and without parentheses. Whenever both DuckDB and Floe accept the text,
 * DuckDB's parse tree of our unparsed SQL equals its tree of the original text (we read each
 * expression as DuckDB does); whenever Floe accepts it, DuckDB accepts our unparsed SQL.
 */
import t from 'tap';
import fc from 'fast-check';
import { DuckDBInstance } from '@duckdb/node-api';
import { createParser, toSql } from '../../grammar/index.js';

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
