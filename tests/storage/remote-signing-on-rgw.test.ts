/**
 * Remote signing on a real Ceph RGW against requests that name a key inside the table but reach
 * further (issue 18: "Floe signs only URIs inside the table's locations"). Before these checks
 * Floe signed, and RGW executed, each of the following for a caller of table `a`:
 *
 * - a PUT of a key in `a` carrying `x-amz-copy-source` naming table `b`'s file: a server-side copy
 *   that reads `b` with the catalog's keys (UploadPartCopy likewise);
 * - a DeleteObjects whose body Floe checked, sent with another body naming `b`'s key (the payload
 *   was UNSIGNED-PAYLOAD, so the store could not tell);
 * - `?acl` with `x-amz-acl: public-read`, or a PUT with that header: `a`'s files readable by anyone
 *   without credentials.
 *
 * Now each is refused by Floe (403 naming the URI) or, for the swapped body, by RGW, because the
 * signature covers the checked body's SHA-256; the requests clients really make keep working.
 *
 * And virtual-host URIs (`http://<bucket>.<endpoint host>/<key>`): the gateway runs with
 * `rgw dns name = localhost`, a catalog's endpoint is `http://localhost:<port>`, and requests Floe
 * signs for `<bucket>.localhost` are sent to RGW with that Host and accepted; another bucket's host
 * is refused by Floe.
 */
import t from 'tap';
import { request as httpRequest } from 'node:http';
import { GetObjectCommand, PutObjectCommand } from '@aws-sdk/client-s3';
import { openStore } from '../../catalog/store/open-store.js';
import { onRgw } from '../helpers/rgw.js';
import { vendingProfile } from '../helpers/vending.js';
import { sampleSchema, startCatalogServer } from '../catalog/helpers.js';

const BUCKET = 'smuggle';

await onRgw(t, 'remote signing on RGW', async (t, rgw) => {
  await rgw.createBucket(BUCKET);
  const store = await openStore({ kind: 'pglite-memory' });
  t.teardown(() => store.close());
  const { client } = await startCatalogServer(t, store);
  const created = await client.post('/v1/catalogs', { name: 'lake', 'storage-profile': vendingProfile(rgw, BUCKET, 'wh', false) });
  t.equal(created.status, 201, created.text);
  t.equal((await client.post('/v1/lake/namespaces', { namespace: ['db'], properties: {} })).status, 200);
  const tables = {} as Record<'a' | 'b', { location: string; metadataLocation: string }>;
  for (const name of ['a', 'b'] as const) {
    const r = await client.post('/v1/lake/namespaces/db/tables', { name, schema: sampleSchema() });
    t.equal(r.status, 200);
    tables[name] = { location: r.body.metadata.location, metadataLocation: r.body['metadata-location'] };
  }
  const keyOf = (location: string): string => location.slice(`s3://${BUCKET}/`.length);
  const aKey = (name: string): string => `${keyOf(tables.a.location)}/data/${name}`;
  const bMeta = keyOf(tables.b.metadataLocation);
  const uriOf = (key: string, query = ''): string => `${rgw.endpoint}/${BUCKET}/${key.split('/').map(encodeURIComponent).join('/')}${query}`;
  const owner = rgw.client();
  t.teardown(() => owner.destroy());
  await owner.send(new PutObjectCommand({ Bucket: BUCKET, Key: aKey('f.parquet'), Body: 'a rows' }));

  const sign = (method: string, uri: string, headers: Record<string, string> = {}, body?: string) =>
    client.post('/v1/lake/namespaces/db/tables/a/sign', {
      region: rgw.region, method, uri, headers: Object.fromEntries(Object.entries({ 'x-amz-content-sha256': 'UNSIGNED-PAYLOAD', ...headers }).map(([k, v]) => [k, [v]])),
      ...(body !== undefined ? { body } : {}),
    });
  const send = async (method: string, uri: string, signed: { headers: Record<string, string[]> }, body?: string): Promise<{ status: number; text: string }> => {
    const headers = Object.fromEntries(Object.entries(signed.headers).filter(([k]) => k !== 'host').map(([k, v]) => [k, v.join(',')]));
    const r = await fetch(uri, { method, headers, ...(body !== undefined ? { body } : {}) });
    return { status: r.status, text: await r.text() };
  };
  const readObject = (key: string): Promise<string> => owner.send(new GetObjectCommand({ Bucket: BUCKET, Key: key })).then((o) => o.Body!.transformToString(), (e: { name?: string }) => `missing: ${e.name}`);

  await t.test('server-side copies from anywhere are not signed', async (t) => {
    for (const [what, method, uri, headers] of [
      ['CopyObject from another table', 'PUT', uriOf(aKey('copied')), { 'x-amz-copy-source': `/${BUCKET}/${bMeta}` }],
      ['the header in another case', 'PUT', uriOf(aKey('copied')), { 'X-Amz-Copy-Source': `${BUCKET}/${bMeta}` }],
      ['UploadPartCopy', 'PUT', uriOf(aKey('copied'), '?partNumber=1&uploadId=2~abc'), { 'x-amz-copy-source': `/${BUCKET}/${bMeta}`, 'x-amz-copy-source-range': 'bytes=0-9' }],
      ['a copy inside the table too (clients never copy)', 'PUT', uriOf(aKey('copied')), { 'x-amz-copy-source': `/${BUCKET}/${aKey('f.parquet')}` }],
    ] as const) {
      const r = await sign(method, uri, headers);
      t.equal(r.status, 403, `${what}: refused`);
      t.match(r.body.error?.message, /header x-amz-copy-source(-range)? is not signed/, `${what}: the message names the header`);
    }
    t.match(await readObject(aKey('copied')), /^missing/, 'nothing was copied into the table');
  });

  await t.test('a DeleteObjects is bound to the body Floe checked', async (t) => {
    const deleteUri = `${rgw.endpoint}/${BUCKET}?delete`;
    const checked = `<Delete><Object><Key>${aKey('f.parquet')}</Key></Object></Delete>`;
    const swapped = `<Delete><Object><Key>${bMeta}</Key></Object></Delete>`;
    const signed = await sign('POST', deleteUri, { 'content-type': 'application/xml' }, checked);
    t.equal(signed.status, 200, 'a DeleteObjects of the table\'s own key is signed');
    const sha = signed.body.headers['x-amz-content-sha256']?.[0];
    t.match(sha, /^[0-9a-f]{64}$/, 'over the body\'s SHA-256, not UNSIGNED-PAYLOAD');
    const smuggled = await send('POST', deleteUri, signed.body, swapped);
    t.not(smuggled.status, 200, `RGW refuses another body under that signature (${smuggled.status} ${smuggled.text.slice(0, 120)})`);
    t.match(await readObject(bMeta), /"table-uuid"/, 'table b\'s metadata file is still there');
    const honest = await send('POST', deleteUri, signed.body, checked);
    t.equal(honest.status, 200, `RGW accepts the checked body (${honest.text.slice(0, 120)})`);
    t.match(honest.text, new RegExp(`<Deleted><Key>${aKey('f.parquet').replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}</Key>`), 'and deletes what it names');
  });

  await t.test('nothing that widens who may read the table is signed', async (t) => {
    await owner.send(new PutObjectCommand({ Bucket: BUCKET, Key: aKey('g.parquet'), Body: 'a rows' }));
    for (const [what, method, uri, headers] of [
      ['PutObjectAcl public-read', 'PUT', uriOf(aKey('g.parquet'), '?acl'), { 'x-amz-acl': 'public-read' }],
      ['a PUT with x-amz-acl', 'PUT', uriOf(aKey('public.parquet')), { 'x-amz-acl': 'public-read' }],
      ['a PUT with a grant', 'PUT', uriOf(aKey('public.parquet')), { 'x-amz-grant-read': 'uri="http://acs.amazonaws.com/groups/global/AllUsers"' }],
      ['a PUT with tags', 'PUT', uriOf(aKey('tagged.parquet')), { 'x-amz-tagging': 'team=x' }],
      ['an object lock', 'PUT', uriOf(aKey('locked.parquet')), { 'x-amz-object-lock-mode': 'COMPLIANCE' }],
    ] as const) {
      const r = await sign(method, uri, headers);
      t.equal(r.status, 403, `${what}: refused`);
      t.match(r.body.error?.message, /^Refused to sign PUT .*: header x-amz-[a-z-]+ is not signed/, `${what}: named`);
    }
    const anonymous = await fetch(uriOf(aKey('g.parquet')));
    await anonymous.arrayBuffer();
    t.equal(anonymous.status, 403, 'the table\'s files stay private');
  });

  await t.test('sub-resources other than the multipart calls are not signed', async (t) => {
    for (const [method, query] of [
      ['GET', '?acl'], ['PUT', '?tagging'], ['POST', '?restore'], ['POST', '?select&select-type=2'], ['GET', '?torrent'], ['GET', '?attributes'],
      ['PUT', '?retention'], ['PUT', '?legal-hold'], ['GET', '?X-Amz-Signature=abc'],
    ] as const) {
      const r = await sign(method, uriOf(aKey('g.parquet'), query), {});
      t.equal(r.status, 403, `${method} ${query}: refused`);
      t.match(r.body.error?.message, /the sub-resource or parameter '[A-Za-z-]+' is not signed/);
    }
    const listAcl = await sign('GET', `${rgw.endpoint}/${BUCKET}?list-type=2&prefix=${encodeURIComponent(`${keyOf(tables.a.location)}/`)}&acl`);
    t.equal(listAcl.status, 403, 'a listing with a sub-resource is refused');
    // What clients do send is still signed and accepted by RGW.
    const versioned = await sign('GET', uriOf(aKey('g.parquet'), '?x-id=GetObject&response-content-type=application%2Foctet-stream'));
    t.equal(versioned.status, 200, 'GetObject with the SDK\'s x-id and a response override');
    t.equal((await send('GET', uriOf(aKey('g.parquet'), '?x-id=GetObject&response-content-type=application%2Foctet-stream'), versioned.body)).status, 200, 'RGW accepts it');
    const listing = `${rgw.endpoint}/${BUCKET}?list-type=2&prefix=${encodeURIComponent(`${keyOf(tables.a.location)}/`)}&delimiter=%2F&max-keys=2&start-after=x&fetch-owner=false&encoding-type=url`;
    const listed = await sign('GET', listing);
    t.equal(listed.status, 200, 'ListObjectsV2 with its parameters');
    t.equal((await send('GET', listing, listed.body)).status, 200, 'RGW accepts it');
  });
  await t.test('virtual-host URIs are signed and RGW accepts them', async (t) => {
    const port = new URL(rgw.endpoint).port;
    const profile = { ...vendingProfile(rgw, BUCKET, 'vh', false), endpoint: `http://localhost:${port}` };
    const made = await client.post('/v1/catalogs', { name: 'vhost', 'storage-profile': profile });
    t.equal(made.status, 201, made.text);
    t.equal((await client.post('/v1/vhost/namespaces', { namespace: ['db'], properties: {} })).status, 200);
    const table = await client.post('/v1/vhost/namespaces/db/tables', { name: 'v', schema: sampleSchema() });
    t.equal(table.status, 200);
    const meta = keyOf(table.body['metadata-location']);
    const prefix = `${keyOf(table.body.metadata.location)}/`;
    const vhostUri = (key: string, query = ''): string => `http://${BUCKET}.localhost:${port}/${key.split('/').map(encodeURIComponent).join('/')}${query}`;
    const signV = (method: string, uri: string) => client.post('/v1/vhost/namespaces/db/tables/v/sign', { region: rgw.region, method, uri, headers: { 'x-amz-content-sha256': ['UNSIGNED-PAYLOAD'] } });
    /** Sends to RGW at 127.0.0.1 with the URI's own Host, as a client resolving `<bucket>.localhost` would. */
    const sendV = (method: string, uri: string, signed: { headers: Record<string, string[]> }, body?: string): Promise<{ status: number; text: string }> => new Promise((resolve, reject) => {
      const u = new URL(uri);
      const headers = Object.fromEntries(Object.entries(signed.headers).map(([k, v]) => [k, v.join(',')]));
      const req = httpRequest({ host: '127.0.0.1', port: Number(port), method, path: `${u.pathname}${u.search}`, headers: { ...headers, host: u.host } }, (res) => {
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (d: string) => (text += d));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, text }));
      });
      req.on('error', reject);
      req.end(body);
    });
    const got = await signV('GET', vhostUri(meta));
    t.equal(got.status, 200, 'a virtual-host GET is signed');
    t.equal(got.body.headers.host?.[0], `${BUCKET}.localhost:${port}`, 'over the bucket\'s host');
    const read = await sendV('GET', vhostUri(meta), got.body);
    t.equal(read.status, 200, `RGW accepts it (${read.text.slice(0, 120)})`);
    t.match(read.text, /"table-uuid"/, 'and answers the table\'s metadata');
    const put = await signV('PUT', vhostUri(`${prefix}data/vh.parquet`));
    t.equal((await sendV('PUT', vhostUri(`${prefix}data/vh.parquet`), put.body, 'rows')).status, 200, 'a virtual-host PUT');
    t.equal(await readObject(`${prefix}data/vh.parquet`), 'rows', 'landed in the bucket the host names');
    const listUri = `http://${BUCKET}.localhost:${port}/?list-type=2&prefix=${encodeURIComponent(prefix)}`;
    const list = await signV('GET', listUri);
    t.equal(list.status, 200, 'a virtual-host listing inside the table');
    const listed = await sendV('GET', listUri, list.body);
    t.equal(listed.status, 200);
    t.match(listed.text, /vh\.parquet/, 'lists the table');
    for (const [what, uri] of [
      ['another bucket\'s host', `http://other.localhost:${port}/${meta}`],
      ['a host under the bucket\'s', `http://x.${BUCKET}.localhost:${port}/${meta}`],
      ['another table through the virtual host', vhostUri(bMeta)],
      ['the bucket root listing', `http://${BUCKET}.localhost:${port}/?list-type=2`],
    ] as const) {
      const r = await signV('GET', uri);
      t.equal(r.status, 403, `${what}: refused`);
      t.match(r.body.error?.message, /^Refused to sign /);
    }
  });
}, { gatewayConfig: { 'rgw dns name': 'localhost' } });
