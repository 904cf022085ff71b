/**
 * Hostile inputs against vending and signing on a real RGW (issue 18 acceptance; Polaris shipped
 * advisories for each): whatever puts a table's files outside the catalog's warehouse gets no
 * credential and no signature (400/403), and nothing a name can hold widens what is signed.
 *
 * - a staged create at a location outside the warehouse, or with `write.metadata.path` outside;
 * - a register of a metadata file whose table lives outside the warehouse (another catalog's);
 * - `write.metadata.path` set outside on an existing table;
 * - a catalog location mapping that sends a table's files outside the warehouse;
 * - tables located at `vic*`, `v?ctim`, `v?c*` beside a table at `victim` (no UUID between the
 *   glob and the victim): their vended keys and signer do not reach it;
 * - tables named with `*`, `?`, `$` and `%`: their signer refuses every other table's keys, and
 *   their vended keys reach nothing else on RGW.
 */
import t from 'tap';
import { GetObjectCommand, S3Client } from '@aws-sdk/client-s3';
import { openStore } from '../../catalog/store/open-store.js';
import { onRgw } from '../helpers/rgw.js';
import { prepareVendingRole, vendingProfile } from '../helpers/vending.js';
import { sampleSchema, startCatalogServer } from '../catalog/helpers.js';

const BUCKET = 'hostile';
const VENDED = { headers: { 'x-iceberg-access-delegation': 'vended-credentials' } };
const SIGNING = { headers: { 'x-iceberg-access-delegation': 'remote-signing' } };

await onRgw(t, 'hostile inputs on RGW', async (t, rgw) => {
  await prepareVendingRole(rgw, BUCKET);
  const store = await openStore({ kind: 'pglite-memory' });
  t.teardown(() => store.close());
  const { client } = await startCatalogServer(t, store);
  for (const [name, prefix, extra] of [
    ['lake', 'warehouse', {}],
    ['other', 'other', {}],
    // Tables of `mapped.db.t` are read and written at `elsewhere/t`: outside the catalog's warehouse.
    ['mapped', 'mapped', { 'location-mappings': [{ from: `s3://${BUCKET}/mapped/db/moved`, to: `s3://${BUCKET}/elsewhere/moved` }] }],
  ] as const) {
    const r = await client.post('/v1/catalogs', { name, 'storage-profile': vendingProfile(rgw, BUCKET, prefix), ...extra });
    t.equal(r.status, 201, `catalog ${name}: ${r.text}`);
    t.equal((await client.post(`/v1/${name}/namespaces`, { namespace: ['db'], properties: {} })).status, 200);
  }
  const lake = '/v1/lake/namespaces/db';
  const orders = await client.post(`${lake}/tables`, { name: 'orders', schema: sampleSchema() });
  t.equal(orders.status, 200);
  const ordersMeta: string = orders.body['metadata-location'];
  const uriOf = (location: string): string => `${rgw.endpoint}/${BUCKET}/${location.slice(`s3://${BUCKET}/`.length).split('/').map(encodeURIComponent).join('/')}`;
  const sign = (path: string, location: string): ReturnType<typeof client.post> => client.post(`${path}/sign`, { region: rgw.region, method: 'GET', uri: uriOf(location), headers: {} });
  const refusedOutright = (status: number): boolean => status === 400 || status === 403;

  await t.test('staged creates outside the warehouse', async (t) => {
    const outside = await client.post(`${lake}/tables`, { name: 'staged_out', schema: sampleSchema(), 'stage-create': true, location: `s3://${BUCKET}/elsewhere/staged` }, VENDED);
    t.ok(refusedOutright(outside.status), `a staged create at a location outside: ${outside.status} ${outside.text}`);
    t.notOk(outside.text.includes('storage-credentials'), 'no credentials');
    const props = await client.post(`${lake}/tables`, { name: 'staged_props', schema: sampleSchema(), 'stage-create': true, properties: { 'write.metadata.path': `s3://${BUCKET}/elsewhere/meta` } }, VENDED);
    t.ok(refusedOutright(props.status), `a staged create with write.metadata.path outside: ${props.status}`);
    t.notOk(props.text.includes('storage-credentials'), 'no credentials');
    const signed = await client.post(`${lake}/tables`, { name: 'staged_sign', schema: sampleSchema(), 'stage-create': true, location: `s3://${BUCKET}/elsewhere/s` }, SIGNING);
    t.ok(refusedOutright(signed.status), `nor signing for one: ${signed.status}`);
    t.notOk(signed.text.includes('s3.signer'), 'no signer advertised');
    const inside = await client.post(`${lake}/tables`, { name: 'staged_in', schema: sampleSchema(), 'stage-create': true }, VENDED);
    t.equal(inside.status, 200, 'a staged create inside the warehouse');
    t.equal(inside.body['storage-credentials']?.length, 1, 'gets its credentials');
  });

  await t.test('a register of a table that lives outside', async (t) => {
    const src = await client.post('/v1/other/namespaces/db/tables', { name: 'src', schema: sampleSchema() });
    t.equal(src.status, 200);
    const registered = await client.post(`${lake}/register`, { name: 'stolen', 'metadata-location': src.body['metadata-location'] }, VENDED);
    t.ok(refusedOutright(registered.status), `register with vended credentials: ${registered.status} ${registered.text.slice(0, 200)}`);
    t.notOk(registered.text.includes('storage-credentials'), 'no credentials');
    const exists = await client.get(`${lake}/tables/stolen`);
    if (exists.status === 200) {
      // Registered (the catalog reads it with its own keys) but never delegated.
      t.equal((await client.get(`${lake}/tables/stolen`, VENDED)).status, 403, 'a vended load of it is refused');
      t.equal((await client.get(`${lake}/tables/stolen/credentials`)).status, 403, 'and its credentials');
      t.equal((await sign(`${lake}/tables/stolen`, src.body['metadata-location'])).status, 403, 'and signing its files');
      t.notOk('s3.signer.uri' in ((await client.get(`${lake}/tables/stolen`, SIGNING)).body.config ?? {}), 'no signer advertised');
    } else {
      t.equal(exists.status, 404, 'or not registered at all');
    }
  });

  await t.test('write.metadata.path set outside on an existing table', async (t) => {
    const tbl = await client.post(`${lake}/tables`, { name: 'meta_moved', schema: sampleSchema() });
    t.equal(tbl.status, 200);
    t.equal((await sign(`${lake}/tables/meta_moved`, tbl.body['metadata-location'])).status, 200, 'signed while inside');
    const moved = await client.post(`${lake}/tables/meta_moved`, { requirements: [], updates: [{ action: 'set-properties', updates: { 'write.metadata.path': `s3://${BUCKET}/elsewhere/meta` } }] });
    t.equal(moved.status, 200, 'the property is set');
    const load = await client.get(`${lake}/tables/meta_moved`, VENDED);
    t.equal(load.status, 403);
    t.match(load.body.error.message, /write\.metadata\.path s3:\/\/hostile\/elsewhere\/meta is outside the catalog's warehouse/);
    t.equal((await client.get(`${lake}/tables/meta_moved/credentials`)).status, 403, 'the credentials endpoint too');
    // Signing reuses a table's locations for up to a second.
    await new Promise((r) => setTimeout(r, 1100));
    const s = await sign(`${lake}/tables/meta_moved`, tbl.body['metadata-location']);
    t.equal(s.status, 403, 'and no signature, even for a file inside');
    t.notOk('s3.signer.uri' in ((await client.get(`${lake}/tables/meta_moved`, SIGNING)).body.config ?? {}), 'no signer advertised');
  });

  await t.test('a location mapping that points outside', async (t) => {
    const moved = await client.post('/v1/mapped/namespaces/db/tables', { name: 'moved', schema: sampleSchema(), location: `s3://${BUCKET}/mapped/db/moved` });
    t.equal(moved.status, 200, `created through the mapping: ${moved.text.slice(0, 200)}`);
    const load = await client.get('/v1/mapped/namespaces/db/tables/moved', VENDED);
    t.equal(load.status, 403, 'no credentials');
    t.match(load.body.error.message, /is mapped to s3:\/\/hostile\/elsewhere\/moved, outside the catalog's warehouse/);
    t.equal((await sign('/v1/mapped/namespaces/db/tables/moved', moved.body['metadata-location'])).status, 403, 'no signature');
    t.equal((await client.get('/v1/mapped/namespaces/db/tables/moved/credentials')).status, 403, 'nor from the credentials endpoint');
    t.notOk('s3.signer.uri' in ((await client.get('/v1/mapped/namespaces/db/tables/moved', SIGNING)).body.config ?? {}), 'no signer advertised');
    const plain = await client.post('/v1/mapped/namespaces/db/tables', { name: 'plain', schema: sampleSchema() });
    t.equal((await client.get('/v1/mapped/namespaces/db/tables/plain', VENDED)).status, 200, 'an unmapped table of the same catalog is vended');
    t.equal((await sign('/v1/mapped/namespaces/db/tables/plain', plain.body['metadata-location'])).status, 200, 'and signed');
  });

  await t.test('IAM globs in a location widen nothing', async (t) => {
    // Table folders carry a UUID, so a name's glob meets the UUID before any other table; a
    // location given explicitly does not. Unescaped, `vic*/*` and `v?ctim/*` would match
    // `victim/…` (RGW evaluates both wildcards), so these are what the escaping must stop.
    const victim = await client.post(`${lake}/tables`, { name: 'victim', schema: sampleSchema(), location: `s3://${BUCKET}/warehouse/db/victim` });
    t.equal(victim.status, 200, victim.text.slice(0, 200));
    const victimMeta: string = victim.body['metadata-location'];
    for (const [name, folder] of [['glob_star', 'vic*'], ['glob_any', 'v?ctim'], ['glob_both', 'v?c*']] as const) {
      const created = await client.post(`${lake}/tables`, { name, schema: sampleSchema(), location: `s3://${BUCKET}/warehouse/db/${folder}` });
      if (created.status !== 200) {
        t.equal(created.status, 400, `${folder}: refused as a location, not a 500: ${created.text.slice(0, 200)}`);
        continue;
      }
      t.equal((await sign(`${lake}/tables/${name}`, victimMeta)).status, 403, `${folder}: its signer refuses the victim's file`);
      const vended = await client.get(`${lake}/tables/${name}`, VENDED);
      t.equal(vended.status, 200, `${folder}: vended`);
      const c = vended.body['storage-credentials'][0].config as Record<string, string>;
      const s3 = new S3Client({ endpoint: c['s3.endpoint'], region: c['client.region'], forcePathStyle: true, maxAttempts: 1, credentials: { accessKeyId: c['s3.access-key-id']!, secretAccessKey: c['s3.secret-access-key']!, sessionToken: c['s3.session-token']! } });
      const got = await s3.send(new GetObjectCommand({ Bucket: BUCKET, Key: victimMeta.slice(`s3://${BUCKET}/`.length) })).then(() => 'ok', (e: { name?: string }) => e.name);
      s3.destroy();
      t.equal(got, 'AccessDenied', `${folder}: its vended keys do not read the victim`);
    }
  });

  await t.test('names with *, ?, $ and % widen nothing', async (t) => {
    for (const name of ['o*', 'o?ders', 'o$x', '${aws:username}', 'o%', '%2F..']) {
      const path = `${lake}/tables/${encodeURIComponent(name)}`;
      const created = await client.post(`${lake}/tables`, { name, schema: sampleSchema() });
      t.equal(created.status, 200, `${name} created`);
      const own = await sign(path, created.body['metadata-location']);
      t.equal(own.status, 200, `${name}: its own metadata is signed`);
      const theirs = await sign(path, ordersMeta);
      t.equal(theirs.status, 403, `${name}: another table's file is not`);
      const listing = await client.post(`${path}/sign`, { region: rgw.region, method: 'GET', uri: `${rgw.endpoint}/${BUCKET}?list-type=2&prefix=${encodeURIComponent('warehouse/db/o')}`, headers: {} });
      t.equal(listing.status, 403, `${name}: a listing wider than the table is not`);
      const vended = await client.get(path, VENDED);
      if (name.includes('${')) {
        // Written as IAM's `${$}{…}` escape, which RGW 16.2 does not parse: STS refuses the whole
        // session policy, so such a table gets no keys at all here (on AWS it gets its own).
        t.equal(vended.status, 503, `${name}: STS refused the escaped policy`);
        t.notOk(vended.text.includes('storage-credentials'), 'and nothing was vended');
        continue;
      }
      t.equal(vended.status, 200, `${name}: ${vended.text.slice(0, 300)}`);
      const c = vended.body['storage-credentials'][0].config as Record<string, string>;
      const s3 = new S3Client({ endpoint: c['s3.endpoint'], region: c['client.region'], forcePathStyle: true, maxAttempts: 1, credentials: { accessKeyId: c['s3.access-key-id']!, secretAccessKey: c['s3.secret-access-key']!, sessionToken: c['s3.session-token']! } });
      const got = await s3.send(new GetObjectCommand({ Bucket: BUCKET, Key: ordersMeta.slice(`s3://${BUCKET}/`.length) })).then(() => 'ok', (e: { name?: string }) => e.name);
      s3.destroy();
      t.equal(got, 'AccessDenied', `${name}: its vended keys do not read orders`);
    }
  });
});
