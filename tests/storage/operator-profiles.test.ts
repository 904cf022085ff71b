/**
 * Catalogs declared in the operator file (`catalogs:`, server/operator-catalogs.ts): secrets only
 * by reference (environment variable or file), the REST parser's checks on the profile, creation
 * with the same probe at start, a check of an existing one at every start (keys that stopped
 * working stop the start, rotated keys replace the sealed ones), and no key in the stored profile.
 */
import t from 'tap';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { Floe } from '../../index.js';
import { openStore } from '../../catalog/store/open-store.js';
import { ConfigError, loadConfig, type OperatorCatalogConfig } from '../../server/config.js';
import { resolveOperatorCatalogs } from '../../server/operator-catalogs.js';
import { onRgw } from '../helpers/rgw.js';

const s3Profile = (credentials: Record<string, unknown>, extra: Record<string, unknown> = {}) => ({
  type: 's3', bucket: 'lake', 'key-prefix': 'wh', region: 'us-east-1', endpoint: 'http://127.0.0.1:9', 'path-style-access': true, credentials, ...extra,
});
const sources = (env: Record<string, string>, files: Record<string, string> = {}) => ({
  env, readFile: (p: string) => {
    const v = files[p];
    if (v === undefined) throw Object.assign(new Error('no such file'), { code: 'ENOENT' });
    return v;
  },
});

t.test('the catalogs section is checked and its secret references resolved', async (t) => {
  const declared: OperatorCatalogConfig[] = [{ name: 'lake', storage_profile: s3Profile({ type: 'access-key', 'access-key-id': { env: 'LAKE_ID' }, 'secret-access-key': { file: '/run/secret' } }) }];
  const [lake] = resolveOperatorCatalogs(declared, sources({ LAKE_ID: 'AKIDEXAMPLE' }, { '/run/secret': 's3cr3t\n' }));
  t.equal(lake!.tenant, 'default');
  t.equal(lake!.request.warehouseLocation, 's3://lake/wh', 'the warehouse defaults to the profile\'s bucket and prefix');
  t.same(lake!.request.storage?.secret, { type: 's3-keys', accessKeyId: 'AKIDEXAMPLE', secretAccessKey: 's3cr3t' }, 'the file\'s trailing newline is not part of the key');

  const refused = (d: OperatorCatalogConfig[], env: Record<string, string> = {}, files: Record<string, string> = {}) => {
    try {
      resolveOperatorCatalogs(d, sources(env, files));
    } catch (e) {
      t.ok(e instanceof ConfigError, 'a ConfigError');
      return (e as Error).message;
    }
    return 'accepted';
  };
  t.match(refused([{ name: 'lake', storage_profile: s3Profile({ type: 'access-key', 'access-key-id': 'AKID', 'secret-access-key': 'inline-secret' }) }]),
    /catalogs\[0\]\.storage_profile\.credentials\.secret-access-key must be \{env: NAME\} or \{file: PATH\}: keys are not written in the configuration file/);
  const missingEnv = refused([{ name: 'lake', storage_profile: s3Profile({ type: 'access-key', 'access-key-id': 'AKID', 'secret-access-key': { env: 'NOT_SET_ANYWHERE' } }) }]);
  t.match(missingEnv, /environment variable NOT_SET_ANYWHERE is not set/);
  t.match(refused([{ name: 'lake', storage_profile: s3Profile({ type: 'access-key', 'access-key-id': 'AKID', 'secret-access-key': { file: '/nowhere' } }) }]), /cannot read \/nowhere: ENOENT/);
  t.match(refused([{ name: 'lake', storage_profile: s3Profile({ type: 'access-key', 'access-key-id': 'AKID', 'secret-access-key': { file: '/empty' } }) }], {}, { '/empty': '\n' }), /\/empty is empty/);
  t.match(refused([{ name: 'lake', storage_profile: s3Profile({ type: 'access-key', 'access-key-id': 'AKID', 'secret-access-key': { env: 'S', file: '/x' } }) }], { S: 'x' }), /must be \{env: NAME\} or \{file: PATH\}/);
  // The REST parser's own checks, under the entry's name; the secret's value never in a message.
  const badBucket = refused([{ name: 'lake', storage_profile: { ...s3Profile({ type: 'access-key', 'access-key-id': 'AKID', 'secret-access-key': { env: 'S' } }), bucket: 'X' } }], { S: 'value-of-the-secret' });
  t.match(badBucket, /catalogs\[0\]\.storage_profile: Invalid bucket name "X"/);
  t.notMatch(badBucket, /value-of-the-secret/);
  t.match(refused([{ name: 'a', warehouse_location: '/tmp/a' }, { name: 'a', warehouse_location: '/tmp/b' }]), /catalog a of tenant default is declared twice/);
  t.match(refused([{ name: 'plain' }]), /needs warehouse_location or storage_profile/);
  // The schema: unknown keys are refused like everywhere else in the file.
  const dir = mkdtempSync(path.join(tmpdir(), 'floe-opcat-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  writeFileSync(path.join(dir, 'bad.yaml'), 'catalogs:\n  - name: lake\n    warehouse: s3://lake\n');
  t.throws(() => loadConfig({ file: path.join(dir, 'bad.yaml'), env: {} }), /unknown key catalogs\[0\]\.warehouse/);
});

await onRgw(t, 'declared catalogs on RGW at start', async (t, rgw) => {
  await rgw.createBucket('declared');
  const dir = mkdtempSync(path.join(tmpdir(), 'floe-opcat-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const secretFile = path.join(dir, 'lake-secret');
  writeFileSync(secretFile, `${rgw.secretAccessKey}\n`, { mode: 0o600 });
  const writeConfig = (name: string, profile: Record<string, unknown>, extra: Record<string, unknown> = {}) => {
    const file = path.join(dir, name);
    writeFileSync(file, JSON.stringify({ catalogs: [{ name: 'lake', storage_profile: profile, ...extra }] }));
    return file;
  };
  const good = {
    type: 's3', bucket: 'declared', 'key-prefix': 'lake', region: rgw.region, endpoint: rgw.endpoint, 'path-style-access': true,
    credentials: { type: 'access-key', 'access-key-id': { env: 'FLOE_TEST_LAKE_KEY_ID' }, 'secret-access-key': { file: secretFile } },
  };
  process.env.FLOE_TEST_LAKE_KEY_ID = rgw.accessKeyId;
  t.teardown(() => {
    delete process.env.FLOE_TEST_LAKE_KEY_ID;
  });
  const store = await openStore({ kind: 'pglite-memory' });
  t.teardown(() => store.close());
  const admin = { tenantId: 'default', principalId: 'test', roles: ['tenant_admin'] };
  const open = (configFile: string) => Floe.open({ store: keepOpen(store), configFile });

  // First start: created with the probe; SQL writes into the bucket.
  const first = await open(writeConfig('good.json', good));
  const lake = await first.state.catalog.loadCatalog(admin, 'lake');
  t.equal(lake.warehouseLocation, 's3://declared/lake');
  t.same(lake.storageProfile, { type: 's3', bucket: 'declared', keyPrefix: 'lake', region: rgw.region, endpoint: rgw.endpoint, pathStyleAccess: true, credentialSource: 'access-key' }, 'the stored profile holds no key');
  t.notOk(JSON.stringify(lake).includes(rgw.secretAccessKey), 'the secret is only stored sealed');
  await first.sql('CREATE SCHEMA lake.s');
  await first.sql('CREATE TABLE lake.s.t (id int)');
  await first.sql('INSERT INTO lake.s.t VALUES (1), (2)');
  await first.close();

  // Keys that no longer work stop the next start, naming the step and the cause.
  writeFileSync(secretFile, 'not-the-secret\n');
  const refused = await open(writeConfig('good.json', good)).then(async (f) => { await f.close(); return undefined; }, (e: unknown) => e);
  t.ok(refused instanceof ConfigError, 'the start is refused');
  t.match((refused as Error).message, /catalog lake in the configuration: Storage profile check failed: could not write a probe object: .*access denied/);
  t.notMatch((refused as Error).message, /not-the-secret/);

  // Rotated keys: a new key pair for the user, the file updated; the start stores the new keys.
  const rotated = JSON.parse(await rgw.admin(['key', 'create', '--uid=floe', '--key-type=s3', '--gen-access-key', '--gen-secret'])) as { keys: { access_key: string; secret_key: string }[] };
  const fresh = rotated.keys.find((k) => k.access_key !== rgw.accessKeyId)!;
  process.env.FLOE_TEST_LAKE_KEY_ID = fresh.access_key;
  writeFileSync(secretFile, fresh.secret_key);
  const second = await open(writeConfig('good.json', good));
  t.same((await second.sql('SELECT id FROM lake.s.t ORDER BY id')).rows, [[1], [2]], 'the table written before is read with the new keys');
  await second.close();
  // The old keys are revoked: a start without the operator file still reads with the sealed new ones.
  await rgw.admin(['key', 'rm', '--uid=floe', '--key-type=s3', `--access-key=${rgw.accessKeyId}`]);
  const third = await Floe.open({ store: keepOpen(store) });
  t.same((await third.sql('SELECT count(*) FROM lake.s.t')).rows, [[2]]);
  await third.close();

  // A missing bucket and a moved warehouse are refused by name.
  const missing = await open(writeConfig('missing.json', { ...good, bucket: 'nosuchbucket' }, { name: 'other' })).then(async (f) => { await f.close(); return undefined; }, (e: unknown) => e);
  t.match((missing as Error).message, /catalog other in the configuration: Storage profile check failed: could not write a probe object: the bucket does not exist/);
  const moved = await open(writeConfig('moved.json', { ...good, 'key-prefix': 'elsewhere' })).then(async (f) => { await f.close(); return undefined; }, (e: unknown) => e);
  t.match((moved as Error).message, /catalog lake in the configuration: catalog lake exists with warehouse s3:\/\/declared\/lake, not s3:\/\/declared\/elsewhere/);
});

/** The same store for several Floe starts in a row (each close would close it). */
function keepOpen<S extends { close(): Promise<void> }>(store: S): S {
  return new Proxy(store, {
    get: (target, key) => {
      if (key === 'close') return async () => undefined;
      const v = Reflect.get(target, key, target) as unknown;
      return typeof v === 'function' ? (v as (...a: unknown[]) => unknown).bind(target) : v;
    },
  });
}
