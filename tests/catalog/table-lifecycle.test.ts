/**
 * Tables over HTTP on both store backends, ported from the REST compatibility kit's CatalogTests:
 * create (partitioned, sorted, with properties), load (snapshots=all|refs, ETag → 304), HEAD,
 * keyset listing, commits (append, schema evolution, partition spec changes, sort orders, branches
 * and tags, properties, the `-1` last-added rule), metadata-log trimming and snapshot-log, and each
 * requirement failing on its own with 409 CommitFailedException.
 */
import t from 'tap';
import { onEachBackend } from '../helpers/stores.js';
import { CAT, appendCommit, createNamespace, createTable, nsPath, startCatalogServer } from './helpers.js';

const TABLE = `${CAT}/namespaces/db/tables`;

t.test('table lifecycle', async (t) => {
  await onEachBackend(t, async (t, store) => {
    const { client, files } = await startCatalogServer(t, store);
    await createNamespace(client, 'db');

    // Create: partitioned by bucket(id) and day(ts), sorted by id, with properties.
    const created = await createTable(client, ['db'], 'events', {
      'partition-spec': { 'spec-id': 0, fields: [{ 'source-id': 1, 'field-id': 1000, name: 'id_bucket', transform: 'bucket[16]' }, { 'source-id': 3, 'field-id': 1001, name: 'ts_day', transform: 'day' }] },
      'write-order': { 'order-id': 1, fields: [{ 'source-id': 1, transform: 'identity', direction: 'asc', 'null-order': 'nulls-first' }] },
      properties: { owner: 'alice', 'format-version': '2' },
    });
    const m0 = created.body.metadata;
    t.equal(m0['format-version'], 2);
    t.equal(m0.properties.owner, 'alice');
    t.notOk('format-version' in m0.properties, 'format-version is not stored as a property');
    t.equal(m0['partition-specs'][0].fields.length, 2);
    t.equal(m0['last-partition-id'], 1001);
    t.equal(m0['default-sort-order-id'], 1);
    t.match(created.body['metadata-location'], /\/metadata\/00000-[0-9a-f-]{36}\.metadata\.json$/);
    t.ok(await files.exists(created.body['metadata-location']), 'metadata file written');
    t.ok(created.headers.etag, 'ETag on create');
    const dup = await client.post(TABLE, { name: 'events', schema: created.body.metadata.schemas[0] });
    t.equal(dup.status, 409);
    t.equal(dup.body.error.type, 'AlreadyExistsException');
    t.equal((await client.post(`${CAT}/namespaces/nope/tables`, { name: 'x', schema: m0.schemas[0] })).status, 404);
    t.equal((await client.post(TABLE, { name: 'x', schema: { type: 'struct', fields: [{ id: 1, name: 'a', type: 'varchar', required: true }] } })).status, 400, 'unknown type');
    t.equal((await client.post(TABLE, { name: 'x', schema: m0.schemas[0], 'stage-create': 'yes' }, { offSpec: true })).status, 400, 'wrong type');

    // Load, HEAD, ETag.
    const loaded = await client.get(`${TABLE}/events`);
    t.equal(loaded.status, 200);
    t.equal(loaded.body['metadata-location'], created.body['metadata-location']);
    const etag = loaded.headers.etag as string;
    const notModified = await client.get(`${TABLE}/events`, { headers: { 'if-none-match': etag } });
    t.equal(notModified.status, 304);
    t.equal(notModified.text, '');
    t.equal((await client.get(`${TABLE}/events`, { headers: { 'if-none-match': '"other"' } })).status, 200);
    t.equal((await client.head(`${TABLE}/events`)).status, 204);
    t.equal((await client.head(`${TABLE}/missing`)).status, 404);
    const missing = await client.get(`${TABLE}/missing`);
    t.equal(missing.status, 404);
    t.equal(missing.body.error.type, 'NoSuchTableException');
    t.equal((await client.get(`${TABLE}/events?snapshots=some`)).status, 400);

    // Appends with assert-ref-snapshot-id (null for the first).
    let table = loaded.body;
    for (let i = 1n; i <= 3n; i++) {
      const r = await client.post(`${TABLE}/events`, appendCommit(table, 1000n + i));
      t.equal(r.status, 200, `append ${i}`);
      table = r.body;
    }
    t.equal(BigInt(table.metadata['current-snapshot-id']), 1003n);
    t.equal(table.metadata.snapshots.length, 3);
    t.equal(table.metadata['snapshot-log'].length, 3);
    t.equal(table.metadata['metadata-log'].length, 3);
    t.equal(table.metadata['metadata-log'][0]['metadata-file'], created.body['metadata-location']);
    t.match(table['metadata-location'], /\/00003-/);
    const stale = await client.get(`${TABLE}/events`, { headers: { 'if-none-match': etag } });
    t.equal(stale.status, 200, 'a commit changes the ETag');
    // A snapshot id beyond 2^53 survives the round trip exactly.
    const big = 9007199254740993123n;
    const bigCommit = await client.post(`${TABLE}/events`, appendCommit(table, big));
    t.equal(bigCommit.status, 200);
    t.equal(BigInt((await client.get(`${TABLE}/events`)).body.metadata['current-snapshot-id']), big);
    table = bigCommit.body;

    // Stale assert-ref-snapshot-id → 409; assert null when main exists → 409.
    const staleCommit = await client.post(`${TABLE}/events`, { requirements: [{ type: 'assert-ref-snapshot-id', ref: 'main', 'snapshot-id': 1001 }], updates: [] });
    t.equal(staleCommit.status, 409);
    t.equal(staleCommit.body.error.type, 'CommitFailedException');
    t.equal((await client.post(`${TABLE}/events`, { requirements: [{ type: 'assert-ref-snapshot-id', ref: 'main', 'snapshot-id': null }], updates: [] })).status, 409);

    // Branches and tags.
    const refs = await client.post(`${TABLE}/events`, {
      requirements: [{ type: 'assert-ref-snapshot-id', ref: 'audit', 'snapshot-id': null }],
      updates: [
        { action: 'set-snapshot-ref', 'ref-name': 'audit', type: 'branch', 'snapshot-id': 1001 },
        { action: 'set-snapshot-ref', 'ref-name': 'v1', type: 'tag', 'snapshot-id': 1002, 'max-ref-age-ms': 86400000 },
      ],
    });
    t.equal(refs.status, 200);
    t.same(Object.keys(refs.body.metadata.refs).sort(), ['audit', 'main', 'v1']);
    t.equal(refs.body.metadata.refs.v1.type, 'tag');
    const refsOnly = await client.get(`${TABLE}/events?snapshots=refs`);
    t.same(refsOnly.body.metadata.snapshots.map((s: any) => BigInt(s['snapshot-id'])).sort(), [1001n, 1002n, big].sort());
    t.equal((await client.get(`${TABLE}/events?snapshots=all`)).body.metadata.snapshots.length, 4);
    t.not(refsOnly.headers.etag, (await client.get(`${TABLE}/events`)).headers.etag, 'ETag depends on the snapshot mode');
    const dropRef = await client.post(`${TABLE}/events`, { requirements: [], updates: [{ action: 'remove-snapshot-ref', 'ref-name': 'audit' }] });
    t.same(Object.keys(dropRef.body.metadata.refs).sort(), ['main', 'v1']);

    // Schema evolution: add a column (-1 = last added), then each requirement guards it.
    const s0 = dropRef.body.metadata.schemas[0];
    const evolved = await client.post(`${TABLE}/events`, {
      requirements: [{ type: 'assert-current-schema-id', 'current-schema-id': 0 }, { type: 'assert-last-assigned-field-id', 'last-assigned-field-id': 3 }],
      updates: [
        { action: 'add-schema', schema: { ...s0, 'schema-id': 1, fields: [...s0.fields, { id: 4, name: 'extra', type: 'double', required: false }] } },
        { action: 'set-current-schema', 'schema-id': -1 },
      ],
    });
    t.equal(evolved.status, 200, evolved.text);
    t.equal(evolved.body.metadata['current-schema-id'], 1);
    t.equal(evolved.body.metadata['last-column-id'], 4);
    const again = await client.post(`${TABLE}/events`, {
      requirements: [{ type: 'assert-current-schema-id', 'current-schema-id': 0 }],
      updates: [{ action: 'set-properties', updates: { x: 'y' } }],
    });
    t.equal(again.status, 409, 'schema changed concurrently');

    // Partition spec evolution and sort order, with the -1 rule.
    const specs = await client.post(`${TABLE}/events`, {
      requirements: [{ type: 'assert-default-spec-id', 'default-spec-id': 0 }, { type: 'assert-last-assigned-partition-id', 'last-assigned-partition-id': 1001 }],
      updates: [
        { action: 'add-spec', spec: { fields: [{ 'source-id': 2, name: 'data_trunc', transform: 'truncate[4]' }] } },
        { action: 'set-default-spec', 'spec-id': -1 },
        { action: 'add-sort-order', 'sort-order': { 'order-id': 2, fields: [{ 'source-id': 2, transform: 'identity', direction: 'desc', 'null-order': 'nulls-last' }] } },
        { action: 'set-default-sort-order', 'sort-order-id': -1 },
      ],
    });
    t.equal(specs.status, 200, specs.text);
    t.equal(specs.body.metadata['default-spec-id'], 1);
    t.equal(specs.body.metadata['last-partition-id'], 1002);
    t.equal(specs.body.metadata['default-sort-order-id'], 2);

    // Every requirement fails on its own.
    const m = specs.body.metadata;
    const failing: [string, unknown][] = [
      ['assert-create', { type: 'assert-create' }],
      ['assert-table-uuid', { type: 'assert-table-uuid', uuid: '00000000-0000-0000-0000-000000000000' }],
      ['assert-ref-snapshot-id', { type: 'assert-ref-snapshot-id', ref: 'main', 'snapshot-id': 1 }],
      ['assert-ref-snapshot-id null', { type: 'assert-ref-snapshot-id', ref: 'v1', 'snapshot-id': null }],
      ['assert-last-assigned-field-id', { type: 'assert-last-assigned-field-id', 'last-assigned-field-id': m['last-column-id'] - 1 }],
      ['assert-current-schema-id', { type: 'assert-current-schema-id', 'current-schema-id': 0 }],
      ['assert-last-assigned-partition-id', { type: 'assert-last-assigned-partition-id', 'last-assigned-partition-id': 999 }],
      ['assert-default-spec-id', { type: 'assert-default-spec-id', 'default-spec-id': 0 }],
      ['assert-default-sort-order-id', { type: 'assert-default-sort-order-id', 'sort-order-id': 0, 'default-sort-order-id': 0 }],
    ];
    const before = (await client.get(`${TABLE}/events`)).body['metadata-location'];
    for (const [name, requirement] of failing) {
      const r = await client.post(`${TABLE}/events`, { requirements: [requirement], updates: [{ action: 'set-properties', updates: { never: 'written' } }] }, { offSpec: name === 'assert-default-sort-order-id' });
      t.equal(r.status, 409, `${name} fails`);
      t.equal(r.body.error.type, 'CommitFailedException', name);
    }
    const passing = [
      { type: 'assert-table-uuid', uuid: m['table-uuid'] },
      { type: 'assert-ref-snapshot-id', ref: 'main', 'snapshot-id': m['current-snapshot-id'] },
      { type: 'assert-ref-snapshot-id', ref: 'nope', 'snapshot-id': null },
      { type: 'assert-last-assigned-field-id', 'last-assigned-field-id': m['last-column-id'] },
      { type: 'assert-current-schema-id', 'current-schema-id': 1 },
      { type: 'assert-last-assigned-partition-id', 'last-assigned-partition-id': 1002 },
      { type: 'assert-default-spec-id', 'default-spec-id': 1 },
      { type: 'assert-default-sort-order-id', 'default-sort-order-id': 2 },
    ];
    t.equal((await client.get(`${TABLE}/events`)).body['metadata-location'], before, 'failed commits change nothing');
    const allPass = await client.post(`${TABLE}/events`, { requirements: passing, updates: [{ action: 'set-properties', updates: { passed: 'yes' } }, { action: 'remove-properties', removals: ['owner'] }] });
    t.equal(allPass.status, 200, allPass.text);
    t.equal(allPass.body.metadata.properties.passed, 'yes');
    t.notOk('owner' in allPass.body.metadata.properties);

    // Unknown update or requirement types, invalid updates → 400.
    t.equal((await client.post(`${TABLE}/events`, { requirements: [], updates: [{ action: 'explode' }] }, { offSpec: true })).status, 400);
    t.equal((await client.post(`${TABLE}/events`, { requirements: [{ type: 'assert-magic' }], updates: [] }, { offSpec: true })).status, 400);
    const badUpdate = await client.post(`${TABLE}/events`, { requirements: [], updates: [{ action: 'set-current-schema', 'schema-id': 42 }] });
    t.equal(badUpdate.status, 400);
    t.equal((await client.post(`${TABLE}/missing`, { requirements: [], updates: [] })).status, 404);

    // metadata-log is trimmed to write.metadata.previous-versions-max; old files stay on disk.
    await client.post(`${TABLE}/events`, { requirements: [], updates: [{ action: 'set-properties', updates: { 'write.metadata.previous-versions-max': '2' } }] });
    let last: any;
    for (let i = 0; i < 3; i++) last = (await client.post(`${TABLE}/events`, { requirements: [], updates: [{ action: 'set-properties', updates: { n: String(i) } }] })).body;
    t.equal(last.metadata['metadata-log'].length, 2);
    t.match(last['metadata-location'], /\/000(1[0-9]|0[0-9])-/);

    // A no-op commit writes nothing.
    const noop = await client.post(`${TABLE}/events`, { requirements: [], updates: [] });
    t.equal(noop.body['metadata-location'], last['metadata-location']);

    // Keyset listing.
    for (const n of ['b', 'a', 'c', 'constructor', '__proto__']) await createTable(client, ['db'], n);
    const all = await client.get(TABLE);
    t.same(all.body.identifiers.map((i: any) => i.name), ['__proto__', 'a', 'b', 'c', 'constructor', 'events']);
    t.notOk('next-page-token' in all.body, 'no token without paging');
    const p1 = await client.get(`${TABLE}?pageSize=4`);
    t.same(p1.body.identifiers.map((i: any) => i.name), ['__proto__', 'a', 'b', 'c']);
    const p2 = await client.get(`${TABLE}?pageSize=4&pageToken=${p1.body['next-page-token']}`);
    t.same(p2.body.identifiers.map((i: any) => i.name), ['constructor', 'events']);
    t.equal(p2.body['next-page-token'], null, 'null token on the last page');
    t.equal((await client.get(`${CAT}/namespaces/${nsPath('nope')}/tables`)).status, 404);

    // Drop without purge keeps files; drop with purge deletes them.
    const keep = (await client.get(`${TABLE}/a`)).body['metadata-location'];
    t.equal((await client.delete(`${TABLE}/a`)).status, 204);
    t.ok(await files.exists(keep), 'files kept without purge');
    t.equal((await client.delete(`${TABLE}/a`)).status, 404);
    const eventsLocation = (await client.get(`${TABLE}/events`)).body.metadata.location;
    t.ok((await files.names(`${eventsLocation}/metadata`)).length > 5);
    t.equal((await client.delete(`${TABLE}/events?purgeRequested=true`)).status, 204);
    t.same(await files.names(eventsLocation), [], 'purge deletes the table folder');
    t.equal((await client.get(`${TABLE}/events`)).status, 404);
  });
});
