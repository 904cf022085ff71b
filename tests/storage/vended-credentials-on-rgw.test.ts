/**
 * Vended credentials on a real Ceph RGW with STS and policies enforced: a catalog whose profile
 * names a role (created here through RGW's IAM, allowed to do anything in the bucket) hands out
 * keys from `AssumeRole` with a session policy for exactly one table's prefixes. The keys read
 * (and with write scope write) that table's files and are refused on another table, on a sibling
 * whose name shares the table's start (`orders` vs `orders_old`), on the bucket root, and on
 * writes when the token is read-only; a table located at `ord*` gets no wildcard.
 */
import t from 'tap';
import { GetObjectCommand, ListObjectsV2Command, PutObjectCommand, S3Client } from '@aws-sdk/client-s3';
import { openStore } from '../../catalog/store/open-store.js';
import { onRgw, type RgwStore } from '../helpers/rgw.js';
import { sampleSchema, startCatalogServer } from '../catalog/helpers.js';

const BUCKET = 'lakehouse';
const VENDED = { headers: { 'x-iceberg-access-delegation': 'vended-credentials' } };

type Outcome = 'ok' | 'denied' | string;

async function attempt(op: () => Promise<unknown>): Promise<Outcome> {
  try {
    await op();
    return 'ok';
  } catch (e) {
    const name = (e as { name?: string }).name;
    return name === 'AccessDenied' ? 'denied' : `${name}: ${(e as Error).message}`;
  }
}

function clientFrom(rgw: RgwStore, config: Record<string, string>): S3Client {
  return new S3Client({
    endpoint: config['s3.endpoint'], region: config['client.region'], forcePathStyle: config['s3.path-style-access'] === 'true',
    credentials: { accessKeyId: config['s3.access-key-id']!, secretAccessKey: config['s3.secret-access-key']!, sessionToken: config['s3.session-token']! },
    maxAttempts: 1,
  });
}

const keyOf = (location: string): string => location.slice(`s3://${BUCKET}/`.length);

await onRgw(t, 'vended credentials on RGW', async (t, rgw) => {
  await rgw.createBucket(BUCKET);
  // The role Floe assumes: trusted by the profile's user, allowed everything in the bucket; each
  // session policy narrows it to one table.
  const trust = { Version: '2012-10-17', Statement: [{ Effect: 'Allow', Principal: { AWS: ['arn:aws:iam:::user/floe'] }, Action: ['sts:AssumeRole'] }] };
  await rgw.admin(['role', 'create', '--role-name=floe-vending', '--path=/', `--assume-role-policy-doc=${JSON.stringify(trust)}`]);
  const permissions = { Version: '2012-10-17', Statement: [{ Effect: 'Allow', Action: ['s3:*'], Resource: [`arn:aws:s3:::${BUCKET}`, `arn:aws:s3:::${BUCKET}/*`] }] };
  await rgw.admin(['role-policy', 'put', '--role-name=floe-vending', '--policy-name=bucket', `--policy-doc=${JSON.stringify(permissions)}`]);

  const store = await openStore({ kind: 'pglite-memory' });
  t.teardown(() => store.close());
  const { client, server, clientFor } = await startCatalogServer(t, store);
  const created = await client.post('/v1/catalogs', {
    name: 'lake',
    'storage-profile': {
      type: 's3', bucket: BUCKET, 'key-prefix': 'warehouse', region: rgw.region, endpoint: rgw.endpoint, 'path-style-access': true,
      credentials: { type: 'access-key', 'access-key-id': rgw.accessKeyId, 'secret-access-key': rgw.secretAccessKey },
      'vended-credentials': { 'role-arn': 'arn:aws:iam:::role/floe-vending', 'duration-seconds': 900 },
    },
  });
  t.equal(created.status, 201, 'catalog created');
  t.same(created.body['storage-profile']['vended-credentials'], { 'role-arn': 'arn:aws:iam:::role/floe-vending', 'duration-seconds': 900 });

  const base = '/v1/lake/namespaces';
  t.equal((await client.post(base, { namespace: ['db'], properties: {} })).status, 200);
  const lakeConfig = (await server.app.inject({ method: 'GET', url: '/v1/config?warehouse=lake' })).json() as { endpoints: string[] };
  t.ok(lakeConfig.endpoints.includes('GET /v1/{prefix}/namespaces/{namespace}/tables/{table}/credentials'), '/v1/config: a catalog that vends advertises the credentials endpoint');
  t.ok(lakeConfig.endpoints.includes('POST /v1/{prefix}/namespaces/{namespace}/tables/{table}/sign'), 'and the sign endpoint (its keys can sign)');
  const tables = new Map<string, { location: string; metadataLocation: string }>();
  for (const [name, extra] of [['orders', {}], ['orders_old', {}], ['other', {}], ['star', { location: `s3://${BUCKET}/warehouse/db/ord*` }], ['q?$%', {}], ['d$x', {}]] as const) {
    const r = await client.post(`${base}/db/tables`, { name, schema: sampleSchema(), ...extra });
    t.equal(r.status, 200, `${name} created`);
    t.notOk('storage-credentials' in r.body, 'no credentials unless asked');
    tables.set(name, { location: r.body.metadata.location, metadataLocation: r.body['metadata-location'] });
  }
  const orders = tables.get('orders')!;
  const secrets = [rgw.secretAccessKey];

  // Every load of a table on S3 says where the store is.
  const plainOrders = await client.get(`${base}/db/tables/orders`);
  t.match(plainOrders.body.config, { 's3.endpoint': rgw.endpoint, 's3.region': rgw.region, 'client.region': rgw.region, 's3.path-style-access': 'true' }, 'the load config carries endpoint, region and path style');
  t.notOk('s3.remote-signing-enabled' in plainOrders.body.config, 'no signing unless asked');

  // Read-write (the test token holds every scope).
  const loaded = await client.get(`${base}/db/tables/orders`, VENDED);
  t.equal(loaded.status, 200, 'vended load');
  t.equal(loaded.headers['cache-control'], 'no-store');
  const entries = loaded.body['storage-credentials'] as { prefix: string; config: Record<string, string> }[];
  t.equal(entries.length, 1);
  t.equal(entries[0]!.prefix, `${orders.location}/`);
  const config = entries[0]!.config;
  t.same(Object.keys(config).sort(), [
    'client.refresh-credentials-endpoint', 'client.region', 's3.access-key-id', 's3.endpoint', 's3.path-style-access', 's3.region',
    's3.secret-access-key', 's3.session-token', 's3.session-token-expires-at-ms',
  ]);
  t.equal(config['s3.endpoint'], rgw.endpoint);
  t.equal(config['s3.region'], rgw.region);
  t.equal(config['client.refresh-credentials-endpoint'], 'v1/lake/namespaces/db/tables/orders/credentials');
  const expiresIn = Number(config['s3.session-token-expires-at-ms']) - Date.now();
  t.ok(expiresIn > 800_000 && expiresIn <= 900_000, `expires in the configured 900 s (${expiresIn} ms)`);
  t.not(config['s3.access-key-id'], rgw.accessKeyId, 'not the profile\'s own key');
  t.same(secrets.filter((s) => loaded.text.includes(s)), [], 'the profile\'s secret is not in the response');

  const rw = clientFrom(rgw, config);
  t.teardown(() => rw.destroy());
  const get = (c: S3Client, location: string): Promise<Outcome> => attempt(() => c.send(new GetObjectCommand({ Bucket: BUCKET, Key: keyOf(location) })).then((o) => o.Body?.transformToString()));
  const put = (c: S3Client, key: string): Promise<Outcome> => attempt(() => c.send(new PutObjectCommand({ Bucket: BUCKET, Key: key, Body: 'x' })));
  const list = (c: S3Client, prefix?: string): Promise<Outcome> => attempt(() => c.send(new ListObjectsV2Command({ Bucket: BUCKET, ...(prefix !== undefined ? { Prefix: prefix } : {}) })));
  t.equal(await get(rw, orders.metadataLocation), 'ok', 'reads the table\'s metadata file');
  t.equal(await list(rw, `${keyOf(orders.location)}/`), 'ok', 'lists the table');
  t.equal(await put(rw, `${keyOf(orders.location)}/data/00000-vended.parquet`), 'ok', 'writes a data file into the table');
  t.equal(await get(rw, tables.get('orders_old')!.metadataLocation), 'denied', 'not the sibling orders_old');
  t.equal(await get(rw, tables.get('other')!.metadataLocation), 'denied', 'not another table');
  t.equal(await put(rw, `${keyOf(tables.get('other')!.location)}/data/x.parquet`), 'denied', 'no write into another table');
  t.equal(await list(rw), 'denied', 'no listing of the bucket root');
  t.equal(await list(rw, 'warehouse/db/'), 'denied', 'nor of the namespace');
  t.equal(await list(rw, 'warehouse/db/orders'), 'denied', 'but not a shorter prefix that also covers orders_old');

  // Cached: a second load gets the same session; another mode gets its own.
  const again = await client.get(`${base}/db/tables/orders`, VENDED);
  t.equal(again.body['storage-credentials'][0].config['s3.access-key-id'], config['s3.access-key-id'], 'the session is reused');

  // Read-only token: read-only keys.
  const reader = clientFor(await server.token('table:read table:data'));
  const readOnly = await reader.get(`${base}/db/tables/orders`, VENDED);
  t.equal(readOnly.status, 200, 'read-only vended load');
  const roConfig = readOnly.body['storage-credentials'][0].config as Record<string, string>;
  t.not(roConfig['s3.access-key-id'], config['s3.access-key-id'], 'another session for read-only');
  const ro = clientFrom(rgw, roConfig);
  t.teardown(() => ro.destroy());
  t.equal(await get(ro, orders.metadataLocation), 'ok', 'read-only keys read');
  t.equal(await put(ro, `${keyOf(orders.location)}/data/00001-ro.parquet`), 'denied', 'read-only keys do not write');

  // Without table:data: the load answers, without credentials.
  const noData = clientFor(await server.token('table:read'));
  const plain = await noData.get(`${base}/db/tables/orders`, VENDED);
  t.equal(plain.status, 200);
  t.notOk('storage-credentials' in plain.body, 'no credentials without table:data');

  // A table at `ord*`: the `*` is a literal character in its grant, not a wildcard over `orders…`.
  const star = await client.get(`${base}/db/tables/star`, VENDED);
  t.equal(star.status, 200, 'star load');
  const starClient = clientFrom(rgw, star.body['storage-credentials'][0].config);
  t.teardown(() => starClient.destroy());
  t.equal(await get(starClient, orders.metadataLocation), 'denied', 'ord* does not reach orders');
  // RGW 16.2 does not know IAM's `${*}` escape, so there the table's own files are refused too
  // (on AWS they are readable); what matters is that nothing wider is granted.
  t.equal(await get(starClient, tables.get('star')!.metadataLocation), 'denied', 'RGW: not even its own files (no escape support), never wider');
  const hostile = await client.get(`${base}/db/tables/${encodeURIComponent('q?$%')}`, VENDED);
  t.equal(hostile.status, 200, 'hostile name load');
  const hostileClient = clientFrom(rgw, hostile.body['storage-credentials'][0].config);
  t.teardown(() => hostileClient.destroy());
  t.equal(await get(hostileClient, orders.metadataLocation), 'denied', 'a name with ?, $ and % reaches nothing else');
  const dollar = await client.get(`${base}/db/tables/${encodeURIComponent('d$x')}`, VENDED);
  const dollarClient = clientFrom(rgw, dollar.body['storage-credentials'][0].config);
  t.teardown(() => dollarClient.destroy());
  t.equal(await get(dollarClient, tables.get('d$x')!.metadataLocation), 'ok', 'a lone $ is literal: the table reads its own files');
  t.equal(await get(dollarClient, orders.metadataLocation), 'denied', 'and nothing else');

  // A location property pointing outside the warehouse: no credentials at all.
  const moved = await client.post(`${base}/db/tables/other`, {
    requirements: [], updates: [{ action: 'set-properties', updates: { 'write.data.path': `s3://${BUCKET}/elsewhere/data` } }],
  });
  t.equal(moved.status, 200, 'write.data.path set outside');
  const refused = await client.get(`${base}/db/tables/other`, VENDED);
  t.equal(refused.status, 403, refused.text);
  t.match(refused.body.error.message, /write\.data\.path s3:\/\/lakehouse\/elsewhere\/data is outside the catalog's warehouse/);
  const inside = await client.post(`${base}/db/tables/orders`, {
    requirements: [], updates: [{ action: 'set-properties', updates: { 'write.data.path': `s3://${BUCKET}/warehouse/shared/orders-data` } }],
  });
  t.equal(inside.status, 200, 'write.data.path set inside');
  const two = await client.get(`${base}/db/tables/orders`, VENDED);
  t.same((two.body['storage-credentials'] as { prefix: string }[]).map((e) => e.prefix), [`${orders.location}/`, `s3://${BUCKET}/warehouse/shared/orders-data/`], 'an entry per location');
  const twoClient = clientFrom(rgw, two.body['storage-credentials'][1].config);
  t.teardown(() => twoClient.destroy());
  t.equal(await put(twoClient, 'warehouse/shared/orders-data/f.parquet'), 'ok', 'the data path is writable');
  t.equal(await put(twoClient, 'warehouse/shared/other/f.parquet'), 'denied', 'its siblings are not');

  // The credentials endpoints: the same entries without the metadata.
  for (const method of ['GET', 'POST'] as const) {
    const r = await client.call(method, `${base}/db/tables/orders/credentials`);
    t.equal(r.status, 200, `${method} credentials`);
    t.equal(r.headers['cache-control'], 'no-store');
    t.same((r.body['storage-credentials'] as { prefix: string }[]).map((e) => e.prefix), [`${orders.location}/`, `s3://${BUCKET}/warehouse/shared/orders-data/`]);
  }
  t.equal((await noData.get(`${base}/db/tables/orders/credentials`)).status, 403, 'the endpoint needs table:data');
  t.equal((await client.get(`${base}/db/tables/missing/credentials`)).status, 404, 'a missing table is 404');
  t.same((await client.get('/v1/default/namespaces/db/tables/x/credentials')).status, 404, 'the local catalog has no such table');
  const roEndpoint = await reader.get(`${base}/db/tables/orders/credentials`);
  const roEndpointClient = clientFrom(rgw, roEndpoint.body['storage-credentials'][0].config);
  t.teardown(() => roEndpointClient.destroy());
  t.equal(await get(roEndpointClient, orders.metadataLocation), 'ok', 'read-only token: keys that read');
  t.equal(await put(roEndpointClient, `${keyOf(orders.location)}/data/00002-ro.parquet`), 'denied', 'and do not write');

  // Batch: one result per table in order, failures per table.
  const batch = await client.post('/v1/lake/tables/credentials/batch', { tables: [
    { namespace: ['db'], name: 'orders' }, { namespace: ['db'], name: 'missing' }, { namespace: ['db'], name: 'other' }, { namespace: ['db'], name: 'orders_old' },
  ] }, { offSpec: true });
  t.equal(batch.status, 200, 'batch');
  const results = batch.body.results as { identifier: { name: string }; 'storage-credentials'?: { prefix: string; config: Record<string, string> }[]; error?: { type: string; code: number } }[];
  t.same(results.map((r) => r.identifier.name), ['orders', 'missing', 'other', 'orders_old']);
  t.equal(results[0]!['storage-credentials']!.length, 2);
  t.same(results[1]!.error && { type: results[1]!.error.type, code: results[1]!.error.code }, { type: 'NoSuchTableException', code: 404 });
  t.same(results[2]!.error && { type: results[2]!.error.type, code: results[2]!.error.code }, { type: 'ForbiddenException', code: 403 });
  const oldClient = clientFrom(rgw, results[3]!['storage-credentials']![0]!.config);
  t.teardown(() => oldClient.destroy());
  t.equal(await get(oldClient, tables.get('orders_old')!.metadataLocation), 'ok', 'batch keys read their table');
  t.equal(await get(oldClient, orders.metadataLocation), 'denied', 'and not the others');
  for (const [body, why] of [[{}, /Missing field 'tables'/], [{ tables: [] }, /Empty tables/], [{ tables: Array.from({ length: 101 }, () => ({ namespace: ['db'], name: 'orders' })) }, /Too many tables/], [{ tables: [{ namespace: 'db', name: 'x' }] }, /namespace/]] as const) {
    const r = await client.post('/v1/lake/tables/credentials/batch', body, { offSpec: true });
    t.equal(r.status, 400);
    t.match(r.body.error.message, why);
  }

  // A profile without vended-credentials: loads answer without credentials, the endpoint says why.
  const plainCatalog = await client.post('/v1/catalogs', {
    name: 'plain',
    'storage-profile': {
      type: 's3', bucket: BUCKET, 'key-prefix': 'plain', region: rgw.region, endpoint: rgw.endpoint, 'path-style-access': true,
      credentials: { type: 'access-key', 'access-key-id': rgw.accessKeyId, 'secret-access-key': rgw.secretAccessKey },
    },
  });
  t.equal(plainCatalog.status, 201);
  t.equal((await client.post('/v1/plain/namespaces', { namespace: ['db'], properties: {} })).status, 200);
  t.equal((await client.post('/v1/plain/namespaces/db/tables', { name: 't', schema: sampleSchema() })).status, 200);
  const plainLoad = await client.get('/v1/plain/namespaces/db/tables/t', VENDED);
  t.equal(plainLoad.status, 200);
  t.notOk('storage-credentials' in plainLoad.body);
  const plainCreds = await client.get('/v1/plain/namespaces/db/tables/t/credentials');
  t.equal(plainCreds.status, 400);
  t.match(plainCreds.body.error.message, /cannot vend credentials: its storage profile has no vended-credentials/);

  // Remote signing: Floe signs requests inside the table with the catalog's own keys.
  const plainConfig = (await server.app.inject({ method: 'GET', url: '/v1/config?warehouse=plain' })).json() as { endpoints: string[] };
  t.notOk(plainConfig.endpoints.some((e) => e.endsWith('/credentials')), '/v1/config: a catalog that cannot vend does not advertise credentials');
  t.ok(plainConfig.endpoints.includes('POST /v1/{prefix}/namespaces/{namespace}/tables/{table}/sign'), 'but does advertise signing');
  const signing = await client.get('/v1/plain/namespaces/db/tables/t', { headers: { 'x-iceberg-access-delegation': 'remote-signing' } });
  t.equal(signing.headers['cache-control'], 'no-store');
  const signerUri = 'http://localhost:80/v1/plain/namespaces/db/tables/t';
  t.match(signing.body.config, {
    's3.remote-signing-enabled': 'true', 's3.signer': 'S3V4RestSigner', 's3.signer.uri': signerUri, 's3.signer.endpoint': 'sign',
    'signer.uri': signerUri, 'signer.endpoint': 'sign', 's3.endpoint': rgw.endpoint, 's3.region': rgw.region, 's3.path-style-access': 'true',
  }, 'signing advertised in the load config: the signer URI names the table');
  t.same(signing.body['remote-signing-config'], { properties: {}, headers: {} }, 'remote-signing-config is present');
  t.notOk(Object.keys(signing.body.config).some((k) => k.includes('access-key') || k.includes('session-token')), 'no keys with signing');
  // The header may name both modes, in either order: credentials where they can be minted, the
  // signer where they cannot.
  const bothPlain = await client.get('/v1/plain/namespaces/db/tables/t', { headers: { 'x-iceberg-access-delegation': 'vended-credentials, remote-signing' } });
  t.equal(bothPlain.status, 200);
  t.notOk('storage-credentials' in bothPlain.body, 'both asked, no STS: no credentials');
  t.equal(bothPlain.body.config['s3.signer.uri'], signerUri, 'but the signer');
  const bothLake = await client.get(`${base}/db/tables/orders`, { headers: { 'x-iceberg-access-delegation': 'remote-signing,vended-credentials' } });
  t.equal(bothLake.status, 200);
  t.equal(bothLake.body['storage-credentials']?.length, 2, 'both asked where STS can mint: the credentials, from a list naming them');
  const sign = (c: typeof client, method: string, uri: string, body?: string): ReturnType<typeof client.post> =>
    c.post(`${base}/db/tables/orders/sign`, { region: rgw.region, method, uri, headers: { 'x-amz-content-sha256': ['UNSIGNED-PAYLOAD'] }, ...(body !== undefined ? { body } : {}) });
  const objectUri = (key: string): string => `${rgw.endpoint}/${BUCKET}/${key.split('/').map(encodeURIComponent).join('/')}`;
  const send = async (method: string, uri: string, signed: { headers: Record<string, string[]> } | undefined, body?: string): Promise<number> => {
    const headers = signed === undefined ? {} : Object.fromEntries(Object.entries(signed.headers).filter(([k]) => k !== 'host').map(([k, v]) => [k, v.join(',')]));
    const r = await fetch(uri, { method, headers, ...(body !== undefined ? { body } : {}) });
    await r.arrayBuffer();
    return r.status;
  };
  const metaUri = objectUri(keyOf(orders.metadataLocation));
  const signedGet = await sign(client, 'GET', metaUri);
  t.equal(signedGet.status, 200, 'GET signed');
  t.equal(signedGet.headers['cache-control'], 'private');
  t.ok(signedGet.body['expires-at-ms'] > Date.now(), 'with an expiry');
  t.same(secrets.filter((x) => signedGet.text.includes(x)), [], 'no secret in the signature response');
  t.equal(await send('GET', metaUri, signedGet.body), 200, 'RGW accepts the signed GET');
  t.equal(await send('GET', metaUri, undefined), 403, 'and refuses it unsigned');
  const dataUri = objectUri(`${keyOf(orders.location)}/data/00003-signed.parquet`);
  const signedPut = await sign(client, 'PUT', dataUri);
  t.equal(signedPut.headers['cache-control'], 'no-cache');
  t.equal(await send('PUT', dataUri, signedPut.body, 'parquet bytes'), 200, 'RGW accepts the signed PUT');
  const signedHead = await sign(client, 'HEAD', dataUri);
  t.equal(signedHead.headers['cache-control'], 'private', 'a HEAD signature may be kept by the caller too');
  t.equal(await send('HEAD', dataUri, signedHead.body), 200, 'RGW accepts the signed HEAD');
  const listUri = `${rgw.endpoint}/${BUCKET}?list-type=2&prefix=${encodeURIComponent(`${keyOf(orders.location)}/`)}`;
  const signedList = await sign(client, 'GET', listUri);
  t.equal(signedList.status, 200, 'a listing inside the table is signed');
  t.equal(await send('GET', listUri, signedList.body), 200, 'RGW accepts the signed listing');
  const refusals: [typeof client, string, string, string | undefined, RegExp][] = [
    [client, 'GET', objectUri(keyOf(tables.get('other')!.metadataLocation)), undefined, /outside the table's locations/],
    [client, 'GET', `${rgw.endpoint}/${BUCKET}/${keyOf(orders.location)}/../${keyOf(tables.get('other')!.location).split('/').pop()}/x`, undefined, /'\.' or '\.\.'/],
    [client, 'GET', `${rgw.endpoint}/${BUCKET}/${keyOf(orders.location)}%2F..%2Fx`, undefined, /encoded separators/],
    [client, 'GET', `${rgw.endpoint}/otherbucket/${keyOf(orders.location)}/x`, undefined, /outside the table's locations/],
    [client, 'GET', `http://evil.example.com/${BUCKET}/${keyOf(orders.location)}/x`, undefined, /not the catalog's storage endpoint/],
    [client, 'GET', `${rgw.endpoint}/${BUCKET}?list-type=2&prefix=warehouse/db/`, undefined, /listing's prefix is outside/],
    [client, 'GET', `${rgw.endpoint}/${BUCKET}?list-type=2`, undefined, /listing's prefix is outside/],
    [client, 'GET', `${rgw.endpoint}/${BUCKET}?prefix=${encodeURIComponent(`${keyOf(orders.location)}/`)}`, undefined, /bucket-level request/],
    [client, 'POST', `${rgw.endpoint}/${BUCKET}?delete`, `<Delete><Object><Key>${keyOf(orders.location)}/a</Key></Object><Object><Key>${keyOf(tables.get('other')!.metadataLocation)}</Key></Object></Delete>`, /DeleteObjects names .*other-/],
    [reader, 'PUT', dataUri, undefined, /may only read this table/],
  ];
  for (const [c, method, uri, body, why] of refusals) {
    const r = await sign(c, method, uri, body);
    t.equal(r.status, 403, `refused: ${method} ${uri}`);
    t.match(r.body.error.message, why);
  }
  const okDelete = await sign(client, 'POST', `${rgw.endpoint}/${BUCKET}?delete`, `<Delete><Object><Key>${keyOf(orders.location)}/data/00003-signed.parquet</Key></Object></Delete>`);
  t.equal(okDelete.status, 200, 'a DeleteObjects of the table\'s own keys is signed');

  // The legacy path: older clients post to `s3.signer.uri + '/v1/aws/s3/sign'`, under the table.
  const legacyGet = await client.post(`${base}/db/tables/orders/v1/aws/s3/sign`, { region: rgw.region, method: 'GET', uri: metaUri, headers: {} });
  t.equal(legacyGet.status, 200, 'legacy path signs');
  t.equal(legacyGet.headers['cache-control'], 'private', 'with the same Cache-Control');
  t.equal(await send('GET', metaUri, legacyGet.body), 200, 'RGW accepts what the legacy path signed');
  const legacyRefused = await client.post(`${base}/db/tables/orders/v1/aws/s3/sign`, { region: rgw.region, method: 'GET', uri: objectUri(keyOf(tables.get('other')!.metadataLocation)), headers: {} });
  t.equal(legacyRefused.status, 403, 'and refuses what the table path refuses');
  const bare = await client.post('/v1/aws/s3/sign', { region: rgw.region, method: 'GET', uri: metaUri, headers: {} }, { offSpec: true });
  t.equal(bare.status, 400, 'the bare legacy path names no table');
  t.match(bare.body.error.message, /needs the table/);
  t.equal((await noData.post(`${base}/db/tables/orders/v1/aws/s3/sign`, { region: rgw.region, method: 'GET', uri: metaUri, headers: {} })).status, 403, 'the legacy path needs table:data');

  // Observability: every vend and signature counted by catalog and outcome, and audited without a secret.
  const metrics = (await server.app.inject({ method: 'GET', url: '/metrics', headers: { authorization: `Bearer ${await server.token()}` } })).body;
  const count = (name: string, catalog: string, outcome: string): number => {
    const m = new RegExp(`^${name}\\{catalog="${catalog}",outcome="${outcome}"\\} (\\d+)$`, 'm').exec(metrics);
    return m === null ? 0 : Number(m[1]);
  };
  t.ok(count('floe_credential_vends_total', 'lake', 'issued') >= 10, `vends issued counted (${count('floe_credential_vends_total', 'lake', 'issued')})`);
  t.equal(count('floe_credential_vends_total', 'lake', 'denied'), 4, 'vends denied: the load outside the warehouse, the missing table, and both again in the batch');
  t.equal(count('floe_credential_vends_total', 'plain', 'denied'), 1, 'and the profile without vending');
  t.equal(count('floe_remote_signs_total', 'lake', 'issued'), 6, 'signatures issued');
  t.equal(count('floe_remote_signs_total', 'lake', 'denied'), refusals.length + 1, 'signatures refused (the read-only write among them)');
  const rows = async (): Promise<{ event_type: string; actor_name: string | null; target_name: string; target_id: string | null; details: Record<string, unknown> }[]> =>
    (await store.query<{ event_type: string; actor_name: string | null; target_name: string; target_id: string | null; details: Record<string, unknown> }>(
      "SELECT event_type, actor_name, target_name, target_id, details FROM user_audit_log WHERE event_type IN ('vend_credentials', 'sign_request') ORDER BY created_at")).rows;
  let audit = await rows();
  for (const until = Date.now() + 60_000; audit.filter((r) => r.event_type === 'sign_request').length < 6 + refusals.length + 1 && Date.now() < until;) {
    await new Promise((r) => setTimeout(r, 100));
    audit = await rows();
  }
  const vendRow = audit.find((r) => r.event_type === 'vend_credentials' && r.details.outcome === 'issued' && r.details.mode === 'read');
  t.ok(vendRow, 'a read-only vend is audited');
  t.match(vendRow?.details, { catalog: 'lake', namespace: ['db'], table: 'orders', mode: 'read', via: 'load' });
  t.ok(vendRow?.actor_name, 'with the principal');
  t.equal(vendRow?.target_name, 'lake.db.orders', 'and the table');
  t.match(String(vendRow?.details.expires_at), /^\d{4}-\d\d-\d\dT/, 'and the expiry');
  const deniedVend = audit.find((r) => r.event_type === 'vend_credentials' && r.details.outcome === 'denied' && r.details.table === 'other');
  t.match(deniedVend?.details.reason, /outside the catalog's warehouse/, 'a refused vend is audited with its reason');
  const signRow = audit.find((r) => r.event_type === 'sign_request' && r.details.outcome === 'issued' && r.details.method === 'PUT');
  t.match(signRow?.details, { catalog: 'lake', table: 'orders', mode: 'read-write', method: 'PUT' }, 'a signature is audited');
  t.ok(signRow?.target_id, 'with the table\'s UUID');
  t.ok(audit.some((r) => r.event_type === 'sign_request' && r.details.outcome === 'denied' && r.details.mode === 'read'), 'a refused write by a reader too');
  const signatures = [signedGet, signedPut, signedList, okDelete, legacyGet].map((r) => /Signature=([0-9a-f]+)/.exec(String(r.body.headers.authorization))?.[1] ?? 'missing');
  const vendedSecrets = [config, roConfig].flatMap((c) => [c['s3.secret-access-key']!, c['s3.session-token']!]);
  const everything = JSON.stringify(audit);
  t.same([...secrets, ...vendedSecrets, ...signatures].filter((x) => everything.includes(x)), [], 'no key, session token or signature in the audit log');
  t.same([...secrets, ...vendedSecrets, ...signatures].filter((x) => metrics.includes(x)), [], 'nor in the metrics');
});
