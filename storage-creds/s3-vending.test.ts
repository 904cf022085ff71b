import t from 'tap';
import { S3CredentialVendor, escapeIamPattern, s3PrefixOf, s3SessionPolicy, type AssumeRole } from './s3-vending.js';

t.test('escapes IAM globs and variables', async (t) => {
  t.equal(escapeIamPattern('a*b?c${x}$d'), 'a${*}b${?}c${$}{x}$d');
  t.same(s3PrefixOf('s3://b/wh/t/'), { bucket: 'b', keyPrefix: 'wh/t/' });
  t.same(s3PrefixOf('s3a://b'), { bucket: 'b', keyPrefix: '' });
});

t.test('session policy: read vs read-write, list conditioned on the prefix', async (t) => {
  const read = s3SessionPolicy([{ bucket: 'b', keyPrefix: 'wh/o*/' }], 'read');
  t.same(read.Statement[0], { Sid: 'TableObjects', Effect: 'Allow', Action: ['s3:GetObject', 's3:GetObjectVersion'], Resource: ['arn:aws:s3:::b/wh/o${*}/*'] });
  t.same(read.Statement[1]!.Condition, { StringLike: { 's3:prefix': ['wh/o${*}/', 'wh/o${*}/*'] } });
  t.same(read.Statement.at(-1), { Sid: 'BucketLocation', Effect: 'Allow', Action: ['s3:GetBucketLocation'], Resource: ['arn:aws:s3:::b'] });
  const write = s3SessionPolicy([{ bucket: 'b', keyPrefix: 'wh/t/' }], 'read-write');
  t.ok((write.Statement[0]!.Action as string[]).includes('s3:PutObject'));
  t.ok(write.Statement.some((s) => (s.Action as string[]).includes('s3:ListBucketMultipartUploads')));
});

t.test('one STS call per key at a time, re-minted near expiry', async (t) => {
  let now = 1_000_000;
  let calls = 0;
  let release: () => void = () => undefined;
  const gate = new Promise<void>((r) => { release = r; });
  const assume: AssumeRole = async () => {
    calls += 1;
    await gate;
    return { accessKeyId: `k${calls}`, secretAccessKey: 's', sessionToken: 't', expiresAtMs: now + 900_000 };
  };
  const vendor = new S3CredentialVendor({ roleArn: 'arn:aws:iam:::role/r', stsEndpoint: null, durationSeconds: 900, externalId: null }, assume, () => now);
  const many = Array.from({ length: 10 }, () => vendor.vend(['s3://b/wh/t'], 'read'));
  release();
  const got = await Promise.all(many);
  t.equal(calls, 1, 'single flight');
  t.ok(got.every((c) => c.accessKeyId === 'k1'));
  t.equal((await vendor.vend(['s3://b/wh/t/'], 'read')).accessKeyId, 'k1', 'cached (same prefix)');
  t.equal((await vendor.vend(['s3://b/wh/t'], 'read-write')).accessKeyId, 'k2', 'another mode, another session');
  now += 900_000 - 4 * 60_000;
  t.equal((await vendor.vend(['s3://b/wh/t'], 'read')).accessKeyId, 'k3', 're-minted within the refresh margin');
  const failing = new S3CredentialVendor({ roleArn: 'arn:aws:iam:::role/r', stsEndpoint: null, durationSeconds: 900, externalId: null }, async () => { throw Object.assign(new Error('secret-ish detail'), { name: 'AccessDenied', $metadata: { httpStatusCode: 403 } }); });
  await t.rejects(failing.vend(['s3://b/x'], 'read'), { message: 'STS AssumeRole of arn:aws:iam:::role/r failed: AccessDenied (HTTP 403)' });
});
