/**
 * Vended S3 keys stop working at the expiry Floe reports (issue 18 acceptance: "refused … after
 * expiry"), on a real Ceph RGW with STS. Floe's own minimum lifetime is AWS's 900 s, too long to
 * wait for in a test, so this drives the vendor Floe's catalogs use (`S3CredentialVendor` with the
 * SDK's `AssumeRole`, the table's session policy) with a lifetime of a few seconds, on a gateway
 * whose STS floor (`rgw_sts_min_session_duration`, 900 like AWS) is lowered through its admin
 * socket. The keys read and write their table and nothing else until `expiresAtMs` (the value a
 * client receives as `s3.session-token-expires-at-ms`), and are refused by RGW after it; the
 * vendor then mints a new session instead of handing out the dead one.
 */
import t from 'tap';
import { execFile } from 'node:child_process';
import * as path from 'node:path';
import { promisify } from 'node:util';
import { GetObjectCommand, ListObjectsV2Command, PutObjectCommand, S3Client } from '@aws-sdk/client-s3';
import { S3CredentialVendor, stsAssumeRole, type VendedS3Credentials } from '../../storage-creds/s3-vending.js';
import { onRgw } from '../helpers/rgw.js';
import { prepareVendingRole, VENDING_ROLE_ARN } from '../helpers/vending.js';

const BUCKET = 'expiry';
/**
 * Long enough for the checks before expiry on a loaded machine (an STS call and five S3 requests
 * to a gateway whose daemons share the cores with other test files), short enough to wait out.
 */
const LIFETIME_SECONDS = 60;

await onRgw(t, 'vended keys expire on RGW', async (t, rgw) => {
  await prepareVendingRole(rgw, BUCKET);
  await promisify(execFile)('ceph', ['-c', path.join(rgw.dir, 'ceph.conf'), '--admin-daemon', path.join(rgw.dir, 'run', 'client.rgw.asok'), 'config', 'set', 'rgw_sts_min_session_duration', '1']);
  const owner = rgw.client();
  t.teardown(() => owner.destroy());
  for (const key of ['wh/db/orders/metadata/v1.json', 'wh/db/orders_old/metadata/v1.json']) await owner.send(new PutObjectCommand({ Bucket: BUCKET, Key: key, Body: key }));

  const sts = stsAssumeRole({ region: rgw.region, endpoint: rgw.endpoint, credentials: { accessKeyId: rgw.accessKeyId, secretAccessKey: rgw.secretAccessKey } });
  t.teardown(() => sts.destroy());
  // A refresh margin shorter than the lifetime, so a session is served from the cache while it lives.
  const vendor = new S3CredentialVendor({ roleArn: VENDING_ROLE_ARN, stsEndpoint: null, durationSeconds: LIFETIME_SECONDS, externalId: null }, sts.assumeRole, Date.now, 2_000);
  const clientOf = (c: VendedS3Credentials): S3Client => new S3Client({
    endpoint: rgw.endpoint, region: rgw.region, forcePathStyle: true, maxAttempts: 1,
    credentials: { accessKeyId: c.accessKeyId, secretAccessKey: c.secretAccessKey, sessionToken: c.sessionToken },
  });
  const outcome = (op: Promise<unknown>): Promise<string> => op.then(() => 'ok', (e: { name?: string }) => e.name ?? 'error');
  const tryAll = async (s3: S3Client): Promise<Record<string, string>> => ({
    read: await outcome(s3.send(new GetObjectCommand({ Bucket: BUCKET, Key: 'wh/db/orders/metadata/v1.json' })).then((o) => o.Body?.transformToString())),
    list: await outcome(s3.send(new ListObjectsV2Command({ Bucket: BUCKET, Prefix: 'wh/db/orders/' }))),
    write: await outcome(s3.send(new PutObjectCommand({ Bucket: BUCKET, Key: 'wh/db/orders/data/f.parquet', Body: 'x' }))),
    sibling: await outcome(s3.send(new GetObjectCommand({ Bucket: BUCKET, Key: 'wh/db/orders_old/metadata/v1.json' }))),
  });

  const minted = Date.now();
  const session = await vendor.vend([`s3://${BUCKET}/wh/db/orders`], 'read-write');
  const answered = Date.now();
  // The session's lifetime from when STS made it, which is between the call and its answer (STS
  // reports whole seconds); a slow call on a loaded machine moves both ends.
  t.ok(session.expiresAtMs >= minted + LIFETIME_SECONDS * 1000 - 1000 && session.expiresAtMs <= answered + LIFETIME_SECONDS * 1000 + 1000,
    `the reported expiry is the session's lifetime from its minting (${session.expiresAtMs - minted} ms after the call, which took ${answered - minted} ms)`);
  const s3 = clientOf(session);
  t.teardown(() => s3.destroy());
  const before = await tryAll(s3);
  t.ok(Date.now() < session.expiresAtMs, 'the checks before expiry ran before it');
  t.same(before, { read: 'ok', list: 'ok', write: 'ok', sibling: 'AccessDenied' }, 'while it lives: the table only');
  t.equal((await vendor.vend([`s3://${BUCKET}/wh/db/orders/`], 'read-write')).accessKeyId, session.accessKeyId, 'served from the cache while it lives');

  // Event-driven on the wall clock RGW shares: wait until the reported expiry has passed.
  while (Date.now() < session.expiresAtMs + 1_500) await new Promise((r) => setTimeout(r, Math.max(50, session.expiresAtMs + 1_500 - Date.now())));
  t.same(await tryAll(s3), { read: 'AccessDenied', list: 'AccessDenied', write: 'AccessDenied', sibling: 'AccessDenied' }, 'after the reported expiry RGW refuses everything');

  const renewed = await vendor.vend([`s3://${BUCKET}/wh/db/orders`], 'read-write');
  t.not(renewed.accessKeyId, session.accessKeyId, 'the vendor mints a new session instead of the dead one');
  t.ok(renewed.expiresAtMs > Date.now(), 'alive');
  const fresh = clientOf(renewed);
  t.teardown(() => fresh.destroy());
  t.equal((await tryAll(fresh)).read, 'ok', 'and it reads');
  t.equal(vendor.minted, 2, 'two sessions in all');
});
