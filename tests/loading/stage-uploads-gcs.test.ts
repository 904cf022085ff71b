/**
 * The stage endpoints on a catalog whose warehouse is a GCS bucket. No GCS emulator runs here:
 * the store is the checking server (tests/helpers/gcs-checking-server.ts), which rebuilds the
 * canonical request and string to sign of every V4 signed URL it receives, as Google documents
 * them, and verifies the RSA-SHA256 signature with the service account's public key. So what is
 * verified is that Floe's URLs (signed by @google-cloud/storage with the profile's key) are what
 * Google's scheme says, and that a URL edited in any signed part fails; GCS itself was not reached
 * (docs/loading.md says so).
 *
 * A PUT with the URL and its `x-goog-content-length-range` header stores the object and COPY INTO
 * loads it; refused: another object or bucket, expired, tampered, signed by another key, a body
 * outside the range or without the header, a read with the upload URL. A large file goes up as a
 * resumable session Floe starts (`X-Upload-Content-Length`): chunks to the session URI, completion
 * asks the session, abort cancels it. Then issue 19's acceptance through `floe sql`.
 */
import t from 'tap';
import { createHash, generateKeyPairSync, randomBytes } from 'node:crypto';
import { GcsPresigner } from '../../storage-creds/gcs-presign.js';
import { GcsFileIO } from '../../storage-creds/gcs-file-io.js';
import { startGcsCheckingServer } from '../helpers/gcs-checking-server.js';
import { TEST_CLIENT_ID, TEST_CLIENT_SECRET } from '../helpers/server.js';
import { loadAcceptance } from './load-acceptance.js';
import { openStageUploadCatalog } from './stage-upload-catalog.js';

const MIB = 1024 * 1024;
const KIB = 1024;

t.test('stage uploads on the GCS checking server', async (t) => {
  const gcs = await startGcsCheckingServer();
  t.teardown(() => gcs.close());
  gcs.createBucket('upwh');
  gcs.createBucket('other');
  const { http, token, dir, stageUrl, stageKey, sql, post } = await openStageUploadCatalog(t, {
    warehouseLocation: 'gs://upwh/wh',
    storage: {
      profile: { type: 'gcs', bucket: 'upwh', keyPrefix: 'wh', projectId: gcs.projectId, endpoint: gcs.endpoint, credentialSource: 'service-account-key' },
      secret: { type: 'gcs-service-account-key', key: JSON.stringify(gcs.serviceAccountKey) },
    },
  }, { max_upload_bytes: 64 * MIB, max_multipart_bytes: 256 * MIB });
  const put = (url: string, body: string | Buffer, headers: Record<string, string>) => fetch(url, { method: 'PUT', body, headers });
  const io = new GcsFileIO({ credentials: { type: 'service-account', key: gcs.serviceAccountKey }, apiEndpoint: gcs.endpoint });
  const objects = () => gcs.objectNames('upwh');

  await t.test('a V4 signed PUT of exactly the object, with its length range: stored, loaded by COPY INTO, read back by a signed GET', async (t) => {
    const body = '1,apple\n2,pear\n';
    const p = await post('/v1/stages/presign', { stage: 'up', path: 'in/a.csv', size: body.length });
    t.equal(p.status, 200, p.text);
    const a = p.json as { url: string; max_bytes: number; expires_at: string; headers: Record<string, string> };
    t.same(a.headers, { 'x-goog-content-length-range': `0,${body.length}` }, 'the signed header the client must send');
    t.equal(a.max_bytes, body.length);
    const url = new URL(a.url);
    t.equal(`${url.protocol}//${url.host}`, gcs.endpoint, "the store's own URL (the XML API, path style): the bytes never pass through Floe");
    t.equal(url.pathname, `/upwh/${stageKey}in/a.csv`);
    t.equal(url.searchParams.get('X-Goog-Algorithm'), 'GOOG4-RSA-SHA256');
    t.equal(url.searchParams.get('X-Goog-SignedHeaders'), 'host;x-goog-content-length-range', 'the range is signed');
    t.equal(url.searchParams.get('X-Goog-Expires'), '900');
    t.match(url.searchParams.get('X-Goog-Credential'), new RegExp(`^${gcs.serviceAccountKey.client_email.replace(/\./g, '\\.')}/\\d{8}/auto/storage/goog4_request$`));
    t.notOk(a.url.includes('PRIVATE KEY'), 'no key in the URL');
    const r = await put(a.url, body, a.headers);
    t.equal(r.status, 200, await r.text());
    t.equal(r.headers.get('etag'), `"${createHash('md5').update(body).digest('hex')}"`);
    t.equal((await io.read(`${stageUrl}in/a.csv`)).toString(), body);
    t.same((await sql('LIST @up')).map((x) => [x[0], x[1]]), [['up/in/a.csv', body.length]]);
    t.same((await sql('COPY INTO shop.items FROM @up')).map((x) => [x[0], x[1], x[3]]), [['@up/in/a.csv', 'LOADED', 2]]);
    t.same(await sql('SELECT id, name FROM lake.shop.items ORDER BY id'), [[1, 'apple'], [2, 'pear']]);

    const g = await post('/v1/stages/presign', { stage: 'up', path: 'in/a.csv', method: 'GET' });
    t.equal(g.status, 200, g.text);
    const download = (g.json as { url: string }).url;
    t.equal(new URL(download).searchParams.get('X-Goog-SignedHeaders'), 'host');
    t.equal(await (await fetch(download)).text(), body);
    const read = await fetch(a.url, { headers: a.headers });
    t.equal(read.status, 403, 'a read with the upload URL is refused (the method is signed)');
    t.match(await read.text(), /SignatureDoesNotMatch/);
    t.equal((await put(download, 'x', {})).status, 403, 'a download URL does not upload');
  });

  await t.test('refused by the checking server: another object or bucket, tampered, another key, expired, outside the range', async (t) => {
    const q = (await post('/v1/stages/presign', { stage: 'up', path: 'b.csv', size: 4 })).json as { url: string; headers: Record<string, string> };
    const sent = async (url: string, body: string, headers = q.headers) => {
      const r = await put(url, body, headers);
      return { status: r.status, text: await r.text() };
    };
    const edited = q.url.replace('/b.csv?', '/c.csv?');
    t.not(edited, q.url);
    t.match(await sent(edited, '1,x\n'), { status: 403, text: /SignatureDoesNotMatch/ }, 'the same URL for another object');
    t.match(await sent(q.url.replace('/upwh/', '/other/'), '1,x\n'), { status: 403, text: /SignatureDoesNotMatch/ }, 'in another bucket');
    const sig = new URL(q.url).searchParams.get('X-Goog-Signature')!;
    const flipped = new URL(q.url);
    flipped.searchParams.set('X-Goog-Signature', `${sig[0] === 'a' ? 'b' : 'a'}${sig.slice(1)}`);
    t.match(await sent(flipped.href, '1,x\n'), { status: 403, text: /SignatureDoesNotMatch/ }, 'a tampered signature');
    const longer = new URL(q.url);
    longer.searchParams.set('X-Goog-Expires', '604800');
    t.match(await sent(longer.href, '1,x\n'), { status: 403, text: /SignatureDoesNotMatch/ }, 'a longer life');
    t.match(await sent(q.url, '1,x\n', { 'x-goog-content-length-range': '0,1000000' }), { status: 403, text: /SignatureDoesNotMatch/ }, 'a wider range than signed');
    t.match(await sent(q.url, '1,x\n', {}), { status: 403, text: /SignatureDoesNotMatch/ }, 'without the signed range header');
    t.match(await sent(q.url, '1,xy\n'), { status: 400, text: /EntityTooLarge/ }, 'a body above the range');
    t.notOk(objects().includes(`${stageKey}b.csv`), 'nothing stored');
    t.notOk(objects().includes(`${stageKey}c.csv`));
    t.match(await sent(q.url, '1,\n'), { status: 200 }, 'a smaller body is within the range (0 to size)');
    t.match(await sent(q.url, '1,x\n'), { status: 200 }, 'and the URL as signed, until it expires');

    // The same email and scheme, signed by the SDK with a key the server does not know.
    const { privateKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
    const impostor = new GcsPresigner({ credentials: { type: 'service-account', key: { ...gcs.serviceAccountKey, private_key: privateKey.export({ type: 'pkcs8', format: 'pem' }).toString() } }, apiEndpoint: gcs.endpoint });
    const forged = await impostor.presignPut(`${stageUrl}forged.csv`, 4, { now: Date.now(), expiresInSeconds: 600 });
    t.match(await sent(forged.url, '1,x\n', forged.headers), { status: 403, text: /SignatureDoesNotMatch/ }, 'a URL signed with another key: the RSA signature is verified');
    t.notOk(objects().includes(`${stageKey}forged.csv`));

    const p = (await post('/v1/stages/presign', { stage: 'up', path: 'late.csv', size: 4, expires_in_seconds: 2 })).json as { url: string; expires_at: string; headers: Record<string, string> };
    await new Promise((r) => setTimeout(r, Math.max(0, Date.parse(p.expires_at) - Date.now()) + 1500));
    t.match(await sent(p.url, '1,x\n', p.headers), { status: 400, text: /ExpiredToken/ }, 'expired');
    t.notOk(objects().includes(`${stageKey}late.csv`));

    const over = await post('/v1/stages/presign', { stage: 'up', path: 'y.csv', size: 64 * MIB + 1 });
    t.equal(over.status, 400, 'a declared size over loading.max_upload_bytes');
    t.match(over.json, { error: { message: /over the limit/ } });
    const unsized = (await post('/v1/stages/presign', { stage: 'up', path: 'y.csv' })).json as { max_bytes: number; headers: Record<string, string> };
    t.equal(unsized.max_bytes, 64 * MIB, 'without a size, the range is up to the cap');
    t.same(unsized.headers, { 'x-goog-content-length-range': `0,${64 * MIB}` });
    t.equal((await post('/v1/stages/presign', { stage: 'up', path: 'y.csv', size: 1, expires_in_seconds: 8 * 24 * 3600 })).status, 400, 'a life over the maximum');
  });

  await t.test('multipart: a resumable session Floe starts for exactly the declared size; completion asks the session; abort cancels it', async (t) => {
    const size = 12 * MIB + 100;
    const data = randomBytes(size);
    t.equal((await post('/v1/stages/presign/multipart/init', { stage: 'up', path: 'big/data.bin', parts: 3 })).status, 400, 'the size is required');
    const odd = await post('/v1/stages/presign/multipart/init', { stage: 'up', path: 'big/data.bin', size, part_size: 5 * MIB + 1 });
    t.equal(odd.status, 400, 'chunks must be multiples of 256 KiB');
    t.match(odd.json, { error: { message: /multiple of 262144/ } });
    const init = await post('/v1/stages/presign/multipart/init', { stage: 'up', path: 'big/data.bin', size, part_size: 5 * MIB });
    t.equal(init.status, 200, init.text);
    const m = init.json as { upload_id: string; protocol: string; session_url: string; size: number; part_size: number; expires_at: string; part_urls?: unknown };
    t.equal(m.protocol, 'resumable');
    t.equal(m.part_urls, undefined);
    t.match(m.upload_id, /^[0-9a-f]{32}$/, "Floe's id");
    const session = new URL(m.session_url);
    t.equal(`${session.protocol}//${session.host}`, gcs.endpoint, "the store's session URI");
    t.ok(Date.parse(m.expires_at) - Date.now() > 6 * 24 * 3600_000, 'a session lives a week (GCS cannot shorten it)');
    const opened = gcs.requests.filter((r) => r.method === 'POST' && r.query.uploadType === 'resumable' && r.object === null && r.query.name === `${stageKey}big/data.bin`);
    t.equal(opened.length, 1, 'started by Floe');
    t.equal(opened[0]!.token, 'service-account', 'with its own token');
    const chunk = (from: number, to: number, total: number | '*', body = data.subarray(from, to + 1)) =>
      fetch(m.session_url, { method: 'PUT', body, headers: { 'content-range': `bytes ${from}-${to}/${total}` } });
    t.equal((await chunk(0, 5 * MIB - 1, size)).status, 308, 'first chunk');
    const early = await post('/v1/stages/presign/multipart/complete', { stage: 'up', upload_id: m.upload_id });
    t.equal(early.status, 400);
    t.match(early.json, { error: { message: new RegExp(`received ${5 * MIB} of ${size} bytes`) } }, 'not finished: the upload stays open');
    t.equal((await post('/v1/stages/presign/multipart/complete', { stage: 'up', upload_id: m.upload_id, parts: [{ part_number: 1, etag: 'x' }] })).status, 400, 'a resumable upload lists no parts');
    t.equal((await chunk(5 * MIB, 10 * MIB - 1, size)).status, 308);
    const wrongTotal = await chunk(10 * MIB, size - 1, size + 1, data.subarray(10 * MIB));
    t.equal(wrongTotal.status, 400, 'a total other than the declared X-Upload-Content-Length is refused by the store');
    t.notOk(objects().includes(`${stageKey}big/data.bin`));
    t.equal((await chunk(10 * MIB, size - 1, size)).status, 200, 'the last chunk finalizes the object');
    const done = await post('/v1/stages/presign/multipart/complete', { stage: 'up', upload_id: m.upload_id });
    t.equal(done.status, 200, done.text);
    t.match(done.json, { path: 'big/data.bin', size });
    t.equal(createHash('md5').update(await io.read(`${stageUrl}big/data.bin`)).digest('hex'), createHash('md5').update(data).digest('hex'), 'the object is the file');
    t.equal((await post('/v1/stages/presign/multipart/complete', { stage: 'up', upload_id: m.upload_id })).status, 404, 'a completed upload is gone');
    await sql('REMOVE @up/big/');

    const second = (await post('/v1/stages/presign/multipart/init', { stage: 'up', path: 'big/other.bin', size: MIB, part_size: 512 * KIB })).json as { upload_id: string; session_url: string };
    t.equal((await fetch(second.session_url, { method: 'PUT', body: data.subarray(0, 512 * KIB), headers: { 'content-range': `bytes 0-${512 * KIB - 1}/${MIB}` } })).status, 308);
    const aborted = await post('/v1/stages/presign/multipart/abort', { stage: 'up', upload_id: second.upload_id });
    t.equal(aborted.status, 200, aborted.text);
    t.ok(gcs.requests.some((r) => r.method === 'DELETE' && r.query.upload_id !== undefined && r.status === 499), 'the session was cancelled (GCS answers 499)');
    t.equal((await fetch(second.session_url, { method: 'PUT', body: data.subarray(512 * KIB, MIB), headers: { 'content-range': `bytes ${512 * KIB}-${MIB - 1}/${MIB}` } })).status, 404, 'the session URI leads nowhere now');
    t.equal((await post('/v1/stages/presign/multipart/complete', { stage: 'up', upload_id: second.upload_id })).status, 404);
    t.notOk(objects().includes(`${stageKey}big/other.bin`));
    t.same(objects().filter((n) => n.startsWith('wh/stages/_uploads/')), [], 'no upload manifests left');
  });

  await t.test('the acceptance through floe sql on the GCS checking server', async (t) => {
    await loadAcceptance(t, {
      url: http.url, clientId: TEST_CLIENT_ID, clientSecret: TEST_CLIENT_SECRET, catalog: 'lake', dir,
      async storeFiles(url) {
        const prefix = url.slice('gs://upwh/'.length);
        return objects().filter((n) => n.startsWith(prefix)).map((n) => n.slice(prefix.length));
      },
    });
  });
});
