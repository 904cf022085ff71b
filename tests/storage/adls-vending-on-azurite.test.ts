/**
 * ADLS credential vending (issue 18 item 2).
 *
 * What Azurite can check: it verifies service SAS signatures, permissions and expiry for container
 * and blob SAS, but it has no hierarchical namespace and so refuses the directory SAS (`sr=d`)
 * Floe vends. The SAS signing Floe uses (`signSas`: the account key, the permission letters by
 * mode, the validity window, `@azure/storage-file-datalake`'s signer) is therefore proven on
 * Azurite with blob-scoped tokens: the table's blob reads, a tampered or expired token and another
 * table's blob are refused, a read token cannot write. The directory SAS itself is checked by
 * recomputing its signature here from Azure's documented string-to-sign (an independent HMAC), and
 * by its scope fields (`sr=d`, `sdd`, `sp`).
 *
 * Then the catalog on Azurite: a profile with `hierarchical-namespace: true` vends one directory
 * SAS per table location in the entry keys of issue 18 (`adls.sas-token`, `…expires-at-ms`,
 * `adls.sas-token.<account>`, `adls.sas-token.<account host>`, `adls.account-name`,
 * `adls.refresh-credentials-endpoint`), read-only for read-only tokens, cached and single-flight,
 * refreshed through `/credentials`; a plain container (no hierarchical namespace) vends nothing.
 */
import t from 'tap';
import { createHmac } from 'node:crypto';
import { openStore } from '../../catalog/store/open-store.js';
import { AdlsCredentialVendor, adlsCredentialConfig, directoryDepth, signSas } from '../../storage-creds/adls-vending.js';
import { azuriteStorageProfile, onAzurite } from '../helpers/azurite.js';
import { checkBlobSasOnAzurite, sasBlobClient, sasOutcome } from '../helpers/azurite-sas.js';
import { tableLocations } from '../../server/routes/iceberg/credentials.js';
import type { CatalogRecord } from '../../catalog/rest/store.js';
import type { TableMetadata } from '../../catalog/iceberg/table-metadata.js';
import type { AdlsStorageProfile } from '../../storage-creds/storage-profile.js';
import { sampleSchema, startCatalogServer } from '../catalog/helpers.js';

const VENDED = { headers: { 'x-iceberg-access-delegation': 'vended-credentials' } };
const CONTAINER = 'lakehouse';

/** Azure's service SAS string-to-sign (versions from 2020-12-06), recomputed independently of the SDK. */
function expectedSignature(accountName: string, accountKey: string, container: string, path: string, q: URLSearchParams): string {
  const stringToSign = [
    q.get('sp') ?? '', q.get('st') ?? '', q.get('se') ?? '', `/blob/${accountName}/${container}/${path}`, q.get('si') ?? '', q.get('sip') ?? '',
    q.get('spr') ?? '', q.get('sv') ?? '', q.get('sr') ?? '', '', q.get('ses') ?? '', '', '', '', '', '',
  ].join('\n');
  return createHmac('sha256', Buffer.from(accountKey, 'base64')).update(stringToSign, 'utf8').digest('base64');
}

t.test('a directory SAS: scope, permissions by mode, expiry, signature', async (t) => {
  const account = { kind: 'shared-key', accountName: 'acct', accountKey: Buffer.alloc(64, 7).toString('base64') } as const;
  const now = Date.UTC(2026, 0, 2, 3, 4, 5);
  const read = signSas(account, { kind: 'directory', filesystem: 'fs', path: 'wh/db/orders' }, 'read', now, 900);
  const q = new URLSearchParams(read.token);
  t.equal(q.get('sr'), 'd', 'a directory SAS');
  t.equal(q.get('sdd'), '3', 'its depth is the table directory\'s');
  t.equal(q.get('sp'), 'rl', 'read: read and list');
  t.equal(q.get('spr'), 'https', 'https only');
  t.equal(q.get('se'), '2026-01-02T03:19:05Z', 'expires after the configured duration');
  t.equal(read.expiresAtMs, now + 900_000);
  t.equal(q.get('st'), '2026-01-02T02:59:05Z', 'valid from five minutes back (clock skew)');
  t.equal(q.get('sig'), expectedSignature(account.accountName, account.accountKey, 'fs', 'wh/db/orders', q), 'the signature is Azure\'s HMAC over the documented string');
  const write = new URLSearchParams(signSas(account, { kind: 'directory', filesystem: 'fs', path: '/wh/db/orders/' }, 'read-write', now, 900).token);
  t.equal(write.get('sp'), 'racwdl', 'read-write adds add, create, write, delete');
  t.equal(write.get('sig'), expectedSignature(account.accountName, account.accountKey, 'fs', 'wh/db/orders', write), 'slashes around the path do not change the resource');
  t.throws(() => signSas(account, { kind: 'directory', filesystem: 'fs', path: '' }, 'read', now, 900), /never minted for a whole filesystem/);
  t.throws(() => signSas(account, { kind: 'directory', filesystem: 'fs', path: 'wh/../other' }, 'read', now, 900), /\. or \.\. segments/);
  t.equal(directoryDepth('a/b/c/'), 3);

  const config = adlsCredentialConfig('abfss://fs@acct.dfs.core.windows.net/wh/db/orders', read, 'v1/lake/namespaces/db/tables/orders/credentials');
  t.same(Object.fromEntries(config), {
    'adls.account-name': 'acct', 'adls.sas-token': read.token, 'adls.sas-token-expires-at-ms': String(now + 900_000),
    'adls.sas-token.acct': read.token, 'adls.sas-token.acct.dfs.core.windows.net': read.token,
    'adls.refresh-credentials-endpoint': 'v1/lake/namespaces/db/tables/orders/credentials',
  }, 'the entry keys of issue 18');
});

t.test('the vendor caches tokens per (locations, mode), single-flight, until shortly before expiry', async (t) => {
  let now = 1_000_000_000_000;
  const vendor = new AdlsCredentialVendor({ type: 'account-key', accountName: 'acct', accountKey: Buffer.alloc(64, 1).toString('base64') }, { durationSeconds: 3600 }, false, () => now);
  const loc = 'abfss://fs@acct.dfs.core.windows.net/wh/t';
  const [a, b] = await Promise.all([vendor.vend([loc], 'read'), vendor.vend([loc], 'read')]);
  t.equal(vendor.minted, 1, 'concurrent callers share one signing');
  t.equal(a, b);
  await vendor.vend([loc], 'read-write');
  t.equal(vendor.minted, 2, 'another mode is another token');
  now += 54 * 60_000;
  t.equal(await vendor.vend([loc], 'read'), a, 'reused while more than 5 minutes are left');
  now += 2 * 60_000;
  const renewed = await vendor.vend([loc], 'read');
  t.equal(vendor.minted, 3, 'minted again when less than 5 minutes are left');
  t.ok(renewed[0]!.sas.expiresAtMs > a[0]!.sas.expiresAtMs);
  await t.rejects(vendor.vend(['abfss://fs@other.dfs.core.windows.net/wh/t'], 'read'), /not in storage account acct/, 'never signs for another account');
});

t.test('which locations of a table get a SAS', async (t) => {
  const profile: AdlsStorageProfile = {
    type: 'adls', accountName: 'acct', filesystem: 'fs', keyPrefix: 'wh', endpointSuffix: 'core.windows.net', endpoint: null,
    hierarchicalNamespace: true, credentialSource: 'shared-key', vendedCredentials: { durationSeconds: 900 },
  };
  const catalog = { warehouseLocation: 'abfss://fs@acct.dfs.core.windows.net/wh', locationMappings: [] } as unknown as CatalogRecord;
  const locations = (location: string, properties: Record<string, string> = {}): readonly string[] =>
    tableLocations(catalog, profile, { location, properties: new Map(Object.entries(properties)) } as unknown as TableMetadata);
  t.same(locations('abfss://fs@acct.dfs.core.windows.net/wh/db/t/'), ['abfss://fs@acct.dfs.core.windows.net/wh/db/t']);
  t.same(locations('wasbs://fs@acct.blob.core.windows.net/wh/db/t'), ['wasbs://fs@acct.blob.core.windows.net/wh/db/t'], 'the account\'s blob host is its own');
  t.same(locations('abfss://fs@acct.dfs.core.windows.net/wh/db/t', { 'write.data.path': 'abfss://fs@acct.dfs.core.windows.net/wh/db/t/data' }), ['abfss://fs@acct.dfs.core.windows.net/wh/db/t'], 'a location inside the table needs no entry');
  for (const [what, location, properties] of [
    ['another host with the account\'s name', 'abfss://fs@acct.dfs.evil.example/wh/db/t', {}],
    ['another account', 'abfss://fs@other.dfs.core.windows.net/wh/db/t', {}],
    ['another filesystem', 'abfss://fs2@acct.dfs.core.windows.net/wh/db/t', {}],
    ['outside the warehouse', 'abfss://fs@acct.dfs.core.windows.net/whx/db/t', {}],
    ['a .. segment', 'abfss://fs@acct.dfs.core.windows.net/wh/../x', {}],
    ['another scheme', 's3://fs/wh/db/t', {}],
    ['a write.metadata.path on another host', 'abfss://fs@acct.dfs.core.windows.net/wh/db/t', { 'write.metadata.path': 'abfss://fs@acct.dfs.evil.example/wh/db/t/m' }],
  ] as const) {
    t.throws(() => locations(location, properties), /outside the catalog's warehouse/, what);
  }
});

await onAzurite(t, 'ADLS vending on Azurite', async (t, azurite) => {
  await azurite.createContainer(CONTAINER);
  const store = await openStore({ kind: 'pglite-memory' });
  t.teardown(() => store.close());
  const { client, server, clientFor } = await startCatalogServer(t, store);

  // A plain container (no hierarchical namespace): nothing is vended, and the endpoint says why.
  t.equal((await client.post('/v1/catalogs', { name: 'plain', 'storage-profile': azuriteStorageProfile(azurite, CONTAINER, 'plain') })).status, 201);
  t.equal((await client.post('/v1/plain/namespaces', { namespace: ['db'], properties: {} })).status, 200);
  const plainTable = await client.post('/v1/plain/namespaces/db/tables', { name: 't', schema: sampleSchema() }, VENDED);
  t.equal(plainTable.status, 200);
  t.notOk('storage-credentials' in plainTable.body, 'no credentials: a SAS could not be limited to the table');
  const plainCreds = await client.get('/v1/plain/namespaces/db/tables/t/credentials');
  t.equal(plainCreds.status, 400);
  t.match(plainCreds.body.error.message, /cannot vend credentials/);

  // An account with a hierarchical namespace (as the profile declares; Azurite serves it through the Blob API).
  const created = await client.post('/v1/catalogs', {
    name: 'lake', 'storage-profile': azuriteStorageProfile(azurite, CONTAINER, 'warehouse', { 'hierarchical-namespace': true, 'vended-credentials': { 'duration-seconds': 900 } }),
  });
  t.equal(created.status, 201, created.text);
  t.same(created.body['storage-profile']['vended-credentials'], { 'duration-seconds': 900 });
  const base = '/v1/lake/namespaces';
  t.equal((await client.post(base, { namespace: ['db'], properties: {} })).status, 200);
  const host = `${azurite.accountName}.dfs.core.windows.net`;
  const tables = new Map<string, { location: string; metadataLocation: string }>();
  for (const name of ['orders', 'orders_old']) {
    const r = await client.post(`${base}/db/tables`, { name, schema: sampleSchema() });
    t.equal(r.status, 200, `${name} created`);
    tables.set(name, { location: r.body.metadata.location, metadataLocation: r.body['metadata-location'] });
  }
  const orders = tables.get('orders')!;
  const foreign = await client.post(`${base}/db/tables`, { name: 'evil', schema: sampleSchema(), location: `abfss://${CONTAINER}@${azurite.accountName}.dfs.evil.example/warehouse/db/evil` });
  t.equal(foreign.status, 400, 'a table on another host with the account\'s name is refused');
  t.notOk(foreign.text.includes('sig='), 'and no SAS');
  const pathOf = (location: string): string => location.slice(`abfss://${CONTAINER}@${host}/`.length);

  const CREDENTIALS = 'GET /v1/{prefix}/namespaces/{namespace}/tables/{table}/credentials';
  const SIGN = 'POST /v1/{prefix}/namespaces/{namespace}/tables/{table}/sign';
  const lakeEndpoints = (await client.get('/v1/config?warehouse=lake')).body.endpoints as string[];
  t.ok(lakeEndpoints.includes(CREDENTIALS) && !lakeEndpoints.includes(SIGN), '/v1/config advertises credentials, not signing (S3 only)');
  t.notOk(((await client.get('/v1/config?warehouse=plain')).body.endpoints as string[]).includes(CREDENTIALS), 'nor credentials for a plain container');
  const signed = await client.post(`${base}/db/tables/orders/sign`, { region: 'x', uri: `${azurite.endpoint}/${CONTAINER}/x`, method: 'GET', headers: {} });
  t.equal(signed.status, 400, 'no remote signing on ADLS');
  t.match(signed.body.error.message, /remote signing is for S3 only/);
  t.notOk('s3.remote-signing-enabled' in (await client.get(`${base}/db/tables/orders`, { headers: { 'x-iceberg-access-delegation': 'remote-signing' } })).body.config, 'nor signing config on load');

  const loaded = await client.get(`${base}/db/tables/orders`, VENDED);
  t.equal(loaded.status, 200);
  t.equal(loaded.headers['cache-control'], 'no-store');
  const entries = loaded.body['storage-credentials'] as { prefix: string; config: Record<string, string> }[];
  t.equal(entries.length, 1);
  const entry = entries[0]!;
  t.equal(entry.prefix, `${orders.location}/`, 'the entry is for the table\'s directory');
  const sas = entry.config['adls.sas-token']!;
  t.same(Object.keys(entry.config).sort(), [
    'adls.account-name', 'adls.refresh-credentials-endpoint', 'adls.sas-token', `adls.sas-token.${azurite.accountName}`, `adls.sas-token.${host}`, 'adls.sas-token-expires-at-ms',
  ].sort());
  t.equal(entry.config[`adls.sas-token.${host}`], sas);
  t.equal(entry.config['adls.refresh-credentials-endpoint'], 'v1/lake/namespaces/db/tables/orders/credentials');
  const q = new URLSearchParams(sas);
  t.same([q.get('sr'), q.get('sdd'), q.get('sp'), q.get('spr')], ['d', String(pathOf(orders.location).split('/').length), 'racwdl', 'https,http'], 'a read-write directory SAS for the table (http allowed: the endpoint is http)');
  t.equal(q.get('sig'), expectedSignature(azurite.accountName, azurite.accountKey, CONTAINER, pathOf(orders.location), q), 'signed with the account key for the table\'s directory');
  const expiresAt = Number(entry.config['adls.sas-token-expires-at-ms']);
  t.ok(Math.abs(expiresAt - (Date.now() + 900_000)) < 60_000, 'expires after duration-seconds');
  t.notOk(loaded.text.includes(azurite.accountKey), 'the account key is not in the response');

  const again = await client.get(`${base}/db/tables/orders/credentials`);
  t.equal(again.status, 200, 'the refresh endpoint answers');
  t.equal(again.body['storage-credentials'][0].config['adls.sas-token'], sas, 'the cached token');
  const reader = clientFor(await server.token('table:read table:data'));
  const readOnly = await reader.get(`${base}/db/tables/orders`, VENDED);
  t.equal(new URLSearchParams(readOnly.body['storage-credentials'][0].config['adls.sas-token']).get('sp'), 'rl', 'a read-only token gets a read-only SAS');
  const noData = clientFor(await server.token('table:read'));
  t.notOk('storage-credentials' in (await noData.get(`${base}/db/tables/orders`, VENDED)).body, 'no table:data, no SAS');

  const escaping = await client.post(`${base}/db/tables/orders`, {
    requirements: [], updates: [{ action: 'set-properties', updates: { 'write.data.path': `abfss://${CONTAINER}@${host}/elsewhere/data` } }],
  });
  t.equal(escaping.status, 200, escaping.text);
  const refused = await client.get(`${base}/db/tables/orders`, VENDED);
  t.equal(refused.status, 403, 'a write.data.path outside the warehouse gets no SAS');
  t.match(refused.body.error.message, /write\.data\.path .* is outside the catalog's warehouse/);
  const inside = await client.post(`${base}/db/tables/orders`, {
    requirements: [], updates: [{ action: 'set-properties', updates: { 'write.data.path': `abfss://${CONTAINER}@${host}/warehouse/db/shared-data` } }],
  });
  t.equal(inside.status, 200);
  const two = (await client.get(`${base}/db/tables/orders`, VENDED)).body['storage-credentials'] as { prefix: string; config: Record<string, string> }[];
  t.same(two.map((e) => e.prefix), [`${orders.location}/`, `abfss://${CONTAINER}@${host}/warehouse/db/shared-data/`], 'one entry per location');
  t.not(two[0]!.config['adls.sas-token'], two[1]!.config['adls.sas-token'], 'each with a SAS for its own directory');
  t.equal(new URLSearchParams(two[1]!.config['adls.sas-token']).get('sdd'), '3');

  await t.test('Azurite verifies Floe\'s SAS signing: blob scope, permissions, expiry', async (t) => {
    const account = { kind: 'shared-key', accountName: azurite.accountName, accountKey: azurite.accountKey } as const;
    const meta = pathOf(orders.metadataLocation);
    const other = pathOf(tables.get('orders_old')!.metadataLocation);
    await checkBlobSasOnAzurite(t, { azurite, container: CONTAINER, signer: account, table: meta, otherTable: other, scratch: `${pathOf(orders.location)}/data/new.parquet`, allowHttp: true });
    const wrongKey = signSas({ kind: 'shared-key', accountName: azurite.accountName, accountKey: Buffer.alloc(64, 9).toString('base64') }, { kind: 'blob', filesystem: CONTAINER, path: meta }, 'read', Date.now(), 900, true).token;
    t.equal(await sasOutcome(() => sasBlobClient(azurite, CONTAINER, meta, wrongKey).downloadToBuffer()), 'denied', 'a SAS signed with another key is refused');
  });
});
