/**
 * Rename (across namespaces), register (with overwrite), stage-create then commit with
 * assert-create, multi-table transactions (all or nothing, with and without the prefix),
 * Idempotency-Key replay, and metrics reports, on both backends.
 */
import t from 'tap';
import { randomUUID } from 'node:crypto';
import { onEachBackend } from '../helpers/stores.js';
import { CAT, appendCommit, createNamespace, createTable, sampleSchema, startCatalogServer } from './helpers.js';

t.test('rename, register, stage-create, transactions, idempotency, metrics', async (t) => {
  await onEachBackend(t, async (t, store) => {
    const { client, files } = await startCatalogServer(t, store);
    await createNamespace(client, 'a');
    await createNamespace(client, 'b');
    const t1 = await createTable(client, ['a'], 't1');
    await createTable(client, ['a'], 't2');

    // Rename across namespaces: the metadata moves with the name.
    t.equal((await client.post(`${CAT}/tables/rename`, { source: { namespace: ['a'], name: 't1' }, destination: { namespace: ['b'], name: 'r1' } })).status, 204);
    t.equal((await client.get(`${CAT}/namespaces/a/tables/t1`)).status, 404);
    const renamed = await client.get(`${CAT}/namespaces/b/tables/r1`);
    t.equal(renamed.body['metadata-location'], t1.body['metadata-location']);
    t.equal((await client.post(`${CAT}/tables/rename`, { source: { namespace: ['a'], name: 'missing' }, destination: { namespace: ['b'], name: 'x' } })).status, 404);
    const exists = await client.post(`${CAT}/tables/rename`, { source: { namespace: ['a'], name: 't2' }, destination: { namespace: ['b'], name: 'r1' } });
    t.equal(exists.status, 409);
    t.equal(exists.body.error.type, 'AlreadyExistsException');
    t.equal((await client.post(`${CAT}/tables/rename`, { source: { namespace: ['a'], name: 't2' }, destination: { namespace: ['nope'], name: 'x' } })).status, 404);
    t.equal((await client.post(`${CAT}/tables/rename`, { source: { namespace: ['a'] } }, { offSpec: true })).status, 400);

    // Register: a metadata file becomes a table; 409 unless overwrite. A live table's metadata is
    // not registered a second time: two tables would share one folder (docs/catalog.md).
    const location = renamed.body['metadata-location'];
    const shared = await client.post(`${CAT}/namespaces/a/register`, { name: 'copy', 'metadata-location': location });
    t.equal(shared.status, 400, shared.text);
    t.match(shared.body.error.message, renamed.body.metadata.location, 'naming the live table\'s location');
    t.equal((await client.delete(`${CAT}/namespaces/b/tables/r1`)).status, 204, 'r1 dropped, its files kept');
    const reg = await client.post(`${CAT}/namespaces/a/register`, { name: 'copy', 'metadata-location': location });
    t.equal(reg.status, 200, reg.text);
    t.equal(reg.body['metadata-location'], location);
    t.equal((await client.get(`${CAT}/namespaces/a/tables/copy`)).body.metadata['table-uuid'], renamed.body.metadata['table-uuid']);
    t.equal((await client.post(`${CAT}/namespaces/a/register`, { name: 'copy', 'metadata-location': location })).status, 409);
    const t2 = (await client.get(`${CAT}/namespaces/a/tables/t2`)).body['metadata-location'];
    t.equal((await client.post(`${CAT}/namespaces/a/register`, { name: 'copy', 'metadata-location': t2, overwrite: true })).status, 400, 'nor over another table with a live table\'s metadata');
    const newer = await client.post(`${CAT}/namespaces/a/tables/copy`, { requirements: [], updates: [{ action: 'set-properties', updates: { k: 'v' } }] });
    t.equal(newer.status, 200, newer.text);
    const over = await client.post(`${CAT}/namespaces/a/register`, { name: 'copy', 'metadata-location': location, overwrite: true });
    t.equal(over.status, 200, `overwrite with an older metadata file of its own: ${over.text}`);
    t.equal((await client.get(`${CAT}/namespaces/a/tables/copy`)).body['metadata-location'], location);
    t.equal((await client.post(`${CAT}/namespaces/a/register`, { name: 'ghost', 'metadata-location': '/nonexistent/v1.metadata.json' })).status, 404);
    t.equal((await client.post(`${CAT}/namespaces/nope/register`, { name: 'x', 'metadata-location': location })).status, 404);

    // Stage-create writes nothing; the commit with assert-create creates the table.
    const staged = await client.post(`${CAT}/namespaces/a/tables`, { name: 'staged', schema: sampleSchema(), 'stage-create': true });
    t.equal(staged.status, 200);
    t.notOk('metadata-location' in staged.body, 'not committed yet');
    t.equal((await client.head(`${CAT}/namespaces/a/tables/staged`)).status, 404);
    const sm = staged.body.metadata;
    const createCommit = {
      requirements: [{ type: 'assert-create' }],
      updates: [
        { action: 'assign-uuid', uuid: sm['table-uuid'] },
        { action: 'upgrade-format-version', 'format-version': 2 },
        { action: 'add-schema', schema: sm.schemas[0] },
        { action: 'set-current-schema', 'schema-id': -1 },
        { action: 'add-spec', spec: sm['partition-specs'][0] },
        { action: 'set-default-spec', 'spec-id': -1 },
        { action: 'add-sort-order', 'sort-order': sm['sort-orders'][0] },
        { action: 'set-default-sort-order', 'sort-order-id': -1 },
        { action: 'set-location', location: sm.location },
        { action: 'set-properties', updates: { created: 'by-commit' } },
      ],
    };
    const committed = await client.post(`${CAT}/namespaces/a/tables/staged`, createCommit);
    t.equal(committed.status, 200, committed.text);
    t.equal(committed.body.metadata['table-uuid'], sm['table-uuid']);
    t.equal((await client.get(`${CAT}/namespaces/a/tables/staged`)).body.metadata.properties.created, 'by-commit');
    const twice = await client.post(`${CAT}/namespaces/a/tables/staged`, createCommit);
    t.equal(twice.status, 409, 'assert-create fails once the table exists');

    // Transactions: all or nothing, locked in a fixed order.
    const x = (await createTable(client, ['a'], 'x')).body;
    const y = (await createTable(client, ['b'], 'y')).body;
    const ident = (ns: string, name: string) => ({ namespace: [ns], name });
    const failing = await client.post('/v1/transactions/commit', {
      'table-changes': [
        { identifier: ident('a', 'x'), ...(appendCommit(x, 11n) as object) },
        { identifier: ident('b', 'y'), requirements: [{ type: 'assert-table-uuid', uuid: randomUUID() }], updates: [{ action: 'set-properties', updates: { k: 'v' } }] },
      ],
    });
    t.equal(failing.status, 409);
    t.equal((await client.get(`${CAT}/namespaces/a/tables/x`)).body['metadata-location'], x['metadata-location'], 'first table unchanged');
    const xDir = `${x.metadata.location}/metadata`;
    t.equal((await files.names(xDir)).filter((f) => f.endsWith('.metadata.json')).length, 1, 'the aborted attempt left no metadata file');
    const ok = await client.post(`${CAT}/transactions/commit`, {
      'table-changes': [
        { identifier: ident('b', 'y'), ...(appendCommit(y, 21n) as object) },
        { identifier: ident('a', 'x'), ...(appendCommit(x, 11n) as object) },
      ],
    });
    t.equal(ok.status, 204, ok.text);
    t.equal(BigInt((await client.get(`${CAT}/namespaces/a/tables/x`)).body.metadata['current-snapshot-id']), 11n);
    t.equal(BigInt((await client.get(`${CAT}/namespaces/b/tables/y`)).body.metadata['current-snapshot-id']), 21n);
    t.equal((await client.post('/v1/transactions/commit', { 'table-changes': [{ identifier: ident('a', 'nope'), requirements: [], updates: [] }] })).status, 404);
    t.equal((await client.post('/v1/transactions/commit', { 'table-changes': [{ identifier: ident('a', 'x'), requirements: [], updates: [] }, { identifier: ident('a', 'x'), requirements: [], updates: [] }] })).status, 400, 'a table twice');
    t.equal((await client.post('/v1/transactions/commit', { 'table-changes': [{ requirements: [], updates: [] }] }, { offSpec: true })).status, 400);

    // Idempotency-Key: the first final response is replayed; a different request with the key is refused.
    const key = randomUUID();
    const first = await client.post(`${CAT}/namespaces`, { namespace: ['idem'] }, { headers: { 'idempotency-key': key } });
    t.equal(first.status, 200);
    const retry = await client.post(`${CAT}/namespaces`, { namespace: ['idem'] }, { headers: { 'idempotency-key': key } });
    t.equal(retry.status, 200, 'replayed, not 409');
    t.same(retry.body, first.body);
    t.equal(retry.headers['idempotency-replayed'], 'true');
    t.equal((await client.post(`${CAT}/namespaces`, { namespace: ['other'] }, { headers: { 'idempotency-key': key } })).status, 400);
    t.equal((await client.post(`${CAT}/namespaces`, { namespace: ['idem'] }, { headers: { 'idempotency-key': randomUUID() } })).status, 409, 'a new key runs again');
    t.equal((await client.post(`${CAT}/namespaces`, { namespace: ['q'] }, { headers: { 'idempotency-key': 'not-a-uuid' } })).status, 400);
    const commitKey = randomUUID();
    const cur = (await client.get(`${CAT}/namespaces/a/tables/x`)).body;
    const append = appendCommit(cur, 12n);
    const c1 = await client.post(`${CAT}/namespaces/a/tables/x`, append, { headers: { 'idempotency-key': commitKey } });
    const c2 = await client.post(`${CAT}/namespaces/a/tables/x`, append, { headers: { 'idempotency-key': commitKey } });
    t.equal(c1.status, 200);
    t.equal(c2.status, 200, 'a retried commit is not a conflict');
    t.equal(c2.body['metadata-location'], c1.body['metadata-location']);
    const dropKey = randomUUID();
    t.equal((await client.delete(`${CAT}/namespaces/a/tables/copy`, { headers: { 'idempotency-key': dropKey } })).status, 204);
    t.equal((await client.delete(`${CAT}/namespaces/a/tables/copy`, { headers: { 'idempotency-key': dropKey } })).status, 204, 'a retried drop is replayed');

    // Metrics reports are accepted and stored.
    const report = {
      'report-type': 'scan-report', 'table-name': 'a.x', 'snapshot-id': 11, filter: true, 'schema-id': 0, 'projected-field-ids': [1], 'projected-field-names': ['id'],
      metrics: { 'total-planning-duration': { count: 1, 'time-unit': 'nanoseconds', 'total-duration': 1000 } },
    };
    t.equal((await client.post(`${CAT}/namespaces/a/tables/x/metrics`, report)).status, 204);
    t.equal((await client.post(`${CAT}/namespaces/a/tables/nope/metrics`, report)).status, 404);
    const stored = await store.query<{ n: number }>('SELECT count(*)::int AS n FROM catalog_metrics_reports');
    t.equal(stored.rows[0]?.n, 1);
    t.ok((await files.names(xDir)).length > 0);
  });
});
