/**
 * `floe admin create-catalog` with a storage profile from a file, against a real RGW: the profile is
 * checked with a probe object like `POST /v1/catalogs` does, a bad one is refused (exit 2) with the
 * cause and without the secret (wrong secret, missing bucket, unreachable endpoint, a store that
 * needs path-style access), and a good one is stored with its keys sealed. Then the other admin
 * commands on that bucket: `floe admin import` writes a table's files into it, and
 * `floe admin orphans` lists an upload no metadata refers to.
 */
import t from 'tap';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ListObjectsV2Command, PutObjectCommand } from '@aws-sdk/client-s3';
import { Floe } from '../../index.js';
import { openStore } from '../../catalog/store/open-store.js';
import { runCli } from '../helpers/cli.js';
import { onRgw } from '../helpers/rgw.js';
import { startS3FaultProxy } from '../helpers/s3-fault-proxy.js';

await onRgw(t, 'create-catalog from the CLI', async (t, rgw) => {
  await rgw.createBucket('clibucket');
  const dataDir = mkdtempSync(join(tmpdir(), 'floe-cli-catalog-'));
  t.teardown(() => rmSync(dataDir, { recursive: true, force: true }));
  const common = ['--data-dir', dataDir];
  const profileFile = (name: string, secret: string, overrides: Record<string, unknown> = {}): string => {
    const file = join(dataDir, `${name}.json`);
    writeFileSync(file, JSON.stringify({
      type: 's3', bucket: 'clibucket', 'key-prefix': name, region: rgw.region, endpoint: rgw.endpoint, 'path-style-access': true,
      credentials: { type: 'access-key', 'access-key-id': rgw.accessKeyId, 'secret-access-key': secret },
      ...overrides,
    }));
    return file;
  };
  const quiet = { AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: 'true' };

  const bad = runCli(['admin', 'create-catalog', 'wrong', '--storage-profile', profileFile('wrong', 'not-the-secret-at-all'), ...common], quiet);
  t.equal(bad.status, 2, 'a profile that fails its check: exit 2');
  t.match(bad.stderr, /Storage profile check failed: could not write a probe object: access denied/);
  t.notMatch(bad.stderr + bad.stdout, /not-the-secret-at-all/, 'the secret is not printed');
  t.notMatch(bad.stderr, /usage:/, 'no usage text for a refused profile');
  t.equal(runCli(['admin', 'create-catalog', 'x', ...common], quiet).status, 2, 'neither --warehouse nor --storage-profile');
  // Every cause the probe names reaches the command line the same way.
  const closed = await startS3FaultProxy(rgw.endpoint);
  await closed.close();
  for (const [what, overrides, why] of [
    ['a missing bucket', { bucket: 'no-such-bucket' }, /could not write a probe object: the bucket does not exist \(s3:\/\/no-such-bucket\//],
    ['an endpoint nothing listens on', { endpoint: closed.endpoint }, /could not write a probe object: the store did not answer successfully \(ECONNREFUSED/],
    // `localhost` resolves, `clibucket.localhost` does not: virtual-host addressing on a store that
    // needs path style (on 127.0.0.1 the SDK falls back to path style by itself).
    ['virtual-host addressing where the store needs path style', { endpoint: rgw.endpoint.replace('127.0.0.1', 'localhost'), 'path-style-access': false },
      /could not write a probe object: the host name clibucket\.localhost does not resolve \(ENOTFOUND\); .*set path-style-access: true/],
  ] as const) {
    const r = runCli(['admin', 'create-catalog', 'refused', '--storage-profile', profileFile('refused', rgw.secretAccessKey, overrides), ...common], quiet);
    t.equal(r.status, 2, `${what}: exit 2`);
    t.match(r.stderr, /Storage profile check failed: /, `${what}: the check failed`);
    t.match(r.stderr, why, `${what}: the cause is named`);
    t.notOk((r.stderr + r.stdout).includes(rgw.secretAccessKey), `${what}: the secret is not printed`);
  }

  const good = runCli(['admin', 'create-catalog', 'lake', '--storage-profile', profileFile('lake', rgw.secretAccessKey), ...common], quiet);
  t.equal(good.status, 0, good.stderr);
  t.match(good.stdout, /Catalog lake created in tenant default: s3:\/\/clibucket\/lake \(storage profile checked\)/);
  t.notMatch(good.stdout + good.stderr, new RegExp(rgw.secretAccessKey));
  const again = runCli(['admin', 'create-catalog', 'lake', '--storage-profile', profileFile('lake', rgw.secretAccessKey), ...common], quiet);
  t.equal(again.status, 2, 'a taken name');
  t.match(again.stderr, /Catalog already exists: lake/);

  const store = await openStore({ kind: 'pglite', dataDir });
  const row = (await store.query<{ warehouse_location: string; storage_secret_sealed: string }>("SELECT warehouse_location, storage_secret_sealed FROM catalogs WHERE name = 'lake'")).rows[0];
  t.equal(row?.warehouse_location, 's3://clibucket/lake');
  t.ok(row?.storage_secret_sealed.startsWith('v1:') && !row.storage_secret_sealed.includes(rgw.secretAccessKey), 'the keys are sealed');
  t.equal((await store.query("SELECT name FROM catalogs WHERE name = 'refused'")).rows.length, 0, 'no refused profile left a catalog');
  const admin = { tenantId: 'default', principalId: 'test', roles: ['tenant_admin'] };
  const floe = await Floe.open({ dataDir, store });
  await floe.state.catalog.createNamespace(admin, 'lake', ['s']);
  await floe.close();

  await t.test('floe admin import writes the table into the bucket', async (t) => {
    const csv = join(dataDir, 'items.csv');
    writeFileSync(csv, 'id,name\n1,apple\n2,pear\n3,plum\n');
    const imported = runCli(['admin', 'import', '--table', 'lake.s.items', csv, ...common], quiet);
    t.equal(imported.status, 0, imported.stderr);
    t.match(imported.stdout, /Created lake\.s\.items: 3 rows/);
    const s3 = rgw.client();
    t.teardown(() => s3.destroy());
    const keys = ((await s3.send(new ListObjectsV2Command({ Bucket: 'clibucket', Prefix: 'lake/s/' }))).Contents ?? []).map((o) => o.Key ?? '');
    t.ok(keys.some((k) => k.endsWith('.parquet')), 'the data file is in the bucket');
    t.ok(keys.some((k) => k.endsWith('.metadata.json')), 'and the metadata');
    const reader = await Floe.open({ dataDir, store: await openStore({ kind: 'pglite', dataDir }) });
    t.teardown(() => reader.close());
    t.same((await reader.sql('SELECT id, name FROM lake.s.items ORDER BY id')).rows, [[1, 'apple'], [2, 'pear'], [3, 'plum']], 'read back from the bucket');
  });

  await t.test('floe admin orphans lists an upload no metadata refers to, in the bucket', async (t) => {
    const listed = runCli(['admin', 'orphans', 'lake', ...common], quiet);
    t.equal(listed.status, 0, listed.stderr);
    t.equal(listed.stdout, '', 'a table written only by Floe has no orphans');
    t.match(listed.stderr, /0 orphan files \(0 bytes\) among [1-9]\d* files under 1 tables of catalog lake/, 'every file of the table was listed from the bucket');
    const s3 = rgw.client();
    t.teardown(() => s3.destroy());
    const data = ((await s3.send(new ListObjectsV2Command({ Bucket: 'clibucket', Prefix: 'lake/s/' }))).Contents ?? []).map((o) => o.Key ?? '').find((k) => k.endsWith('.parquet'))!;
    const stray = `${data.slice(0, data.lastIndexOf('/'))}/never-committed.parquet`;
    await s3.send(new PutObjectCommand({ Bucket: 'clibucket', Key: stray, Body: 'PAR1 half an upload' }));
    const found = runCli(['admin', 'orphans', 'lake', ...common], quiet);
    t.equal(found.status, 0, found.stderr);
    t.match(found.stdout, new RegExp(`^s3://clibucket/${stray.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}\t19\t\\d{4}-[^\t]+\ts\\.items\n$`), 'the stray upload, and only it');
    t.match(found.stderr, /1 orphan files \(19 bytes\)/);
  });
});
