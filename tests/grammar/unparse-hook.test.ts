/**
 * The engine's view of the grammar: the table hook of unparse (which references it sees, how
 * aliases and time travel come out), `query_type` per statement and the plan features used for
 * workload classification.
 */
import t from 'tap';
import { createParser, toSql, unparseQuery, queryType, planFeatures, type TableRef, type Statement } from '../../grammar/index.js';
import { loadValidCorpus } from './corpus.js';

const parser = createParser({ cacheSize: 0 });
const query = (sql: string) => {
  const s = parser.parse(sql);
  if (s.kind !== 'Query') throw new Error('not a query');
  return s.body;
};

t.test('the hook sees every table reference and nothing else', async (t) => {
  const seen: string[] = [];
  const hook = (ref: TableRef): string | undefined => {
    seen.push(ref.kind === 'Scan' ? `Scan ${ref.table.parts.map((p) => p.name).join('.')}` : `TableFunction ${ref.name.parts.map((p) => p.name).join('.')}`);
    return undefined;
  };
  const sql = 'WITH c AS (SELECT * FROM lake.s.a) SELECT * FROM c JOIN s.b ON c.k = b.k, range(3) r WHERE EXISTS (SELECT 1 FROM d WHERE d.k = c.k)';
  const out = unparseQuery(query(sql), { table: hook });
  t.same(seen.sort(), ['Scan d', 'Scan lake.s.a', 'Scan s.b', 'TableFunction range'], 'scans (in CTEs and subqueries too) and table functions; CTE references are not table references');
  t.equal(out, toSql(parser.parse(sql)), 'a hook that returns undefined changes nothing');
});

t.test('a replaced reference keeps its alias, or gets its table name as alias', async (t) => {
  const files = (ref: TableRef): string => `read_parquet(['s3://b/${ref.kind === 'Scan' ? ref.table.parts.at(-1)!.name : 'f'}/1.parquet'])`;
  t.equal(
    unparseQuery(query('SELECT lineitem.l_orderkey, o.o_orderkey FROM tpch.lineitem JOIN tpch.orders o ON l_orderkey = o_orderkey'), { table: files }),
    "SELECT lineitem.l_orderkey, o.o_orderkey FROM read_parquet(['s3://b/lineitem/1.parquet']) AS lineitem JOIN read_parquet(['s3://b/orders/1.parquet']) AS o ON l_orderkey = o_orderkey",
  );
  t.equal(
    unparseQuery(query('SELECT * FROM t AS x (a, b)'), { table: () => '(SELECT 1, 2)' }),
    'SELECT * FROM (SELECT 1, 2) AS x(a, b)',
    'column aliases are kept',
  );
  const travelled: TableRef[] = [];
  const out = unparseQuery(query('SELECT * FROM t FOR VERSION AS OF 42 AS v'), {
    table: (ref) => {
      travelled.push(ref);
      return "read_parquet(['snapshot-42.parquet'])";
    },
  });
  t.equal(out, "SELECT * FROM read_parquet(['snapshot-42.parquet']) AS v", 'time travel is resolved by the hook, not printed');
  const ref = travelled[0]!;
  t.ok(ref.kind === 'Scan' && ref.timeTravel?.kind === 'AsOfVersion', 'the hook receives the time travel clause');
});

t.test('the hook also applies to DML sources; targets are names the engine resolves', async (t) => {
  const seen: string[] = [];
  const hook = (ref: TableRef): string | undefined => {
    if (ref.kind === 'Scan') seen.push(ref.table.parts.map((p) => p.name).join('.'));
    return undefined;
  };
  toSql(parser.parse('INSERT INTO target SELECT * FROM source1'), { table: hook });
  toSql(parser.parse('MERGE INTO target USING source2 s ON target.k = s.k WHEN MATCHED THEN DELETE'), { table: hook });
  toSql(parser.parse('UPDATE target SET a = 1 FROM source3 WHERE target.k = source3.k'), { table: hook });
  toSql(parser.parse('DELETE FROM target USING source4 WHERE target.k = source4.k'), { table: hook });
  t.same(seen, ['source1', 'source2', 'source3', 'source4']);
});

t.test('query_type of every corpus statement', async (t) => {
  const expected = (s: Statement, area: string): string => {
    if (s.kind.startsWith('Show') || s.kind.startsWith('Describe')) return 'show';
    if (area === 'principals') return 'principal';
    return queryType(s);
  };
  const counts = new Map<string, number>();
  for (const { id, sql, area } of loadValidCorpus()) {
    const s = parser.parse(sql);
    const q = queryType(s);
    counts.set(q, (counts.get(q) ?? 0) + 1);
    t.equal(q, expected(s, area), `${id}: ${q}`);
    if (area === 'workload-session' && !s.kind.startsWith('Show') && !s.kind.startsWith('Describe')) t.equal(q, 'set', `${id}: set`);
    if (area === 'ddl' && !['ShowCatalogs', 'ShowSchemas', 'ShowTables', 'ShowViews', 'DescribeTable', 'Use'].includes(s.kind)) t.equal(q, 'ddl', `${id}: ddl`);
  }
  t.same([...counts.keys()].sort(), ['copy', 'ddl', 'delete', 'explain', 'insert', 'merge', 'principal', 'select', 'set', 'show', 'update'], 'every query_type occurs');
});

t.test('plan features', async (t) => {
  const f = (sql: string) => planFeatures(parser.parse(sql));
  t.same(f('SELECT 1'), { joins: 0, scans: 0, windowFunctions: 0, aggregates: 0 });
  t.same(f('SELECT count(*) FROM t'), { joins: 0, scans: 1, windowFunctions: 0, aggregates: 1 });
  t.same(f('SELECT * FROM a JOIN b ON a.k = b.k LEFT JOIN c USING (k), d'), { joins: 3, scans: 4, windowFunctions: 0, aggregates: 0 });
  t.same(f('SELECT rank() OVER (ORDER BY x), sum(x) OVER w, sum(y) FROM t WINDOW w AS (ORDER BY x)'), { joins: 0, scans: 1, windowFunctions: 2, aggregates: 1 });
  t.same(f('WITH c AS (SELECT * FROM t) SELECT * FROM c, c AS c2'), { joins: 1, scans: 1, windowFunctions: 0, aggregates: 0 }, 'a CTE read twice is scanned once');
  t.same(f('SELECT * FROM t WHERE x IN (SELECT y FROM u WHERE u.z = (SELECT max(z) FROM v))'), { joins: 0, scans: 3, windowFunctions: 0, aggregates: 1 }, 'subqueries count');
  t.same(f('UPDATE t SET a = 1 FROM u WHERE t.k = u.k'), { joins: 0, scans: 2, windowFunctions: 0, aggregates: 0 }, 'the UPDATE target is a scan');
  t.same(f('SELECT count(*) FILTER (WHERE x) FROM t'), { joins: 0, scans: 1, windowFunctions: 0, aggregates: 1 });
});
