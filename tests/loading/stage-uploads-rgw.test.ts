/**
 * The stage endpoints on a catalog whose warehouse is a bucket on a real Ceph RGW: the URLs are
 * RGW's own SigV4 presigned URLs, so the store itself accepts a PUT of the declared size and
 * refuses one after expiry, for another key (URL edited), of another size, or by another method.
 * A 200 MiB file goes up as a multipart upload (streamed from a temp file, four parts in flight),
 * completion checks count, order, sizes and ETags against ListParts, and abort leaves no parts
 * (ListParts / ListMultipartUploads). Path escapes and stage privileges are refused on every
 * endpoint and statement here too.
 */
import t from 'tap';
import { createHash, randomBytes } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { open } from 'node:fs/promises';
import { request } from 'node:http';
import { join } from 'node:path';
import { HeadObjectCommand, ListMultipartUploadsCommand, ListObjectsV2Command, ListPartsCommand } from '@aws-sdk/client-s3';
import { onRgw } from '../helpers/rgw.js';
import { openStageUploadCatalog } from './stage-upload-catalog.js';

const MIB = 1024 * 1024;

/** PUTs `length` bytes of `file` from `start`, streamed, with an explicit Content-Length. */
function putFileRange(url: string, file: string, start: number, length: number): Promise<{ status: number; etag: string; body: string }> {
  return new Promise((resolve, reject) => {
    const req = request(new URL(url), { method: 'PUT', headers: { 'content-length': String(length) } }, (res) => {
      let body = '';
      res.on('data', (c: Buffer) => (body += c.toString()));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, etag: String(res.headers.etag ?? ''), body }));
    });
    req.on('error', reject);
    createReadStream(file, { start, end: start + length - 1 }).pipe(req);
  });
}

await onRgw(t, 'stage uploads on RGW', async (t, rgw) => {
  await rgw.createBucket('upwh');
  const s3 = rgw.client();
  t.teardown(() => s3.destroy());
  const { http, token, dir, stageKey, sql, post } = await openStageUploadCatalog(t, {
    warehouseLocation: 's3://upwh/wh',
    storage: {
      profile: { type: 's3', bucket: 'upwh', keyPrefix: 'wh', region: rgw.region, endpoint: rgw.endpoint, pathStyleAccess: true, credentialSource: 'access-key' },
      secret: { type: 's3-keys', accessKeyId: rgw.accessKeyId, secretAccessKey: rgw.secretAccessKey },
    },
  }, { max_upload_bytes: 64 * MIB, max_multipart_bytes: 256 * MIB });
  const failure = async (tk: string, text: string) => {
    const r = await http.query(tk, { sql: text, catalog: 'lake' });
    return { status: r.status, json: r.json as { error: string; sql_state: string; message: string } };
  };
  const put = (url: string, body: string | Buffer, method = 'PUT') => fetch(url, { method, body });
  const exists = async (key: string) => s3.send(new HeadObjectCommand({ Bucket: 'upwh', Key: key })).then(() => true, () => false);

  await t.test('a presigned PUT is accepted by RGW; COPY INTO loads it; a presigned GET downloads it', async (t) => {
    const body = '1,apple\n2,pear\n';
    const p = await post('/v1/stages/presign', { stage: 'up', path: 'in/a.csv', size: body.length });
    t.equal(p.status, 200, p.text);
    const a = p.json as { url: string; method: string; max_bytes: number; expires_at: string };
    t.equal(a.max_bytes, body.length);
    const url = new URL(a.url);
    t.equal(`${url.protocol}//${url.host}`, rgw.endpoint, "the store's own URL: the bytes never pass through Floe");
    t.equal(url.pathname, `/upwh/${stageKey}in/a.csv`);
    t.equal(url.searchParams.get('X-Amz-Algorithm'), 'AWS4-HMAC-SHA256');
    t.equal(url.searchParams.get('X-Amz-SignedHeaders'), 'content-length;host', 'the length is signed');
    t.equal(url.searchParams.get('X-Amz-Expires'), '900');
    t.notOk(a.url.includes(rgw.secretAccessKey), 'no secret in the URL');
    const r = await put(a.url, body);
    t.equal(r.status, 200, await r.text());
    t.equal(r.headers.get('etag'), `"${createHash('md5').update(body).digest('hex')}"`);
    t.same((await sql('LIST @up')).map((x) => [x[0], x[1]]), [['up/in/a.csv', body.length]]);
    t.same((await sql('COPY INTO shop.items FROM @up')).map((x) => [x[0], x[1], x[3]]), [['@up/in/a.csv', 'LOADED', 2]]);
    const g = await post('/v1/stages/presign', { stage: 'up', path: 'in/a.csv', method: 'GET' });
    t.equal(g.status, 200, g.text);
    t.equal(await (await fetch((g.json as { url: string }).url)).text(), body);
    t.equal((await fetch(a.url)).status, 403, 'a PUT URL does not download');
    t.equal((await put((g.json as { url: string }).url, 'x')).status, 403, 'a GET URL does not upload');
  });

  await t.test('refused by the store: after expiry, another key, another size; over the cap by Floe', async (t) => {
    const p = (await post('/v1/stages/presign', { stage: 'up', path: 'late.csv', size: 4, expires_in_seconds: 2 })).json as { url: string };
    await new Promise((r) => setTimeout(r, 3500));
    const late = await put(p.url, '1,x\n');
    t.equal(late.status, 403, 'expired');
    t.match(await late.text(), /AccessDenied|expired/i);
    t.notOk(await exists(`${stageKey}late.csv`));

    const q = (await post('/v1/stages/presign', { stage: 'up', path: 'b.csv', size: 4 })).json as { url: string };
    const edited = q.url.replace('/b.csv?', '/c.csv?');
    t.not(edited, q.url);
    const other = await put(edited, '1,x\n');
    t.equal(other.status, 403, 'another key');
    t.match(await other.text(), /SignatureDoesNotMatch|AccessDenied/);
    t.equal((await put(q.url.replace('/upwh/', '/upwh2/'), '1,x\n')).status, 403, 'another bucket');
    t.equal((await put(q.url.replace(/X-Amz-Expires=\d+/, 'X-Amz-Expires=604800'), '1,x\n')).status, 403, 'a longer life');
    const bigger = await put(q.url, '1,xy\n');
    t.equal(bigger.status, 403, 'a body above the declared size');
    t.match(await bigger.text(), /SignatureDoesNotMatch|AccessDenied/);
    t.equal((await put(q.url, '1,\n')).status, 403, 'a body below it');
    t.notOk(await exists(`${stageKey}b.csv`), 'nothing stored');
    t.notOk(await exists(`${stageKey}c.csv`));
    t.equal((await put(q.url, '1,x\n')).status, 200, 'the URL as signed, with its size, still works');

    const over = await post('/v1/stages/presign', { stage: 'up', path: 'y.csv', size: 64 * MIB + 1 });
    t.equal(over.status, 400, 'a declared size over loading.max_upload_bytes');
    t.match(over.json, { error: { message: /over the limit/ } });
    const unsized = await post('/v1/stages/presign', { stage: 'up', path: 'y.csv' });
    t.equal(unsized.status, 400, 'no size: the store could not cap the upload');
    t.match(unsized.json, { error: { message: /size/ } });
    t.equal((await post('/v1/stages/presign', { stage: 'up', path: 'y.csv', size: 1, expires_in_seconds: 8 * 24 * 3600 })).status, 400);
  });

  await t.test('multipart: a 200 MiB file in 25 parts, parts checked, completed; abort frees the parts', async (t) => {
    const file = join(dir, 'big.bin');
    const size = 200 * MIB;
    const handle = await open(file, 'w');
    const block = randomBytes(MIB);
    for (let i = 0; i < 200; i++) {
      block.writeUInt32BE(i, 0); // every MiB differs, so a part in the wrong place changes the result
      await handle.write(block);
    }
    await handle.close();
    const whole = createHash('md5');
    for await (const c of createReadStream(file)) whole.update(c as Buffer);
    const md5 = whole.digest('hex');

    t.equal((await post('/v1/stages/presign/multipart/init', { stage: 'up', path: 'big/data.bin', parts: 3 })).status, 400, 'no size on object storage');
    t.equal((await post('/v1/stages/presign/multipart/init', { stage: 'up', path: 'big/data.bin', size, part_size: MIB })).status, 400, 'parts below S3’s 5 MiB minimum');
    t.equal((await post('/v1/stages/presign/multipart/init', { stage: 'up', path: 'big/data.bin', size: 300 * MIB, part_size: 8 * MIB })).status, 400, 'over loading.max_multipart_bytes');
    const init = await post('/v1/stages/presign/multipart/init', { stage: 'up', path: 'big/data.bin', size, part_size: 8 * MIB });
    t.equal(init.status, 200, init.text);
    const m = init.json as { upload_id: string; size: number; part_size: number; part_urls: { part_number: number; url: string; size: number }[] };
    t.match(m.upload_id, /^[0-9a-f]{32}$/, "Floe's id, not the store's");
    t.equal(m.part_urls.length, 25);
    t.ok(m.part_urls.every((p) => p.size === 8 * MIB && new URL(p.url).searchParams.get('X-Amz-SignedHeaders') === 'content-length;host'));
    t.equal((await putFileRange(m.part_urls[0]!.url, file, 0, 8 * MIB - 1)).status, 403, 'a part of another size is refused by the store');

    const started = Date.now();
    const etags: string[] = new Array<string>(25);
    let next = 0;
    await Promise.all(Array.from({ length: 4 }, async () => {
      for (let i = next++; i < 25; i = next++) {
        const r = await putFileRange(m.part_urls[i]!.url, file, i * 8 * MIB, 8 * MIB);
        if (r.status !== 200) throw new Error(`part ${i + 1}: ${r.status} ${r.body}`);
        etags[i] = r.etag;
      }
    }));
    t.comment(`200 MiB in 25 parts to RGW in ${Date.now() - started} ms`);
    const listed = await s3.send(new ListPartsCommand({ Bucket: 'upwh', Key: `${stageKey}big/data.bin`, UploadId: (await storeUploads(`${stageKey}big/`))[0] }));
    t.equal(listed.Parts?.length, 25, 'the store holds 25 parts');

    const complete = (parts: unknown) => post('/v1/stages/presign/multipart/complete', { stage: 'up', upload_id: m.upload_id, parts });
    const all = etags.map((etag, i) => ({ part_number: i + 1, etag }));
    t.match((await complete([all[1], all[0], ...all.slice(2)])).json, { error: { message: /position 1/ } }, 'out of order');
    t.match((await complete(all.slice(0, 24))).json, { error: { message: /25 parts; 24 listed/ } }, 'a part left out');
    t.match((await complete([...all, { part_number: 26, etag: '"x"' }])).json, { error: { message: /part 26 was not uploaded/ } }, 'a part too many');
    t.match((await complete(all.map((p, i) => (i === 7 ? { ...p, etag: all[8]!.etag } : p)))).json, { error: { message: /ETag of part 8/ } }, 'a wrong ETag');
    t.equal((await complete([{ part_number: 1, etag: 5 }])).status, 400, 'an ETag that is not a string');
    const done = await complete(all);
    t.equal(done.status, 200, done.text);
    t.match(done.json, { path: 'big/data.bin', size, etag: /^[0-9a-f]{32}-25$/ });
    const head = await s3.send(new HeadObjectCommand({ Bucket: 'upwh', Key: `${stageKey}big/data.bin` }));
    t.equal(head.ContentLength, size, 'the object is whole');
    const g = (await post('/v1/stages/presign', { stage: 'up', path: 'big/data.bin', method: 'GET' })).json as { url: string };
    const back = createHash('md5');
    const got = await fetch(g.url);
    for await (const c of got.body as unknown as AsyncIterable<Uint8Array>) back.update(c);
    t.equal(back.digest('hex'), md5, 'and its bytes are the file’s, in order');
    t.same(await storeUploads(`${stageKey}big/`), [], 'no upload left open');
    t.equal((await complete(all)).status, 404, 'a completed upload is gone');
    await sql('REMOVE @up/big/');

    // Abort: two of three parts up, then abort; the store holds no parts and no upload.
    const second = (await post('/v1/stages/presign/multipart/init', { stage: 'up', path: 'big/other.bin', size: 12 * MIB, part_size: 5 * MIB })).json as { upload_id: string; part_urls: { url: string; size: number }[] };
    t.same(second.part_urls.map((p) => p.size), [5 * MIB, 5 * MIB, 2 * MIB]);
    for (let i = 0; i < 2; i++) t.equal((await putFileRange(second.part_urls[i]!.url, file, i * 5 * MIB, 5 * MIB)).status, 200);
    const [storeId] = await storeUploads(`${stageKey}big/`);
    t.ok(storeId, 'the upload is open in the store');
    t.equal((await s3.send(new ListPartsCommand({ Bucket: 'upwh', Key: `${stageKey}big/other.bin`, UploadId: storeId }))).Parts?.length, 2);
    const aborted = await post('/v1/stages/presign/multipart/abort', { stage: 'up', upload_id: second.upload_id });
    t.equal(aborted.status, 200, aborted.text);
    t.same(await storeUploads(`${stageKey}big/`), [], 'ListMultipartUploads: none');
    const gone = await s3.send(new ListPartsCommand({ Bucket: 'upwh', Key: `${stageKey}big/other.bin`, UploadId: storeId })).then(() => 'listed', (e: { name?: string }) => e.name);
    t.match(gone, /^(NoSuchUpload|NoSuchKey)$/, 'ListParts: the parts are gone (RGW says NoSuchKey)');
    t.equal((await putFileRange(second.part_urls[2]!.url, file, 0, 2 * MIB)).status, 404, 'a part URL of an aborted upload lands nowhere');
    t.equal((await post('/v1/stages/presign/multipart/abort', { stage: 'up', upload_id: second.upload_id })).status, 404);
    const manifests = (await s3.send(new ListObjectsV2Command({ Bucket: 'upwh', Prefix: 'wh/stages/_uploads/' }))).Contents ?? [];
    t.same(manifests, [], 'no upload manifests left');
    t.notOk(await exists(`${stageKey}big/other.bin`));
  });

  /** The store's open multipart uploads under a key prefix (their store ids). */
  async function storeUploads(prefix: string): Promise<string[]> {
    const r = await s3.send(new ListMultipartUploadsCommand({ Bucket: 'upwh', Prefix: prefix }));
    return (r.Uploads ?? []).map((u) => u.UploadId ?? '');
  }

  await t.test('path escapes and stage privileges on every endpoint and statement', async (t) => {
    for (const path of ['../x.csv', 'a/../../x.csv', '/etc/passwd', 'a%2F..%2Fb', 'a%2e%2e/b', 'a//b', 's3://upwh/x', 'a\\..\\b']) {
      t.equal((await post('/v1/stages/presign', { stage: 'up', path, size: 1 })).status, 400, `presign PUT ${path}`);
      t.equal((await post('/v1/stages/presign', { stage: 'up', path, method: 'GET' })).status, 400, `presign GET ${path}`);
      t.equal((await post('/v1/stages/presign/multipart/init', { stage: 'up', path, size: 1 })).status, 400, `init ${path}`);
    }
    for (const ref of ['@up/../x', '@up/a/../../b', '@up/a%2Fb', '@~/../other']) {
      t.equal((await failure(token, `LIST ${ref}`)).json.error, 'INVALID_PARAMETER', `LIST ${ref}`);
      t.equal((await failure(token, `REMOVE ${ref}`)).json.error, 'INVALID_PARAMETER', `REMOVE ${ref}`);
      t.equal((await failure(token, `COPY INTO shop.items FROM ${ref}`)).json.error, 'INVALID_PARAMETER', `COPY FROM ${ref}`);
    }
    t.equal((await failure(token, "COPY INTO shop.items FROM @up FILES = ('../x.csv')")).json.error, 'INVALID_PARAMETER');
    t.match((await failure(token, 'COPY INTO shop.items FROM \'s3://upwh/wh/\'')).json.sql_state, /^(42501|0A000)$/, 'COPY from a bucket URL, not a stage');
    t.equal((await post('/v1/stages/presign', { stage: 'up/../x', path: 'a', size: 1 })).status, 400);
    t.equal((await post('/v1/stages/presign', { stage: 'nope', path: 'a', size: 1 })).status, 404);
    for (const id of ['../../x', '2~abc', 'A'.repeat(32)]) {
      t.equal((await post('/v1/stages/presign/multipart/complete', { stage: 'up', upload_id: id, parts: [{ part_number: 1, etag: 'x' }] })).status, 400, `complete ${id}`);
      t.equal((await post('/v1/stages/presign/multipart/abort', { stage: 'up', upload_id: id })).status, 400, `abort ${id}: the store's own ids are not accepted`);
    }

    // A user without USAGE on @up, with her own stage.
    await sql("CREATE USER carol EMAIL = 'carol@example.com' PASSWORD = 'Correct-Horse-9-Battery'");
    const signIn = await http.request('POST', '/api/auth/sign-in', { body: { tenant: 'default', username: 'carol', password: 'Correct-Horse-9-Battery' } });
    t.equal(signIn.status, 200, signIn.text);
    const carol = (signIn.json as { access_token: string }).access_token;
    t.equal((await post('/v1/stages/presign', { stage: 'up', path: 'a.csv', size: 1 }, carol)).status, 403, 'presign PUT');
    t.equal((await post('/v1/stages/presign', { stage: 'up', path: 'in/a.csv', method: 'GET' }, carol)).status, 403, 'presign GET');
    t.equal((await post('/v1/stages/presign/multipart/init', { stage: 'up', path: 'a.csv', size: 1 }, carol)).status, 403, 'init');
    const init = (await post('/v1/stages/presign/multipart/init', { stage: 'up', path: 'z.csv', size: 1 })).json as { upload_id: string };
    t.equal((await post('/v1/stages/presign/multipart/complete', { stage: 'up', upload_id: init.upload_id, parts: [{ part_number: 1, etag: 'x' }] }, carol)).status, 403, 'complete');
    t.equal((await post('/v1/stages/presign/multipart/abort', { stage: 'up', upload_id: init.upload_id }, carol)).status, 403, 'abort');
    t.equal((await post('/v1/stages/presign/multipart/abort', { stage: '~', upload_id: init.upload_id }, carol)).status, 404, "another user's upload is not hers");
    for (const statement of ['LIST @up', 'REMOVE @up/in/a.csv', 'COPY INTO shop.items FROM @up']) {
      const f = await failure(carol, statement);
      t.equal(f.json.sql_state, '42501', `${statement}: ${f.json.message}`);
    }
    t.equal((await post('/v1/stages/presign/multipart/abort', { stage: 'up', upload_id: init.upload_id })).status, 200, 'the owner aborts it');
    t.equal((await http.request('POST', '/v1/stages/presign', { body: { catalog: 'lake', stage: 'up', path: 'a', size: 1 } })).status, 401, 'a bearer token is required');
    t.ok(await exists(`${stageKey}in/a.csv`), 'nothing carol tried removed a file');
  });
});
