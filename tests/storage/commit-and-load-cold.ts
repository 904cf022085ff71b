/**
 * The REST round trip the catalog-on-store tests (catalog-on-rgw, catalog-on-azurite, gcs-catalog)
 * share once a table exists on the store: a commit (the table's `owner` property) writes metadata
 * file 00001, a commit on a stale base is refused, and a second server on the same metadata store,
 * with nothing cached, opens the sealed secret and reads the committed metadata from the store.
 */
import type { Test } from 'tap';
import type { MetaStore } from '../../catalog/store/meta-store.js';
import { startCatalogServer, type CatalogClient, type CatalogServer } from '../catalog/helpers.js';

/**
 * Commits `owner` to the table at `tablePath` (`/v1/<catalog>/namespaces/<ns>/tables/<name>`).
 * Returns the new metadata location and the second server, for more cold reads.
 */
export async function commitAndLoadCold(
  t: Test, client: CatalogClient, store: MetaStore, tablePath: string, tableUuid: string, owner: string,
): Promise<{ readonly metadataLocation: string; readonly coldServer: CatalogServer }> {
  const committed = await client.post(tablePath, {
    requirements: [{ type: 'assert-table-uuid', uuid: tableUuid }],
    updates: [{ action: 'set-properties', updates: { owner } }],
  });
  t.equal(committed.status, 200, committed.text);
  const second = committed.body['metadata-location'] as string;
  t.match(second, /\/metadata\/00001-[0-9a-f-]{36}\.metadata\.json$/, 'the commit wrote metadata file 00001');
  const stale = await client.post(tablePath, {
    requirements: [{ type: 'assert-ref-snapshot-id', ref: 'main', 'snapshot-id': 42 }],
    updates: [{ action: 'set-properties', updates: { owner: 'nobody' } }],
  });
  t.equal(stale.status, 409, 'a commit on a stale base is refused');
  const other = await startCatalogServer(t, store);
  const loaded = await other.client.get(tablePath);
  t.equal(loaded.status, 200);
  t.equal(loaded.body['metadata-location'], second);
  t.equal(loaded.body.metadata.properties.owner, owner, 'a second server with nothing cached reads the committed metadata');
  return { metadataLocation: second, coldServer: other };
}
