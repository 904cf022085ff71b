/**
 * Liveness and readiness through a store outage, over real HTTP: `/health` is liveness and answers
 * 200 while the process lives, the store down or not (a token whose signature holds is enough
 * when the store cannot say more about its principal); `/health/ready` follows the metadata store:
 * 503 with the reason while PostgreSQL is unreachable, 200 again once it is back. The outage is
 * real: the store talks to PostgreSQL through a loopback proxy that the test cuts.
 */
import t from 'tap';
import { openStore } from '../catalog/store/open-store.js';
import { createPostgresDatabase, POSTGRES_ADMIN_URL } from './helpers/stores.js';
import { startTestServer } from './helpers/server.js';
import { startTcpProxy } from './helpers/tcp-proxy.js';
import { listenOnLoopback } from './helpers/http.js';

const db = await createPostgresDatabase();
if (!db) {
  if (process.env.CI === 'true') t.fail(`PostgreSQL is not reachable at ${POSTGRES_ADMIN_URL} (required in CI)`);
  else t.pass('skipped: PostgreSQL is not reachable');
} else t.test('liveness and readiness through an outage', async (t) => {
  const target = new URL(db.url);
  const proxy = await startTcpProxy(target.hostname, Number(target.port || 5432));
  const viaProxy = new URL(db.url);
  viaProxy.host = `127.0.0.1:${proxy.port}`;
  const store = await openStore({ kind: 'postgres', connectionString: viaProxy.toString(), poolSize: 4 });
  const server = await startTestServer(store);
  t.teardown(async () => {
    await server.close();
    await proxy.close();
    await db.drop();
  });
  const http = await listenOnLoopback(server);
  const token = await server.token();
  // A second token that has not been used yet: its principal is read from the store on first use.
  const fresh = await server.token('catalog:read');
  const ready = () => http.request('GET', '/health/ready', { token });
  const live = (as = token) => http.request('GET', '/health', { token: as });

  t.equal((await live()).status, 200, 'live while PostgreSQL answers');
  t.equal((await ready()).status, 200, 'ready while PostgreSQL answers');
  t.equal((await live('not-a-token')).status, 401, 'liveness still wants a token');
  proxy.cut();
  const down = await ready();
  t.equal(down.status, 503, 'not ready while PostgreSQL is unreachable');
  t.match(down.text, /metadata store unreachable/);
  const alive = await live();
  t.equal(alive.status, 200, `live while PostgreSQL is unreachable: ${alive.text}`);
  t.same(alive.json, { status: 'ok' });
  t.equal((await live(fresh)).status, 200, 'live for a token first seen during the outage');
  t.equal((await live('not-a-token')).status, 401, 'a forged token is refused during the outage too');
  proxy.restore();
  let back = await ready();
  // The pool reconnects on its own time; the bound is only for a store that never comes back.
  for (const until = Date.now() + 60_000; back.status !== 200 && Date.now() < until;) {
    await new Promise((r) => setTimeout(r, 100));
    back = await ready();
  }
  t.equal(back.status, 200, 'ready again once PostgreSQL is back');
  t.equal((await live()).status, 200);
});
