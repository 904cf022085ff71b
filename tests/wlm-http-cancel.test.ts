/**
 * Over real HTTP on loopback (not inject): a query runs to its answer (the request's 'close' event,
 * which fires once the body is read, must not cancel it), and a client that goes away cancels its
 * running query: history records it cancelled by the user, its slot is freed, and the worker serves
 * the next query.
 */
import t from 'tap';
import { onEachBackend } from './helpers/stores.js';
import { startTestServer } from './helpers/server.js';

await onEachBackend(t, async (t, store) => {
  const server = await startTestServer(store, { keepStore: true });
  t.teardown(() => server.close());
  const token = await server.token();
  const url = await server.app.listen({ host: '127.0.0.1', port: 0 });
  const query = (sql: string, signal?: AbortSignal) => fetch(`${url}/api/query`, {
    method: 'POST', headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
    body: JSON.stringify({ sql }), ...(signal ? { signal } : {}),
  });

  await t.test('a query over HTTP runs to its answer', async (t) => {
    const r = await query('SELECT sum(i) AS s FROM range(20000000) t(i)');
    t.equal(r.status, 200);
    t.same(((await r.json()) as { rows: unknown[][] }).rows, [['199999990000000']]);
  });

  await t.test('a client that goes away cancels its query and frees its slot', async (t) => {
    const gone = new AbortController();
    const pending = query('SELECT sum(i) FROM range(100000000000) t(i)', gone.signal).catch((e: unknown) => e);
    const root = () => server.state.wlm.resourceGroupRows().find((g) => g.path === '/root')!;
    // Bounds only for a server that never gets there (a loaded machine may take seconds).
    for (const until = Date.now() + 60_000; root().running < 1 && Date.now() < until;) await new Promise((r) => setTimeout(r, 10));
    t.equal(root().running, 1, 'the query runs');
    gone.abort();
    t.ok((await pending) instanceof Error, 'the client gave up');
    for (const until = Date.now() + 60_000; root().running > 0 && Date.now() < until;) await new Promise((r) => setTimeout(r, 10));
    t.equal(root().running, 0, 'the slot is free again');
    const history = await server.app.inject({ method: 'GET', url: '/api/query-history?status=cancelled', headers: { authorization: `Bearer ${token}` } });
    t.match(history.json(), [{ status: 'cancelled', errorMessage: 'query cancelled: cancelled by the user', resourceGroup: '/root' }]);
    const next = await query('SELECT 5 AS x');
    t.same(((await next.json()) as { rows: unknown[][] }).rows, [[5]]);
  });
});
