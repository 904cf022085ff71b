/**
 * The RGW test store starts, speaks S3 with SigV4 (a wrong secret is refused), stores and returns
 * objects, and honours the conditional create the S3 FileIO relies on for metadata commits.
 */
import t from 'tap';
import { GetObjectCommand, PutObjectCommand, S3Client } from '@aws-sdk/client-s3';
import { onRgw } from '../helpers/rgw.js';

await onRgw(t, 'one-node RGW', async (t, rgw) => {
  await rgw.createBucket('smoke');
  const s3 = rgw.client();
  t.teardown(() => s3.destroy());

  await s3.send(new PutObjectCommand({ Bucket: 'smoke', Key: 'a/b.txt', Body: 'hello rgw' }));
  const got = await s3.send(new GetObjectCommand({ Bucket: 'smoke', Key: 'a/b.txt' }));
  t.equal(await got.Body?.transformToString(), 'hello rgw', 'GET returns what PUT stored');

  const ranged = await s3.send(new GetObjectCommand({ Bucket: 'smoke', Key: 'a/b.txt', Range: 'bytes=6-8' }));
  t.equal(await ranged.Body?.transformToString(), 'rgw', 'ranged GET');

  const conditional = await s3.send(new PutObjectCommand({ Bucket: 'smoke', Key: 'a/b.txt', Body: 'second', IfNoneMatch: '*' })).then(
    () => 'written', (e: unknown) => (e as { $metadata?: { httpStatusCode?: number } }).$metadata?.httpStatusCode,
  );
  t.equal(conditional, 412, 'PUT with If-None-Match: * over an existing key is refused with 412');
  const after = await s3.send(new GetObjectCommand({ Bucket: 'smoke', Key: 'a/b.txt' }));
  t.equal(await after.Body?.transformToString(), 'hello rgw', 'the refused PUT changed nothing');

  const forged = new S3Client({ endpoint: rgw.endpoint, region: rgw.region, forcePathStyle: true, credentials: { accessKeyId: rgw.accessKeyId, secretAccessKey: 'wrong-secret' } });
  t.teardown(() => forged.destroy());
  const status = await forged.send(new GetObjectCommand({ Bucket: 'smoke', Key: 'a/b.txt' })).then(
    () => 200, (e: unknown) => (e as { $metadata?: { httpStatusCode?: number } }).$metadata?.httpStatusCode,
  );
  t.equal(status, 403, 'a request signed with the wrong secret is refused (SigV4 is checked)');
});
