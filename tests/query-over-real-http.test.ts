/**
 * `/api/query` over a real socket (the other API tests use `app.inject`, which has no socket): a
 * request whose body has been read must not count as a client that went away. Node emits the
 * request's 'close' once its body is consumed, so a statement tied to it was cancelled (57014)
 * whenever it reached the workload manager after that; only the response's 'close' before it
 * finished means the client left.
 */
import t from 'tap';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startCli } from './helpers/cli.js';

const dir = mkdtempSync(join(tmpdir(), 'floe-real-http-'));
t.teardown(() => rmSync(dir, { recursive: true, force: true }));
const server = await startCli(['--port', '0', '--data-dir', dir], {
  FLOE_BOOTSTRAP_CLIENT_ID: 'floe_http_admin', FLOE_BOOTSTRAP_CLIENT_SECRET: 'fcs_http-secret-0123456789abcdefghij', FLOE_LOG_LEVEL: 'warn',
});
t.teardown(() => server.stop());

const tokenBody = new URLSearchParams({ grant_type: 'client_credentials', client_id: 'floe_http_admin', client_secret: 'fcs_http-secret-0123456789abcdefghij' });
const token = ((await (await fetch(`${server.url}/v1/oauth/tokens`, { method: 'POST', body: tokenBody })).json()) as { access_token: string }).access_token;

async function sql(text: string): Promise<{ status: number; body: { rows?: unknown[][]; error?: string } }> {
  const r = await fetch(`${server.url}/api/query`, {
    method: 'POST', headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' }, body: JSON.stringify({ sql: text }),
  });
  return { status: r.status, body: (await r.json()) as { rows?: unknown[][]; error?: string } };
}

t.test('queries over a real socket complete', async (t) => {
  t.equal((await sql('CREATE SCHEMA s')).status, 200);
  t.equal((await sql('CREATE TABLE s.t (a int, b string)')).status, 200);
  t.equal((await sql(`INSERT INTO s.t VALUES (1, 'x'), (2, 'y'), (3, 'z')`)).status, 200);
  for (let i = 0; i < 10; i++) {
    const r = await sql('SELECT a, b FROM s.t ORDER BY a');
    t.equal(r.status, 200, `query ${i}: ${r.body.error ?? 'ok'}`);
    t.same(r.body.rows, [[1, 'x'], [2, 'y'], [3, 'z']]);
  }
  const parallel = await Promise.all(Array.from({ length: 16 }, () => sql('SELECT count(*) FROM s.t')));
  t.same(parallel.map((r) => r.status), parallel.map(() => 200), 'concurrent queries all complete');
});

t.test('a client that goes away cancels its statement', async (t) => {
  // A cross join of 22 copies of a 3-row table (3^22 rows: hours); the client aborts once the
  // statement runs (not after a fixed time, which on a loaded machine may come before the server
  // has even read the request).
  const controller = new AbortController();
  const tables = Array.from({ length: 22 }, (_, i) => `s.t t${i}`).join(', ');
  const pending = fetch(`${server.url}/api/query`, {
    method: 'POST', signal: controller.signal, headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
    body: JSON.stringify({ sql: `SELECT count(*) FROM ${tables}` }),
  }).catch((e: unknown) => e);
  for (const until = Date.now() + 120_000; Date.now() < until;) {
    const r = await fetch(`${server.url}/api/qos/stats`, { headers: { authorization: `Bearer ${token}` } });
    const stats = (await r.json()) as { resource_groups: { path: string; running: number }[] };
    if ((stats.resource_groups.find((g) => g.path === '/root')?.running ?? 0) >= 1) break;
    await new Promise((done) => setTimeout(done, 50));
  }
  controller.abort();
  t.ok((await pending) instanceof Error, 'the client gave up');
  const deadline = Date.now() + 60_000;
  let status: unknown;
  while (Date.now() < deadline) {
    const h = await sql(`SELECT status FROM system.query_history WHERE sql LIKE 'SELECT count(*) FROM s.t t0, %'`);
    status = h.body.rows?.[0]?.[0];
    if (status === 'cancelled') break;
    await new Promise((done) => setTimeout(done, 200));
  }
  t.equal(status, 'cancelled', 'history shows the statement cancelled');
});

t.test('an Arrow answer is built when the client asks for one', async (t) => {
  const { tableFromIPC } = await import('apache-arrow');
  const r = await fetch(`${server.url}/api/query`, {
    method: 'POST', body: JSON.stringify({ sql: 'SELECT a, b FROM s.t ORDER BY a' }),
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json', accept: 'application/vnd.apache.arrow.stream' },
  });
  t.equal(r.status, 200);
  t.match(r.headers.get('content-type') ?? '', /application\/vnd\.apache\.arrow\.stream/);
  const table = tableFromIPC(new Uint8Array(await r.arrayBuffer()));
  t.same(table.toArray().map((row) => [Number(row.a), String(row.b)]), [[1, 'x'], [2, 'y'], [3, 'z']]);
  const json = await sql('SELECT a FROM s.t ORDER BY a');
  t.same(json.body.rows, [[1], [2], [3]], 'a JSON answer of the same query still has its rows');
});
