/**
 * More of CatalogTests' update cases over HTTP on both backends: format upgrade v1 → v2, column
 * rename and type promotion, identical specs and orders reusing their ids, removing snapshots
 * (and the refs on them), statistics, set-location, and names with `/`, `%` and dots.
 */
import t from 'tap';
import { onEachBackend } from '../helpers/stores.js';
import { CAT, appendCommit, createNamespace, createTable, startCatalogServer } from './helpers.js';

const TABLE = `${CAT}/namespaces/db/tables`;

t.test('table updates', async (t) => {
  await onEachBackend(t, async (t, store) => {
    const { client, files } = await startCatalogServer(t, store);
    await createNamespace(client, 'db');

    // A v1 table, upgraded to v2 by a commit; downgrades are refused.
    const v1 = await createTable(client, ['db'], 'legacy', { properties: { 'format-version': '1' } });
    t.equal(v1.body.metadata['format-version'], 1);
    t.ok(v1.body.metadata.schema, 'v1 metadata carries the single schema');
    const up = await client.post(`${TABLE}/legacy`, { requirements: [], updates: [{ action: 'upgrade-format-version', 'format-version': 2 }] });
    t.equal(up.status, 200);
    t.equal(up.body.metadata['format-version'], 2);
    t.equal((await client.post(`${TABLE}/legacy`, { requirements: [], updates: [{ action: 'upgrade-format-version', 'format-version': 1 }] })).status, 400);
    t.equal((await client.post(`${TABLE}/legacy`, { requirements: [], updates: [{ action: 'upgrade-format-version', 'format-version': 9 }] })).status, 400);

    // Rename a column (same id) and promote int → long in one new schema.
    const base = await createTable(client, ['db'], 'evolve', {});
    const s0 = base.body.metadata.schemas[0];
    const s1 = { type: 'struct', 'schema-id': 1, fields: [{ ...s0.fields[0] }, { ...s0.fields[1], name: 'payload' }, s0.fields[2], { id: 4, name: 'n', type: 'int', required: false }] };
    const r1 = await client.post(`${TABLE}/evolve`, { requirements: [{ type: 'assert-current-schema-id', 'current-schema-id': 0 }], updates: [{ action: 'add-schema', schema: s1 }, { action: 'set-current-schema', 'schema-id': -1 }] });
    t.equal(r1.status, 200, r1.text);
    const s2 = { ...s1, 'schema-id': 2, fields: [...s1.fields.slice(0, 3), { id: 4, name: 'n', type: 'long', required: false }] };
    const r2 = await client.post(`${TABLE}/evolve`, { requirements: [{ type: 'assert-current-schema-id', 'current-schema-id': 1 }], updates: [{ action: 'add-schema', schema: s2 }, { action: 'set-current-schema', 'schema-id': -1 }] });
    t.equal(r2.status, 200, r2.text);
    t.equal(r2.body.metadata['current-schema-id'], 2);
    t.equal(r2.body.metadata.schemas.length, 3);
    // Re-adding an identical schema reuses its id; setting it current again changes nothing.
    const same = await client.post(`${TABLE}/evolve`, { requirements: [], updates: [{ action: 'add-schema', schema: { ...s1, 'schema-id': 7 } }, { action: 'set-current-schema', 'schema-id': -1 }] });
    t.equal(same.body.metadata['current-schema-id'], 1, 'identical schema reused as id 1');
    t.equal(same.body.metadata.schemas.length, 3);
    t.equal((await client.post(`${TABLE}/evolve`, { requirements: [], updates: [{ action: 'remove-schemas', 'schema-ids': [1] }] })).status, 400, 'the current schema cannot be removed');
    const removed = await client.post(`${TABLE}/evolve`, { requirements: [], updates: [{ action: 'remove-schemas', 'schema-ids': [2] }] });
    t.equal(removed.body.metadata.schemas.length, 2);

    // Specs: identical specs reuse their id; the default spec cannot be removed.
    const spec = { fields: [{ 'source-id': 1, name: 'id_bucket', transform: 'bucket[4]' }] };
    const a = await client.post(`${TABLE}/evolve`, { requirements: [], updates: [{ action: 'add-spec', spec }, { action: 'set-default-spec', 'spec-id': -1 }] });
    const b = await client.post(`${TABLE}/evolve`, { requirements: [], updates: [{ action: 'add-spec', spec }, { action: 'set-default-spec', 'spec-id': -1 }] });
    t.equal(a.body.metadata['default-spec-id'], 1);
    t.equal(b.body.metadata['partition-specs'].length, 2, 'identical spec not added twice');
    t.equal(b.body['metadata-location'], a.body['metadata-location'], 'no change, no new file');
    t.equal((await client.post(`${TABLE}/evolve`, { requirements: [], updates: [{ action: 'remove-partition-specs', 'spec-ids': [1] }] })).status, 400);
    const unpart = await client.post(`${TABLE}/evolve`, { requirements: [], updates: [{ action: 'set-default-spec', 'spec-id': 0 }, { action: 'remove-partition-specs', 'spec-ids': [1] }] });
    t.equal(unpart.status, 200);
    t.equal(unpart.body.metadata['partition-specs'].length, 1);

    // Snapshots: remove-snapshots drops refs that point at them; statistics follow their snapshot.
    let table = (await client.get(`${TABLE}/evolve`)).body;
    for (const id of [71n, 72n, 73n]) table = (await client.post(`${TABLE}/evolve`, appendCommit(table, id))).body;
    const tagged = await client.post(`${TABLE}/evolve`, {
      requirements: [],
      updates: [
        { action: 'set-snapshot-ref', 'ref-name': 'old', type: 'tag', 'snapshot-id': 71 },
        { action: 'set-statistics', statistics: { 'snapshot-id': 71, 'statistics-path': `${table.metadata.location}/metadata/stats-71.puffin`, 'file-size-in-bytes': 10, 'file-footer-size-in-bytes': 5, 'blob-metadata': [] } },
      ],
    });
    t.equal(tagged.status, 200, tagged.text);
    t.equal(tagged.body.metadata.statistics.length, 1);
    const pruned = await client.post(`${TABLE}/evolve`, { requirements: [], updates: [{ action: 'remove-snapshots', 'snapshot-ids': [71] }] });
    t.equal(pruned.status, 200);
    t.notOk('old' in pruned.body.metadata.refs, 'the tag on a removed snapshot is gone');
    t.equal(pruned.body.metadata.statistics.length, 0);
    t.equal(pruned.body.metadata.snapshots.length, 2);
    t.equal(BigInt(pruned.body.metadata['current-snapshot-id']), 73n);
    t.equal((await client.post(`${TABLE}/evolve`, { requirements: [], updates: [{ action: 'set-snapshot-ref', 'ref-name': 'main', type: 'branch', 'snapshot-id': 999 }] })).status, 400, 'unknown snapshot');
    t.equal((await client.post(`${TABLE}/evolve`, { requirements: [], updates: [{ action: 'set-snapshot-ref', 'ref-name': 'main', type: 'tag', 'snapshot-id': 72 }] })).status, 400, 'main cannot be a tag');
    // Rollback: main back to an earlier snapshot.
    const rollback = await client.post(`${TABLE}/evolve`, { requirements: [{ type: 'assert-ref-snapshot-id', ref: 'main', 'snapshot-id': 73 }], updates: [{ action: 'set-snapshot-ref', 'ref-name': 'main', type: 'branch', 'snapshot-id': 72 }] });
    t.equal(BigInt(rollback.body.metadata['current-snapshot-id']), 72n);
    t.equal(BigInt(rollback.body.metadata['snapshot-log'].at(-1)['snapshot-id']), 72n);

    // set-location.
    const moved = await client.post(`${TABLE}/evolve`, { requirements: [], updates: [{ action: 'set-location', location: `${table.metadata.location}-moved` }] });
    t.equal(moved.body.metadata.location, `${table.metadata.location}-moved`);

    // write.metadata.delete-after-commit.enabled: files that fall out of metadata-log are deleted.
    const gc = await createTable(client, ['db'], 'gc', { properties: { 'write.metadata.previous-versions-max': '2', 'write.metadata.delete-after-commit.enabled': 'true' } });
    let gcLast = gc.body;
    for (let i = 0; i < 5; i++) gcLast = (await client.post(`${TABLE}/gc`, { requirements: [], updates: [{ action: 'set-properties', updates: { n: String(i) } }] })).body;
    const gcFiles = (await files.names(`${gcLast.metadata.location}/metadata`)).filter((f) => f.endsWith('.metadata.json')).map((f) => `${gcLast.metadata.location}/metadata/${f}`).sort();
    t.same(gcFiles, [...gcLast.metadata['metadata-log'].map((e: any) => e['metadata-file']), gcLast['metadata-location']].sort(), 'only the current file and the log remain');

    // Names with '/', '%', '.' and spaces are plain names.
    for (const name of ['a/b', '100%', 'x.y', 'with space']) {
      await createTable(client, ['db'], name);
      const r = await client.get(`${TABLE}/${encodeURIComponent(name)}`);
      t.equal(r.status, 200, `load ${name}`);
    }
    t.equal((await client.get(`${TABLE}/with+space`)).status, 200, '+ is a space');
    const names = (await client.get(TABLE)).body.identifiers.map((i: any) => i.name);
    for (const name of ['a/b', '100%', 'x.y', 'with space']) t.ok(names.includes(name), `${name} listed`);
  });
});
