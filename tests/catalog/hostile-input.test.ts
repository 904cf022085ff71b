/**
 * Hostile and odd input answers 400 in the Iceberg error shape and stores nothing: NUL characters
 * (PostgreSQL cannot hold them), locations this server cannot reach, wrong media types, empty and
 * non-object bodies, absurd page sizes, forged page tokens, encodings that do not decode.
 */
import t from 'tap';
import { onEachBackend } from '../helpers/stores.js';
import { CAT, createNamespace, sampleSchema, startCatalogServer } from './helpers.js';

t.test('hostile input', async (t) => {
  await onEachBackend(t, async (t, store) => {
    const { client } = await startCatalogServer(t, store);
    await createNamespace(client, 'db');
    const bad = async (what: string, r: Promise<{ status: number; body: any }>, status = 400) => {
      const reply = await r;
      t.equal(reply.status, status, what);
      if (status >= 400) t.equal(typeof reply.body?.error?.type, 'string', `${what}: Iceberg error body`);
    };
    await bad('NUL in a namespace property', client.post(`${CAT}/namespaces`, { namespace: ['n1'], properties: { k: 'a\u0000b' } }));
    await bad('NUL in a property key', client.post(`${CAT}/namespaces/db/properties`, { updates: { 'a\u0000': 'b' } }));
    await bad('NUL in a namespace level', client.post(`${CAT}/namespaces`, { namespace: ['x\u0000y'] }));
    await bad('NUL in a table name', client.post(`${CAT}/namespaces/db/tables`, { name: 't\u0000', schema: sampleSchema() }));
    await bad('NUL in a location', client.post(`${CAT}/namespaces/db/tables`, { name: 't', schema: sampleSchema(), location: '/tmp/a\u0000b' }));
    await bad('NUL in a warehouse', client.post('/v1/catalogs', { name: 'c1', 'warehouse-location': 'file:///tmp/\u0000' }));
    await bad('relative table location', client.post(`${CAT}/namespaces/db/tables`, { name: 't', schema: sampleSchema(), location: 'relative/dir' }));
    await bad('s3 table location (not served yet)', client.post(`${CAT}/namespaces/db/tables`, { name: 't', schema: sampleSchema(), location: 's3://bucket/t' }));
    await bad('relative metadata location', client.post(`${CAT}/namespaces/db/register`, { name: 'r', 'metadata-location': 'x/v1.metadata.json' }));
    await bad('NUL in a metadata location', client.post(`${CAT}/namespaces/db/register`, { name: 'r', 'metadata-location': '/tmp/\u0000' }));
    await bad('NUL in a metrics report', client.post(`${CAT}/namespaces/db/tables/t/metrics`, { 'report-type': 'commit-report', 'table-name': 'x\u0000', 'snapshot-id': 1, 'sequence-number': 1, operation: 'append', metrics: {} }), 400);
    await bad('text/plain body', client.post(`${CAT}/namespaces`, undefined, { raw: '{"namespace":["p"]}', headers: { 'content-type': 'text/plain' } }));
    await bad('empty JSON body', client.post(`${CAT}/namespaces`, undefined, { raw: '', headers: { 'content-type': 'application/json' } }));
    await bad('array body', client.post(`${CAT}/namespaces`, [['x']], { offSpec: true }));
    await bad('JSON null body', client.post(`${CAT}/namespaces`, undefined, { raw: 'null', headers: { 'content-type': 'application/json' } }));
    await bad('trailing garbage', client.post(`${CAT}/namespaces`, undefined, { raw: '{"namespace":["g"]} x', headers: { 'content-type': 'application/json' } }));
    await bad('deeply nested JSON', client.post(`${CAT}/namespaces`, undefined, { raw: '['.repeat(100_000), headers: { 'content-type': 'application/json' } }));
    await bad('page size far too large', client.get(`${CAT}/namespaces?pageSize=99999999999`));
    await bad('negative page size', client.get(`${CAT}/namespaces?pageSize=-1`));
    await bad('forged page token', client.get(`${CAT}/namespaces?pageToken=${Buffer.from('oops').toString('base64url')}`));
    await bad('bad percent-encoding', client.get(`${CAT}/namespaces/%E0%A4%A`));
    await bad('bad purgeRequested', client.delete(`${CAT}/namespaces/db/tables/x?purgeRequested=maybe`));
    await bad('huge snapshot id string', client.post(`${CAT}/namespaces/db/tables/x`, { requirements: [], updates: [{ action: 'remove-snapshots', 'snapshot-ids': ['1'] }] }, { offSpec: true }));
    const listing = await client.get(`${CAT}/namespaces`);
    t.same(listing.body.namespaces, [['db']], 'nothing was stored');
    t.same((await client.get(`${CAT}/namespaces/db/tables`)).body.identifiers, []);
    t.same((await client.get('/v1/catalogs')).body.catalogs.map((c: any) => c.name), ['default']);
    t.same((await client.get(`${CAT}/namespaces/db`)).body.properties, {});
  });
});
