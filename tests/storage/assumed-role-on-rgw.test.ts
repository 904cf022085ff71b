/**
 * `role-arn` / `external-id` / `sts-endpoint` in an s3 profile: the server's own access goes
 * through an assumed role. The session cache refreshes before expiry (a clock moved by hand), and
 * on RGW a catalog whose profile names a role works through it: SQL writes and reads with the
 * role's session, and a read-only role makes the creation probe fail on its write, which the
 * profile's own keys (the bucket's owner) would have been allowed, so the session is what signs.
 */
import t from 'tap';
import { Floe } from '../../index.js';
import { openStore } from '../../catalog/store/open-store.js';
import { parseStorageProfile, storageProfileToJson } from '../../catalog/rest/wire.js';
import { assumedRoleProvider, type ExpiringS3Credentials } from '../../storage-creds/s3-assumed-role.js';
import { onRgw } from '../helpers/rgw.js';

t.test('sessions are reused until shortly before they expire, then replaced once', async (t) => {
  let now = 1_000_000;
  let calls = 0;
  let failNext = false;
  const provider = assumedRoleProvider({
    now: () => now, refreshBeforeMs: 60_000,
    assumeRole: async (): Promise<ExpiringS3Credentials> => {
      calls++;
      await new Promise((r) => setTimeout(r, 5));
      if (failNext) {
        failNext = false;
        throw new Error('sts down');
      }
      return { accessKeyId: `AK${calls}`, secretAccessKey: 's', sessionToken: 't', expiration: new Date(now + 900_000) };
    },
  });
  const first = await Promise.all([provider(), provider(), provider()]);
  t.equal(calls, 1, 'concurrent first calls share one AssumeRole');
  t.same(first.map((c) => c.accessKeyId), ['AK1', 'AK1', 'AK1']);
  now += 800_000;
  t.equal((await provider()).accessKeyId, 'AK1', 'still valid beyond the margin');
  now += 50_000;
  const refreshed = await Promise.all([provider(), provider()]);
  t.equal(calls, 2, 'refreshed once within the margin');
  t.same(refreshed.map((c) => c.accessKeyId), ['AK2', 'AK2']);
  now += 900_000;
  failNext = true;
  await t.rejects(provider(), /sts down/);
  t.equal((await provider()).accessKeyId, 'AK4', 'a failed refresh is not cached');
});

t.test('the profile fields are checked and returned (no key)', async (t) => {
  const base = { type: 's3', bucket: 'lake', region: 'us-east-1', credentials: { type: 'default-chain' } };
  const parsed = parseStorageProfile({ ...base, 'role-arn': 'arn:aws:iam::123456789012:role/floe', 'external-id': 'ext-1', 'sts-endpoint': 'https://sts.example.com' });
  t.same(parsed.profile.type === 's3' ? parsed.profile.assumeRole : undefined, { roleArn: 'arn:aws:iam::123456789012:role/floe', externalId: 'ext-1', stsEndpoint: 'https://sts.example.com' });
  t.match(storageProfileToJson(parsed.profile), { 'role-arn': 'arn:aws:iam::123456789012:role/floe', 'external-id': 'ext-1', 'sts-endpoint': 'https://sts.example.com' });
  t.throws(() => parseStorageProfile({ ...base, 'role-arn': 'floe' }), /Invalid role-arn/);
  t.throws(() => parseStorageProfile({ ...base, 'external-id': 'x1' }), /need role-arn/);
  t.throws(() => parseStorageProfile({ ...base, 'role-arn': 'arn:aws:iam::1:role/f', 'sts-endpoint': 'ftp://x' }), /Invalid sts-endpoint/);
});

await onRgw(t, 'the server assumes a role on RGW', async (t, rgw) => {
  await rgw.createBucket('assumed');
  const trust = { Version: '2012-10-17', Statement: [{ Effect: 'Allow', Principal: { AWS: ['arn:aws:iam:::user/floe'] }, Action: ['sts:AssumeRole'] }] };
  const role = async (name: string, actions: string[]) => {
    await rgw.admin(['role', 'create', `--role-name=${name}`, '--path=/', `--assume-role-policy-doc=${JSON.stringify(trust)}`]);
    const policy = { Version: '2012-10-17', Statement: [{ Effect: 'Allow', Action: actions, Resource: ['arn:aws:s3:::assumed', 'arn:aws:s3:::assumed/*'] }] };
    await rgw.admin(['role-policy', 'put', `--role-name=${name}`, '--policy-name=bucket', `--policy-doc=${JSON.stringify(policy)}`]);
  };
  await role('floe-server', ['s3:*']);
  await role('floe-reader', ['s3:GetObject', 's3:ListBucket']);
  const store = await openStore({ kind: 'pglite-memory' });
  const floe = await Floe.open({ store });
  t.teardown(() => floe.close());
  const admin = { tenantId: 'default', principalId: 'test', roles: ['tenant_admin'] };
  const profile = (roleArn: string, prefix: string) => parseStorageProfile({
    type: 's3', bucket: 'assumed', 'key-prefix': prefix, region: rgw.region, endpoint: rgw.endpoint, 'path-style-access': true,
    credentials: { type: 'access-key', 'access-key-id': rgw.accessKeyId, 'secret-access-key': rgw.secretAccessKey },
    'role-arn': roleArn, 'external-id': 'floe-tests', 'sts-endpoint': rgw.endpoint,
  });

  await floe.state.catalog.createCatalog(admin, { name: 'lake', warehouseLocation: 's3://assumed/lake', storage: profile('arn:aws:iam:::role/floe-server', 'lake') });
  await floe.sql('CREATE SCHEMA lake.s');
  await floe.sql('CREATE TABLE lake.s.t (id int)');
  await floe.sql('INSERT INTO lake.s.t VALUES (1), (2), (3)');
  t.same((await floe.sql('SELECT sum(id) FROM lake.s.t')).rows, [[6]], 'written and read through the role\'s session');

  const refused = await floe.state.catalog.createCatalog(admin, { name: 'ro', warehouseLocation: 's3://assumed/ro', storage: profile('arn:aws:iam:::role/floe-reader', 'ro') })
    .then(() => undefined, (e: unknown) => e);
  t.match((refused as Error | undefined)?.message, /Storage profile check failed: could not write a probe object: .*access denied/i, 'a read-only role cannot pass the probe: the session signs, not the owner\'s keys');
  const unknown = await floe.state.catalog.createCatalog(admin, { name: 'none', warehouseLocation: 's3://assumed/none', storage: profile('arn:aws:iam:::role/nobody', 'none') })
    .then(() => undefined, (e: unknown) => e);
  t.match((unknown as Error | undefined)?.message, /Storage profile check failed/, 'a role that does not exist is refused at creation');
});
