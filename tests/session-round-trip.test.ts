/**
 * The client carries its session (issue 16, item 9), over real HTTP: after `SET
 * svc.workload_class`, sending back the `session` object the answer returned, as it came, keeps
 * the setting: the next statements run in that class (history says so) and a further SET answers
 * with both settings. `USE` travels the same way. The older form (settings as the object's own
 * keys) still works; a catalog given at the top level and in `session` must agree.
 */
import t from 'tap';
import { openStore } from '../catalog/store/open-store.js';
import { startTestServer } from './helpers/server.js';
import { listenOnLoopback } from './helpers/http.js';

const store = await openStore({ kind: 'pglite-memory' });
const server = await startTestServer(store);
t.teardown(() => server.close());
const http = await listenOnLoopback(server);
const token = await server.token();

interface Answer { query_id: string; rows: unknown[][]; session?: { catalog: string; schema: string; settings: Record<string, string> }; error?: string; message?: string }
const run = async (fields: Record<string, unknown>) => {
  const r = await http.query(token, fields);
  return { status: r.status, body: r.json as Answer };
};
const classOf = async (queryId: string) =>
  ((await http.request('GET', `/api/query-history/${queryId}`, { token })).json as { workloadClass: string | null }).workloadClass;

t.test('the session an answer returned is accepted back and keeps the setting', async (t) => {
  const set = await run({ sql: "SET svc.workload_class = 'batch'" });
  t.equal(set.status, 200);
  const session = set.body.session!;
  t.same(session.settings, { 'svc.workload_class': 'batch' });

  const next = await run({ sql: 'SELECT 1 AS one', session });
  t.equal(next.status, 200, `the returned session is not malformed: ${next.body.message ?? ''}`);
  t.same(next.body.rows, [[1]]);
  t.equal(await classOf(next.body.query_id), 'batch', 'the statement ran in the class the session set');

  const more = await run({ sql: "SET svc.query_source = 'nightly-etl'", session });
  t.equal(more.status, 200);
  t.same(more.body.session!.settings, { 'svc.workload_class': 'batch', 'svc.query_source': 'nightly-etl' }, 'a further SET keeps the first');
  const reset = await run({ sql: 'RESET svc.workload_class', session: more.body.session });
  t.same(reset.body.session!.settings, { 'svc.query_source': 'nightly-etl' });
  const plain = await run({ sql: 'SELECT 2', session: reset.body.session });
  t.not(await classOf(plain.body.query_id), 'batch', 'after RESET the class is computed again');
});

t.test('USE travels in the session too', async (t) => {
  t.equal((await run({ sql: 'CREATE SCHEMA reporting' })).status, 200);
  t.equal((await run({ sql: 'CREATE TABLE reporting.kpis (n int)' })).status, 200);
  const use = await run({ sql: 'USE reporting' });
  t.match(use.body.session, { catalog: 'default', schema: 'reporting' });
  const q = await run({ sql: 'SELECT count(*) FROM kpis', session: use.body.session });
  t.equal(q.status, 200, q.body.message ?? '');
  const clash = await run({ sql: 'SELECT 1', schema: 'default', session: use.body.session });
  t.equal(clash.status, 400, 'a schema at the top level and another in session is refused, not guessed');
  t.match(clash.body, { error: 'INVALID_REQUEST', message: /session\.schema/ });
  t.equal((await run({ sql: 'SELECT count(*) FROM kpis', schema: 'reporting', session: use.body.session })).status, 200, 'agreeing values are fine');
});

t.test('the flat form and bad sessions', async (t) => {
  const flat = await run({ sql: 'SELECT 3', session: { 'svc.workload_class': 'medium' } });
  t.equal(flat.status, 200);
  t.equal(await classOf(flat.body.query_id), 'medium');
  for (const bad of [{ settings: { 'svc.workload_class': 7 } }, { settings: 'batch' }, { catalog: '' }, [], { 'svc.workload_class': 'batch', settings: { 'svc.workload_class': 'medium' } }]) {
    const r = await run({ sql: 'SELECT 1', session: bad });
    t.equal(r.status, 400, JSON.stringify(bad));
    t.equal(r.body.error, 'INVALID_REQUEST');
  }
  const unknown = await run({ sql: 'SELECT 1', session: { settings: { 'memory_limit': '1GB' } } });
  t.equal(unknown.status, 400, 'unknown settings are still refused');
  t.equal(unknown.body.error, 'INVALID_PARAMETER');
});
