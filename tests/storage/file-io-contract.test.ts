/**
 * One FileIO contract, run unchanged against the local file system and against S3 on a real Ceph
 * RGW: create-if-absent (and exactly one winner among racing writers), overwrite, ranged reads,
 * multipart-sized objects, recursive sorted listing with pagination, batched prefix deletes, typed
 * errors. Then what only an object store has: its failures (missing bucket, wrong secret,
 * unreachable endpoint) as typed `StorageError`s, and throttling retried with backoff.
 */
import t from 'tap';
import type { Test } from 'tap';
import { randomBytes } from 'node:crypto';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { FileAlreadyExistsError, FileNotFoundError, StorageError, UnsupportedLocationError } from '../../storage-creds/file-io.js';
import type { FileIO } from '../../storage-creds/file-io.js';
import { LocalFileIO } from '../../storage-creds/local-file-io.js';
import { S3FileIO, parseS3Location } from '../../storage-creds/s3-file-io.js';
import type { S3FileIOOptions } from '../../storage-creds/s3-file-io.js';
import { onRgw } from '../helpers/rgw.js';
import { startS3FaultProxy } from '../helpers/s3-fault-proxy.js';

const MIB = 1024 * 1024;
/** Above the S3 FileIO's multipart threshold below: three parts of 5 MiB, the last one short. */
const LARGE_BYTES = 12 * MIB + 3;

async function contract(t: Test, io: FileIO, root: string): Promise<void> {
  await t.test('write, read, exists, size; create-if-absent; overwrite', async (t) => {
    const a = `${root}/dir/a.json`;
    t.equal(await io.exists(a), false);
    await io.write(a, Buffer.from('one'));
    t.equal((await io.read(a)).toString(), 'one');
    t.equal(await io.exists(a), true);
    t.equal(await io.size(a), 3);
    await t.rejects(io.write(a, Buffer.from('two')), FileAlreadyExistsError, 'create-if-absent refuses an existing object');
    t.equal((await io.read(a)).toString(), 'one', 'unchanged after the refused create');
    await io.write(a, Buffer.from('three'), { overwrite: true });
    t.equal((await io.read(a)).toString(), 'three');
    await io.write(`${root}/dir/empty`, new Uint8Array(0));
    t.equal(await io.size(`${root}/dir/empty`), 0, 'an empty object');
    t.equal((await io.read(`${root}/dir/empty`)).length, 0);
  });

  await t.test('ranged reads', async (t) => {
    const f = `${root}/ranges/r.bin`;
    await io.write(f, Buffer.from('0123456789'));
    t.equal((await io.readRange(f, 2, 3)).toString(), '234');
    t.equal((await io.readRange(f, 0, 10)).toString(), '0123456789');
    t.equal((await io.readRange(f, 7, 100)).toString(), '789', 'a range past the end is cut at the end');
    t.equal((await io.readRange(f, 10, 5)).length, 0, 'a range starting at the end is empty');
    t.equal((await io.readRange(f, 4, 0)).length, 0, 'a zero-length range');
    await t.rejects(io.readRange(`${root}/ranges/missing`, 0, 4), FileNotFoundError);
  });

  await t.test('missing objects are typed errors; deleting one is not an error', async (t) => {
    await t.rejects(io.read(`${root}/missing`), FileNotFoundError);
    await t.rejects(io.size(`${root}/missing`), FileNotFoundError);
    const e = await io.read(`${root}/missing`).catch((x: unknown) => x);
    t.equal((e as FileNotFoundError).location, `${root}/missing`, 'the error names the location');
    await io.delete(`${root}/missing`);
    t.equal(await io.exists(`${root}/missing`), false);
  });

  await t.test('concurrent create-if-absent has exactly one winner', async (t) => {
    const target = `${root}/race/v1.metadata.json`;
    const results = await Promise.allSettled(Array.from({ length: 16 }, (_, i) => io.write(target, Buffer.from(`writer ${i}`))));
    const winners = results.flatMap((r, i) => (r.status === 'fulfilled' ? [i] : []));
    t.equal(winners.length, 1, 'one writer wins');
    t.ok(results.every((r) => r.status === 'fulfilled' || r.reason instanceof FileAlreadyExistsError), 'the others get FileAlreadyExistsError');
    t.equal((await io.read(target)).toString(), `writer ${winners[0]}`, 'the object holds the winner\'s bytes');
    t.same((await io.list(`${root}/race/`)).map((f) => f.location), [target], 'no temporary objects left');
  });

  await t.test('large objects (multipart on S3)', async (t) => {
    const big = randomBytes(LARGE_BYTES);
    const f = `${root}/big/data.parquet`;
    await io.write(f, big);
    t.equal(await io.size(f), LARGE_BYTES);
    t.ok((await io.read(f)).equals(big), 'the bytes come back intact');
    t.ok((await io.readRange(f, 5 * MIB - 2, 4)).equals(big.subarray(5 * MIB - 2, 5 * MIB + 2)), 'a range across a part boundary');
    await t.rejects(io.write(f, randomBytes(LARGE_BYTES)), FileAlreadyExistsError, 'create-if-absent holds for large objects');
    t.ok((await io.read(f)).equals(big), 'unchanged');
    const replaced = randomBytes(LARGE_BYTES);
    await io.write(f, replaced, { overwrite: true });
    t.ok((await io.read(f)).equals(replaced), 'overwrite of a large object');
  });

  await t.test('listing: recursive, sorted, prefix semantics, pagination', async (t) => {
    const base = `${root}/list`;
    const names = Array.from({ length: 23 }, (_, i) => `${base}/t/data/part-${String(i).padStart(3, '0')}.parquet`);
    await Promise.all(names.map((n) => io.write(n, Buffer.from(n))));
    await io.write(`${base}/t/metadata/v1.metadata.json`, Buffer.from('{}'));
    await io.write(`${base}/tx/other`, Buffer.from('x'));
    const all = await io.list(`${base}/t/`);
    t.same(all.map((f) => f.location), [...names, `${base}/t/metadata/v1.metadata.json`], 'everything under the prefix, sorted, not the sibling');
    t.ok(all.every((f) => f.size > 0 && f.lastModifiedMs > 0), 'sizes and modification times');
    t.same((await io.list(`${base}/t/data/part-01`)).map((f) => f.location), names.slice(10, 20), 'a prefix that is not a directory filters by name');
    t.same(await io.list(`${base}/nothing/`), [], 'an empty prefix lists nothing');
  });

  await t.test('deletePrefix deletes everything under the prefix and counts it', async (t) => {
    const base = `${root}/purge`;
    await Promise.all(Array.from({ length: 12 }, (_, i) => io.write(`${base}/t/f${i}`, Buffer.from('x'))));
    await io.write(`${base}/keep/f`, Buffer.from('x'));
    t.equal(await io.deletePrefix(`${base}/t/`), 12);
    t.same(await io.list(`${base}/t/`), []);
    t.equal(await io.exists(`${base}/keep/f`), true, 'a sibling prefix is kept');
    t.equal(await io.deletePrefix(`${base}/t/`), 0, 'again: nothing left');
  });
}

t.test('local file system', async (t) => {
  const dir = mkdtempSync(path.join(tmpdir(), 'floe-contract-'));
  await contract(t, new LocalFileIO(), `file://${dir}`);
});

await onRgw(t, 'S3 on Ceph RGW', async (t, rgw) => {
  await rgw.createBucket('contract');
  const options: S3FileIOOptions = {
    region: rgw.region, endpoint: rgw.endpoint, pathStyleAccess: true,
    credentials: { accessKeyId: rgw.accessKeyId, secretAccessKey: rgw.secretAccessKey },
    multipartThresholdBytes: 6 * MIB, partSizeBytes: 5 * MIB,
    // Small pages and batches so pagination and batching run here, not only past 1000 keys.
    listPageSize: 7, deleteBatchSize: 5,
  };
  const io = new S3FileIO(options);
  t.teardown(() => io.destroy());

  await t.test('s3://', (t) => contract(t, io, 's3://contract/s3'));
  await t.test('s3a:// lists in its own scheme', async (t) => {
    await io.write('s3a://contract/a/x', Buffer.from('x'));
    t.same((await io.list('s3a://contract/a/')).map((f) => f.location), ['s3a://contract/a/x']);
    t.equal((await io.read('s3n://contract/a/x')).toString(), 'x', 's3n:// names the same object');
  });

  await t.test('a failed multipart upload leaves no parts behind', async (t) => {
    const proxy = await startS3FaultProxy(rgw.endpoint);
    t.teardown(() => proxy.close());
    const faulty = new S3FileIO({ ...options, endpoint: proxy.endpoint, maxAttempts: 1 });
    t.teardown(() => faulty.destroy());
    // The first part upload fails with a permanent error; the upload must be aborted.
    proxy.failNext(1, { status: 400, code: 'InvalidPart', method: 'PUT' });
    const e = await faulty.write('s3://contract/aborted/big', randomBytes(LARGE_BYTES)).catch((x: unknown) => x);
    t.ok(e instanceof StorageError, 'a typed error');
    const uploads = JSON.parse(await rgw.admin(['bucket', 'list', '--bucket=contract', '--allow-unordered'])) as { name: string }[];
    t.same(uploads.filter((o) => o.name.includes('aborted')), [], 'no object and no multipart parts remain');
    t.equal(await io.exists('s3://contract/aborted/big'), false);
  });

  await t.test('throttling and 5xx are retried with backoff', async (t) => {
    const proxy = await startS3FaultProxy(rgw.endpoint);
    t.teardown(() => proxy.close());
    const retrying = new S3FileIO({ ...options, endpoint: proxy.endpoint, maxAttempts: 4 });
    t.teardown(() => retrying.destroy());
    proxy.failNext(2, { status: 503, code: 'SlowDown' });
    const started = Date.now();
    await retrying.write('s3://contract/retry/m.json', Buffer.from('m'));
    t.equal(proxy.faults, 2, 'two throttled answers were seen');
    t.ok(Date.now() - started >= 100, 'the client backed off between attempts');
    proxy.failNext(3, { status: 500, code: 'InternalError' });
    t.equal((await retrying.read('s3://contract/retry/m.json')).toString(), 'm', 'a read survives three 500s');
    proxy.failNext(2, { status: 503, code: 'SlowDown', method: 'PUT' });
    await t.rejects(retrying.write('s3://contract/retry/m.json', Buffer.from('again')), FileAlreadyExistsError, 'a retried conditional PUT still reports an existing object');
    proxy.failNext(10, { status: 503, code: 'SlowDown' });
    const e = await retrying.read('s3://contract/retry/m.json').catch((x: unknown) => x);
    t.ok(e instanceof StorageError && e.failure === 'unavailable', 'past maxAttempts: StorageError unavailable');
    t.match((e as Error).message, /read failed for s3:\/\/contract\/retry\/m\.json/);
  });

  await t.test('store failures are typed and name the cause, never the secret', async (t) => {
    const noBucket = await io.write('s3://no-such-bucket-here/x', Buffer.from('x')).catch((x: unknown) => x);
    t.ok(noBucket instanceof StorageError && noBucket.failure === 'no-such-bucket', 'missing bucket');
    t.match((noBucket as Error).message, /bucket does not exist/);

    const wrongSecret = new S3FileIO({ ...options, credentials: { accessKeyId: rgw.accessKeyId, secretAccessKey: 'not-the-secret-0123456789' } });
    t.teardown(() => wrongSecret.destroy());
    const denied = await wrongSecret.list('s3://contract/').catch((x: unknown) => x);
    t.ok(denied instanceof StorageError && denied.failure === 'access-denied', 'wrong secret');
    // RGW answers a bad signature with AccessDenied, S3 with SignatureDoesNotMatch.
    t.match((denied as Error).message, /access denied|signature does not match/);
    t.notMatch((denied as Error).message, /not-the-secret/, 'the secret is not in the message');

    const unknownKey = new S3FileIO({ ...options, credentials: { accessKeyId: 'NOSUCHKEY0000', secretAccessKey: 'x' } });
    t.teardown(() => unknownKey.destroy());
    const unknown = await unknownKey.read('s3://contract/s3/dir/a.json').catch((x: unknown) => x);
    t.ok(unknown instanceof StorageError && unknown.failure === 'access-denied', 'unknown access key');

    const closed = await startS3FaultProxy(rgw.endpoint);
    const deadEndpoint = closed.endpoint;
    await closed.close();
    const unreachable = new S3FileIO({ ...options, endpoint: deadEndpoint, maxAttempts: 2 });
    t.teardown(() => unreachable.destroy());
    const down = await unreachable.exists('s3://contract/x').catch((x: unknown) => x);
    t.ok(down instanceof StorageError && down.failure === 'unavailable', 'unreachable endpoint');
  });
});

t.test('parseS3Location', async (t) => {
  t.same(parseS3Location('s3://b/k/x.json'), { scheme: 's3', bucket: 'b', key: 'k/x.json' });
  t.same(parseS3Location('s3a://b'), { scheme: 's3a', bucket: 'b', key: '' });
  t.same(parseS3Location('S3N://b/'), { scheme: 's3n', bucket: 'b', key: '' });
  for (const bad of ['s3:///k', 'gs://b/k', '/local/path', 's3:b/k']) t.throws(() => parseS3Location(bad), UnsupportedLocationError, bad);
});
