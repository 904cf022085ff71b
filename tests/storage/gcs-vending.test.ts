/**
 * GCS credential vending (issue 18 item 2) against the checking server (no GCS emulator runs here):
 * Floe exchanges its service account's token at the STS endpoint for a downscoped one, and the
 * checking server validates the Credential Access Boundary it receives (structure, resource,
 * permissions, the CEL condition parsed) and then enforces it on every storage request made with
 * the downscoped token.
 *
 * - The boundary names the table's prefix with a trailing `/`: the token reads and lists the
 *   table's objects and is refused on a sibling `orders_old`, on a listing of `orders` without the
 *   slash, and on the bucket root; a read-only caller's token cannot write.
 * - Hostile table names (quotes, backslash, `'||true||'`, a line break) are escaped as CEL string
 *   literals: the server parses each boundary back to exactly the table's prefix, and the token
 *   reaches that table only.
 * - Entry keys, caching (one exchange per table and mode until close to expiry), the refresh
 *   endpoint, and no credentials without `table:data`.
 */
import t from 'tap';
import { openStore } from '../../catalog/store/open-store.js';
import { StorageError } from '../../storage-creds/file-io.js';
import { GcsFileIO } from '../../storage-creds/gcs-file-io.js';
import {
  GcsCredentialVendor, credentialAccessBoundary, escapeCelString, gcsCredentialConfig, gcsPrefixOf, stsDownscope, type CredentialAccessBoundary,
} from '../../storage-creds/gcs-vending.js';
import { gcsStorageProfile, parseCondition, startGcsCheckingServer } from '../helpers/gcs-checking-server.js';
import { sampleSchema, startCatalogServer } from '../catalog/helpers.js';

const VENDED = { headers: { 'x-iceberg-access-delegation': 'vended-credentials' } };
const BUCKET = 'lakehouse';
const HOSTILE = ["o'brien", 'say"cheese', 'back\\slash', "x'||true||'", "')||true||('", 'new\nline', 'tab\there'];

t.test('CEL literals: every hostile name round-trips to itself', async (t) => {
  t.equal(escapeCelString("a'b"), "'a\\'b'");
  t.equal(escapeCelString('a\\b'), "'a\\\\b'");
  t.equal(escapeCelString('a\nb'), "'a\\nb'");
  t.equal(escapeCelString('a\u0001b\u2028'), "'a\\u0001b\\u2028'");
  for (const name of [...HOSTILE, 'plain', '', 'ünïcødé/日本']) {
    const prefix = `wh/db/${name}/`;
    const boundary = credentialAccessBoundary([{ bucket: 'b', objectPrefix: prefix }], 'read');
    const rule = boundary.accessBoundary.accessBoundaryRules[0]!;
    t.same(parseCondition(rule.availabilityCondition.expression, 'b'), [
      { kind: 'object-name-prefix', prefix }, { kind: 'list-prefix', prefix },
    ], `the condition for ${JSON.stringify(name)} names exactly its prefix`);
  }
});

t.test('the boundary: one rule per bucket, roles by mode, prefixes with their slash', async (t) => {
  const read = credentialAccessBoundary([gcsPrefixOf('gs://b/wh/db/orders'), gcsPrefixOf('gs://b/wh/shared/'), gcsPrefixOf('gs://c/x')], 'read');
  t.same(read, {
    accessBoundary: {
      accessBoundaryRules: [
        {
          availableResource: '//storage.googleapis.com/projects/_/buckets/b',
          availablePermissions: ['inRole:roles/storage.objectViewer'],
          availabilityCondition: {
            title: 'floe-table-read',
            expression: "resource.name.startsWith('projects/_/buckets/b/objects/wh/db/orders/') || api.getAttribute('storage.googleapis.com/objectListPrefix', '').startsWith('wh/db/orders/') || "
              + "resource.name.startsWith('projects/_/buckets/b/objects/wh/shared/') || api.getAttribute('storage.googleapis.com/objectListPrefix', '').startsWith('wh/shared/')",
          },
        },
        {
          availableResource: '//storage.googleapis.com/projects/_/buckets/c',
          availablePermissions: ['inRole:roles/storage.objectViewer'],
          availabilityCondition: {
            title: 'floe-table-read',
            expression: "resource.name.startsWith('projects/_/buckets/c/objects/x/') || api.getAttribute('storage.googleapis.com/objectListPrefix', '').startsWith('x/')",
          },
        },
      ],
    },
  } satisfies CredentialAccessBoundary);
  const write = credentialAccessBoundary([gcsPrefixOf('gs://b/wh/db/orders')], 'read-write');
  t.same(write.accessBoundary.accessBoundaryRules[0]!.availablePermissions, ['inRole:roles/storage.objectViewer', 'inRole:roles/storage.objectAdmin'], 'writers may also create, overwrite and delete');

  const config = gcsCredentialConfig({ token: 'ya29.x', expiresAtMs: 1_800_000_000_000 }, { projectId: 'proj-1', endpoint: null }, 'v1/lake/namespaces/db/tables/orders/credentials');
  t.same(Object.fromEntries(config), {
    'gcs.oauth2.token': 'ya29.x', 'gcs.oauth2.token-type': 'Bearer',
    'gcs.oauth2.token-expires-at-ms': '1800000000000', 'gcs.oauth2.token-expires-at': '1800000000000',
    'gcs.project-id': 'proj-1', 'gcs.oauth2.refresh-credentials-endpoint': 'v1/lake/namespaces/db/tables/orders/credentials',
  }, 'the entry keys of issue 18');
});

t.test('the vendor caches per (locations, mode), single-flight, until shortly before expiry', async (t) => {
  let now = 1_000_000_000_000;
  const seen: CredentialAccessBoundary[] = [];
  const vendor = new GcsCredentialVendor(async (b) => {
    seen.push(b);
    await new Promise((r) => setTimeout(r, 10));
    return { token: `tok-${seen.length}`, expiresAtMs: now + 3600_000 };
  }, () => now);
  const loc = 'gs://b/wh/t';
  const [a, b] = await Promise.all([vendor.vend([loc], 'read'), vendor.vend([`${loc}/`], 'read')]);
  t.equal(vendor.minted, 1, 'concurrent callers share one exchange');
  t.equal(a, b);
  await vendor.vend([loc], 'read-write');
  t.equal(vendor.minted, 2, 'another mode is another token');
  now += 54 * 60_000;
  t.equal(await vendor.vend([loc], 'read'), a, 'reused while more than 5 minutes are left');
  now += 2 * 60_000;
  const renewed = await vendor.vend([loc], 'read');
  t.equal(vendor.minted, 3, 'minted again when less than 5 minutes are left');
  t.not(renewed.token, a.token);
  const uncached = new GcsCredentialVendor(async () => ({ token: 'fresh', expiresAtMs: now + 3600_000 }), () => now, undefined, undefined, false);
  await uncached.vend([loc], 'read');
  await uncached.vend([loc], 'read');
  t.equal(uncached.minted, 2, 'with the cache off every call exchanges');
  const failing = new GcsCredentialVendor(async () => {
    throw new Error('sts down');
  });
  await t.rejects(failing.vend([loc], 'read'), /could not mint a downscoped token: sts down/);
});

async function outcome(op: () => Promise<unknown>): Promise<string> {
  try {
    await op();
    return 'ok';
  } catch (e) {
    return e instanceof StorageError && e.failure === 'access-denied' ? 'denied' : `error: ${(e as Error).message}`;
  }
}

t.test('vending on the checking server', async (t) => {
  const gcs = await startGcsCheckingServer();
  t.teardown(() => gcs.close());
  gcs.createBucket(BUCKET);
  const store = await openStore({ kind: 'pglite-memory' });
  t.teardown(() => store.close());
  const { client, server, clientFor } = await startCatalogServer(t, store);
  const asToken = (token: string): GcsFileIO => new GcsFileIO({ credentials: { type: 'access-token', token }, apiEndpoint: gcs.endpoint, maxRetries: 0 });

  // Without vended-credentials nothing is vended, and the endpoint says why.
  t.equal((await client.post('/v1/catalogs', { name: 'plain', 'storage-profile': gcsStorageProfile(gcs, BUCKET, 'plain') })).status, 201);
  t.equal((await client.post('/v1/plain/namespaces', { namespace: ['db'], properties: {} })).status, 200);
  const plain = await client.post('/v1/plain/namespaces/db/tables', { name: 't', schema: sampleSchema() }, VENDED);
  t.equal(plain.status, 200);
  t.notOk('storage-credentials' in plain.body, 'no credentials without vended-credentials');
  t.match((await client.get('/v1/plain/namespaces/db/tables/t/credentials')).body.error.message, /cannot vend credentials/);

  const created = await client.post('/v1/catalogs', { name: 'lake', 'storage-profile': gcsStorageProfile(gcs, BUCKET, 'warehouse', { 'vended-credentials': { 'sts-endpoint': gcs.stsEndpoint } }) });
  t.equal(created.status, 201, created.text);
  t.same(created.body['storage-profile']['vended-credentials'], { 'sts-endpoint': gcs.stsEndpoint });
  // /v1/config: the credentials endpoint only where the store vends; signing never (S3 only).
  const CREDENTIALS = 'GET /v1/{prefix}/namespaces/{namespace}/tables/{table}/credentials';
  const SIGN = 'POST /v1/{prefix}/namespaces/{namespace}/tables/{table}/sign';
  const endpointsOf = async (catalog: string): Promise<string[]> => (await client.get(`/v1/config?warehouse=${catalog}`)).body.endpoints as string[];
  const lakeEndpoints = await endpointsOf('lake');
  t.ok(lakeEndpoints.includes(CREDENTIALS), '/v1/config advertises credentials for a GCS catalog that vends');
  t.notOk(lakeEndpoints.includes(SIGN), 'but not signing');
  const plainEndpoints = await endpointsOf('plain');
  t.notOk(plainEndpoints.includes(CREDENTIALS) || plainEndpoints.includes(SIGN), 'and neither for one without vended-credentials');
  const base = '/v1/lake/namespaces';
  t.equal((await client.post(base, { namespace: ['db'], properties: {} })).status, 200);
  const tables = new Map<string, { location: string; metadataLocation: string }>();
  for (const name of ['orders', 'orders_old']) {
    const r = await client.post(`${base}/db/tables`, { name, schema: sampleSchema(), location: `gs://${BUCKET}/warehouse/db/${name}` });
    t.equal(r.status, 200, `${name} created`);
    tables.set(name, { location: r.body.metadata.location, metadataLocation: r.body['metadata-location'] });
  }
  const orders = tables.get('orders')!;
  const ordersOld = tables.get('orders_old')!;

  const before = gcs.boundaries.length;
  const loaded = await client.get(`${base}/db/tables/orders`, VENDED);
  t.equal(loaded.status, 200, loaded.text);
  const entries = loaded.body['storage-credentials'] as { prefix: string; config: Record<string, string> }[];
  t.same(entries.map((e) => e.prefix), [`gs://${BUCKET}/warehouse/db/orders/`], 'one entry, for the table\'s prefix');
  const config = entries[0]!.config;
  t.same(Object.keys(config).sort(), [
    'gcs.oauth2.refresh-credentials-endpoint', 'gcs.oauth2.token', 'gcs.oauth2.token-expires-at', 'gcs.oauth2.token-expires-at-ms', 'gcs.oauth2.token-type', 'gcs.project-id', 'gcs.service.host',
  ]);
  t.equal(config['gcs.oauth2.token-type'], 'Bearer');
  t.equal(config['gcs.project-id'], gcs.projectId);
  t.equal(config['gcs.oauth2.refresh-credentials-endpoint'], 'v1/lake/namespaces/db/tables/orders/credentials');
  const expiresAt = Number(config['gcs.oauth2.token-expires-at-ms']);
  t.ok(expiresAt > Date.now() + 50 * 60_000 && expiresAt <= Date.now() + 3600_000, 'expires with the source token, within the hour');
  t.equal(config['gcs.oauth2.token-expires-at'], config['gcs.oauth2.token-expires-at-ms']);
  t.notOk(loaded.text.includes('PRIVATE KEY'), 'the service-account key is not in the response');

  t.equal(gcs.boundaries.length, before + 1, 'one token exchange');
  const received = gcs.boundaries[gcs.boundaries.length - 1]!;
  t.equal(received.token, config['gcs.oauth2.token'], 'the vended token is the downscoped one');
  t.same(received.rules, [{
    bucket: BUCKET, roles: ['roles/storage.objectViewer', 'roles/storage.objectAdmin'],
    condition: [{ kind: 'object-name-prefix', prefix: 'warehouse/db/orders/' }, { kind: 'list-prefix', prefix: 'warehouse/db/orders/' }],
    expression: received.rules[0]!.expression,
  }], 'the server saw a well-formed boundary for the table\'s prefix, read-write for a writer');

  const token = asToken(config['gcs.oauth2.token']!);
  t.match((await token.read(orders.metadataLocation)).toString(), /"table-uuid"/, 'the token reads the table\'s metadata');
  t.same((await token.list(`${orders.location}/`)).map((f) => f.location), [orders.metadataLocation], 'and lists the table');
  t.equal(await outcome(() => token.read(ordersOld.metadataLocation)), 'denied', 'not the sibling orders_old');
  t.equal(await outcome(() => token.list(orders.location)), 'denied', 'nor a listing of "orders" without its slash (it would show orders_old)');
  t.equal(await outcome(() => token.list(`gs://${BUCKET}/`)), 'denied', 'nor the bucket root');
  t.equal(await outcome(() => token.write(`${ordersOld.location}/data/x.parquet`, Buffer.from('x'))), 'denied', 'nor a write into the sibling');
  t.equal(await outcome(() => token.write(`${orders.location}/data/x.parquet`, Buffer.from('x'))), 'ok', 'a writer\'s token writes the table');
  t.equal(await outcome(() => token.delete(`${orders.location}/data/x.parquet`)), 'ok', 'and deletes in it');

  const again = await client.get(`${base}/db/tables/orders/credentials`);
  t.equal(again.status, 200, 'the refresh endpoint answers');
  t.equal(again.body['storage-credentials'][0].config['gcs.oauth2.token'], config['gcs.oauth2.token'], 'the cached token');
  t.equal(gcs.boundaries.length, before + 1, 'no second exchange');

  const reader = clientFor(await server.token('table:read table:data'));
  const readOnly = await reader.get(`${base}/db/tables/orders`, VENDED);
  const readToken = readOnly.body['storage-credentials'][0].config['gcs.oauth2.token'] as string;
  t.same(gcs.boundaries[gcs.boundaries.length - 1]!.rules[0]!.roles, ['roles/storage.objectViewer'], 'a read-only caller gets a viewer boundary');
  t.equal(await outcome(() => asToken(readToken).read(orders.metadataLocation)), 'ok', 'which reads');
  t.equal(await outcome(() => asToken(readToken).write(`${orders.location}/data/y.parquet`, Buffer.from('y'))), 'denied', 'but cannot write');
  t.equal(await outcome(() => asToken(readToken).delete(orders.metadataLocation)), 'denied', 'nor delete');
  const noData = clientFor(await server.token('table:read'));
  t.notOk('storage-credentials' in (await noData.get(`${base}/db/tables/orders`, VENDED)).body, 'no table:data, no token');

  // Observability, as for S3: counted by catalog and outcome, audited without the token.
  const metrics = (await server.app.inject({ method: 'GET', url: '/metrics', headers: { authorization: `Bearer ${await server.token()}` } })).body;
  const issued = Number(/^floe_credential_vends_total\{catalog="lake",outcome="issued"\} (\d+)$/m.exec(metrics)?.[1] ?? 0);
  t.ok(issued >= 3, `GCS vends counted (${issued}: the load, the refresh, the reader's load)`);
  t.equal(Number(/^floe_credential_vends_total\{catalog="plain",outcome="denied"\} (\d+)$/m.exec(metrics)?.[1] ?? 0), 1, 'the refused refresh of a catalog that cannot vend');
  type AuditRow = { details: Record<string, unknown>; target_name: string };
  const auditRows = async (): Promise<AuditRow[]> => (await store.query<AuditRow>("SELECT details, target_name FROM user_audit_log WHERE event_type = 'vend_credentials'")).rows;
  let audited = await auditRows();
  // The audit row is written behind the request; the bound is only for a row that never comes.
  for (const until = Date.now() + 60_000; !audited.some((r) => r.details.mode === 'read') && Date.now() < until;) {
    await new Promise((r) => setTimeout(r, 100));
    audited = await auditRows();
  }
  t.match(audited.find((r) => r.details.mode === 'read'), { target_name: 'lake.db.orders', details: { catalog: 'lake', table: 'orders', outcome: 'issued', mode: 'read' } }, 'a read-only GCS vend is audited');
  const tokens = [config['gcs.oauth2.token']!, readToken];
  t.same(tokens.filter((x) => JSON.stringify(audited).includes(x) || metrics.includes(x)), [], 'no token in the audit log or the metrics');

  await t.test('hostile table names are escaped and give no wider access', async (t) => {
    for (const name of HOSTILE) {
      const r = await client.post(`${base}/db/tables`, { name, schema: sampleSchema() }, VENDED);
      if (r.status !== 200) {
        t.equal(r.status, 400, `${JSON.stringify(name)} refused as a name, not a 500: ${r.text}`);
        continue;
      }
      const entry = (r.body['storage-credentials'] as { prefix: string; config: Record<string, string> }[])[0]!;
      t.ok(entry !== undefined, `${JSON.stringify(name)}: a token was vended`);
      const prefix = `${(r.body.metadata.location as string).slice(`gs://${BUCKET}/`.length)}/`;
      t.same(gcs.boundaries[gcs.boundaries.length - 1]!.rules[0]!.condition, [
        { kind: 'object-name-prefix', prefix }, { kind: 'list-prefix', prefix },
      ], `${JSON.stringify(name)}: the boundary parses back to exactly the table's prefix`);
      const io = asToken(entry.config['gcs.oauth2.token']!);
      t.equal(await outcome(() => io.read(r.body['metadata-location'])), 'ok', `${JSON.stringify(name)}: reads its own metadata`);
      t.equal(await outcome(() => io.read(orders.metadataLocation)), 'denied', `${JSON.stringify(name)}: not another table's`);
      t.equal(await outcome(() => io.list(`gs://${BUCKET}/warehouse/`)), 'denied', `${JSON.stringify(name)}: nor the warehouse listing`);
    }
  });

  await t.test('every hostile name through the STS exchange itself, line breaks included', async (t) => {
    // GCS cannot store a table whose name holds a line break (refused above with 400), but the
    // boundary for such a prefix must still parse back to itself at STS.
    const vendor = new GcsCredentialVendor(stsDownscope(gcs.stsEndpoint, async () => ({ token: gcs.issueToken(), expiresAtMs: undefined })));
    for (const name of HOSTILE) {
      const minted = await vendor.vend([`gs://${BUCKET}/warehouse/db/${name}`], 'read');
      const prefix = `warehouse/db/${name}/`;
      t.same(gcs.boundaries[gcs.boundaries.length - 1]!.rules[0]!.condition, [{ kind: 'object-name-prefix', prefix }, { kind: 'list-prefix', prefix }], `${JSON.stringify(name)}: STS parsed exactly the prefix`);
      t.equal(await outcome(() => asToken(minted.token).read(orders.metadataLocation)), 'denied', `${JSON.stringify(name)}: no access to another table`);
    }
  });

  await t.test('a location outside the warehouse gets no token', async (t) => {
    const escaping = await client.post(`${base}/db/tables/orders`, {
      requirements: [], updates: [{ action: 'set-properties', updates: { 'write.data.path': `gs://${BUCKET}/elsewhere/data` } }],
    });
    t.equal(escaping.status, 200, escaping.text);
    const refused = await client.get(`${base}/db/tables/orders`, VENDED);
    t.equal(refused.status, 403, 'a write.data.path outside the warehouse gets no token');
    t.match(refused.body.error.message, /write\.data\.path .* is outside the catalog's warehouse/);
    const inside = await client.post(`${base}/db/tables/orders`, {
      requirements: [], updates: [{ action: 'set-properties', updates: { 'write.data.path': `gs://${BUCKET}/warehouse/db/shared-data` } }],
    });
    t.equal(inside.status, 200);
    const two = (await client.get(`${base}/db/tables/orders`, VENDED)).body['storage-credentials'] as { prefix: string }[];
    t.same(two.map((e) => e.prefix), [`gs://${BUCKET}/warehouse/db/orders/`, `gs://${BUCKET}/warehouse/db/shared-data/`], 'one entry per location');
    t.same(gcs.boundaries[gcs.boundaries.length - 1]!.rules[0]!.condition!.map((c) => c.prefix), ['warehouse/db/orders/', 'warehouse/db/orders/', 'warehouse/db/shared-data/', 'warehouse/db/shared-data/'], 'one boundary naming both');
  });

  await t.test('an expired token is refused; an STS refusal is a 503 naming the cause', async (t) => {
    gcs.expireAllTokens();
    t.equal(await outcome(() => token.read(orders.metadataLocation)), 'denied', 'the store refuses the expired downscoped token');
    const stsDown = await client.post('/v1/catalogs', { name: 'nosts', 'storage-profile': gcsStorageProfile(gcs, BUCKET, 'nosts', { 'vended-credentials': { 'sts-endpoint': `${gcs.endpoint}/no-such-sts` } }) });
    t.equal(stsDown.status, 201);
    t.equal((await client.post('/v1/nosts/namespaces', { namespace: ['db'], properties: {} })).status, 200);
    t.equal((await client.post('/v1/nosts/namespaces/db/tables', { name: 't', schema: sampleSchema() })).status, 200);
    const r = await client.get('/v1/nosts/namespaces/db/tables/t/credentials');
    t.equal(r.status, 503, r.text);
    t.match(r.body.error.message, /Could not vend storage credentials: the STS token exchange at .* failed/);
    t.notOk(r.text.includes('ya29.'), 'no token in the error');
  });
});
