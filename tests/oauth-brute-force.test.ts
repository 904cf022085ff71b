/** Failed client authentications are limited per client id and per address. */
import t from 'tap';
import { openStore } from '../catalog/store/open-store.js';
import { ManualClock, form, startTestServer } from './helpers/server.js';

const store = await openStore({ kind: 'pglite-memory' });
const clock = new ManualClock();
const server = await startTestServer(store, {
  clock,
  config: (c) => ({ ...c, auth: { ...c.auth, rate_limit: { window_seconds: 60, max_failures_per_client: 3, max_failures_per_address: 5 } } }),
});
t.teardown(() => server.close());

const attempt = (clientId: string, secret: string, ip = '127.0.0.1') => {
  const f = form({ grant_type: 'client_credentials', client_id: clientId, client_secret: secret });
  return server.app.inject({ method: 'POST', url: '/v1/oauth/tokens', headers: f.headers, payload: f.payload, remoteAddress: ip });
};

t.test('per client id: after 3 failures even the right secret waits', async (t) => {
  for (let i = 0; i < 3; i++) t.equal((await attempt(server.clientId, `wrong-${i}-xxxxxxxxxxxxxxxx`, '10.0.0.1')).statusCode, 401);
  const blocked = await attempt(server.clientId, server.clientSecret, '10.0.0.2');
  t.equal(blocked.statusCode, 429);
  t.equal(blocked.json().error, 'invalid_client');
  t.ok(Number(blocked.headers['retry-after']) > 0);
  clock.advance(61_000);
  t.equal((await attempt(server.clientId, server.clientSecret, '10.0.0.2')).statusCode, 200, 'the window passes');
});

t.test('per address: many client ids from one address', async (t) => {
  for (let i = 0; i < 5; i++) await attempt(`floe_guess_${i}_xxxx`, 'nope-nope-nope-nope-nope', '10.0.0.9');
  t.equal((await attempt(server.clientId, server.clientSecret, '10.0.0.9')).statusCode, 429);
  t.equal((await attempt(server.clientId, server.clientSecret, '10.0.0.10')).statusCode, 200, 'other addresses are unaffected');
});
