/**
 * The real `iceberg-js` client (pinned 0.8) against a listening Floe over loopback HTTP: namespace
 * and table create / list / load / exists / drop, multi-level namespaces, and its error mapping.
 * Every exchange it makes is checked against the OpenAPI document through a wrapping `fetch`.
 */
import t from 'tap';
import type { AddressInfo } from 'node:net';
import { IcebergRestCatalog } from 'iceberg-js';
import { onEachBackend } from '../helpers/stores.js';
import { openApi, startCatalogServer } from './helpers.js';

/** The error a promise rejects with (the test fails if it resolves). */
async function rejection(p: Promise<unknown>): Promise<unknown> {
  try {
    await p;
  } catch (e) {
    return e;
  }
  throw new Error('expected the call to fail');
}

t.test('iceberg-js drives namespaces and tables', async (t) => {
  await onEachBackend(t, async (t, store) => {
    const { server } = await startCatalogServer(t, store);
    await server.app.listen({ host: '127.0.0.1', port: 0 });
    const port = (server.app.server.address() as AddressInfo).port;
    const baseUrl = `http://127.0.0.1:${port}`;
    const violations: string[] = [];
    let exchanges = 0;
    const checkedFetch: typeof fetch = async (input, init) => {
      const res = await fetch(input, init);
      const text = await res.clone().text();
      const url = new URL(typeof input === 'string' ? input : input instanceof URL ? input.href : input.url);
      exchanges++;
      violations.push(...openApi().validateResponse(init?.method ?? 'GET', url.pathname + url.search, res.status, text));
      return res;
    };
    const catalog = new IcebergRestCatalog({ baseUrl, catalogName: 'default', auth: { type: 'bearer', token: await server.token() }, fetch: checkedFetch });

    await catalog.createNamespace({ namespace: ['analytics'] }, { properties: { owner: 'data-team' } });
    await catalog.createNamespace({ namespace: ['analytics', 'daily'] });
    t.same((await catalog.listNamespaces()).namespaces, [{ namespace: ['analytics'] }], 'top-level list');
    t.same((await catalog.listNamespaces({ parent: { namespace: ['analytics'] } })).namespaces, [{ namespace: ['analytics', 'daily'] }]);
    t.equal((await catalog.loadNamespaceMetadata({ namespace: ['analytics'] })).properties.owner, 'data-team');
    t.ok(await catalog.namespaceExists({ namespace: ['analytics', 'daily'] }));
    t.notOk(await catalog.namespaceExists({ namespace: ['nope'] }));

    const metadata = await catalog.createTable({ namespace: ['analytics', 'daily'] }, {
      name: 'events',
      schema: { type: 'struct', 'schema-id': 0, fields: [{ id: 1, name: 'id', type: 'long', required: true }, { id: 2, name: 'name', type: 'string', required: false }, { id: 3, name: 'price', type: 'decimal(10,2)', required: false }] },
      properties: { 'write.format.default': 'parquet' },
    });
    t.equal(metadata['format-version'], 2);
    t.same((await catalog.listTables({ namespace: ['analytics', 'daily'] })).identifiers.map((i) => i.name), ['events']);
    const loaded = await catalog.loadTable({ namespace: ['analytics', 'daily'], name: 'events' });
    t.equal(loaded['table-uuid'], metadata['table-uuid']);
    t.equal(loaded.schemas[0]?.fields.length, 3);
    t.ok(await catalog.tableExists({ namespace: ['analytics', 'daily'], name: 'events' }));
    t.match(await rejection(catalog.createTable({ namespace: ['analytics', 'daily'] }, { name: 'events', schema: { type: 'struct', fields: [] } })), { status: 409, icebergType: 'AlreadyExistsException' });
    t.match(await rejection(catalog.dropNamespace({ namespace: ['analytics', 'daily'] })), { status: 409, icebergType: 'NamespaceNotEmptyException' });
    t.match(await rejection(catalog.loadTable({ namespace: ['analytics'], name: 'missing' })), { status: 404, icebergType: 'NoSuchTableException' });

    await catalog.dropTable({ namespace: ['analytics', 'daily'], name: 'events' }, { purge: true });
    t.notOk(await catalog.tableExists({ namespace: ['analytics', 'daily'], name: 'events' }));
    await catalog.dropNamespace({ namespace: ['analytics', 'daily'] });
    await catalog.dropNamespace({ namespace: ['analytics'] });
    t.same((await catalog.listNamespaces()).namespaces, []);

    t.ok(exchanges >= 15, `${exchanges} exchanges checked`);
    t.same(violations, [], 'every exchange valid against the OpenAPI document');
  });
});
