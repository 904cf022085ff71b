/**
 * A catalog whose warehouse is a bucket on a real Ceph RGW, over HTTP on both store backends:
 * `POST /v1/catalogs` with an `s3` storage profile is checked with a probe object and refused
 * with a message naming the cause (wrong secret, missing bucket, unreachable endpoint); the keys
 * are sealed at rest and never returned; then REST create, commit (a stale one refused), load
 * from a second server with nothing cached and purge of a table write and read its metadata files
 * in the bucket.
 */
import t from 'tap';
import { HeadObjectCommand, ListObjectsV2Command } from '@aws-sdk/client-s3';
import { openStore } from '../../catalog/store/open-store.js';
import { onEachBackend } from '../helpers/stores.js';
import { onRgw, type RgwStore } from '../helpers/rgw.js';
import { startS3FaultProxy } from '../helpers/s3-fault-proxy.js';
import { sampleSchema, startCatalogServer } from '../catalog/helpers.js';
import { commitAndLoadCold } from './commit-and-load-cold.js';

function profile(rgw: RgwStore, overrides: Record<string, unknown> = {}, credentials?: Record<string, unknown>): Record<string, unknown> {
  return {
    type: 's3', bucket: 'lakehouse', 'key-prefix': 'warehouse', region: rgw.region, endpoint: rgw.endpoint, 'path-style-access': true,
    credentials: credentials ?? { type: 'access-key', 'access-key-id': rgw.accessKeyId, 'secret-access-key': rgw.secretAccessKey },
    ...overrides,
  };
}

async function keysIn(rgw: RgwStore, prefix: string): Promise<string[]> {
  const s3 = rgw.client();
  try {
    const r = await s3.send(new ListObjectsV2Command({ Bucket: 'lakehouse', Prefix: prefix }));
    return (r.Contents ?? []).map((o) => o.Key ?? '').sort();
  } finally {
    s3.destroy();
  }
}

await onRgw(t, 'catalog on RGW', async (t, rgw) => {
  await rgw.createBucket('lakehouse');

  await onEachBackend(t, async (t, store, backend) => {
    const { client, server } = await startCatalogServer(t, store);
    const name = `lake_${backend}`;
    const secretsOf = (text: string): string[] => [rgw.secretAccessKey, rgw.accessKeyId].filter((s) => text.includes(s));

    // Refused profiles name what failed.
    const wrongSecret = await client.post('/v1/catalogs', { name: 'bad1', 'storage-profile': profile(rgw, {}, { type: 'access-key', 'access-key-id': rgw.accessKeyId, 'secret-access-key': 'definitely-not-it-0123456789' }) });
    t.equal(wrongSecret.status, 400, 'wrong secret: refused');
    t.match(wrongSecret.body.error.message, /could not write a probe object: access denied/);
    t.notMatch(wrongSecret.text, /definitely-not-it/, 'the secret is not echoed');
    const noBucket = await client.post('/v1/catalogs', { name: 'bad2', 'storage-profile': profile(rgw, { bucket: 'no-such-bucket' }) });
    t.equal(noBucket.status, 400, 'missing bucket: refused');
    t.match(noBucket.body.error.message, /could not write a probe object: the bucket does not exist/);
    const closed = await startS3FaultProxy(rgw.endpoint);
    await closed.close();
    const noStore = await client.post('/v1/catalogs', { name: 'bad3', 'storage-profile': profile(rgw, { endpoint: closed.endpoint }) });
    t.equal(noStore.status, 400, 'unreachable endpoint: refused');
    t.match(noStore.body.error.message, /could not write a probe object: the store did not answer/);
    const elsewhere = await client.post('/v1/catalogs', { name: 'bad4', 'warehouse-location': 's3://other-bucket/x', 'storage-profile': profile(rgw) });
    t.equal(elsewhere.status, 400, 'a warehouse outside the profile\'s bucket');
    for (const [bad, why] of [
      [{ bucket: 'A_B' }, /Invalid bucket name/], [{ endpoint: 'ftp://x' }, /Invalid endpoint/], [{ type: 'ftp' }, /Unsupported storage-profile type/],
      [{ 'role-arn': 'x' }, /Invalid role-arn/], [{ 'external-id': 'e1' }, /need role-arn/],
    ] as const) {
      const r = await client.post('/v1/catalogs', { name: 'bad5', 'storage-profile': profile(rgw, bad) });
      t.equal(r.status, 400);
      t.match(r.body.error.message, why);
    }
    t.equal((await client.get('/v1/catalogs/bad1')).status, 404, 'no refused catalog exists');

    // A good profile: created, probe object gone, keys neither returned nor stored in the clear.
    const created = await client.post('/v1/catalogs', { name, 'storage-profile': profile(rgw, { 'key-prefix': `/warehouse/${backend}/` }) });
    t.equal(created.status, 201, created.text);
    t.equal(created.body['warehouse-location'], `s3://lakehouse/warehouse/${backend}`, 'the warehouse is the profile\'s bucket and prefix');
    t.same(created.body['storage-profile'], {
      type: 's3', bucket: 'lakehouse', 'key-prefix': `warehouse/${backend}`, region: rgw.region, endpoint: rgw.endpoint, 'path-style-access': true, credentials: { type: 'access-key' },
    });
    t.same(secretsOf(created.text), [], 'no key in the create response');
    t.same(secretsOf((await client.get(`/v1/catalogs/${name}`)).text), [], 'nor on load');
    t.same(secretsOf((await client.get('/v1/catalogs')).text), [], 'nor in the list');
    const config = await client.get(`/v1/config?warehouse=${name}`);
    t.match(config.body.defaults, { 's3.endpoint': rgw.endpoint, 's3.path-style-access': 'true', 's3.region': rgw.region }, 'engines beside Floe learn how to reach the bucket');
    t.same(secretsOf(config.text), [], 'but not the keys');
    t.same(await keysIn(rgw, `warehouse/${backend}/`), [], 'the probe object was deleted');
    const row = (await store.query<{ storage_profile: unknown; storage_secret_sealed: string }>('SELECT storage_profile, storage_secret_sealed FROM catalogs WHERE name = $1', [name])).rows[0];
    t.ok(row?.storage_secret_sealed.startsWith('v1:'), 'the keys are sealed');
    t.same(secretsOf(JSON.stringify(row)), [], 'the row holds no key in the clear');
    t.equal(server.state.principals.secrets.open(row!.storage_secret_sealed, `storage-profile:${(await store.query<{ id: string }>('SELECT id FROM catalogs WHERE name = $1', [name])).rows[0]!.id}`).includes(rgw.secretAccessKey), true, 'and open under the server key');

    // REST tables on the bucket.
    const base = `/v1/${name}/namespaces`;
    t.equal((await client.post(base, { namespace: ['db'], properties: {} })).status, 200);
    const table = await client.post(`${base}/db/tables`, { name: 'events', schema: sampleSchema() });
    t.equal(table.status, 200, table.text);
    const first = table.body['metadata-location'] as string;
    const tableKeys = `${(table.body.metadata.location as string).slice('s3://lakehouse/'.length)}/`;
    t.match(first, new RegExp(`^s3://lakehouse/warehouse/${backend}/db/events-[0-9a-f]{32}/metadata/00000-[0-9a-f-]{36}\\.metadata\\.json$`));
    const s3 = rgw.client();
    t.teardown(() => s3.destroy());
    const head = await s3.send(new HeadObjectCommand({ Bucket: 'lakehouse', Key: first.slice('s3://lakehouse/'.length) }));
    t.ok((head.ContentLength ?? 0) > 0, 'the metadata file is in the bucket');

    await commitAndLoadCold(t, client, store, `${base}/db/tables/events`, table.body.metadata['table-uuid'], 'rgw');
    t.equal((await keysIn(rgw, tableKeys)).length, 2, 'two metadata files in the bucket');

    const purged = await client.delete(`${base}/db/tables/events?purgeRequested=true`);
    t.equal(purged.status, 204);
    t.same(await keysIn(rgw, tableKeys), [], 'purge deleted the table\'s objects');
  });

  await t.test('credentials from the environment', async (t) => {
    const store = await openStore({ kind: 'pglite-memory' });
    t.teardown(() => store.close());
    const { client } = await startCatalogServer(t, store);
    const saved = { id: process.env.AWS_ACCESS_KEY_ID, secret: process.env.AWS_SECRET_ACCESS_KEY };
    t.teardown(() => {
      if (saved.id === undefined) delete process.env.AWS_ACCESS_KEY_ID; else process.env.AWS_ACCESS_KEY_ID = saved.id;
      if (saved.secret === undefined) delete process.env.AWS_SECRET_ACCESS_KEY; else process.env.AWS_SECRET_ACCESS_KEY = saved.secret;
    });
    delete process.env.AWS_ACCESS_KEY_ID;
    delete process.env.AWS_SECRET_ACCESS_KEY;
    const missing = await client.post('/v1/catalogs', { name: 'env', 'storage-profile': profile(rgw, { 'key-prefix': 'env' }, { type: 'environment' }) });
    t.equal(missing.status, 400);
    t.match(missing.body.error.message, /AWS_ACCESS_KEY_ID or AWS_SECRET_ACCESS_KEY is not set/);
    process.env.AWS_ACCESS_KEY_ID = rgw.accessKeyId;
    process.env.AWS_SECRET_ACCESS_KEY = rgw.secretAccessKey;
    const created = await client.post('/v1/catalogs', { name: 'env', 'storage-profile': profile(rgw, { 'key-prefix': 'env' }, { type: 'environment' }) });
    t.equal(created.status, 201, created.text);
    t.same(created.body['storage-profile'].credentials, { type: 'environment' });
    const row = (await store.query<{ storage_secret_sealed: string | null }>("SELECT storage_secret_sealed FROM catalogs WHERE name = 'env'")).rows[0];
    t.equal(row?.storage_secret_sealed, null, 'nothing to seal: the keys stay in the environment');
    t.equal((await client.post('/v1/env/namespaces', { namespace: ['db'], properties: {} })).status, 200);
    t.equal((await client.post('/v1/env/namespaces/db/tables', { name: 't', schema: sampleSchema() })).status, 200, 'tables are written with the environment\'s keys');

    // /v1/config advertises signing only where Floe holds keys to sign with: the environment's
    // keys yes, the SDK's default chain (which may be an instance role) no.
    const SIGN = 'POST /v1/{prefix}/namespaces/{namespace}/tables/{table}/sign';
    const CREDENTIALS = 'GET /v1/{prefix}/namespaces/{namespace}/tables/{table}/credentials';
    const endpointsOf = async (catalog: string): Promise<string[]> => (await client.get(`/v1/config?warehouse=${catalog}`)).body.endpoints as string[];
    t.ok((await endpointsOf('env')).includes(SIGN), 'environment keys: signing advertised');
    t.notOk((await endpointsOf('env')).includes(CREDENTIALS), 'no vended-credentials: credentials not advertised');
    const chain = await client.post('/v1/catalogs', { name: 'chain', 'storage-profile': profile(rgw, { 'key-prefix': 'chain' }, { type: 'default-chain' }) });
    t.equal(chain.status, 201, `a default-chain profile (the environment is its first link): ${chain.text}`);
    t.notOk((await endpointsOf('chain')).includes(SIGN), 'default chain: signing not advertised');
    t.equal((await client.post('/v1/chain/namespaces', { namespace: ['db'], properties: {} })).status, 200);
    t.equal((await client.post('/v1/chain/namespaces/db/tables', { name: 't', schema: sampleSchema() })).status, 200);
    const signingLoad = await client.get('/v1/chain/namespaces/db/tables/t', { headers: { 'x-iceberg-access-delegation': 'remote-signing' } });
    t.equal(signingLoad.status, 200);
    t.notOk('s3.signer.uri' in signingLoad.body.config, 'nor in a load asking for it');
    const metadataKey = (signingLoad.body['metadata-location'] as string).slice('s3://lakehouse/'.length);
    const signed = await client.post('/v1/chain/namespaces/db/tables/t/sign', { region: rgw.region, method: 'GET', uri: `${rgw.endpoint}/lakehouse/${metadataKey}`, headers: {} });
    t.equal(signed.status, 400, `and /sign refuses even a file of the table: ${signed.text}`);
    t.match(signed.body.error.message, /takes its keys from the default provider chain: remote signing needs access-key or environment credentials/, 'saying why');
  });
});
