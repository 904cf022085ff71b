/**
 * Views over HTTP on both backends, ported from ViewCatalogTests: create, load, HEAD, list,
 * replace (new version, version log, assert-view-uuid), rename across namespaces, drop, and the
 * shared name space with tables.
 */
import t from 'tap';
import { onEachBackend } from '../helpers/stores.js';
import { CAT, createNamespace, createTable, sampleSchema, startCatalogServer } from './helpers.js';

const VIEWS = `${CAT}/namespaces/db/views`;

function version(id: number, sql: string, schemaId = 0): unknown {
  return {
    'version-id': id, 'timestamp-ms': Date.now(), 'schema-id': schemaId,
    summary: { engine: 'floe' }, 'default-namespace': ['db'],
    representations: [{ type: 'sql', sql, dialect: 'spark' }],
  };
}

t.test('view lifecycle', async (t) => {
  await onEachBackend(t, async (t, store) => {
    const { client } = await startCatalogServer(t, store);
    await createNamespace(client, 'db');
    await createNamespace(client, 'other');

    const created = await client.post(VIEWS, { name: 'v', schema: sampleSchema(), 'view-version': version(1, 'SELECT * FROM t'), properties: { comment: 'first' } });
    t.equal(created.status, 200, created.text);
    t.equal(created.body.metadata['current-version-id'], 1);
    t.match(created.body['metadata-location'], /\/metadata\/00000-.*\.metadata\.json$/);
    t.equal((await client.post(VIEWS, { name: 'v', schema: sampleSchema(), 'view-version': version(1, 'SELECT 1'), properties: {} })).status, 409);
    t.equal((await client.head(`${VIEWS}/v`)).status, 204);
    t.equal((await client.head(`${VIEWS}/nope`)).status, 404);
    const missing = await client.get(`${VIEWS}/nope`);
    t.equal(missing.status, 404);
    t.equal(missing.body.error.type, 'NoSuchViewException');
    t.same((await client.get(VIEWS)).body.identifiers, [{ namespace: ['db'], name: 'v' }]);

    // Tables and views share names: neither can take the other's.
    await createTable(client, ['db'], 't');
    const clash = await client.post(VIEWS, { name: 't', schema: sampleSchema(), 'view-version': version(1, 'SELECT 1'), properties: {} });
    t.equal(clash.status, 409);
    const clash2 = await client.post(`${CAT}/namespaces/db/tables`, { name: 'v', schema: sampleSchema() });
    t.equal(clash2.status, 409);
    t.equal((await client.get(`${CAT}/namespaces/db/tables/v`)).status, 404, 'a view is not a table');
    t.equal((await client.get(`${VIEWS}/t`)).status, 404, 'a table is not a view');
    t.same((await client.get(`${CAT}/namespaces/db/tables`)).body.identifiers.map((i: any) => i.name), ['t'], 'tables list excludes views');

    // Replace: a new version becomes current; the version log grows.
    const uuid = created.body.metadata['view-uuid'];
    const replaced = await client.post(`${VIEWS}/v`, {
      requirements: [{ type: 'assert-view-uuid', uuid }],
      updates: [
        { action: 'add-schema', schema: { ...(sampleSchema() as object), 'schema-id': 1, fields: [{ id: 1, name: 'id', type: 'long', required: true }] } },
        { action: 'add-view-version', 'view-version': version(2, 'SELECT id FROM t', -1) },
        { action: 'set-current-view-version', 'view-version-id': -1 },
        { action: 'set-properties', updates: { comment: 'second' } },
      ],
    });
    t.equal(replaced.status, 200, replaced.text);
    t.equal(replaced.body.metadata['current-version-id'], 2);
    t.equal(replaced.body.metadata['version-log'].length, 2);
    t.equal(replaced.body.metadata.versions.length, 2);
    t.equal(replaced.body.metadata.properties.comment, 'second');
    t.match(replaced.body['metadata-location'], /\/00001-/);
    const wrongUuid = await client.post(`${VIEWS}/v`, { requirements: [{ type: 'assert-view-uuid', uuid: '00000000-0000-0000-0000-000000000000' }], updates: [{ action: 'set-properties', updates: { x: 'y' } }] });
    t.equal(wrongUuid.status, 409);
    t.equal(wrongUuid.body.error.type, 'CommitFailedException');
    const badVersion = await client.post(`${VIEWS}/v`, { updates: [{ action: 'set-current-view-version', 'view-version-id': 99 }] });
    t.equal(badVersion.status, 400);
    t.equal((await client.post(`${VIEWS}/nope`, { updates: [] })).status, 404);

    // Rename across namespaces; clashes and missing namespaces.
    t.equal((await client.post(`${CAT}/views/rename`, { source: { namespace: ['db'], name: 'v' }, destination: { namespace: ['db'], name: 't' } })).status, 409);
    t.equal((await client.post(`${CAT}/views/rename`, { source: { namespace: ['db'], name: 'v' }, destination: { namespace: ['zzz'], name: 'v' } })).status, 404);
    t.equal((await client.post(`${CAT}/views/rename`, { source: { namespace: ['db'], name: 't' }, destination: { namespace: ['other'], name: 't' } })).status, 404, 'a table is not renamed as a view');
    t.equal((await client.post(`${CAT}/views/rename`, { source: { namespace: ['db'], name: 'v' }, destination: { namespace: ['other'], name: 'w' } })).status, 204);
    t.equal((await client.get(`${VIEWS}/v`)).status, 404);
    const moved = await client.get(`${CAT}/namespaces/other/views/w`);
    t.equal(moved.body.metadata['current-version-id'], 2, 'history moves with the view');

    // Drop.
    t.equal((await client.delete(`${CAT}/namespaces/other/views/w`)).status, 204);
    t.equal((await client.delete(`${CAT}/namespaces/other/views/w`)).status, 404);
    t.same((await client.get(`${CAT}/namespaces/other/views`)).body.identifiers, []);
  });
});
