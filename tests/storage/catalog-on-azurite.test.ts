/**
 * A catalog whose warehouse is an Azure Blob container on Azurite, over HTTP on both store
 * backends: `POST /v1/catalogs` with an `adls` storage profile is checked with a probe object and
 * refused with a message naming the cause (wrong account key, missing container, unreachable
 * endpoint); the key is sealed at rest and never returned; then REST create, commit, load (from a
 * second server with nothing cached), register and purge read and write blobs in the container.
 */
import t from 'tap';
import { randomBytes } from 'node:crypto';
import { onEachBackend } from '../helpers/stores.js';
import { azuriteStorageProfile, onAzurite, type AzuriteStore } from '../helpers/azurite.js';
import { startS3FaultProxy } from '../helpers/s3-fault-proxy.js';
import { sampleSchema, startCatalogServer } from '../catalog/helpers.js';
import { commitAndLoadCold } from './commit-and-load-cold.js';

const CONTAINER = 'lakehouse';

async function blobsIn(azurite: AzuriteStore, prefix: string): Promise<string[]> {
  const names: string[] = [];
  for await (const b of azurite.client().getContainerClient(CONTAINER).listBlobsFlat({ prefix })) names.push(b.name);
  return names.sort();
}

await onAzurite(t, 'catalog on Azurite', async (t, azurite) => {
  await azurite.createContainer(CONTAINER);
  const profile = (overrides: Record<string, unknown> = {}, prefix = 'warehouse'): Record<string, unknown> => azuriteStorageProfile(azurite, CONTAINER, prefix, overrides);

  await onEachBackend(t, async (t, store, backend) => {
    const { client, server } = await startCatalogServer(t, store);
    const name = `lake_${backend}`;
    const leaks = (text: string): boolean => text.includes(azurite.accountKey);

    // Refused profiles name what failed.
    const wrongKey = randomBytes(64).toString('base64');
    const badKey = await client.post('/v1/catalogs', { name: 'bad1', 'storage-profile': profile({ credentials: { type: 'shared-key', 'account-key': wrongKey } }) });
    t.equal(badKey.status, 400, 'wrong account key: refused');
    t.match(badKey.body.error.message, /could not write a probe object: access denied/);
    t.notOk(badKey.text.includes(wrongKey), 'the key is not echoed');
    const noContainer = await client.post('/v1/catalogs', { name: 'bad2', 'storage-profile': profile({ filesystem: 'no-such-container' }) });
    t.equal(noContainer.status, 400, 'missing container: refused');
    t.match(noContainer.body.error.message, /could not write a probe object: the container \(filesystem\) does not exist/);
    const closed = await startS3FaultProxy(azurite.endpoint);
    await closed.close();
    const noStore = await client.post('/v1/catalogs', { name: 'bad3', 'storage-profile': profile({ endpoint: `${closed.endpoint}/${azurite.accountName}` }) });
    t.equal(noStore.status, 400, 'unreachable endpoint: refused');
    t.match(noStore.body.error.message, /could not write a probe object: the store did not answer/);
    const otherAccount = await client.post('/v1/catalogs', { name: 'bad4', 'storage-profile': profile({ 'account-name': 'someoneelse' }) });
    t.equal(otherAccount.status, 400, 'an account the endpoint does not serve: refused');
    t.match(otherAccount.body.error.message, /could not write a probe object/);
    const elsewhere = await client.post('/v1/catalogs', { name: 'bad5', 'warehouse-location': `abfss://other@${azurite.accountName}.dfs.core.windows.net/x`, 'storage-profile': profile() });
    t.equal(elsewhere.status, 400, 'a warehouse outside the profile\'s filesystem');
    for (const [bad, why] of [
      [{ 'account-name': 'Bad_Name' }, /Invalid account-name/], [{ filesystem: 'A' }, /Invalid filesystem/], [{ endpoint: 'ftp://x' }, /Invalid endpoint/],
      [{ credentials: { type: 'shared-key', 'account-key': 'not base64!' } }, /Invalid account-key/],
      [{ credentials: { type: 'access-key' } }, /Unsupported credentials type "access-key" in an adls storage-profile/],
      [{ region: 'us-east-1' }, /Unknown field 'region'/],
      [{ 'vended-credentials': {} }, /only on an account with a hierarchical namespace/],
    ] as const) {
      const r = await client.post('/v1/catalogs', { name: 'bad6', 'storage-profile': profile(bad) });
      t.equal(r.status, 400, JSON.stringify(bad));
      t.match(r.body.error.message, why);
      t.notOk(leaks(r.text), 'no key in the refusal');
    }
    t.equal((await client.get('/v1/catalogs/bad1')).status, 404, 'no refused catalog exists');

    // A good profile: created, probe object gone, key neither returned nor stored in the clear.
    const created = await client.post('/v1/catalogs', { name, 'storage-profile': profile({}, `/warehouse/${backend}/`) });
    t.equal(created.status, 201, created.text);
    const warehouse = `abfss://${CONTAINER}@${azurite.accountName}.dfs.core.windows.net/warehouse/${backend}`;
    t.equal(created.body['warehouse-location'], warehouse, 'the warehouse is the profile\'s filesystem and prefix');
    t.same(created.body['storage-profile'], {
      type: 'adls', 'account-name': azurite.accountName, filesystem: CONTAINER, 'key-prefix': `warehouse/${backend}`, 'endpoint-suffix': 'core.windows.net',
      endpoint: azurite.endpoint, 'hierarchical-namespace': false, credentials: { type: 'shared-key' },
    });
    t.notOk(leaks(created.text), 'no key in the create response');
    t.notOk(leaks((await client.get(`/v1/catalogs/${name}`)).text), 'nor on load');
    t.notOk(leaks((await client.get('/v1/catalogs')).text), 'nor in the list');
    const config = await client.get(`/v1/config?warehouse=${name}`);
    t.match(config.body.defaults, { 'adls.account-name': azurite.accountName }, 'engines beside Floe learn the account');
    t.notOk(leaks(config.text), 'but not the key');
    t.same(await blobsIn(azurite, `warehouse/${backend}/`), [], 'the probe object was deleted');
    const row = (await store.query<{ id: string; storage_profile: unknown; storage_secret_sealed: string }>('SELECT id, storage_profile, storage_secret_sealed FROM catalogs WHERE name = $1', [name])).rows[0]!;
    t.ok(row.storage_secret_sealed.startsWith('v1:'), 'the key is sealed');
    t.notOk(leaks(JSON.stringify(row)), 'the row holds no key in the clear');
    t.ok(server.state.principals.secrets.open(row.storage_secret_sealed, `storage-profile:${row.id}`).includes(azurite.accountKey), 'and opens under the server key');

    // REST tables in the container.
    const base = `/v1/${name}/namespaces`;
    t.equal((await client.post(base, { namespace: ['db'], properties: {} })).status, 200);
    const table = await client.post(`${base}/db/tables`, { name: 'events', schema: sampleSchema() });
    t.equal(table.status, 200, table.text);
    const first = table.body['metadata-location'] as string;
    const tablePath = `${(table.body.metadata.location as string).slice(`abfss://${CONTAINER}@${azurite.accountName}.dfs.core.windows.net/`.length)}/`;
    t.match(first, new RegExp(`^abfss://${CONTAINER}@${azurite.accountName}\\.dfs\\.core\\.windows\\.net/warehouse/${backend}/db/events-[0-9a-f]{32}/metadata/00000-[0-9a-f-]{36}\\.metadata\\.json$`));
    t.same(await blobsIn(azurite, tablePath), [first.slice(first.indexOf(tablePath))], 'the metadata file is a blob in the container');

    const { metadataLocation: second, coldServer: other } = await commitAndLoadCold(t, client, store, `${base}/db/tables/events`, table.body.metadata['table-uuid'], 'azurite');
    t.equal((await blobsIn(azurite, tablePath)).length, 2, 'two metadata files in the container');

    // Not a second table in the folder of a live one (docs/catalog.md "Table locations").
    const shared = await client.post(`${base}/db/register`, { name: 'events_again', 'metadata-location': second });
    t.equal(shared.status, 400, `registered beside the live table: ${shared.text}`);
    t.equal((await client.delete(`${base}/db/tables/events`)).status, 204, 'dropped without purge');
    t.equal((await blobsIn(azurite, tablePath)).length, 2, 'a drop without purge keeps the files');
    const registered = await client.post(`${base}/db/register`, { name: 'events_again', 'metadata-location': second });
    t.equal(registered.status, 200, registered.text);
    t.equal((await other.client.get(`${base}/db/tables/events_again`)).body.metadata.properties.owner, 'azurite', 'a registered table reads its metadata from the container');

    const purged = await client.delete(`${base}/db/tables/events_again?purgeRequested=true`);
    t.equal(purged.status, 204);
    t.same(await blobsIn(azurite, tablePath), [], 'purge deleted the table\'s blobs');
  });
});
