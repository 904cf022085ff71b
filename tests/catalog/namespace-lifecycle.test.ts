/**
 * Config, catalogs and namespaces over HTTP on both store backends (ports of CatalogTests'
 * namespace cases): create, load, HEAD, list with parent and keyset pages, properties (422 on
 * overlap), drop (409 when not empty), multi-level names with %1F and the `+`/space pitfall,
 * tenant isolation of catalogs.
 */
import t from 'tap';
import { onEachBackend } from '../helpers/stores.js';
import { createTenantWithAdmin } from '../../engine/principals/bootstrap.js';
import { CAT, CatalogClient, createNamespace, createTable, nsPath, openApi, startCatalogServer } from './helpers.js';

t.test('config, catalogs and namespaces', async (t) => {
  await onEachBackend(t, async (t, store) => {
    const { server, client, warehouse } = await startCatalogServer(t, store);

    // Config: public, prefix and endpoints for the bootstrap catalog; 404 for an unknown warehouse.
    const cfg = await server.app.inject({ method: 'GET', url: '/v1/config?warehouse=default' });
    t.equal(cfg.statusCode, 200);
    t.same(openApi().validateResponse('GET', '/v1/config', cfg.statusCode, cfg.body), []);
    const config = cfg.json();
    t.equal(config.overrides.prefix, 'default');
    t.equal(config['idempotency-key-lifetime'], 'PT30M');
    for (const e of ['GET /v1/{prefix}/namespaces', 'POST /v1/{prefix}/namespaces/{namespace}/tables/{table}', 'POST /v1/{prefix}/transactions/commit', 'HEAD /v1/{prefix}/namespaces/{namespace}', 'POST /v1/{prefix}/views/rename']) {
      t.ok(config.endpoints.includes(e), `advertises ${e}`);
    }
    // Credentials and signing are advertised only for a catalog on a store that supports them
    // (docs/vending.md); this one keeps its files locally. config-prefix-and-endpoints.test.ts checks the rest.
    t.notOk(config.endpoints.some((e: string) => e.endsWith('/credentials') || e.endsWith('/sign')), 'no credentials or sign endpoint for a local catalog');
    const unknown = await server.app.inject({ method: 'GET', url: '/v1/config?warehouse=nope' });
    t.equal(unknown.statusCode, 404);
    t.equal(unknown.json().error.type, 'NoSuchWarehouseException');

    // Catalogs: the bootstrap catalog lives in the data directory.
    const cats = await client.get('/v1/catalogs');
    t.equal(cats.status, 200);
    t.same(cats.body.catalogs.map((c: any) => c.name), ['default']);
    t.equal(cats.body.catalogs[0]['warehouse-location'], `file://${warehouse}`);
    const bad = await client.post('/v1/catalogs', { name: 'x', 'warehouse-location': 'ftp://nope' });
    t.equal(bad.status, 400);
    const s3 = await client.post('/v1/catalogs', { name: 'lake', 'warehouse-location': 's3://bucket/wh', properties: { a: 'b' } });
    t.equal(s3.status, 201);
    t.equal((await client.post('/v1/catalogs', { name: 'lake', 'warehouse-location': 's3://bucket/wh' })).status, 409);
    t.equal((await client.get('/v1/catalogs/lake')).body.properties.a, 'b');
    t.equal((await client.get('/v1/catalogs/none')).status, 404);

    // Namespaces: create, conflict, load, HEAD.
    t.same((await client.get(`${CAT}/namespaces`)).body.namespaces, []);
    const created = await client.post(`${CAT}/namespaces`, { namespace: ['ns1'], properties: { owner: 'me', constructor: 'x' } });
    t.equal(created.status, 200);
    t.same(created.body, { namespace: ['ns1'], properties: { owner: 'me', constructor: 'x' } });
    const dup = await client.post(`${CAT}/namespaces`, { namespace: ['ns1'] });
    t.equal(dup.status, 409);
    t.equal(dup.body.error.type, 'AlreadyExistsException');
    t.equal((await client.get(`${CAT}/namespaces/ns1`)).body.properties.owner, 'me');
    t.equal((await client.head(`${CAT}/namespaces/ns1`)).status, 204);
    t.equal((await client.head(`${CAT}/namespaces/missing`)).status, 404);
    const missing = await client.get(`${CAT}/namespaces/missing`);
    t.equal(missing.status, 404);
    t.equal(missing.body.error.type, 'NoSuchNamespaceException');

    // Multi-level: parent must exist; %1F between levels; children listed under parent.
    t.equal((await client.post(`${CAT}/namespaces`, { namespace: ['a', 'b'] })).status, 400, 'parent must exist');
    await createNamespace(client, 'a');
    await createNamespace(client, 'a', 'b');
    await createNamespace(client, 'a', 'b c');
    await createNamespace(client, 'a', 'x+y');
    t.same((await client.get(`${CAT}/namespaces/${nsPath('a', 'b')}`)).body.namespace, ['a', 'b']);
    t.equal((await client.get(`${CAT}/namespaces/a%1Fb+c`)).body.namespace[1], 'b c', 'a literal + is a space (Java URLEncoder)');
    t.equal((await client.get(`${CAT}/namespaces/a%1Fb%20c`)).body.namespace[1], 'b c');
    t.equal((await client.get(`${CAT}/namespaces/a%1Fx%2By`)).body.namespace[1], 'x+y', '%2B is a plus');
    t.same((await client.get(`${CAT}/namespaces?parent=a`)).body.namespaces, [['a', 'b'], ['a', 'b c'], ['a', 'x+y']]);
    t.same((await client.get(`${CAT}/namespaces`)).body.namespaces, [['a'], ['ns1']], 'top level only');
    t.equal((await client.get(`${CAT}/namespaces?parent=zzz`)).status, 404);

    // Keyset pages.
    for (let i = 0; i < 7; i++) await createNamespace(client, 'a', `p${i}`);
    const seen: string[] = [];
    let token: string | undefined = '';
    let pages = 0;
    do {
      const r = await client.get(`${CAT}/namespaces?parent=a&pageSize=4${token ? `&pageToken=${encodeURIComponent(token)}` : '&pageToken='}`);
      t.equal(r.status, 200);
      t.ok(r.body.namespaces.length <= 4);
      seen.push(...r.body.namespaces.map((n: string[]) => n[1]));
      token = r.body['next-page-token'] ?? undefined;
      pages++;
    } while (token !== undefined && pages < 10);
    t.equal(seen.length, 10);
    t.equal(new Set(seen).size, 10, 'no repeats across pages');
    t.equal((await client.get(`${CAT}/namespaces?pageSize=0`)).status, 400);
    t.equal((await client.get(`${CAT}/namespaces?pageToken=%25%25`)).status, 400);

    // Properties: update/remove/missing; 422 on overlap.
    const props = await client.post(`${CAT}/namespaces/ns1/properties`, { removals: ['owner', 'nope'], updates: { k: 'v' } });
    t.equal(props.status, 200);
    t.same(props.body, { updated: ['k'], removed: ['owner'], missing: ['nope'] });
    t.same((await client.get(`${CAT}/namespaces/ns1`)).body.properties, { constructor: 'x', k: 'v' });
    const overlap = await client.post(`${CAT}/namespaces/ns1/properties`, { removals: ['k'], updates: { k: 'w' } });
    t.equal(overlap.status, 422);
    t.equal(overlap.body.error.type, 'UnprocessableEntityException');

    // Drop: 409 when it holds a table or a child; 204; then 404.
    await createTable(client, ['ns1'], 't1');
    const busy = await client.delete(`${CAT}/namespaces/ns1`);
    t.equal(busy.status, 409);
    t.equal(busy.body.error.type, 'NamespaceNotEmptyException');
    t.equal((await client.delete(`${CAT}/namespaces/a`)).status, 409, 'has children');
    t.equal((await client.delete(`${CAT}/namespaces/ns1/tables/t1`)).status, 204);
    t.equal((await client.delete(`${CAT}/namespaces/ns1`)).status, 204);
    t.equal((await client.delete(`${CAT}/namespaces/ns1`)).status, 404);
    t.equal((await client.delete('/v1/catalogs/default')).status, 409, 'a catalog with namespaces is not dropped');
    t.equal((await client.delete('/v1/catalogs/lake')).status, 204);

    // Bad input: malformed JSON, wrong types → 400; oversized bodies → 413; nothing stored.
    const malformed = await client.post(`${CAT}/namespaces`, undefined, { raw: '{"namespace": [', headers: { 'content-type': 'application/json' } });
    t.equal(malformed.status, 400);
    t.equal(malformed.body.error.type, 'BadRequestException');
    t.equal((await client.post(`${CAT}/namespaces`, { namespace: 'flat' }, { offSpec: true })).status, 400);
    t.equal((await client.post(`${CAT}/namespaces`, { namespace: ['z'], properties: { a: 1 } }, { offSpec: true })).status, 400);
    t.equal((await client.post(`${CAT}/namespaces`, { namespace: [] }, { offSpec: true })).status, 400);
    const huge = await client.post(`${CAT}/namespaces`, undefined, { raw: JSON.stringify({ namespace: ['big'], properties: { x: 'y'.repeat(11 * 1024 * 1024) } }), headers: { 'content-type': 'application/json' } });
    t.equal(huge.status, 413);
    t.equal(huge.body.error.type, 'BadRequestException');
    t.equal((await client.head(`${CAT}/namespaces/big`)).status, 404, 'nothing stored');
    t.equal((await client.get('/v1/nope/namespaces')).status, 404);

    // Scopes: a read-only token cannot create.
    const reader = server.token('catalog:read namespace:read table:read');
    const ro = new CatalogClient(client.send, await reader);
    t.equal((await ro.post(`${CAT}/namespaces`, { namespace: ['ro'] })).status, 403);
    t.equal((await ro.get(`${CAT}/namespaces`)).status, 200);

    // Tenants see only their own catalogs.
    const other = await createTenantWithAdmin(store, 'acme');
    const form = new URLSearchParams({ grant_type: 'client_credentials', client_id: other.credentials.clientId, client_secret: other.credentials.clientSecret });
    const tok = await server.app.inject({ method: 'POST', url: '/v1/oauth/tokens', headers: { 'content-type': 'application/x-www-form-urlencoded' }, payload: form.toString() });
    const acme = new CatalogClient(client.send, tok.json().access_token);
    t.same((await acme.get('/v1/catalogs')).body.catalogs, []);
    t.equal((await acme.get(`${CAT}/namespaces`)).status, 404, 'another tenant\'s catalog does not exist for acme');
    t.equal((await acme.post('/v1/catalogs', { name: 'default', 'warehouse-location': 'file:///tmp/acme-wh' })).status, 201, 'same name in another tenant');
    t.same((await acme.get(`${CAT}/namespaces`)).body.namespaces, []);
    t.equal((await acme.post('/v1/catalogs', { name: 'acmecat', 'warehouse-location': 'file:///tmp/acme-wh2' })).status, 201);
    const acmeConfig = await server.app.inject({ method: 'GET', url: '/v1/config?warehouse=acmecat', headers: { authorization: `Bearer ${tok.json().access_token}` } });
    t.equal(acmeConfig.statusCode, 200, 'a token selects its tenant in /v1/config');
    t.equal(acmeConfig.json().overrides.prefix, 'acmecat');
    t.equal((await server.app.inject({ method: 'GET', url: '/v1/config?warehouse=acmecat' })).statusCode, 404, 'without a token the default tenant is searched');
    t.equal((await client.get('/v1/acmecat/namespaces')).status, 404, 'the default tenant cannot reach acme\'s catalog');
    t.ok(openApi().checked > 50);
  });
});
