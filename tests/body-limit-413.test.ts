/**
 * A request body over `server.body_limit_bytes` is 413 on the Iceberg catalog (`/v1`) as on the
 * query interface (`/api`), each in its own error format (issue 16, item 9), over real HTTP: with
 * a Content-Length past the limit and with a chunked body that only grows past it. A body under
 * the limit still reaches the handler.
 */
import t from 'tap';
import { openStore } from '../catalog/store/open-store.js';
import { startTestServer } from './helpers/server.js';
import { listenOnLoopback } from './helpers/http.js';

const LIMIT = 4096;
const store = await openStore({ kind: 'pglite-memory' });
const server = await startTestServer(store, { config: (c) => ({ ...c, server: { ...c.server, body_limit_bytes: LIMIT } }) });
t.teardown(() => server.close());
const http = await listenOnLoopback(server);
const token = await server.token();

const bigNamespace = { namespace: ['big'], properties: { blob: 'x'.repeat(LIMIT * 2) } };
const bigQuery = { sql: `SELECT '${'x'.repeat(LIMIT * 2)}'` };

/** Sends `body` as a chunked stream (no Content-Length), in 1 KiB pieces. */
async function chunked(path: string, body: unknown): Promise<{ status: number; json: unknown }> {
  const bytes = new TextEncoder().encode(JSON.stringify(body));
  const stream = new ReadableStream<Uint8Array>({
    start(controller) {
      for (let i = 0; i < bytes.length; i += 1024) controller.enqueue(bytes.slice(i, i + 1024));
      controller.close();
    },
  });
  const r = await fetch(`${http.url}${path}`, {
    method: 'POST', body: stream, duplex: 'half', headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
  } as RequestInit & { duplex: 'half' });
  return { status: r.status, json: await r.json() };
}

t.test('/v1 answers 413 in the Iceberg error model', async (t) => {
  const r = await http.request('POST', '/v1/default/namespaces', { token, body: bigNamespace });
  t.equal(r.status, 413);
  t.match(r.json, { error: { code: 413, type: 'BadRequestException', message: /too large/ } });
  const streamed = await chunked('/v1/default/namespaces', bigNamespace);
  t.equal(streamed.status, 413, 'a chunked body growing past the limit too');
  t.match(streamed.json, { error: { code: 413 } });
  const small = await http.request('POST', '/v1/default/namespaces', { token, body: { namespace: ['small'] } });
  t.equal(small.status, 200, 'a body under the limit is served');
});

t.test('/api answers 413 in its own format', async (t) => {
  const r = await http.query(token, bigQuery);
  t.equal(r.status, 413);
  t.match(r.json, { error: String, message: /too large/i, sql_state: /^[0-9A-Z]{5}$/ });
  const streamed = await chunked('/api/query', bigQuery);
  t.equal(streamed.status, 413);
  t.equal((await http.query(token, { sql: 'SELECT 1' })).status, 200);
});
