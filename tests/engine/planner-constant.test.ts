/**
 * Constant queries answered by the coordinator (engine/planner/constant.ts) give exactly what a
 * DuckDB worker gives for the same text: generated select lists of integer and string literals,
 * with and without aliases, are run both ways through the whole engine (the Arrow answer is always
 * a worker's) and compared; other forms go to a worker; history records both.
 */
import t from 'tap';
import fc from 'fast-check';
import { Floe } from '../../index.js';
import { Parser } from '../../grammar/index.js';
import { stringSql } from '../../grammar/unparse.js';
import { constantResult } from '../../engine/planner/constant.js';

const floe = await Floe.open();
t.teardown(() => floe.close());
const parser = new Parser();
const admin = { tenantId: 'default', principalId: 'x', isTenantAdmin: true };

const bodyOf = (sql: string) => {
  const s = parser.parse(sql);
  if (s.kind !== 'Query') throw new Error(sql);
  return s.body;
};

t.test('which select lists are constant', async (t) => {
  t.same(constantResult(bodyOf('SELECT 1')), { columns: ['1'], types: ['INTEGER'], rows: [[1]] });
  t.same(constantResult(bodyOf("select 007, 'it''s' AS Who, 2147483647 \"Max Int\"")), {
    columns: ['7', 'Who', 'Max Int'], types: ['INTEGER', 'VARCHAR', 'INTEGER'], rows: [[7, "it's", 2147483647]],
  });
  for (const sql of [
    'SELECT 2147483648', 'SELECT -1', 'SELECT +1', 'SELECT 1.5', 'SELECT 1e3', 'SELECT TRUE', 'SELECT NULL', 'SELECT 1 + 1',
    "SELECT CAST(1 AS BIGINT)", "SELECT DATE '2024-01-01'", 'SELECT * FROM (SELECT 1)', 'SELECT 1 WHERE false', 'SELECT 1 LIMIT 0',
    'SELECT DISTINCT 1', 'SELECT 1 UNION ALL SELECT 2', 'SELECT 1 ORDER BY 1', 'WITH c AS (SELECT 1) SELECT 1', 'VALUES (1)', 'SELECT count(*)',
  ]) t.equal(constantResult(bodyOf(sql)), undefined, sql);
});

t.test('the coordinator answers as a DuckDB worker does', async (t) => {
  const literal = fc.oneof(
    fc.integer({ min: 0, max: 2 ** 31 - 1 }).map((n) => String(n)),
    fc.tuple(fc.integer({ min: 1, max: 3 }), fc.integer({ min: 0, max: 999 })).map(([zeros, n]) => `${'0'.repeat(zeros)}${n}`),
    fc.string({ maxLength: 12 }).map(stringSql),
    fc.string({ unit: 'grapheme', maxLength: 6 }).map(stringSql),
    fc.string({ unit: 'binary-ascii', maxLength: 6 }).filter((s) => !s.includes('\0')).map(stringSql),
    fc.constantFrom("''", "'ok'", "'it''s'", "'é ✓'", "'a\nb'", "'a\u2028b'"),
  );
  const alias = fc.option(fc.oneof(
    // Bare names with a prefix no keyword has, in any case (DuckDB keeps an alias's case).
    fc.stringMatching(/^[a-zA-Z0-9_]{0,8}$/).map((s) => `c_${s}`),
    fc.string({ minLength: 1, maxLength: 8 }).filter((s) => !s.includes('\0')).map((s) => `"${s.replaceAll('"', '""')}"`),
  ), { nil: undefined });
  const item = fc.tuple(literal, alias, fc.boolean()).map(([l, a, as]) => (a === undefined ? l : `${l}${as ? ' AS' : ''} ${a}`));
  let compared = 0;
  // The SQL names the assertion with everything outside printable ASCII escaped: tap ends a test's
  // output at a U+2028 (LINE SEPARATOR) in an assertion's name, which the grapheme strings above
  // can hold, and the test then fails with "test count != plan" and no failing assertion.
  const named = (sql: string) => sql.replace(/[^\x20-\x7e]/gu, (c) => `\\u{${c.codePointAt(0)!.toString(16)}}`);
  await fc.assert(fc.asyncProperty(fc.array(item, { minLength: 1, maxLength: 4 }), async (items) => {
    const sql = `SELECT ${items.join(', ')}`;
    if (constantResult(bodyOf(sql)) === undefined) return;
    const here = await floe.sql(sql);
    const worker = await floe.sql(sql, { arrow: true });
    t.same({ columns: here.columns, types: here.types, rows: here.rows }, { columns: worker.columns, types: worker.types, rows: worker.rows }, named(sql));
    compared++;
  }), { numRuns: 150 });
  t.ok(compared >= 100, `${compared} select lists compared`);
});

t.test('history records a constant query with no fragment, a worker query with one', async (t) => {
  await floe.sql("SELECT 31 AS constant_probe, 'ok'");
  await floe.sql('SELECT 31 + 0 AS worker_probe');
  const h = await floe.state.history.list(admin, { limit: 500, queryType: 'select' });
  t.match(h.find((r) => String(r.sql).includes('constant_probe')), { status: 'completed', fragments: 0, rows_produced: 1, resource_group: '/root', workload_class: 'interactive' });
  t.match(h.find((r) => String(r.sql).includes('worker_probe')), { status: 'completed', fragments: 1, rows_produced: 1 });
  const plan = await floe.sql('EXPLAIN SELECT 1');
  t.ok(plan.rows.some((r) => /answered by the coordinator/.test(String(r[0]))), 'EXPLAIN says who answers');
  const analyzed = await floe.sql('EXPLAIN ANALYZE SELECT 1');
  t.ok(analyzed.rows.some((r) => /executed: 1 rows, 0 fragments/.test(String(r[0]))), 'EXPLAIN ANALYZE runs it the same way');
  const other = await floe.sql('EXPLAIN SELECT 1.5');
  t.notOk(other.rows.some((r) => /answered by the coordinator/.test(String(r[0]))), 'a decimal goes to a worker');
});

t.test('a repeated constant query is classified per session: the class set for one session does not stick to the text', async (t) => {
  const text = 'SELECT 77 AS class_probe';
  const batch = await floe.sql(text, { session: { 'svc.workload_class': 'batch' } });
  const batchAgain = await floe.sql(text, { session: { 'svc.workload_class': 'batch' } });
  const plain = await floe.sql(text);
  const medium = await floe.sql(text, { session: { 'svc.workload_class': 'medium' } });
  const h = await floe.state.history.list(admin, { limit: 500, queryType: 'select' });
  const classOf = (queryId: string) => h.find((r) => r.query_id === queryId)?.workload_class;
  t.same([batch, batchAgain, plain, medium].map((a) => classOf(a.queryId)), ['batch', 'batch', 'interactive', 'medium']);
  t.same(plain.rows, [[77]]);
});
