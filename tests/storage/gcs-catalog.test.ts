/**
 * A catalog whose warehouse is a GCS bucket — on the checking server (tests/helpers/
 * gcs-checking-server.ts; no GCS emulator runs here), over HTTP on both metadata-store backends:
 * `POST /v1/catalogs` with a `gcs` storage profile is checked with a probe object and refused with a
 * message naming the cause (a key the token endpoint does not know, a missing bucket, a malformed
 * key); the service-account key is sealed at rest and never returned; then REST create, commit,
 * load (from a second server with nothing cached), register and purge read and write objects in
 * the bucket, every request carrying a token the server issued.
 */
import t from 'tap';
import { generateKeyPairSync } from 'node:crypto';
import { onEachBackend } from '../helpers/stores.js';
import { gcsStorageProfile, startGcsCheckingServer } from '../helpers/gcs-checking-server.js';
import { sampleSchema, startCatalogServer } from '../catalog/helpers.js';
import { commitAndLoadCold } from './commit-and-load-cold.js';

const BUCKET = 'lakehouse';


t.test('catalog on the GCS checking server', async (t) => {
  const gcs = await startGcsCheckingServer();
  t.teardown(() => gcs.close());
  gcs.createBucket(BUCKET);
  const privateKeyBody = gcs.serviceAccountKey.private_key.split('\n')[1] as string;
  const leaks = (text: string): boolean => text.includes(privateKeyBody) || text.includes('PRIVATE KEY');

  await onEachBackend(t, async (t, store, backend) => {
    const { client, server } = await startCatalogServer(t, store);
    const name = `lake_${backend}`;
    const profile = (overrides: Record<string, unknown> = {}, prefix = 'warehouse'): Record<string, unknown> => gcsStorageProfile(gcs, BUCKET, prefix, overrides);

    // Refused profiles name what failed.
    const otherKey = generateKeyPairSync('rsa', { modulusLength: 2048 }).privateKey.export({ type: 'pkcs8', format: 'pem' }).toString();
    const badKey = await client.post('/v1/catalogs', { name: 'bad1', 'storage-profile': profile({ credentials: { type: 'service-account-key', 'service-account-key': { ...gcs.serviceAccountKey, private_key: otherKey } } }) });
    t.equal(badKey.status, 400, 'a key the token endpoint does not know: refused');
    t.match(badKey.body.error.message, /could not write a probe object: the token endpoint refused the service account/);
    t.notOk(leaks(badKey.text) || badKey.text.includes(otherKey.split('\n')[1] as string), 'the key is not echoed');
    const noBucket = await client.post('/v1/catalogs', { name: 'bad2', 'storage-profile': profile({ bucket: 'no-such-bucket' }) });
    t.equal(noBucket.status, 400, 'missing bucket: refused');
    t.match(noBucket.body.error.message, /could not write a probe object: the bucket does not exist/);
    const elsewhere = await client.post('/v1/catalogs', { name: 'bad3', 'warehouse-location': 'gs://other-bucket/x', 'storage-profile': profile() });
    t.equal(elsewhere.status, 400, 'a warehouse outside the profile\'s bucket');
    for (const [bad, why] of [
      [{ bucket: 'A' }, /Invalid bucket name/], [{ endpoint: 'ftp://x' }, /Invalid endpoint/], [{ 'project-id': 'X!' }, /Invalid project-id/],
      [{ credentials: { type: 'service-account-key', 'service-account-key': 'not json' } }, /Invalid service-account-key in storage-profile credentials: the service-account key is not JSON/],
      [{ credentials: { type: 'service-account-key', 'service-account-key': { ...gcs.serviceAccountKey, private_key: 'nope' } } }, /has no PEM private_key/],
      [{ credentials: { type: 'service-account-key' } }, /Missing field 'service-account-key'/],
      [{ credentials: { type: 'access-key' } }, /Unsupported credentials type "access-key" in a gcs storage-profile/],
      [{ region: 'us-east-1' }, /Unknown field 'region'/],
      [{ 'vended-credentials': { 'sts-endpoint': 'file:///x' } }, /Invalid sts-endpoint/],
    ] as const) {
      const r = await client.post('/v1/catalogs', { name: 'bad4', 'storage-profile': profile(bad) });
      t.equal(r.status, 400, JSON.stringify(bad).slice(0, 80));
      t.match(r.body.error.message, why);
      t.notOk(leaks(r.text), 'no key in the refusal');
    }
    t.equal((await client.get('/v1/catalogs/bad1')).status, 404, 'no refused catalog exists');

    // A good profile (the key given as JSON text this time): created, probe object gone, key sealed.
    const created = await client.post('/v1/catalogs', { name, 'storage-profile': profile({ credentials: { type: 'service-account-key', 'service-account-key': JSON.stringify(gcs.serviceAccountKey) } }, `/warehouse/${backend}/`) });
    t.equal(created.status, 201, created.text);
    const warehouse = `gs://${BUCKET}/warehouse/${backend}`;
    t.equal(created.body['warehouse-location'], warehouse, 'the warehouse is the profile\'s bucket and prefix');
    t.same(created.body['storage-profile'], {
      type: 'gcs', bucket: BUCKET, 'key-prefix': `warehouse/${backend}`, 'project-id': gcs.projectId, endpoint: gcs.endpoint, credentials: { type: 'service-account-key' },
    });
    t.notOk(leaks(created.text), 'no key in the create response');
    t.notOk(leaks((await client.get(`/v1/catalogs/${name}`)).text), 'nor on load');
    t.notOk(leaks((await client.get('/v1/catalogs')).text), 'nor in the list');
    const config = await client.get(`/v1/config?warehouse=${name}`);
    t.match(config.body.defaults, { 'gcs.project-id': gcs.projectId, 'gcs.service.host': gcs.endpoint }, 'engines beside Floe learn the project and endpoint');
    t.notOk(leaks(config.text), 'but not the key');
    t.same(gcs.objectNames(BUCKET).filter((n) => n.startsWith(`warehouse/${backend}/`)), [], 'the probe object was deleted');
    const row = (await store.query<{ id: string; storage_secret_sealed: string }>('SELECT id, storage_profile, storage_secret_sealed FROM catalogs WHERE name = $1', [name])).rows[0]!;
    t.ok(row.storage_secret_sealed.startsWith('v1:'), 'the key is sealed');
    t.notOk(leaks(JSON.stringify(row)), 'the row holds no key in the clear');
    t.ok(server.state.principals.secrets.open(row.storage_secret_sealed, `storage-profile:${row.id}`).includes(privateKeyBody), 'and opens under the server key');

    // REST tables in the bucket.
    const base = `/v1/${name}/namespaces`;
    const objects = (prefix: string): string[] => gcs.objectNames(BUCKET).filter((n) => n.startsWith(prefix));
    t.equal((await client.post(base, { namespace: ['db'], properties: {} })).status, 200);
    const table = await client.post(`${base}/db/tables`, { name: 'events', schema: sampleSchema() });
    t.equal(table.status, 200, table.text);
    const first = table.body['metadata-location'] as string;
    t.match(first, new RegExp(`^gs://${BUCKET}/warehouse/${backend}/db/events-[0-9a-f]{32}/metadata/00000-[0-9a-f-]{36}\\.metadata\\.json$`));
    const tablePath = `${(table.body.metadata.location as string).slice(`gs://${BUCKET}/`.length)}/`;
    t.same(objects(tablePath), [first.slice(`gs://${BUCKET}/`.length)], 'the metadata file is an object in the bucket');
    const create = gcs.requests.find((r) => r.method === 'POST' && r.query.name === first.slice(`gs://${BUCKET}/`.length));
    t.equal(create?.query.ifGenerationMatch, '0', 'the metadata file was written create-if-absent');

    const { metadataLocation: second, coldServer: other } = await commitAndLoadCold(t, client, store, `${base}/db/tables/events`, table.body.metadata['table-uuid'], 'gcs');
    t.equal(objects(tablePath).length, 2, 'two metadata files in the bucket');

    // Not a second table in the folder of a live one (docs/catalog.md "Table locations").
    const shared = await client.post(`${base}/db/register`, { name: 'events_again', 'metadata-location': second });
    t.equal(shared.status, 400, `registered beside the live table: ${shared.text}`);
    t.equal((await client.delete(`${base}/db/tables/events`)).status, 204, 'dropped without purge');
    t.equal(objects(tablePath).length, 2, 'a drop without purge keeps the files');
    const registered = await client.post(`${base}/db/register`, { name: 'events_again', 'metadata-location': second });
    t.equal(registered.status, 200, registered.text);
    t.equal((await other.client.get(`${base}/db/tables/events_again`)).body.metadata.properties.owner, 'gcs');
    const purged = await client.delete(`${base}/db/tables/events_again?purgeRequested=true`);
    t.equal(purged.status, 204);
    t.same(objects(tablePath), [], 'purge deleted the table\'s objects');

    const storage = gcs.requests.filter((r) => r.path !== '/token');
    t.same(storage.filter((r) => r.status === 400 || r.status === 401 || r.status >= 500).map((r) => `${r.method} ${r.path} ${r.status}`), [], 'the server refused nothing as malformed or unauthenticated');
  });
});
