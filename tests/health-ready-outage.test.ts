/**
 * /health/ready follows the metadata store: 503 with the reason while PostgreSQL is unreachable,
 * 200 again once it is back. The outage is real: the store talks to PostgreSQL through a loopback
 * proxy that the test cuts.
 */
import t from 'tap';
import { openStore } from '../catalog/store/open-store.js';
import { createPostgresDatabase, POSTGRES_ADMIN_URL } from './helpers/stores.js';
import { startTestServer } from './helpers/server.js';
import { startTcpProxy } from './helpers/tcp-proxy.js';

const db = await createPostgresDatabase();
if (!db) {
  if (process.env.CI === 'true') t.fail(`PostgreSQL is not reachable at ${POSTGRES_ADMIN_URL} (required in CI)`);
  else t.pass('skipped: PostgreSQL is not reachable');
} else t.test('readiness through an outage', async (t) => {
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
  const token = await server.token();
  const ready = () => server.app.inject({ method: 'GET', url: '/health/ready', headers: { authorization: `Bearer ${token}` } });

  t.equal((await ready()).statusCode, 200, 'ready while PostgreSQL answers');
  proxy.cut();
  const down = await ready();
  t.equal(down.statusCode, 503, 'not ready while PostgreSQL is unreachable');
  t.match(down.body, /metadata store unreachable/);
  // Liveness does not depend on the store... but this listener authenticates through it:
  // the management listener is what probes use (tests/management-listener.test.ts).
  proxy.restore();
  let back = await ready();
  for (let i = 0; i < 20 && back.statusCode !== 200; i++) {
    await new Promise((r) => setTimeout(r, 100));
    back = await ready();
  }
  t.equal(back.statusCode, 200, 'ready again once PostgreSQL is back');
});
