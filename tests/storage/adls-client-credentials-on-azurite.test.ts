/**
 * `adls` profiles with Entra ID client credentials (issue 17) and user-delegation SAS vending
 * (issue 18), against real parts: Azurite over HTTPS with `--oauth basic`, and a local Entra ID
 * token endpoint (tests/helpers/entra-token-server.ts) that `@azure/identity`'s
 * `ClientSecretCredential` signs in to. Both present a self-signed certificate made here; this
 * process trusts it per client (the SDKs' `tlsOptions`), the `floe serve` it starts through
 * NODE_EXTRA_CA_CERTS. Nothing turns certificate checks off.
 *
 * What Azurite checks (node_modules/azurite, 3.35.0): a bearer token's issuer, audience and
 * lifetime (not its signature, nor any role assignment: a service principal without a data role
 * cannot be refused there); Get User Delegation Key only with a bearer token (the key is an HMAC of
 * the token's `oid`/`tid` and the requested start and expiry under a constant of Azurite's); and
 * user-delegation SAS for containers and blobs: signature, the key's and the token's validity
 * windows, permissions. It has no hierarchical namespace, so it skips directory SAS (`sr=d`). The
 * directory SAS is therefore checked by recomputing its signature from Azure's documented
 * user-delegation string-to-sign with an independent HMAC, with a key this test asks Azurite for
 * itself; Floe's signing path is proven on Azurite with blob-scoped tokens.
 *
 * 1. In this process: the user delegation key cache (one fetch for concurrent callers, reuse for
 *    days, background replacement in the last day, a failed replacement not breaking vending while
 *    the old key covers the token), and SAS tokens signed with a key from Azurite, accepted and
 *    refused by Azurite.
 * 2. A real `floe serve`: catalog creation refused naming the cause (wrong client secret, unknown
 *    tenant, unknown application, missing filesystem) without the secret in any answer or log; a
 *    catalog created, SQL writing and reading through the FileIO; vended user-delegation SAS
 *    tokens per table, by mode, sharing one key.
 */
import t, { type Test } from 'tap';
import { createHmac, randomBytes, randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ClientSecretCredential } from '@azure/identity';
import { BlobServiceClient, BlockBlobClient } from '@azure/storage-blob';
import { DataLakeSASPermissions, SASProtocol, generateDataLakeSASQueryParameters, type UserDelegationKey } from '@azure/storage-file-datalake';
import { openStore } from '../../catalog/store/open-store.js';
import { parseStorageProfile, storageProfileToJson } from '../../catalog/rest/wire.js';
import type { JsonValue } from '../../catalog/iceberg/json.js';
import { resolveOperatorCatalogs } from '../../server/operator-catalogs.js';
import { UserDelegationKeys, signSas, type FetchUserDelegationKey } from '../../storage-creds/adls-vending.js';
import type { AdlsSasKey } from '../../storage-creds/adls-presign.js';
import { onAzurite, type AzuriteStore } from '../helpers/azurite.js';
import { checkBlobSasOnAzurite, sasBlobClient, sasOutcome } from '../helpers/azurite-sas.js';
import { startCli } from '../helpers/cli.js';
import { STORAGE_SCOPE, startEntraTokenServer } from '../helpers/entra-token-server.js';
import { makeSelfSignedCertificate, trusting } from '../helpers/self-signed.js';

const CONTAINER = 'lakehouse';
// A `floe serve`, Azurite and SQL on a loaded 2-core machine: generous bounds, nothing timed.
t.setTimeout(15 * 60_000);
// Removed at the end of this file (not by a root teardown, which could run while Azurite still starts).
const dir = mkdtempSync(join(tmpdir(), 'floe-adls-entra-'));
const cert = makeSelfSignedCertificate(dir, 'azure');

const TENANT = randomUUID();
const APP = { clientId: randomUUID(), clientSecret: `Fl0~${randomBytes(24).toString('base64url')}`, objectId: randomUUID() };
const entra = await startEntraTokenServer({ tenants: [{ tenantId: TENANT, apps: [APP] }], tls: { cert: cert.cert, key: cert.key } });

/** This test's own sign-in as the service principal (trusting the test certificate). */
function credential(secret = APP.clientSecret): ClientSecretCredential {
  return new ClientSecretCredential(TENANT, APP.clientId, secret, { authorityHost: entra.authorityHost, disableInstanceDiscovery: true, ...trusting(cert.cert) });
}

/** Azure's user-delegation SAS string-to-sign (versions from 2025-07-05), recomputed independently of the SDK. */
function expectedSignature(keyValue: string, accountName: string, container: string, path: string, q: URLSearchParams): string {
  const stringToSign = [
    q.get('sp') ?? '', q.get('st') ?? '', q.get('se') ?? '', `/blob/${accountName}/${container}/${path}`,
    q.get('skoid') ?? '', q.get('sktid') ?? '', q.get('skt') ?? '', q.get('ske') ?? '', q.get('sks') ?? '', q.get('skv') ?? '',
    q.get('saoid') ?? '', q.get('suoid') ?? '', q.get('scid') ?? '', '', q.get('sduoid') ?? '', // signedKeyDelegatedUserTenantId: not issued
    q.get('sip') ?? '', q.get('spr') ?? '', q.get('sv') ?? '', q.get('sr') ?? '', '', q.get('ses') ?? '',
    q.get('rscc') ?? '', q.get('rscd') ?? '', q.get('rsce') ?? '', q.get('rscl') ?? '', q.get('rsct') ?? '',
  ].join('\n');
  return createHmac('sha256', Buffer.from(keyValue, 'base64')).update(stringToSign, 'utf8').digest('base64');
}

t.test('a client-credentials profile: its fields, refusals, the operator file', async (t) => {
  const secret = 'S3cr3t~value-of-the-client-secret';
  const sp = { type: 'client-credentials', 'tenant-id': TENANT, 'client-id': APP.clientId, 'client-secret': secret };
  const json = (credentials: Record<string, unknown> = {}, extra: Record<string, unknown> = {}): JsonValue =>
    ({ type: 'adls', 'account-name': 'acct', filesystem: 'lake', 'key-prefix': 'wh', credentials: { ...sp, ...credentials }, ...extra }) as JsonValue;
  const parsed = parseStorageProfile(json());
  t.same(parsed.profile, {
    type: 'adls', accountName: 'acct', filesystem: 'lake', keyPrefix: 'wh', endpointSuffix: 'core.windows.net', endpoint: null, hierarchicalNamespace: false,
    credentialSource: 'client-credentials', servicePrincipal: { tenantId: TENANT, clientId: APP.clientId, authorityHost: null },
  }, 'the service principal is part of the profile');
  t.same(parsed.secret, { type: 'adls-client-secret', clientSecret: secret }, 'its secret is the secret half');
  t.same(storageProfileToJson(parsed.profile).credentials, { type: 'client-credentials', 'tenant-id': TENANT, 'client-id': APP.clientId }, 'shown without the secret');
  const sovereign = parseStorageProfile(json({ 'authority-host': 'https://login.microsoftonline.us/' }, { 'endpoint-suffix': 'core.usgovcloudapi.net' }));
  t.match(sovereign.profile, { servicePrincipal: { authorityHost: 'https://login.microsoftonline.us' } }, 'a sovereign cloud\'s authority host');
  t.same(parseStorageProfile(json({ 'tenant-id': 'contoso.onmicrosoft.com' })).profile.type, 'adls', 'a tenant named by its domain');
  for (const [what, credentials, extra, message] of [
    ['a tenant id with a space', { 'tenant-id': 'a b' }, {}, /Invalid tenant-id in storage-profile credentials/],
    ['a client id that is not a GUID', { 'client-id': 'my-app' }, {}, /Invalid client-id in storage-profile credentials: expected the application \(client\) id, a GUID/],
    ['no client secret', { 'client-secret': undefined }, {}, /client-secret/],
    ['an http:// authority', { 'authority-host': 'http://login.example' }, {}, /Invalid authority-host in storage-profile credentials: expected an https:\/\/ host/],
    ['an authority with a path', { 'authority-host': 'https://login.example/tenant' }, {}, /Invalid authority-host/],
    ['an unknown field', { certificate: 'x' }, {}, /Unknown field 'certificate' in storage-profile credentials/],
    ['an http:// endpoint', {}, { endpoint: 'http://127.0.0.1:10000/acct' }, /client-credentials send a bearer token, which Azure Storage accepts over https:\/\/ only/],
  ] as const) {
    let error: Error | undefined;
    try {
      parseStorageProfile(json(credentials, extra));
    } catch (e) {
      error = e as Error;
    }
    t.match(error?.message, message, `${what}: refused`);
    t.notOk(error?.message.includes(secret), `${what}: the secret is not in the message`);
  }

  // The operator file: the client secret only by reference; tenant and client ids as written or by reference.
  const declared = (credentials: Record<string, unknown>) => [{ name: 'lake', storage_profile: json(credentials) as Record<string, unknown> }];
  const env = { LAKE_TENANT: TENANT, LAKE_CLIENT_SECRET: secret };
  const sources = { env, readFile: () => { throw new Error('no files here'); } };
  const [lake] = resolveOperatorCatalogs(declared({ 'tenant-id': { env: 'LAKE_TENANT' }, 'client-secret': { env: 'LAKE_CLIENT_SECRET' } }), sources);
  t.same(lake!.request.storage?.secret, { type: 'adls-client-secret', clientSecret: secret }, 'the secret resolved from the environment');
  t.match(lake!.request.storage?.profile, { servicePrincipal: { tenantId: TENANT, clientId: APP.clientId } }, 'the tenant too');
  t.throws(() => resolveOperatorCatalogs(declared({}), sources), /catalogs\[0\]\.storage_profile\.credentials\.client-secret must be \{env: NAME\} or \{file: PATH\}: keys are not written in the configuration file/, 'an inline client secret is refused');
});

await onAzurite(t, 'client credentials and user-delegation SAS on Azurite', async (t, azurite) => {
  await azurite.createContainer(CONTAINER);
  const host = `${azurite.accountName}.dfs.core.windows.net`;
  /** The service as the service principal: what asks for user delegation keys here. */
  const service = principalService(azurite);
  const sasBlob = (path: string, sas: string): BlockBlobClient => sasBlobClient(azurite, CONTAINER, path, sas);

  await t.test('user delegation keys: fetched once, reused, replaced before expiry', async (t) => {
    let now = Date.now();
    let fetchFrom: FetchUserDelegationKey = async (startsOn, expiresOn) => service.getUserDelegationKey(startsOn, expiresOn);
    const calls: Promise<UserDelegationKey>[] = [];
    const keys = new UserDelegationKeys((startsOn, expiresOn) => {
      const call = fetchFrom(startsOn, expiresOn);
      calls.push(call);
      return call;
    }, () => now);
    const hour = 3_600_000;
    const day = 24 * hour;
    const first = await Promise.all(Array.from({ length: 5 }, () => keys.keyFor(now + hour)));
    t.equal(calls.length, 1, 'concurrent callers share one Get User Delegation Key');
    t.ok(first.every((k) => k === first[0]), 'and one key');
    const key = first[0]!;
    t.equal(key.signedObjectId, APP.objectId, 'the key is the service principal\'s (skoid)');
    t.equal(key.signedTenantId, TENANT, 'in its tenant (sktid)');
    t.equal(key.signedService, 'b');
    t.equal(key.signedExpiresOn.getTime() - now, 7 * day - hour - ((now % 1000)), 'asked for 7 days less an hour (whole seconds)');
    now += 5 * day;
    t.equal(await keys.keyFor(now + hour), key, 'reused while more than a day is left');
    t.equal(calls.length, 1);
    now += day + 30 * 60_000;
    t.equal(await keys.keyFor(now + hour), key, 'in its last day the old key still signs a token it covers…');
    t.equal(calls.length, 2, '…while a new one is fetched');
    const replacement = await calls[1]!;
    t.equal(await keys.keyFor(now + hour), replacement, 'then the new key signs');
    t.ok(replacement.signedExpiresOn > key.signedExpiresOn);
    t.equal(keys.fetched, 2);

    // A replacement that fails (the secret was rotated away): the old key goes on while it covers tokens.
    fetchFrom = async (startsOn, expiresOn) => new BlobServiceClient(azurite.endpoint, credential('not-the-secret'), { retryOptions: { maxTries: 1 }, ...trusting(cert.cert) }).getUserDelegationKey(startsOn, expiresOn);
    now = replacement.signedExpiresOn.getTime() - 12 * hour;
    t.equal(await keys.keyFor(now + hour), replacement, 'a failing refresh does not stop signing');
    await t.rejects(calls[2]!, /AADSTS7000215/, 'the refresh was refused by Entra ID');
    await new Promise((resolve) => setImmediate(resolve)); // the vendor's own handler of that refusal has run
    t.match(keys.lastRefreshError?.message ?? '', /AADSTS7000215/, 'and kept for diagnosis');
    now = replacement.signedExpiresOn.getTime() - 30 * 60_000;
    await t.rejects(keys.keyFor(now + hour), /Invalid client secret provided/, 'a key that cannot cover the token is waited for, and its failure is the caller\'s');
    t.equal(calls.length, 4);

    // A token longer than the current key has left (a stage URL of days) waits for a new key.
    const fetched: UserDelegationKey[] = [];
    let later = Date.now();
    const long = new UserDelegationKeys(async (startsOn, expiresOn) => {
      const k = await service.getUserDelegationKey(startsOn, expiresOn);
      fetched.push(k);
      return k;
    }, () => later);
    const k1 = await long.keyFor(later + hour);
    later += 2 * day;
    const k2 = await long.keyFor(later + 6 * day);
    t.equal(fetched.length, 2, 'a fresh key that would die first is replaced at once');
    t.ok(k2.signedExpiresOn.getTime() >= later + 6 * day && k2 !== k1, 'by one that outlives the token');
    t.equal(await long.keyFor(later + hour), k2, 'which then signs the short ones too');
  });

  await t.test('SAS tokens signed with a user delegation key: Azurite accepts and refuses them', async (t) => {
    const client = azurite.client();
    const container = client.getContainerClient(CONTAINER);
    const meta = 'wh/db/orders/metadata/00000.metadata.json';
    const other = 'wh/db/orders_old/metadata/00000.metadata.json';
    for (const name of [meta, other]) await container.getBlockBlobClient(name).upload('{"table-uuid":"x"}', 18);
    const keys = new UserDelegationKeys(async (startsOn, expiresOn) => service.getUserDelegationKey(startsOn, expiresOn));
    const signer: AdlsSasKey = { kind: 'user-delegation', accountName: azurite.accountName, key: await keys.keyFor(Date.now() + 900_000) };

    const read = signSas(signer, { kind: 'blob', filesystem: CONTAINER, path: meta }, 'read', Date.now(), 900).token;
    const q = new URLSearchParams(read);
    t.same([q.get('skoid'), q.get('sktid'), q.get('sks')], [APP.objectId, TENANT, 'b'], 'a user-delegation SAS names the key (skoid, sktid, sks)');
    t.ok(q.get('skt') !== null && q.get('ske') !== null && q.get('skv') !== null, 'its validity and version (skt, ske, skv)');
    t.equal(q.get('spr'), 'https', 'https only');
    await checkBlobSasOnAzurite(t, { azurite, container: CONTAINER, signer, table: meta, otherTable: other, scratch: 'wh/db/orders/data/new.parquet', allowHttp: false });
    t.equal(await sasOutcome(() => sasBlob(meta, read.replace(`skoid=${q.get('skoid')}`, `skoid=${randomUUID()}`)).downloadToBuffer()), 'denied', 'another principal\'s key id is refused');

    // A key that has expired: Floe will not sign with it; a SAS made with it anyway is refused.
    const oldKey = await service.getUserDelegationKey(new Date(Date.now() - 3 * 3_600_000), new Date(Date.now() - 3_600_000));
    const stale: AdlsSasKey = { kind: 'user-delegation', accountName: azurite.accountName, key: oldKey };
    t.throws(() => signSas(stale, { kind: 'blob', filesystem: CONTAINER, path: meta }, 'read', Date.now(), 300), /expires at .* before the token would/, 'Floe never signs past its key');
    const forced = generateDataLakeSASQueryParameters({
      fileSystemName: CONTAINER, pathName: meta, permissions: DataLakeSASPermissions.parse('r'), startsOn: new Date(Date.now() - 300_000), expiresOn: new Date(Date.now() + 300_000), protocol: SASProtocol.Https,
    }, oldKey, azurite.accountName).toString();
    t.equal(await sasOutcome(() => sasBlob(meta, forced).downloadToBuffer()), 'denied', 'Azurite refuses a SAS whose key has expired');

    // The directory SAS Floe vends: Azurite cannot check it, so its signature is recomputed here.
    const now = Date.now();
    const dirSas = new URLSearchParams(signSas(signer, { kind: 'directory', filesystem: CONTAINER, path: 'wh/db/orders' }, 'read-write', now, 900).token);
    t.same([dirSas.get('sr'), dirSas.get('sdd'), dirSas.get('sp'), dirSas.get('spr')], ['d', '3', 'racwdl', 'https'], 'a read-write directory SAS');
    t.same([dirSas.get('skoid'), dirSas.get('sktid'), dirSas.get('skt'), dirSas.get('ske'), dirSas.get('sks'), dirSas.get('skv')],
      [APP.objectId, TENANT, signer.key.signedStartsOn.toISOString().replace(/\.\d{3}Z$/, 'Z'), signer.key.signedExpiresOn.toISOString().replace(/\.\d{3}Z$/, 'Z'), 'b', signer.key.signedVersion], 'carrying the key\'s fields');
    t.equal(dirSas.get('sig'), expectedSignature(signer.key.value, azurite.accountName, CONTAINER, 'wh/db/orders', dirSas), 'the signature is Azure\'s HMAC with the user delegation key over the documented string');
    t.not(dirSas.get('sig'), expectedSignature(Buffer.alloc(32, 1).toString('base64'), azurite.accountName, CONTAINER, 'wh/db/orders', dirSas), 'and not with another key');
  });

  await t.test('a floe serve with a client-credentials catalog', async (t) => {
    await runServer(t, azurite, host);
  });
}, { oauth: { certFile: cert.certFile, keyFile: cert.keyFile, ca: cert.cert } });
await entra.close();
rmSync(dir, { recursive: true, force: true });

async function runServer(t: Test, azurite: AzuriteStore, host: string): Promise<void> {
  const dataDir = mkdtempSync(join(tmpdir(), 'floe-adls-entra-serve-'));
  t.teardown(() => rmSync(dataDir, { recursive: true, force: true, maxRetries: 5 }));
  const admin = { id: 'floe_entra_admin', secret: `fcs_${randomBytes(18).toString('hex')}` };
  const server = await startCli(['--port', '0', '--data-dir', dataDir], {
    FLOE_BOOTSTRAP_CLIENT_ID: admin.id, FLOE_BOOTSTRAP_CLIENT_SECRET: admin.secret, FLOE_LOG_LEVEL: 'info',
    // The child trusts the test certificate (Azurite's and the token endpoint's) on top of the usual roots.
    NODE_EXTRA_CA_CERTS: cert.certFile,
  }, { startTimeoutMs: 240_000 });
  let logs = server.banner;
  server.process.stdout?.on('data', (d: Buffer) => (logs += d.toString()));
  server.process.stderr?.on('data', (d: Buffer) => (logs += d.toString()));
  let stopped = false;
  const stop = async (): Promise<void> => {
    if (stopped) return;
    stopped = true;
    await server.stop();
  };
  t.teardown(stop);

  const tokenFor = async (scope?: string): Promise<string> => {
    const form = new URLSearchParams({ grant_type: 'client_credentials', client_id: admin.id, client_secret: admin.secret, ...(scope !== undefined ? { scope } : {}) });
    const r = await fetch(`${server.url}/v1/oauth/tokens`, { method: 'POST', body: form });
    if (r.status !== 200) throw new Error(`token: ${r.status} ${await r.text()}`);
    return ((await r.json()) as { access_token: string }).access_token;
  };
  const token = await tokenFor();
  const call = async (method: string, path: string, body?: unknown, headers: Record<string, string> = {}, as = token): Promise<{ status: number; text: string; body: any }> => {
    const r = await fetch(`${server.url}${path}`, {
      method, headers: { authorization: `Bearer ${as}`, ...(body !== undefined ? { 'content-type': 'application/json' } : {}), ...headers },
      ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
    });
    const text = await r.text();
    let parsed: unknown;
    try {
      parsed = JSON.parse(text);
    } catch {
      parsed = undefined;
    }
    return { status: r.status, text, body: parsed };
  };
  const sql = async (text: string): Promise<unknown[][]> => {
    const r = await call('POST', '/api/query', { sql: text });
    if (r.status !== 200) throw new Error(`${text}: ${r.status} ${r.text}`);
    return r.body.rows as unknown[][];
  };
  const credentials = (overrides: Record<string, unknown> = {}): Record<string, unknown> => ({
    type: 'client-credentials', 'tenant-id': TENANT, 'client-id': APP.clientId, 'client-secret': APP.clientSecret, 'authority-host': entra.authorityHost, ...overrides,
  });
  const profile = (overrides: Record<string, unknown> = {}): Record<string, unknown> => ({
    type: 'adls', 'account-name': azurite.accountName, filesystem: CONTAINER, 'key-prefix': 'warehouse', endpoint: azurite.endpoint,
    'hierarchical-namespace': true, credentials: credentials(), 'vended-credentials': { 'duration-seconds': 900 }, ...overrides,
  });

  // Refusals name the cause; the secret is in none of them.
  const wrongSecret = `Wr0ng~${randomBytes(18).toString('base64url')}`;
  for (const [what, credentialOverrides, profileOverrides, cause] of [
    ['a wrong client secret', { 'client-secret': wrongSecret }, {}, /could not write a probe object: Entra ID refused the client credentials \(client [0-9a-f-]+ of tenant [0-9a-f-]+\): AADSTS7000215: Invalid client secret provided/],
    ['an unknown tenant', { 'tenant-id': 'no-such-tenant.example' }, {}, /could not write a probe object: Entra ID at https:\/\/127\.0\.0\.1:\d+ does not know tenant no-such-tenant\.example: AADSTS90002: Tenant 'no-such-tenant\.example' not found/],
    ['an unknown application', { 'client-id': randomUUID() }, {}, /could not write a probe object: Entra ID refused the client credentials .*AADSTS700016: Application with identifier '[0-9a-f-]+' was not found in the directory/],
    ['a filesystem that does not exist', {}, { filesystem: 'no-such-filesystem' }, /could not write a probe object: the container \(filesystem\) does not exist/],
  ] as const) {
    const r = await call('POST', '/v1/catalogs', { name: 'refused', 'storage-profile': profile({ credentials: credentials(credentialOverrides), ...profileOverrides }) });
    t.equal(r.status, 400, `${what}: refused`);
    t.match(r.body?.error?.message, cause, `${what}: the message names the cause`);
    t.notOk(r.text.includes(APP.clientSecret) || r.text.includes(wrongSecret), `${what}: no secret in the answer`);
  }
  const plainHttp = await call('POST', '/v1/catalogs', { name: 'refused', 'storage-profile': profile({ endpoint: azurite.endpoint.replace('https:', 'http:') }) });
  t.equal(plainHttp.status, 400, 'client credentials to an http:// endpoint: refused');
  t.match(plainHttp.body.error.message, /client-credentials send a bearer token, which Azure Storage accepts over https:\/\/ only/);
  t.equal((await call('GET', '/v1/catalogs/refused')).status, 404, 'no refused catalog exists');

  const created = await call('POST', '/v1/catalogs', { name: 'lake', 'storage-profile': profile() });
  t.equal(created.status, 201, created.status === 201 ? 'a good profile: created' : created.text);
  t.same(created.body['storage-profile'].credentials, { type: 'client-credentials', 'tenant-id': TENANT, 'client-id': APP.clientId, 'authority-host': entra.authorityHost }, 'the profile shows who signs in, not the secret');
  t.notOk(created.text.includes(APP.clientSecret), 'no secret in the create answer');
  t.notOk((await call('GET', '/v1/catalogs/lake')).text.includes(APP.clientSecret), 'nor on load');

  // SQL through the FileIO, signed in as the service principal.
  await sql('CREATE SCHEMA lake.shop');
  await sql('CREATE TABLE lake.shop.items (id bigint NOT NULL, name string)');
  t.same(await sql("INSERT INTO lake.shop.items VALUES (1, 'apple'), (2, 'pear'), (3, 'fig')"), [[3]]);
  t.same(await sql("UPDATE lake.shop.items SET name = 'green apple' WHERE id = 1"), [[1]]);
  t.same(await sql('DELETE FROM lake.shop.items WHERE id = 3'), [[1]]);
  t.same(await sql('SELECT id, name FROM lake.shop.items ORDER BY id'), [[1, 'green apple'], [2, 'pear']], 'SQL writes and reads the container');
  await sql('CREATE TABLE lake.shop.stock AS SELECT id, 10 AS qty FROM lake.shop.items');
  const blobs: string[] = [];
  for await (const b of azurite.client().getContainerClient(CONTAINER).listBlobsFlat({ prefix: 'warehouse/shop/' })) blobs.push(b.name);
  t.ok(blobs.some((b) => b.endsWith('.parquet')) && blobs.some((b) => b.endsWith('.metadata.json')), 'data and metadata files are blobs in the container');

  // Vending: a user-delegation directory SAS per table, by mode, all from one key.
  const vended = async (table: string, as = token): Promise<URLSearchParams> => {
    const r = await call('GET', `/v1/lake/namespaces/shop/tables/${table}`, undefined, { 'x-iceberg-access-delegation': 'vended-credentials' }, as);
    t.equal(r.status, 200, r.status === 200 ? `${table}: loaded with credentials` : r.text);
    const entries = r.body['storage-credentials'] as { prefix: string; config: Record<string, string> }[];
    t.equal(entries.length, 1);
    t.equal(entries[0]!.prefix, `${r.body.metadata.location}/`, `${table}: the entry is for the table's directory`);
    t.equal(entries[0]!.config[`adls.sas-token.${host}`], entries[0]!.config['adls.sas-token'], 'under the entry keys of the shared-key SAS');
    t.notOk(r.text.includes(APP.clientSecret), 'no secret in the answer');
    return new URLSearchParams(entries[0]!.config['adls.sas-token']);
  };
  const items = await vended('items');
  t.same([items.get('sr'), items.get('sp'), items.get('spr')], ['d', 'racwdl', 'https'], 'a read-write directory SAS, https only');
  t.equal(items.get('sdd'), '3', 'as deep as the table\'s directory (warehouse/shop/items-…)');
  t.same([items.get('skoid'), items.get('sktid'), items.get('sks')], [APP.objectId, TENANT, 'b'], 'a user-delegation SAS of the service principal');
  for (const field of ['skt', 'ske', 'skv']) t.ok((items.get(field) ?? '') !== '', `${field} present`);
  const keyStart = new Date(items.get('skt')!);
  const keyExpiry = new Date(items.get('ske')!);
  t.ok(keyExpiry.getTime() - Date.now() > 6 * 24 * 3_600_000, 'the key was asked for days, not for this token');
  t.ok(keyExpiry >= new Date(items.get('se')!), 'and outlives the token');
  // The key Azurite issues for these fields, asked for by this test as the same principal.
  const key = await principalService(azurite).getUserDelegationKey(keyStart, keyExpiry);
  const itemsPath = (await call('GET', '/v1/lake/namespaces/shop/tables/items')).body.metadata.location.slice(`abfss://${CONTAINER}@${host}/`.length) as string;
  t.equal(items.get('sig'), expectedSignature(key.value, azurite.accountName, CONTAINER, itemsPath, items), 'signed with the user delegation key for the table\'s directory');

  const stock = await vended('stock');
  t.same([stock.get('skt'), stock.get('ske')], [items.get('skt'), items.get('ske')], 'another table\'s SAS is signed with the same cached key');
  t.not(stock.get('sig'), items.get('sig'));
  const again = await call('GET', '/v1/lake/namespaces/shop/tables/items/credentials');
  t.equal(again.body['storage-credentials'][0].config['adls.sas-token'], items.toString(), 'the refresh endpoint serves the cached token');
  const reader = await vended('items', await tokenFor('table:read table:data'));
  t.equal(reader.get('sp'), 'rl', 'a read-only token gets a read-only SAS');
  t.equal(reader.get('skt'), items.get('skt'), 'from the same key');

  // Stage uploads: the presigned URLs are blob-scoped user-delegation SAS URLs, which Azurite verifies.
  const inLake = async (text: string): Promise<unknown[][]> => {
    const r = await call('POST', '/api/query', { sql: text, catalog: 'lake' });
    if (r.status !== 200) throw new Error(`${text}: ${r.status} ${r.text}`);
    return r.body.rows as unknown[][];
  };
  await inLake('CREATE STAGE up');
  const body = '7,plum\n8,quince\n';
  const presigned = await call('POST', '/v1/stages/presign', { catalog: 'lake', stage: 'up', path: 'in/a.csv', size: body.length });
  t.equal(presigned.status, 200, presigned.status === 200 ? 'an upload URL on a client-credentials catalog' : presigned.text);
  const upload = new URL(presigned.body.url as string);
  t.same([upload.searchParams.get('sr'), upload.searchParams.get('sp'), upload.searchParams.get('spr')], ['b', 'cw', 'https'], 'a blob SAS to create and write, https only');
  t.same([upload.searchParams.get('skoid'), upload.searchParams.get('sktid')], [APP.objectId, TENANT], 'a user-delegation SAS of the service principal');
  t.ok(Date.parse(upload.searchParams.get('ske')!) - Date.now() > 6 * 24 * 3_600_000, 'signed with a key kept for days');
  const viaSas = (url: string): BlockBlobClient => new BlockBlobClient(url, undefined, { retryOptions: { maxTries: 1 }, ...trusting(cert.cert) });
  t.equal(await sasOutcome(() => viaSas(upload.toString()).upload(body, body.length)), 'ok', 'Azurite takes the PUT with the URL');
  t.equal(await sasOutcome(() => viaSas(upload.toString()).downloadToBuffer()), 'denied', 'but not a read with it');
  t.equal(await sasOutcome(() => viaSas(upload.toString().replace('/in/a.csv?', '/in/b.csv?')).upload('x', 1)), 'denied', 'nor another blob');
  t.same((await inLake('COPY INTO shop.items FROM @up')).map((x) => [x[0], x[1], x[3]]), [['@up/in/a.csv', 'LOADED', 2]], 'COPY INTO loads the uploaded file');
  t.same(await sql('SELECT id, name FROM lake.shop.items WHERE id > 6 ORDER BY id'), [[7, 'plum'], [8, 'quince']]);
  const tooLong = await call('POST', '/v1/stages/presign', { catalog: 'lake', stage: 'up', path: 'in/b.csv', size: 4, expires_in_seconds: 7 * 24 * 3600 });
  t.equal(tooLong.status, 400, 'a URL that would outlive any user delegation key is refused');
  t.match(tooLong.body?.error?.message, /expires_in_seconds.*must be at most 518400 on this catalog: its URLs are signed with a user delegation key/);
  const download = await call('POST', '/v1/stages/presign', { catalog: 'lake', stage: 'up', path: 'in/a.csv', method: 'GET' });
  t.equal(download.status, 200, 'a download URL');
  t.equal((await viaSas(download.body.url as string).downloadToBuffer()).toString(), body, 'reads the file back');

  const issued = entra.requests.filter((r) => r.outcome === 'issued');
  t.ok(issued.length >= 1 && issued.every((r) => r.grantType === 'client_credentials' && r.clientId === APP.clientId && r.scope === STORAGE_SCOPE), 'tokens were issued for the client-credentials grant and the storage scope');
  t.ok(entra.requests.some((r) => r.outcome === 'AADSTS7000215'), 'the wrong secret reached the token endpoint and was refused there');

  const history = await call('POST', '/api/query', { sql: 'SELECT * FROM system.query_history' });
  t.equal(history.status, 200, 'the query history answers');
  t.notOk(history.text.includes(APP.clientSecret) || history.text.includes(wrongSecret), 'no secret in the query history');
  await stop();
  t.notOk(logs.includes(APP.clientSecret) || logs.includes(wrongSecret), 'no secret in the server\'s log');

  const store = await openStore({ kind: 'pglite', dataDir });
  t.teardown(() => store.close());
  const row = (await store.query<{ storage_profile: unknown; storage_secret_sealed: string }>("SELECT storage_profile, storage_secret_sealed FROM catalogs WHERE name = 'lake'")).rows[0]!;
  t.ok(row.storage_secret_sealed.startsWith('v1:'), 'the client secret is sealed at rest');
  t.notOk(JSON.stringify(row).includes(APP.clientSecret), 'and not stored in the clear');
}

/** The service as the service principal, trusting the test certificate. */
function principalService(azurite: AzuriteStore): BlobServiceClient {
  return new BlobServiceClient(azurite.endpoint, credential(), { retryOptions: { maxTries: 1 }, ...trusting(cert.cert) });
}
