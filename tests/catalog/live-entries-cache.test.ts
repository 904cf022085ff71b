/**
 * The catalog's cache of decoded manifest entries (MetadataFiles.liveEntries): a snapshot's
 * manifests are read once per catalog, a new snapshot is read afresh, another catalog does not
 * share the entry, and the entries equal a plain read.
 */
import t from 'tap';
import { Floe } from '../../index.js';
import { MetadataFiles } from '../../catalog/rest/deps.js';
import { loadLiveEntries } from '../../catalog/iceberg/scan.js';
import { currentSnapshot } from '../../catalog/iceberg/table-metadata.js';
import type { FileIO } from '../../storage-creds/file-io.js';

const floe = await Floe.open();
t.teardown(() => floe.close());
const admin = { tenantId: 'default', principalId: 'test', roles: ['tenant_admin'] };

/** The catalog's real FileIO, counting the files read through it. */
function counting(io: FileIO): { io: FileIO; reads: () => number } {
  let n = 0;
  const wrapped = new Proxy(io, {
    get(target, prop, receiver) {
      if (prop === 'read') return (location: string) => { n++; return target.read(location); };
      const v = Reflect.get(target, prop, receiver) as unknown;
      return typeof v === 'function' ? (v as (...a: unknown[]) => unknown).bind(target) : v;
    },
  });
  return { io: wrapped, reads: () => n };
}

t.test('a snapshot is read once per catalog, a new one afresh', async (t) => {
  await floe.sql('CREATE SCHEMA cache_ns');
  await floe.sql('CREATE TABLE cache_ns.t (id int, name string)');
  await floe.sql("INSERT INTO cache_ns.t VALUES (1, 'a'), (2, 'b')");
  const catalog = await floe.state.catalog.loadCatalog(admin, 'default');
  const { io, reads } = counting(await floe.state.catalog.fileIOFor(admin, 'default'));
  const files = new MetadataFiles(io);
  const load = async () => (await floe.state.catalog.loadTable(admin, 'default', { namespace: ['cache_ns'], name: 't' })).metadata;

  const first = currentSnapshot(await load())!;
  const a = await files.liveEntries(catalog, io, first);
  const readsOnce = reads();
  t.ok(readsOnce >= 2, 'the manifest list and its manifests are read');
  t.same(a, await loadLiveEntries(io, first), 'the entries are those of a plain read');
  const plainReads = reads() - readsOnce;
  t.equal(await files.liveEntries(catalog, io, first), a, 'the same entries again');
  t.equal(reads(), readsOnce + plainReads, 'without reading a file');

  await floe.sql("INSERT INTO cache_ns.t VALUES (3, 'c')");
  const second = currentSnapshot(await load())!;
  t.not(second.manifestList, first.manifestList);
  const b = await files.liveEntries(catalog, io, second);
  t.ok(reads() > readsOnce + plainReads, 'a new snapshot is read');
  t.equal(b.reduce((n, e) => n + e.entry.dataFile.recordCount, 0), 3, 'with every row');

  const before = reads();
  await files.liveEntries({ ...catalog, id: `${catalog.id}-other` }, io, first);
  t.ok(reads() > before, 'another catalog does not share the entries');

  // Through the engine: the cached plan still answers new and old snapshots right.
  t.same((await floe.sql('SELECT count(*) FROM cache_ns.t')).rows, [[3]]);
  t.same((await floe.sql(`SELECT count(*) FROM cache_ns.t FOR VERSION AS OF ${first.snapshotId}`)).rows, [[2]]);
  await floe.sql('DELETE FROM cache_ns.t WHERE id = 1');
  t.same((await floe.sql('SELECT count(*) FROM cache_ns.t')).rows, [[2]]);
});
