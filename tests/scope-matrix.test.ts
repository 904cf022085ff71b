/**
 * The scope matrix: for every route the server registers, no token → 401 (unless the route is
 * open), a token with every scope but the route's → 403, a token with only the route's scope →
 * neither 401 nor 403. And no route can be registered without a row in the access table.
 */
import t from 'tap';
import Fastify from 'fastify';
import { openStore } from '../catalog/store/open-store.js';
import { ALL_SCOPES } from '../engine/principals/scopes.js';
import { ROUTE_ACCESS } from '../server/route-access.js';
import { requireAccessRules } from '../server/app.js';
import { startTestServer } from './helpers/server.js';

const store = await openStore({ kind: 'pglite-memory' });
const server = await startTestServer(store);
t.teardown(() => server.close());

const registered = [...ROUTE_ACCESS.keys()].filter((key) => {
  const [method, url] = key.split(' ') as [string, string];
  return server.app.hasRoute({ method: method as 'GET', url });
});
t.ok(registered.length >= 6, `routes registered: ${registered.join(', ')}`);

function concrete(pattern: string): string {
  return pattern.replace(/:([A-Za-z]+)/g, (_m, name: string) => `sample_${name}`);
}

for (const key of registered) {
  const [method, pattern] = key.split(' ') as [string, string];
  const access = ROUTE_ACCESS.get(key)!;
  const url = concrete(pattern);
  t.test(key, async (t) => {
    const anonymous = await server.app.inject({ method: method as 'GET', url });
    if (access.kind === 'public') {
      t.not(anonymous.statusCode, 401, 'open route needs no token');
      return;
    }
    t.equal(anonymous.statusCode, 401, 'no token');
    if (access.kind === 'scim-token') {
      // SCIM takes the tenant's SCIM token only: no access token, whatever its scopes, is one.
      const jwt = await server.app.inject({ method: method as 'GET', url, headers: { authorization: `Bearer ${await server.token()}` } });
      t.equal(jwt.statusCode, 401, 'an access token is not a SCIM token');
      return;
    }
    if (access.kind === 'scope' || access.kind === 'scope-or-invitation') {
      const others = ALL_SCOPES.filter((s) => s !== access.scope).join(' ');
      const without = await server.app.inject({ method: method as 'GET', url, headers: { authorization: `Bearer ${await server.token(others)}` } });
      t.equal(without.statusCode, 403, `every scope but ${access.scope}`);
    }
    const scope = access.kind === 'scope' || access.kind === 'scope-or-invitation' ? access.scope : 'sql';
    const withScope = await server.app.inject({ method: method as 'GET', url, headers: { authorization: `Bearer ${await server.token(scope)}` } });
    t.not(withScope.statusCode, 401, `with ${scope}`);
    t.not(withScope.statusCode, 403, `with ${scope}`);
  });
}

t.test('a route without an access rule stops the server from starting', async (t) => {
  const app = Fastify({ exposeHeadRoutes: false });
  requireAccessRules(app);
  t.doesNotThrow(() => app.get('/health', async () => 'ok'));
  t.throws(() => app.get('/v1/secret-backdoor', async () => 'x'), /without an access rule/);
});
