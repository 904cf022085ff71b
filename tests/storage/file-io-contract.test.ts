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
import { AdlsFileIO, parseAdlsLocation } from '../../storage-creds/adls-file-io.js';
import type { AdlsFileIOOptions } from '../../storage-creds/adls-file-io.js';
import { onAzurite } from '../helpers/azurite.js';
import { GcsFileIO, parseGcsLocation } from '../../storage-creds/gcs-file-io.js';
import type { GcsFileIOOptions } from '../../storage-creds/gcs-file-io.js';
import { startGcsCheckingServer } from '../helpers/gcs-checking-server.js';

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
    // The SDK's backoff has full jitter (each delay uniform in [0, 2^i s) for throttling), so any
    // one delay may be near zero; three of them sum below 100 ms with probability ~2e-5 (two: 0.25%).
    proxy.failNext(3, { status: 503, code: 'SlowDown' });
    const started = Date.now();
    await retrying.write('s3://contract/retry/m.json', Buffer.from('m'));
    t.equal(proxy.faults, 3, 'three throttled answers were seen');
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

await onAzurite(t, 'ADLS / Azure Blob on Azurite', async (t, azurite) => {
  await azurite.createContainer('contract');
  const options: AdlsFileIOOptions = {
    accountName: azurite.accountName, endpoint: azurite.endpoint, auth: { type: 'shared-key', accountKey: azurite.accountKey },
    blockThresholdBytes: 6 * MIB, blockSizeBytes: 5 * MIB,
    // Small pages so pagination runs here, not only past 5000 blobs.
    listPageSize: 7, deleteConcurrency: 4, retryBaseDelayMs: 50,
  };
  const io = new AdlsFileIO(options);
  const root = (scheme: string, service: string): string => `${scheme}://contract@${azurite.accountName}.${service}.core.windows.net`;

  await t.test('abfss://', (t) => contract(t, io, `${root('abfss', 'dfs')}/abfss`));
  await t.test('wasbs:// names the same blobs and lists in its own scheme', async (t) => {
    await io.write(`${root('wasbs', 'blob')}/w/x`, Buffer.from('x'));
    t.same((await io.list(`${root('wasbs', 'blob')}/w/`)).map((f) => f.location), [`${root('wasbs', 'blob')}/w/x`]);
    t.equal((await io.read(`${root('abfss', 'dfs')}/w/x`)).toString(), 'x', 'abfss:// reads the blob written through wasbs://');
    t.ok((await io.readVersioned(`${root('abfss', 'dfs')}/w/x`)).version, 'reads carry the ETag');
    t.equal(await io.version(`${root('abfss', 'dfs')}/w/x`), (await io.readVersioned(`${root('abfss', 'dfs')}/w/x`)).version, 'HEAD gives the same ETag');
  });

  await t.test('a location in another account or on another host is refused, not sent', async (t) => {
    const e = await io.read('abfss://contract@someoneelse.dfs.core.windows.net/x').catch((x: unknown) => x);
    t.ok(e instanceof UnsupportedLocationError, 'a typed error');
    t.match((e as Error).message, /host someoneelse\.dfs\.core\.windows\.net is not the storage account/);
    const suffixed = new AdlsFileIO({ ...options, endpointSuffix: 'core.windows.net' });
    await suffixed.write(`${root('abfss', 'dfs')}/hosts/a`, Buffer.from('a'));
    t.equal((await suffixed.read(`${root('wasbs', 'blob')}/hosts/a`)).toString(), 'a', 'both of the account\'s hosts are its own');
    await t.rejects(suffixed.read(`abfss://contract@${azurite.accountName}.dfs.evil.example/hosts/a`), UnsupportedLocationError, 'the account\'s name under another suffix is not');
  });

  await t.test('throttling and 5xx are retried with backoff', async (t) => {
    const proxy = await startS3FaultProxy(azurite.endpoint);
    t.teardown(() => proxy.close());
    const retrying = new AdlsFileIO({ ...options, endpoint: `${proxy.endpoint}/${azurite.accountName}`, maxAttempts: 4 });
    const m = `${root('abfss', 'dfs')}/retry/m.json`;
    proxy.failNext(2, { status: 503, code: 'ServerBusy' });
    const started = Date.now();
    await retrying.write(m, Buffer.from('m'));
    t.equal(proxy.faults, 2, 'two throttled answers were seen');
    t.ok(Date.now() - started >= 50, 'the client backed off between attempts');
    proxy.failNext(3, { status: 500, code: 'InternalError' });
    t.equal((await retrying.read(m)).toString(), 'm', 'a read survives three 500s');
    proxy.failNext(2, { status: 503, code: 'ServerBusy', method: 'PUT' });
    await t.rejects(retrying.write(m, Buffer.from('again')), FileAlreadyExistsError, 'a retried conditional PUT still reports an existing blob');
    proxy.failNext(10, { status: 503, code: 'ServerBusy' });
    const e = await retrying.read(m).catch((x: unknown) => x);
    t.ok(e instanceof StorageError && e.failure === 'unavailable', 'past maxAttempts: StorageError unavailable');
    t.match((e as Error).message, /read failed for abfss:\/\/contract@/);
  });

  await t.test('a failed block upload leaves nothing behind', async (t) => {
    const proxy = await startS3FaultProxy(azurite.endpoint);
    t.teardown(() => proxy.close());
    const faulty = new AdlsFileIO({ ...options, endpoint: `${proxy.endpoint}/${azurite.accountName}`, maxAttempts: 1 });
    const big = `${root('abfss', 'dfs')}/aborted/big`;
    proxy.failNext(1, { status: 400, code: 'InvalidBlockId', method: 'PUT' });
    const e = await faulty.write(big, randomBytes(LARGE_BYTES)).catch((x: unknown) => x);
    t.ok(e instanceof StorageError && e.failure === 'rejected', 'a typed error');
    t.equal(await io.exists(big), false, 'no blob (uncommitted blocks are invisible)');
    t.same(await io.list(`${root('abfss', 'dfs')}/aborted/`), []);
  });

  await t.test('store failures are typed and name the cause, never the key', async (t) => {
    const noContainer = await io.write(`abfss://no-such-container@${azurite.accountName}.dfs.core.windows.net/x`, Buffer.from('x')).catch((x: unknown) => x);
    t.ok(noContainer instanceof StorageError && noContainer.failure === 'no-such-bucket', 'missing container');
    t.match((noContainer as Error).message, /container \(filesystem\) does not exist/);

    const wrongKey = randomBytes(64).toString('base64');
    const forged = new AdlsFileIO({ ...options, auth: { type: 'shared-key', accountKey: wrongKey } });
    const denied = await forged.list(`${root('abfss', 'dfs')}/`).catch((x: unknown) => x);
    t.ok(denied instanceof StorageError && denied.failure === 'access-denied', 'wrong key');
    // Azure answers a bad Shared Key signature AuthenticationFailed, Azurite AuthorizationFailure.
    t.match((denied as Error).message, /access denied|signature does not match/);
    t.notOk((denied as Error).message.includes(wrongKey) || (denied as Error).message.includes(azurite.accountKey), 'no key in the message');

    const closed = await startS3FaultProxy(azurite.endpoint);
    const deadEndpoint = closed.endpoint;
    await closed.close();
    const unreachable = new AdlsFileIO({ ...options, endpoint: `${deadEndpoint}/${azurite.accountName}`, maxAttempts: 2 });
    const down = await unreachable.exists(`${root('abfss', 'dfs')}/x`).catch((x: unknown) => x);
    t.ok(down instanceof StorageError && down.failure === 'unavailable', 'unreachable endpoint');
  });
});

// No GCS emulator runs here: the same contract against a local server that checks every request
// (tests/helpers/gcs-checking-server.ts), then what the wire must look like.
t.test('GCS against the checking server', async (t) => {
  const gcs = await startGcsCheckingServer();
  t.teardown(() => gcs.close());
  gcs.createBucket('contract');
  const options: GcsFileIOOptions = {
    credentials: { type: 'service-account', key: gcs.serviceAccountKey }, apiEndpoint: gcs.endpoint,
    resumableThresholdBytes: 6 * MIB, chunkSizeBytes: 5 * MIB, listPageSize: 7, deleteConcurrency: 4, maxRetryDelaySeconds: 1,
  };
  const io = new GcsFileIO(options);

  await t.test('gs://', (t) => contract(t, io, 'gs://contract/gcs'));

  await t.test('versioned reads: generations, ranges with the object size', async (t) => {
    const f = 'gs://contract/versions/v.bin';
    await io.write(f, Buffer.from('0123456789'));
    const whole = await io.readVersioned(f);
    t.equal(whole.bytes.toString(), '0123456789');
    t.match(whole.version, /^\d+$/, 'the version is the generation');
    t.equal(await io.version(f), whole.version);
    const part = await io.readRangeVersioned(f, 2, 3);
    t.same({ bytes: part.bytes.toString(), version: part.version, objectSize: part.objectSize }, { bytes: '234', version: whole.version, objectSize: 10 }, 'a range names its generation and the whole size');
    await io.write(f, Buffer.from('abcdefghij'), { overwrite: true });
    t.not((await io.readRangeVersioned(f, 2, 3)).version, whole.version, 'a rewrite in place is another generation, same size');
    t.equal((await io.readRangeVersioned(f, 20, 3)).bytes.length, 0, 'past the end: nothing');
    await t.rejects(io.readRangeVersioned('gs://contract/versions/missing', 0, 3), FileNotFoundError);
  });

  await t.test('what the server received', async (t) => {
    const storage = gcs.requests.filter((r) => r.path !== '/token');
    t.ok(storage.length > 100, 'the contract went over the wire');
    t.same(storage.filter((r) => r.status === 401 || r.status === 400 || r.status >= 500), [], 'no request was malformed or unauthenticated');
    t.ok(storage.every((r) => r.token === 'service-account' || (r.token === 'none' && r.method === 'PUT' && r.query.upload_id !== undefined)), 'a token from the JWT-bearer grant on every request but resumable chunks');
    t.ok(gcs.tokenGrants() >= 1 && gcs.tokenGrants() <= 2, `the token is fetched once and reused (${gcs.tokenGrants()})`);
    const creates = storage.filter((r) => r.method === 'POST' && r.path.startsWith('/upload/'));
    t.ok(creates.some((r) => r.query.ifGenerationMatch === '0' && r.query.uploadType === 'multipart'), 'create-if-absent is ifGenerationMatch=0');
    t.ok(creates.some((r) => r.query.uploadType === 'resumable' && r.query.ifGenerationMatch === '0'), 'large objects go up resumable, still conditional');
    t.ok(creates.some((r) => r.query.ifGenerationMatch === undefined), 'an overwrite carries no precondition');
    t.ok(storage.some((r) => r.status === 412), 'the store refused the losing creates with 412');
    t.ok(storage.some((r) => r.method === 'GET' && r.query.pageToken !== undefined), 'listing paged');
    t.ok(storage.some((r) => r.method === 'GET' && r.query.alt === 'media' && r.query.generation !== undefined), 'versioned reads pin the generation');
  });

  await t.test('429 and 503 are retried with backoff; past the retries a typed error', async (t) => {
    const retrying = new GcsFileIO({ ...options, maxRetries: 3 });
    gcs.failNext(1, { status: 429 });
    gcs.failNext(1, { status: 503 });
    const faults = gcs.faults();
    const started = Date.now();
    await retrying.write('gs://contract/retry/m.json', Buffer.from('m'));
    t.equal(gcs.faults() - faults, 2, 'two refused attempts were seen');
    t.ok(Date.now() - started >= 500, 'the client backed off between attempts');
    t.equal((await retrying.read('gs://contract/retry/m.json')).toString(), 'm');
    gcs.failNext(2, { status: 503, method: 'POST' });
    await t.rejects(retrying.write('gs://contract/retry/m.json', Buffer.from('again')), FileAlreadyExistsError, 'a retried conditional create still reports an existing object');
    gcs.failNext(2, { status: 500, method: 'GET' });
    t.same((await retrying.list('gs://contract/retry/')).map((f) => f.location), ['gs://contract/retry/m.json'], 'a listing survives two 500s');
    const once = new GcsFileIO({ ...options, maxRetries: 1 });
    gcs.failNext(2, { status: 503 });
    const e = await once.read('gs://contract/retry/m.json').catch((x: unknown) => x);
    t.ok(e instanceof StorageError && e.failure === 'unavailable', 'past the retries: StorageError unavailable');
    t.match((e as Error).message, /read failed for gs:\/\/contract\/retry\/m\.json/);
    t.equal(gcs.faults() - faults, 8, 'every injected fault was met by an attempt');
  });

  await t.test('store failures are typed and name the cause, never the key', async (t) => {
    const noBucket = await io.write('gs://no-such-bucket-here/x', Buffer.from('x')).catch((x: unknown) => x);
    t.ok(noBucket instanceof StorageError && noBucket.failure === 'no-such-bucket', 'missing bucket');
    t.match((noBucket as Error).message, /bucket does not exist/);

    const other = await import('node:crypto').then((c) => c.generateKeyPairSync('rsa', { modulusLength: 2048 }).privateKey.export({ type: 'pkcs8', format: 'pem' }).toString());
    const wrongKey = new GcsFileIO({ ...options, maxRetries: 0, credentials: { type: 'service-account', key: { ...gcs.serviceAccountKey, private_key: other } } });
    const denied = await wrongKey.list('gs://contract/').catch((x: unknown) => x);
    t.ok(denied instanceof StorageError && denied.failure === 'access-denied', 'a key the token endpoint does not know');
    t.match((denied as Error).message, /refused the service account/);
    t.notMatch((denied as Error).message, /PRIVATE KEY/, 'the key is not in the message');

    const stale = new GcsFileIO({ ...options, maxRetries: 0, credentials: { type: 'access-token', token: 'ya29.not-issued' } });
    const refused = await stale.read('gs://contract/gcs/dir/a.json').catch((x: unknown) => x);
    t.ok(refused instanceof StorageError && refused.failure === 'access-denied', 'a token the store did not issue');

    const closed = await startGcsCheckingServer();
    const dead = closed.endpoint;
    await closed.close();
    const unreachable = new GcsFileIO({ ...options, apiEndpoint: dead, maxRetries: 1, credentials: { type: 'access-token', token: gcs.issueToken() } });
    const down = await unreachable.exists('gs://contract/x').catch((x: unknown) => x);
    t.ok(down instanceof StorageError && down.failure === 'unavailable', 'unreachable endpoint');
  });
});

t.test('parseAdlsLocation', async (t) => {
  t.same(parseAdlsLocation('abfss://fs@acct.dfs.core.windows.net/wh/t/x.json'), { scheme: 'abfss', container: 'fs', account: 'acct', host: 'acct.dfs.core.windows.net', path: 'wh/t/x.json' });
  t.same(parseAdlsLocation('WASBS://c@Acct.blob.core.windows.net'), { scheme: 'wasbs', container: 'c', account: 'acct', host: 'acct.blob.core.windows.net', path: '' });
  for (const bad of ['abfss://acct.dfs.core.windows.net/x', 'abfss://@acct.dfs.core.windows.net/x', 'abfss://fs@/x', 's3://b/k', 'abfss:fs@a/x']) t.throws(() => parseAdlsLocation(bad), UnsupportedLocationError, bad);
});

t.test('parseGcsLocation', async (t) => {
  t.same(parseGcsLocation('gs://b/k/x.json'), { bucket: 'b', name: 'k/x.json' });
  t.same(parseGcsLocation('gs://b'), { bucket: 'b', name: '' });
  for (const bad of ['gs:///k', 's3://b/k', '/local/path', 'gs:b/k']) t.throws(() => parseGcsLocation(bad), UnsupportedLocationError, bad);
});

t.test('parseS3Location', async (t) => {
  t.same(parseS3Location('s3://b/k/x.json'), { scheme: 's3', bucket: 'b', key: 'k/x.json' });
  t.same(parseS3Location('s3a://b'), { scheme: 's3a', bucket: 'b', key: '' });
  t.same(parseS3Location('S3N://b/'), { scheme: 's3n', bucket: 'b', key: '' });
  for (const bad of ['s3:///k', 'gs://b/k', '/local/path', 's3:b/k']) t.throws(() => parseS3Location(bad), UnsupportedLocationError, bad);
});
