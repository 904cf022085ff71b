/**
 * A client configured without a warehouse (iceberg-js: no `catalogName`, so `GET /v1/namespaces`)
 * reaches the default catalog, the first one, named `default` (issue 16, item 9), over real HTTP:
 * the real iceberg-js client creates, lists, loads and drops through the unprefixed routes, and
 * what it made is what `/v1/default/...` serves. Renames and queries work unprefixed too; the
 * token is checked as on any catalog route; a catalog cannot be named `namespaces`.
 */
import t from 'tap';
import { IcebergRestCatalog } from 'iceberg-js';
import { onEachBackend } from '../helpers/stores.js';
import { listenOnLoopback } from '../helpers/http.js';
import { openApi, startCatalogServer } from './helpers.js';

t.test('unprefixed /v1 routes are the default catalog', async (t) => {
  await onEachBackend(t, async (t, store) => {
    const { server } = await startCatalogServer(t, store);
    const http = await listenOnLoopback(server);
    const token = await server.token();
    const violations: string[] = [];
    const paths: string[] = [];
    const checkedFetch: typeof fetch = async (input, init) => {
      const res = await fetch(input, init);
      const url = new URL(typeof input === 'string' ? input : input instanceof URL ? input.href : input.url);
      paths.push(url.pathname);
      violations.push(...openApi().validateResponse(init?.method ?? 'GET', url.pathname.replace(/^\/v1\//, '/v1/default/') + url.search, res.status, await res.clone().text()));
      return res;
    };
    const catalog = new IcebergRestCatalog({ baseUrl: http.url, auth: { type: 'bearer', token }, fetch: checkedFetch });

    await catalog.createNamespace({ namespace: ['web'] }, { properties: { owner: 'web-team' } });
    await catalog.createNamespace({ namespace: ['web', 'daily'] });
    t.same((await catalog.listNamespaces()).namespaces, [{ namespace: ['web'] }]);
    t.same((await catalog.listNamespaces({ parent: { namespace: ['web'] } })).namespaces, [{ namespace: ['web', 'daily'] }]);
    t.equal((await catalog.loadNamespaceMetadata({ namespace: ['web'] })).properties.owner, 'web-team');
    t.ok(await catalog.namespaceExists({ namespace: ['web', 'daily'] }));
    const created = await catalog.createTable({ namespace: ['web'] }, {
      name: 'clicks', schema: { type: 'struct', 'schema-id': 0, fields: [{ id: 1, name: 'id', type: 'long', required: true }] },
    });
    t.same((await catalog.listTables({ namespace: ['web'] })).identifiers.map((i) => i.name), ['clicks']);
    t.ok(await catalog.tableExists({ namespace: ['web'], name: 'clicks' }));
    t.ok(paths.length > 0 && paths.every((p) => /^\/v1\/namespaces(\/|$)/.test(p)), 'the client sent only unprefixed paths');
    t.same(violations, [], 'every answer follows the OpenAPI document');

    // What the client made is the default catalog's.
    const prefixed = await http.request('GET', '/v1/default/namespaces/web/tables/clicks', { token });
    t.equal(prefixed.status, 200, prefixed.text);
    t.equal((prefixed.json as { metadata: { 'table-uuid': string } }).metadata['table-uuid'], created['table-uuid']);
    t.same((await http.request('GET', '/v1/default/namespaces', { token })).json, { namespaces: [['web']] });

    // The other unprefixed catalog paths: queries, rename, HEAD, errors in Iceberg's model.
    const paged = await http.request('GET', '/v1/namespaces?parent=web&pageSize=10', { token });
    t.equal(paged.status, 200);
    t.match(paged.json, { namespaces: [['web', 'daily']] });
    const renamed = await http.request('POST', '/v1/tables/rename', { token, body: { source: { namespace: ['web'], name: 'clicks' }, destination: { namespace: ['web', 'daily'], name: 'clicks2' } } });
    t.equal(renamed.status, 204, renamed.text);
    t.equal((await http.request('HEAD', '/v1/namespaces/web%1Fdaily/tables/clicks2', { token })).status, 204);
    const missing = await http.request('GET', '/v1/namespaces/nope', { token });
    t.equal(missing.status, 404);
    t.match(missing.json, { error: { type: 'NoSuchNamespaceException', code: 404 } });
    t.equal((await http.request('GET', '/v1/namespaces')).status, 401, 'a token is needed as on /v1/default');
    t.equal((await http.request('GET', '/v1/namespaces', { token: await server.token('table:read') })).status, 403, 'and the same scope');

    const reserved = await http.request('POST', '/v1/catalogs', { token, body: { name: 'namespaces', 'warehouse-location': 's3://bucket/ns' } });
    t.equal(reserved.status, 400, 'a catalog named namespaces would be shadowed');
    await catalog.dropTable({ namespace: ['web', 'daily'], name: 'clicks2' }, { purge: true });
    await catalog.dropNamespace({ namespace: ['web', 'daily'] });
    await catalog.dropNamespace({ namespace: ['web'] });
    t.same((await catalog.listNamespaces()).namespaces, []);
  });
});
