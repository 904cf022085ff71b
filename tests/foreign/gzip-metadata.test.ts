/**
 * Issue 16, class 5: gzip-compressed metadata files (`*.gz.metadata.json`, as Java Iceberg writes
 * them with `write.metadata.compression-codec=gzip`) register, load and read; a table with that
 * property gets its new metadata files gzip-compressed under the same naming.
 */
import t from 'tap';
import { readFileSync } from 'node:fs';
import * as path from 'node:path';
import { gunzipSync } from 'node:zlib';
import { craftTable, openForeignCatalog } from '../helpers/foreign-tables.js';

const { root, duck, floe, admin } = await openForeignCatalog(t, 'gzip');

t.test('a Java-style gzip metadata file registers, loads and reads', async (t) => {
  const location = await craftTable(duck, {
    dir: path.join(root, 'gz'),
    formatVersion: 2,
    schemas: [{ type: 'struct', 'schema-id': 0, fields: [{ id: 1, name: 'id', required: false, type: 'long' }, { id: 2, name: 'name', required: false, type: 'string' }] }],
    properties: { 'write.metadata.compression-codec': 'gzip' },
    files: [{ select: "SELECT range AS id, 'n' || range AS name FROM range(5)", fieldIds: { id: 1, name: 2 } }],
    gzip: true,
  });
  t.match(location, /\.gz\.metadata\.json$/);
  t.equal(readFileSync(new URL(location))[0], 0x1f, 'the crafted file is gzip');
  await floe.state.catalog.registerTable(admin, 'ext', ['ns'], { name: 'gz', metadataLocation: location });
  const loaded = await floe.state.catalog.loadTable(admin, 'ext', { namespace: ['ns'], name: 'gz' });
  t.equal(loaded.metadataLocation, location);
  t.equal(loaded.metadata.properties.get('write.metadata.compression-codec'), 'gzip');
  t.same((await floe.sql('SELECT count(*), max(name) FROM ext.ns.gz')).rows, [[5, 'n4']]);

  // A write through Floe keeps the codec: the next metadata file is gzip too, and reads back.
  await floe.sql("INSERT INTO ext.ns.gz VALUES (10, 'ten')");
  const after = await floe.state.catalog.loadTable(admin, 'ext', { namespace: ['ns'], name: 'gz' });
  t.match(after.metadataLocation, /\/00002-[0-9a-f-]+\.gz\.metadata\.json$/, 'numbered after the registered file, gzip named');
  const bytes = readFileSync(new URL(after.metadataLocation!));
  t.equal(bytes[0], 0x1f);
  t.match(JSON.parse(gunzipSync(bytes).toString('utf8')), { 'format-version': 2, properties: { 'write.metadata.compression-codec': 'gzip' } });
  t.same((await floe.sql('SELECT count(*) FROM ext.ns.gz')).rows, [[6]]);
});

t.test('a table created with the gzip codec writes gzip metadata from its first file', async (t) => {
  await floe.sql("CREATE TABLE ext.ns.made (id BIGINT) WITH ('write.metadata.compression-codec' = 'gzip')");
  await floe.sql('INSERT INTO ext.ns.made VALUES (1), (2)');
  const loaded = await floe.state.catalog.loadTable(admin, 'ext', { namespace: ['ns'], name: 'made' });
  t.match(loaded.metadataLocation, /\.gz\.metadata\.json$/);
  t.equal(readFileSync(new URL(loaded.metadataLocation!))[0], 0x1f);
  t.same((await floe.sql('SELECT sum(id) FROM ext.ns.made')).rows, [[3]]);
  // Turning the codec off writes plain JSON again.
  await floe.sql("ALTER TABLE ext.ns.made SET TBLPROPERTIES ('write.metadata.compression-codec' = 'none')");
  const plain = await floe.state.catalog.loadTable(admin, 'ext', { namespace: ['ns'], name: 'made' });
  t.match(plain.metadataLocation, /\d-[0-9a-f-]+\.metadata\.json$/);
  t.notMatch(plain.metadataLocation, /\.gz\./);
  t.equal(readFileSync(new URL(plain.metadataLocation!))[0], '{'.charCodeAt(0));
});
