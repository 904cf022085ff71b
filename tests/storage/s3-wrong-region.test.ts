/**
 * A storage profile whose `region` is not the bucket's (issue 17: creation "refuses with a message
 * that names what failed … wrong region"). RGW accepts any region, so the answers AWS gives come
 * from a local server (tests/helpers/s3-other-region-server.ts) for a bucket in eu-west-1: a 301
 * PermanentRedirect with `x-amz-bucket-region` (and for a HEAD the bare 301), and a 400
 * AuthorizationHeaderMalformed naming the `<Region>` for a request signed for another region (and
 * for a HEAD the bare 400). The S3 FileIO names the bucket's region and the profile's on every
 * operation, and so do `POST /v1/catalogs` (400) and `floe admin create-catalog` (exit 2).
 */
import t, { type Test } from 'tap';
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openStore } from '../../catalog/store/open-store.js';
import { StorageError } from '../../storage-creds/file-io.js';
import { S3FileIO } from '../../storage-creds/s3-file-io.js';
import { startCatalogServer } from '../catalog/helpers.js';
import { CLI, TEST_PRIORITY_ENV } from '../helpers/cli.js';
import { startS3OtherRegionServer, type OtherRegionAnswer } from '../helpers/s3-other-region-server.js';

const BUCKET_REGION = 'eu-west-1';
const KEYS = { accessKeyId: 'AKIAWRONGREGION00001', secretAccessKey: 'wrong-region-test-secret-0123456789abcd' };
const ANSWERS: readonly (readonly [OtherRegionAnswer, string])[] = [['redirect', 'PermanentRedirect'], ['wrong-signing-region', 'AuthorizationHeaderMalformed']];

/** The StorageError `op` fails with (or the test fails). */
async function storageErrorOf(t: Test, op: () => Promise<unknown>): Promise<StorageError | undefined> {
  try {
    await op();
    t.fail('expected a StorageError');
  } catch (e) {
    if (e instanceof StorageError) return e;
    t.fail(`expected a StorageError, got ${String(e)}`);
  }
  return undefined;
}

t.test('the S3 FileIO names the bucket\'s region', async (t) => {
  for (const [answer, code] of ANSWERS) {
    const aws = await startS3OtherRegionServer(BUCKET_REGION, answer);
    t.teardown(() => aws.close());
    const io = new S3FileIO({ region: 'us-east-1', endpoint: aws.endpoint, pathStyleAccess: true, credentials: KEYS, maxAttempts: 1 });
    t.teardown(() => io.destroy());
    const put = await storageErrorOf(t, () => io.write('s3://lake/wh/probe', Buffer.from('x')));
    t.equal(put?.failure, 'wrong-region', `${answer}: a PUT is wrong-region`);
    t.match(put?.detail, new RegExp(`^the bucket is in region eu-west-1, not us-east-1 \\(${code}\\); set region: eu-west-1$`), `${answer}: the PUT names both regions`);
    const head = await storageErrorOf(t, () => io.version('s3://lake/wh/probe'));
    t.equal(head?.failure, 'wrong-region', `${answer}: a HEAD (no body) is wrong-region`);
    t.match(head?.detail, /^the bucket is in region eu-west-1, not us-east-1 \(HTTP (301|400)\); set region: eu-west-1$/, `${answer}: the HEAD names both regions from the header`);
    t.same(aws.requests.map((r) => [r.method, r.signedRegion]), [['PUT', 'us-east-1'], ['HEAD', 'us-east-1']], `${answer}: each signed for the profile's region, asked once`);
  }

  // The right region through another region's endpoint: the region is not what to change.
  const aws = await startS3OtherRegionServer(BUCKET_REGION, 'redirect');
  t.teardown(() => aws.close());
  const io = new S3FileIO({ region: BUCKET_REGION, endpoint: aws.endpoint, pathStyleAccess: true, credentials: KEYS, maxAttempts: 1 });
  t.teardown(() => io.destroy());
  const put = await storageErrorOf(t, () => io.write('s3://lake/wh/probe', Buffer.from('x')));
  t.equal(put?.failure, 'wrong-region');
  t.match(put?.detail, /^the bucket is in region eu-west-1 and is not served through this endpoint \(PermanentRedirect\); check endpoint and path-style access$/, 'a redirect with the right region points at the endpoint');
});

t.test('POST /v1/catalogs refuses a profile with another region, naming the bucket\'s', async (t) => {
  const store = await openStore({ kind: 'pglite-memory' });
  t.teardown(() => store.close());
  const { client } = await startCatalogServer(t, store);
  for (const [answer, code] of ANSWERS) {
    const aws = await startS3OtherRegionServer(BUCKET_REGION, answer);
    t.teardown(() => aws.close());
    const r = await client.post('/v1/catalogs', {
      name: 'lake', 'storage-profile': {
        type: 's3', bucket: 'lake', 'key-prefix': 'wh', region: 'us-east-1', endpoint: aws.endpoint, 'path-style-access': true,
        credentials: { type: 'access-key', 'access-key-id': KEYS.accessKeyId, 'secret-access-key': KEYS.secretAccessKey },
      },
    });
    t.equal(r.status, 400, `${answer}: refused`);
    t.match(r.body.error.message, new RegExp(`^Storage profile check failed: could not write a probe object: the bucket is in region eu-west-1, not us-east-1 \\(${code}\\); set region: eu-west-1 \\(s3://lake/wh/\\.floe-probe-[0-9a-f-]{36}\\)$`), `${answer}: the message names the step and both regions`);
    t.notOk(r.text.includes(KEYS.secretAccessKey), `${answer}: the secret is not echoed`);
  }
  t.equal((await client.get('/v1/catalogs/lake')).status, 404, 'no catalog was created');
});

t.test('floe admin create-catalog refuses it the same way', async (t) => {
  const dataDir = mkdtempSync(join(tmpdir(), 'floe-wrong-region-'));
  t.teardown(() => rmSync(dataDir, { recursive: true, force: true }));
  const aws = await startS3OtherRegionServer(BUCKET_REGION, 'redirect');
  t.teardown(() => aws.close());
  const profile = join(dataDir, 'profile.json');
  writeFileSync(profile, JSON.stringify({
    type: 's3', bucket: 'lake', 'key-prefix': 'wh', region: 'us-east-1', endpoint: aws.endpoint, 'path-style-access': true,
    credentials: { type: 'access-key', 'access-key-id': KEYS.accessKeyId, 'secret-access-key': KEYS.secretAccessKey },
  }));
  // Asynchronously: the server answering it runs in this process.
  const child = spawn(process.execPath, [CLI, 'admin', 'create-catalog', 'lake', '--storage-profile', profile, '--data-dir', dataDir], {
    env: { ...process.env, ...TEST_PRIORITY_ENV, AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: 'true' },
  });
  let out = '';
  child.stdout.on('data', (d: Buffer) => (out += d.toString()));
  child.stderr.on('data', (d: Buffer) => (out += d.toString()));
  const status = await new Promise<number | null>((resolve) => child.once('close', resolve));
  t.equal(status, 2, 'exit 2');
  t.match(out, /Storage profile check failed: could not write a probe object: the bucket is in region eu-west-1, not us-east-1 \(PermanentRedirect\); set region: eu-west-1/, 'the cause names the bucket\'s region');
  t.notOk(out.includes(KEYS.secretAccessKey), 'the secret is not printed');
});
