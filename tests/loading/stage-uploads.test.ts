/**
 * The stage endpoints over real HTTP on a file:// warehouse: a presigned PUT then COPY INTO; the
 * URL refused after expiry, for another operation, tampered, and above its size cap (nothing
 * stored); GET downloads; multipart init → parts → complete (parts checked: order, missing, ETag)
 * and abort (parts freed); path escapes and stages the caller may not use refused on every endpoint.
 */
import t from 'tap';
import { createHash } from 'node:crypto';
import { existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openStore } from '../../catalog/store/open-store.js';
import { resolveLocalPath } from '../../storage-creds/local-file-io.js';
import { ManualClock, startTestServer } from '../helpers/server.js';
import { listenOnLoopback } from '../helpers/http.js';

const dataDir = mkdtempSync(join(tmpdir(), 'floe-uploads-'));
t.teardown(() => rmSync(dataDir, { recursive: true, force: true }));
const clock = new ManualClock();
const store = await openStore({ kind: 'pglite-memory' });
const server = await startTestServer(store, { clock, config: (c) => ({ ...c, data_dir: dataDir, loading: { ...c.loading, max_upload_bytes: 1000, max_multipart_bytes: 5000 } }) });
t.teardown(() => server.close());
const http = await listenOnLoopback(server);
const token = await server.token();
const sql = async (text: string) => {
  const r = await http.query(token, { sql: text });
  if (r.status !== 200) throw new Error(`${text}: ${r.text}`);
  return (r.json as { rows: unknown[][] }).rows;
};
const post = (path: string, body: unknown, tk: string = token) => http.request('POST', path, { token: tk, body });
const put = (url: string, body: string | Buffer) => fetch(url, { method: 'PUT', body, headers: { 'content-type': 'text/csv' } });

await sql('CREATE SCHEMA shop');
await sql('CREATE TABLE shop.items (id bigint, name string)');
await sql('CREATE STAGE up');

t.test('presigned PUT, then COPY INTO; GET downloads', async (t) => {
  const p = await post('/v1/stages/presign', { stage: 'up', path: 'in/a.csv' });
  t.equal(p.status, 200, p.text);
  const a = p.json as { url: string; method: string; expires_at: string; max_bytes: number };
  t.equal(a.method, 'PUT');
  t.equal(a.max_bytes, 1000);
  t.match(a.url, /^http:\/\/127\.0\.0\.1:\d+\/v1\/stages\/files\?token=[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+$/);
  const body = '1,apple\n2,pear\n';
  const r = await put(a.url, body);
  t.equal(r.status, 200);
  t.equal(r.headers.get('etag'), `"${createHash('md5').update(body).digest('hex')}"`);
  t.same(await sql('LIST @up'), [['up/in/a.csv', body.length, (await sql('LIST @up'))[0]![2]]]);
  t.same((await sql('COPY INTO shop.items FROM @up')).map((x) => [x[0], x[1], x[3]]), [['@up/in/a.csv', 'LOADED', 2]]);
  const g = await post('/v1/stages/presign', { stage: 'up', path: 'in/a.csv', method: 'GET' });
  const got = await fetch((g.json as { url: string }).url);
  t.equal(await got.text(), body);
  t.equal((await fetch(a.url)).status, 403, 'a PUT URL does not download');
  t.equal((await put((g.json as { url: string }).url, 'x')).status, 403, 'a GET URL does not upload');
});

t.test('expiry, tampering, size cap', async (t) => {
  const p = (await post('/v1/stages/presign', { stage: 'up', path: 'late.csv', expires_in_seconds: 60 })).json as { url: string };
  clock.advance(61_000);
  const late = await put(p.url, '1,x\n');
  t.equal(late.status, 403);
  t.match(await late.json(), { error: { type: 'ForbiddenException', message: /expired/ } });
  t.notOk(existsSync(join(dataDir, 'warehouse')) && readdirSync(join(dataDir, 'warehouse'), { recursive: true }).some((f) => String(f).endsWith('late.csv')));
  const q = (await post('/v1/stages/presign', { stage: 'up', path: 'x.csv' })).json as { url: string };
  const [body, sig] = q.url.split('token=').pop()!.split('.');
  const claims = JSON.parse(Buffer.from(body!, 'base64url').toString()) as Record<string, unknown>;
  const forged = Buffer.from(JSON.stringify({ ...claims, key: 'other.csv', maxBytes: 10 ** 9 })).toString('base64url');
  t.equal((await put(q.url.replace(body!, forged), 'x')).status, 403, 'another key with the old signature');
  t.equal((await put(q.url.replace(sig!, 'A'.repeat(43)), 'x')).status, 403, 'a made-up signature');
  const big = await put(q.url, 'x'.repeat(1001));
  t.equal(big.status, 413, 'over the cap');
  t.match(await big.json(), { error: { message: /size cap of 1000 bytes/ } });
  t.same((await sql('LIST @up')).map((r) => r[0]), ['up/in/a.csv'], 'nothing stored');
  t.equal((await post('/v1/stages/presign', { stage: 'up', path: 'y.csv', size: 1001 })).status, 400, 'a declared size over the cap');
  const small = (await post('/v1/stages/presign', { stage: 'up', path: 'y.csv', size: 5 })).json as { url: string; max_bytes: number };
  t.equal(small.max_bytes, 5);
  t.equal((await put(small.url, '123456')).status, 413, 'over the declared size');
  t.equal((await post('/v1/stages/presign', { stage: 'up', path: 'y.csv', expires_in_seconds: 10 ** 9 })).status, 400);
});

t.test('multipart: parts checked on completion, freed on abort', async (t) => {
  const init = await post('/v1/stages/presign/multipart/init', { stage: 'up', path: 'big/data.csv', parts: 3 });
  t.equal(init.status, 200, init.text);
  const m = init.json as { upload_id: string; part_urls: { part_number: number; url: string }[] };
  t.equal(m.part_urls.length, 3);
  const bodies = ['3,a\n4,b\n', '5,c\n', '6,d\n'];
  const etags: string[] = [];
  for (let i = 0; i < 3; i++) etags.push((await put(m.part_urls[i]!.url, bodies[i]!)).headers.get('etag')!);
  const complete = (parts: unknown) => post('/v1/stages/presign/multipart/complete', { stage: 'up', upload_id: m.upload_id, parts });
  t.equal((await complete([{ part_number: 2, etag: etags[1] }, { part_number: 1, etag: etags[0] }])).status, 400, 'out of order');
  t.equal((await complete([{ part_number: 1, etag: etags[1] }, { part_number: 2, etag: etags[1] }, { part_number: 3, etag: etags[2] }])).status, 400, 'a wrong ETag');
  t.match((await complete([1, 2, 3, 4].map((n) => ({ part_number: n, etag: etags[n - 1] ?? '"x"' })))).json, { error: { message: /part 4 was not uploaded/ } });
  const done = await complete(etags.map((etag, i) => ({ part_number: i + 1, etag })));
  t.equal(done.status, 200, done.text);
  t.match(done.json, { path: 'big/data.csv', size: bodies.join('').length, etag: /-3$/ });
  t.same((await sql("COPY INTO shop.items FROM @up/big/")).map((x) => [x[0], x[3]]), [['@up/big/data.csv', 4]]);
  t.equal((await complete(etags.map((etag, i) => ({ part_number: i + 1, etag })))).status, 404, 'completed uploads are gone');

  const second = (await post('/v1/stages/presign/multipart/init', { stage: 'up', path: 'big/other.csv', parts: 2 })).json as { upload_id: string; part_urls: { url: string }[] };
  await put(second.part_urls[0]!.url, '7,e\n');
  const folder = join(resolveLocalPath((await sql('SHOW STAGES'))[0]![2] as string), '..', '_uploads', second.upload_id);
  t.ok(existsSync(folder), 'parts kept while the upload is open');
  t.equal((await post('/v1/stages/presign/multipart/abort', { stage: 'up', upload_id: second.upload_id })).status, 200);
  t.notOk(existsSync(folder), 'abort frees the parts');
  t.equal((await post('/v1/stages/presign/multipart/abort', { stage: 'up', upload_id: second.upload_id })).status, 404);
  t.equal((await post('/v1/stages/presign/multipart/abort', { stage: 'up', upload_id: '../../x' })).status, 400);
});

t.test('path escapes and stage privileges on every endpoint', async (t) => {
  for (const path of ['../x.csv', 'a/../../x.csv', '/etc/passwd', 'a%2F..%2Fb', 'a//b', 'file:///etc/passwd', 'a\\..\\b']) {
    const r = await post('/v1/stages/presign', { stage: 'up', path });
    t.equal(r.status, 400, `presign ${path}`);
    t.equal((await post('/v1/stages/presign/multipart/init', { stage: 'up', path, parts: 1 })).status, 400, `init ${path}`);
    t.equal((await post('/v1/stages/presign', { stage: 'up', path, method: 'GET' })).status, 400, `presign GET ${path}`);
  }
  for (const id of ['../../x', '2~abc', 'A'.repeat(32)]) {
    t.equal((await post('/v1/stages/presign/multipart/complete', { stage: 'up', upload_id: id, parts: [{ part_number: 1, etag: 'x' }] })).status, 400, `complete ${id}`);
    t.equal((await post('/v1/stages/presign/multipart/abort', { stage: 'up', upload_id: id })).status, 400, `abort ${id}`);
  }
  t.equal((await post('/v1/stages/presign', { stage: 'up/../x', path: 'a' })).status, 400);
  t.equal((await post('/v1/stages/presign', { stage: 'nope', path: 'a' })).status, 404);
  // A user without USAGE on @up.
  await sql("CREATE USER carol EMAIL = 'carol@example.com' PASSWORD = 'Correct-Horse-9-Battery'");
  const signIn = await http.request('POST', '/api/auth/sign-in', { body: { tenant: 'default', username: 'carol', password: 'Correct-Horse-9-Battery' } });
  t.equal(signIn.status, 200, signIn.text);
  const carol = (signIn.json as { access_token: string }).access_token;
  t.equal((await post('/v1/stages/presign', { stage: 'up', path: 'a.csv' }, carol)).status, 403);
  t.equal((await post('/v1/stages/presign/multipart/init', { stage: 'up', path: 'a.csv', parts: 1 }, carol)).status, 403);
  const init = (await post('/v1/stages/presign/multipart/init', { stage: 'up', path: 'z.csv', parts: 1 })).json as { upload_id: string };
  t.equal((await post('/v1/stages/presign/multipart/complete', { stage: 'up', upload_id: init.upload_id, parts: [] }, carol)).status, 403);
  t.equal((await post('/v1/stages/presign/multipart/abort', { stage: 'up', upload_id: init.upload_id }, carol)).status, 403);
  t.equal((await post('/v1/stages/presign/multipart/abort', { stage: '~', upload_id: init.upload_id }, carol)).status, 404, "another user's upload is not hers");
  for (const statement of ['LIST @up', 'REMOVE @up/in/a.csv', 'COPY INTO shop.items FROM @up']) {
    const r = await http.query(carol, { sql: statement });
    t.equal((r.json as { sql_state: string }).sql_state, '42501', `${statement}: ${r.text}`);
  }
  const own = await post('/v1/stages/presign', { stage: '~', path: 'mine.csv' }, carol);
  t.equal(own.status, 200, 'her own stage');
  t.equal((await http.request('POST', '/v1/stages/presign', { body: { stage: 'up', path: 'a' } })).status, 401, 'a bearer token is required');
});
