/**
 * Credentials and signatures never reach another catalog's files, of another tenant either (issue
 * 18; docs/catalog.md "Catalog locations"), on RGW with STS and session policies.
 *
 * Two tenants' catalogs in one bucket, both vending through the same role. Were one warehouse
 * inside the other's, a user of the outer catalog could create a table inside the inner one's
 * warehouse (at another table's folder) and be given keys and signatures for its files. Now:
 * - a catalog whose warehouse is, holds or lies inside another's is refused at creation (400,
 *   naming only the location: not the other catalog, not its tenant);
 * - catalogs already stored overlapping (planted in the store, as before the rule) get no
 *   credential and no signature for any of their tables (403 naming the warehouse), until the
 *   overlap is gone; then every table gets its own again.
 * Each "reaches" check uses what Floe returned on RGW itself: the vended keys try to read the
 * victim's metadata file, and the signing route is asked to sign a GET of it.
 */
import t from 'tap';
import { openStore } from '../../catalog/store/open-store.js';
import { createTenantWithAdmin } from '../../engine/principals/bootstrap.js';
import { onRgw } from '../helpers/rgw.js';
import { prepareVendingRole, reachOf, vendingProfile } from '../helpers/vending.js';
import { CatalogClient, sampleSchema, startCatalogServer } from '../catalog/helpers.js';

const BUCKET = 'xcat';

await onRgw(t, 'overlapping catalogs get no credential and no signature', async (t, rgw) => {
  await prepareVendingRole(rgw, BUCKET);
  const store = await openStore({ kind: 'pglite-memory' });
  t.teardown(() => store.close());
  const { client, server } = await startCatalogServer(t, store);
  const acmeAdmin = await createTenantWithAdmin(store, 'acme');
  const form = new URLSearchParams({ grant_type: 'client_credentials', client_id: acmeAdmin.credentials.clientId, client_secret: acmeAdmin.credentials.clientSecret });
  const tok = await server.app.inject({ method: 'POST', url: '/v1/oauth/tokens', headers: { 'content-type': 'application/x-www-form-urlencoded' }, payload: form.toString() });
  const acme = new CatalogClient(client.send, tok.json().access_token);

  // Tenant default's catalog `sales` at s3://xcat/wh-a, tenant acme's `ops` at s3://xcat/wh-b.
  t.equal((await client.post('/v1/catalogs', { name: 'sales', 'storage-profile': vendingProfile(rgw, BUCKET, 'wh-a') })).status, 201);
  t.equal((await acme.post('/v1/catalogs', { name: 'ops', 'storage-profile': vendingProfile(rgw, BUCKET, 'wh-b') })).status, 201);
  for (const [as, catalog] of [[client, 'sales'], [acme, 'ops']] as const) {
    t.equal((await as.post(`/v1/${catalog}/namespaces`, { namespace: ['db'], properties: {} })).status, 200);
  }
  const orders = await client.post('/v1/sales/namespaces/db/tables', { name: 'orders', schema: sampleSchema() });
  t.equal(orders.status, 200);
  const ordersLocation: string = orders.body.metadata.location;
  const victimKey = (orders.body['metadata-location'] as string).slice(`s3://${BUCKET}/`.length);
  t.equal((await acme.post('/v1/ops/namespaces/db/tables', { name: 'events', schema: sampleSchema() })).status, 200);

  /** What `table`'s vended keys and Floe's signing reach of the victim's file. */
  const reaches = (as: CatalogClient, table: string) => reachOf(as, rgw, BUCKET, table, victimKey);

  await t.test('a catalog at, above or inside another tenant\'s warehouse is refused', async (t) => {
    for (const [what, prefix] of [['equal', 'wh-a'], ['inside', 'wh-a/db'], ['the bucket root, holding it', '']] as const) {
      const r = await acme.post('/v1/catalogs', { name: 'sneaky', 'storage-profile': vendingProfile(rgw, BUCKET, prefix) });
      t.equal(r.status, 400, `${what}: ${r.text.slice(0, 300)}`);
      t.match(r.body.error.message, /is in use: it (is|contains|lies inside) another catalog's warehouse/, `${what}: the location is in use`);
      t.notMatch(r.body.error.message, /sales|default/, `${what}: neither the other catalog nor its tenant is named`);
    }
    const sibling = await acme.post('/v1/catalogs', { name: 'wh-a2', 'storage-profile': vendingProfile(rgw, BUCKET, 'wh-a2') });
    t.equal(sibling.status, 201, `a sibling whose name shares the prefix: ${sibling.text.slice(0, 200)}`);
    const own = await reaches(client, '/v1/sales/namespaces/db/tables/orders');
    t.equal(own.vend, 'read the victim', 'the victim\'s own keys read its files');
    t.equal(own.sign, 200, 'and Floe signs them for it');
  });

  await t.test('catalogs stored overlapping before the rule', async (t) => {
    // acme's warehouse widened to the whole bucket behind the catalog's back (no key yet, as a
    // catalog stored before migration 0013): it now holds sales'.
    await store.query("UPDATE catalogs SET warehouse_location = $1, warehouse_key = NULL WHERE name = 'ops'", [`s3://${BUCKET}`]);
    // A table of acme's at the victim's folder: inside acme's (widened) warehouse, apart from its other tables.
    const steal = await acme.post('/v1/ops/namespaces/db/tables', { name: 'steal', schema: sampleSchema(), location: ordersLocation });
    t.equal(steal.status, 200, `stored (the catalog writes with its own keys): ${steal.text.slice(0, 200)}`);
    // A catalog found apart is taken as apart for a second.
    await new Promise((r) => setTimeout(r, 1100));
    const thief = await reaches(acme, '/v1/ops/namespaces/db/tables/steal');
    t.equal(thief.vend, 'status 403', 'no credentials for a table of the outer catalog');
    t.match(thief.message, `the warehouse s3://${BUCKET} is in use: it contains another catalog's warehouse`, 'naming its own warehouse');
    t.notMatch(thief.message, /sales|default/, 'and nothing of the other catalog');
    t.equal(thief.sign, 403, 'no signature of the victim\'s file');
    t.equal((await acme.get('/v1/ops/namespaces/db/tables/steal/credentials')).status, 403, 'nor from the credentials endpoint');
    t.equal((await reaches(acme, '/v1/ops/namespaces/db/tables/events')).vend, 'status 403', 'nor for the outer catalog\'s other tables');
    const victim = await reaches(client, '/v1/sales/namespaces/db/tables/orders');
    t.equal(victim.vend, 'status 403', 'the inner catalog\'s tables get none either');
    t.match(victim.message, `the warehouse s3://${BUCKET}/wh-a is in use: it lies inside another catalog's warehouse`);
    t.notMatch(victim.message, /ops|acme/, 'naming nothing of the outer catalog');
    t.equal(victim.sign, 403);

    // The overlap repaired (the outer warehouse as it was): the inner catalog's tables get theirs again.
    await store.query("UPDATE catalogs SET warehouse_location = $1, warehouse_key = NULL WHERE name = 'ops'", [`s3://${BUCKET}/wh-b`]);
    const after = await reaches(client, '/v1/sales/namespaces/db/tables/orders');
    t.equal(after.vend, 'read the victim', 'the victim\'s own keys read its files again');
    t.equal(after.sign, 200, 'and Floe signs them for it');
    const outside = await reaches(acme, '/v1/ops/namespaces/db/tables/steal');
    t.equal(outside.vend, 'status 403', 'the table placed at the victim\'s folder is outside its warehouse now');
    t.equal(outside.sign, 403);
  });
});
