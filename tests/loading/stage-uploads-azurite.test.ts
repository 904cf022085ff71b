/**
 * The stage endpoints on a catalog whose warehouse is a container on Azurite: the URLs are blob
 * SAS URLs (`sr=b`, `sp=cw` to upload, `sp=r` to download) signed with the account key, and
 * Azurite checks them as Azure does. A PUT with the URL stores the blob and COPY INTO loads it; the
 * store refuses the URL for another blob or container, after expiry, tampered, for a read, a
 * delete or a listing, and an https-only SAS over http. A multipart upload is Put Block to the
 * same SAS with Floe's block ids, checked (count, sizes) and committed by Floe; abort leaves no
 * blob. What Azure cannot enforce (the size) is shown, and COPY refuses the oversize file. Then
 * issue 19's acceptance through `floe sql` on the same Azurite (load-acceptance.ts).
 */
import t from 'tap';
import { createHash, randomBytes } from 'node:crypto';
import { signBlobSas } from '../../storage-creds/adls-presign.js';
import { azuriteCatalogStorage, onAzurite } from '../helpers/azurite.js';
import { TEST_CLIENT_ID, TEST_CLIENT_SECRET } from '../helpers/server.js';
import { loadAcceptance } from './load-acceptance.js';
import { openStageUploadCatalog } from './stage-upload-catalog.js';

const MIB = 1024 * 1024;

await onAzurite(t, 'stage uploads on Azurite', async (t, azurite) => {
  await azurite.createContainer('upwh');
  const container = azurite.client().getContainerClient('upwh');
  const { http, token, dir, stageKey, sql, post } = await openStageUploadCatalog(t, azuriteCatalogStorage(azurite, 'upwh', 'wh'), {
    max_upload_bytes: 64 * MIB, max_multipart_bytes: 256 * MIB, max_file_bytes: 16 * MIB,
  });
  const stagePrefix = `abfss://upwh@${azurite.accountName}.dfs.core.windows.net/`;
  const put = (url: string, body: string | Buffer, headers: Record<string, string> = { 'x-ms-blob-type': 'BlockBlob' }) => fetch(url, { method: 'PUT', body, headers });
  const exists = (name: string) => container.getBlobClient(name).exists();
  const bytesOf = async (name: string) => container.getBlobClient(name).downloadToBuffer();

  await t.test('a blob SAS for exactly the file: Azurite takes the PUT, COPY INTO loads it, a download SAS reads it back', async (t) => {
    const body = '1,apple\n2,pear\n';
    const p = await post('/v1/stages/presign', { stage: 'up', path: 'in/a.csv', size: body.length });
    t.equal(p.status, 200, p.text);
    const a = p.json as { url: string; method: string; max_bytes: number; expires_at: string; headers: Record<string, string> };
    t.same(a.headers, { 'x-ms-blob-type': 'BlockBlob' }, 'the header the client must send');
    t.equal(a.max_bytes, body.length);
    const url = new URL(a.url);
    t.equal(`${url.protocol}//${url.host}/${azurite.accountName}`, azurite.endpoint, "the store's own URL: the bytes never pass through Floe");
    t.equal(url.pathname, `/${azurite.accountName}/upwh/${stageKey}in/a.csv`);
    t.equal(url.searchParams.get('sr'), 'b', 'a blob SAS');
    t.equal(url.searchParams.get('sp'), 'cw', 'create and write only');
    t.equal(url.searchParams.get('spr'), 'https,http', 'http allowed only because the endpoint is plain http (the emulator)');
    const lifetime = Date.parse(url.searchParams.get('se')!) - Date.parse(a.expires_at);
    t.ok(Math.abs(lifetime) < 1000, 'se is the answer’s expires_at');
    t.ok(Date.parse(url.searchParams.get('st')!) <= Date.now(), 'valid from a little before now (clock skew)');
    t.notOk(a.url.includes(azurite.accountKey), 'no key in the URL');
    const r = await put(a.url, body);
    t.equal(r.status, 201, await r.text());
    t.equal((await bytesOf(`${stageKey}in/a.csv`)).toString(), body);
    t.same((await sql('LIST @up')).map((x) => [x[0], x[1]]), [['up/in/a.csv', body.length]]);
    t.same((await sql('COPY INTO shop.items FROM @up')).map((x) => [x[0], x[1], x[3]]), [['@up/in/a.csv', 'LOADED', 2]]);
    t.same(await sql('SELECT id, name FROM lake.shop.items ORDER BY id'), [[1, 'apple'], [2, 'pear']]);

    const g = await post('/v1/stages/presign', { stage: 'up', path: 'in/a.csv', method: 'GET' });
    t.equal(g.status, 200, g.text);
    const download = (g.json as { url: string }).url;
    t.equal(new URL(download).searchParams.get('sp'), 'r');
    t.equal(await (await fetch(download)).text(), body);
    const read = await fetch(a.url);
    t.equal(read.status, 403, 'a read with the upload SAS is refused');
    t.match(await read.text(), /AuthorizationPermissionMismatch/);
    t.equal((await put(download, 'x')).status, 403, 'a download SAS does not upload');
    t.equal((await fetch(a.url, { method: 'DELETE' })).status, 403, 'nor does an upload SAS delete');
    const listing = new URL(a.url);
    listing.pathname = `/${azurite.accountName}/upwh`;
    listing.searchParams.set('restype', 'container');
    listing.searchParams.set('comp', 'list');
    t.equal((await fetch(listing)).status, 403, 'nor list the container');
    t.ok(await exists(`${stageKey}in/a.csv`));
  });

  await t.test('refused by Azurite: another blob or container, tampered, a longer life, expired, https only', async (t) => {
    const q = (await post('/v1/stages/presign', { stage: 'up', path: 'b.csv', size: 4 })).json as { url: string };
    const edited = q.url.replace('/b.csv?', '/c.csv?');
    t.not(edited, q.url);
    const other = await put(edited, '1,x\n');
    t.equal(other.status, 403, 'the same SAS on another blob');
    t.match(await other.text(), /AuthenticationFailed|AuthorizationFailure/);
    t.equal((await put(q.url.replace('/upwh/', '/other/'), '1,x\n')).status, 403, 'in another container');
    const sig = new URL(q.url).searchParams.get('sig')!;
    const flipped = new URL(q.url);
    flipped.searchParams.set('sig', `${sig[0] === 'A' ? 'B' : 'A'}${sig.slice(1)}`);
    t.equal((await put(flipped.href, '1,x\n')).status, 403, 'a tampered signature');
    const wider = new URL(q.url);
    wider.searchParams.set('sp', 'racwd');
    t.equal((await put(wider.href, '1,x\n')).status, 403, 'permissions widened');
    const longer = new URL(q.url);
    longer.searchParams.set('se', new Date(Date.now() + 7 * 24 * 3600_000).toISOString().replace(/\.\d+Z$/, 'Z'));
    t.equal((await put(longer.href, '1,x\n')).status, 403, 'a longer life');
    t.notOk(await exists(`${stageKey}b.csv`), 'nothing stored');
    t.notOk(await exists(`${stageKey}c.csv`));
    t.equal((await put(q.url, '1,x\n')).status, 201, 'the URL as signed still works');

    const p = (await post('/v1/stages/presign', { stage: 'up', path: 'late.csv', size: 4, expires_in_seconds: 2 })).json as { url: string; expires_at: string };
    // Past `se` by a margin (Azure's clock is the machine's here); no timing is asserted.
    await new Promise((r) => setTimeout(r, Math.max(0, Date.parse(p.expires_at) - Date.now()) + 1500));
    const late = await put(p.url, '1,x\n');
    t.equal(late.status, 403, 'expired');
    t.match(await late.text(), /AuthenticationFailed|AuthorizationFailure/);
    t.notOk(await exists(`${stageKey}late.csv`));

    // spr=https, as Floe signs it for a real (https) endpoint: the emulator on http refuses it.
    const https = signBlobSas({ kind: 'shared-key', accountName: azurite.accountName, accountKey: azurite.accountKey }, { container: 'upwh', name: `${stageKey}tls.csv` }, 'upload', { now: Date.now(), expiresInSeconds: 600 }, false);
    t.equal(new URLSearchParams(https).get('spr'), 'https');
    const plain = await put(`${azurite.endpoint}/upwh/${stageKey}tls.csv?${https}`, '1,x\n');
    t.equal(plain.status, 403, 'an https-only SAS over http');
    t.match(await plain.text(), /AuthorizationProtocolMismatch/);
    t.notOk(await exists(`${stageKey}tls.csv`));
  });

  await t.test('the size: Floe refuses a declared size over the cap; Azure stores what it is sent; COPY refuses the oversize file', async (t) => {
    const over = await post('/v1/stages/presign', { stage: 'up', path: 'y.csv', size: 64 * MIB + 1 });
    t.equal(over.status, 400, 'a declared size over loading.max_upload_bytes');
    t.match(over.json, { error: { message: /over the limit/ } });
    t.equal((await post('/v1/stages/presign', { stage: 'up', path: 'y.csv', size: 1, expires_in_seconds: 8 * 24 * 3600 })).status, 400, 'a life over the maximum');
    const unsized = (await post('/v1/stages/presign', { stage: 'up', path: 'big/huge.csv' })).json as { url: string; max_bytes: number };
    t.equal(unsized.max_bytes, 64 * MIB, 'without a size, the cap (Floe’s word: Azure signs no length)');
    // Azure has no signed length: the URL takes a body above both the declared size and COPY's cap.
    const declared = (await post('/v1/stages/presign', { stage: 'up', path: 'big/huge.csv', size: 10 })).json as { url: string };
    const huge = Buffer.alloc(16 * MIB + 1, 0x61);
    t.equal((await put(declared.url, huge)).status, 201, 'Azure stores a body over the declared size (docs/loading.md says so)');
    const copied = await http.query(token, { sql: 'COPY INTO shop.items FROM @up/big/', catalog: 'lake' });
    t.equal(copied.status, 400, copied.text);
    t.match(copied.json, { error: 'LOAD_FILE_TOO_LARGE', message: /big\/huge\.csv/ }, 'COPY refuses the file over loading.max_file_bytes without loading a row');
    t.same(await sql('SELECT count(*) FROM lake.shop.items'), [[2]]);
    await sql('REMOVE @up/big/');
  });

  await t.test('multipart: Put Block to the same SAS, blocks checked and committed by Floe; abort leaves no blob', async (t) => {
    const size = 12 * MIB;
    const data = randomBytes(size);
    t.equal((await post('/v1/stages/presign/multipart/init', { stage: 'up', path: 'big/data.bin', parts: 3 })).status, 400, 'the size is required (Floe checks every block against it)');
    t.equal((await post('/v1/stages/presign/multipart/init', { stage: 'up', path: 'big/data.bin', size: 300 * MIB, part_size: 8 * MIB })).status, 400, 'over loading.max_multipart_bytes');
    const init = await post('/v1/stages/presign/multipart/init', { stage: 'up', path: 'big/data.bin', size, part_size: 5 * MIB });
    t.equal(init.status, 200, init.text);
    const m = init.json as { upload_id: string; protocol: string; part_urls: { part_number: number; url: string; size: number }[] };
    t.equal(m.protocol, 'parts');
    t.same(m.part_urls.map((p) => p.size), [5 * MIB, 5 * MIB, 2 * MIB]);
    for (const p of m.part_urls) {
      const u = new URL(p.url);
      t.equal(u.searchParams.get('comp'), 'block');
      t.equal(u.searchParams.get('sp'), 'cw');
      t.equal(u.searchParams.get('sr'), 'b');
    }
    const ids = new Set(m.part_urls.map((p) => new URL(p.url).searchParams.get('blockid')));
    t.equal(ids.size, 3, 'one block id per part');
    const slice = (n: number) => data.subarray((n - 1) * 5 * MIB, Math.min(size, n * 5 * MIB));
    const block = (n: number, bytes: Buffer) => fetch(m.part_urls[n - 1]!.url, { method: 'PUT', body: bytes });
    t.equal((await block(1, slice(1))).status, 201);
    t.equal((await block(2, slice(2).subarray(0, MIB))).status, 201, 'Azure takes a block of any size…');
    t.equal((await block(3, slice(3))).status, 201);
    const complete = (parts: unknown) => post('/v1/stages/presign/multipart/complete', { stage: 'up', upload_id: m.upload_id, parts });
    const all = [1, 2, 3].map((n) => ({ part_number: n }));
    const short = await complete(all);
    t.equal(short.status, 400);
    t.match(short.json, { error: { message: /part 2 has 1048576 bytes; the upload's plan says 5242880/ } }, '…Floe does not commit it');
    t.notOk(await exists(`${stageKey}big/data.bin`), 'nothing committed');
    t.match((await complete(all.slice(0, 2))).json, { error: { message: /3 parts; 2 listed/ } });
    t.match((await complete([all[1], all[0], all[2]])).json, { error: { message: /position 1/ } });
    t.equal((await block(2, slice(2))).status, 201, 'the block sent again, whole');
    const done = await complete(all);
    t.equal(done.status, 200, done.text);
    t.match(done.json, { path: 'big/data.bin', size });
    t.equal(createHash('md5').update(await bytesOf(`${stageKey}big/data.bin`)).digest('hex'), createHash('md5').update(data).digest('hex'), 'the blob is the file, in order');
    t.same((await container.getBlockBlobClient(`${stageKey}big/data.bin`).getBlockList('uncommitted')).uncommittedBlocks ?? [], [], 'no block left uncommitted');
    t.equal((await complete(all)).status, 404, 'a completed upload is gone');
    await sql('REMOVE @up/big/');

    const second = (await post('/v1/stages/presign/multipart/init', { stage: 'up', path: 'big/other.bin', size: 3 * MIB, part_size: 2 * MIB })).json as { upload_id: string; part_urls: { url: string }[] };
    t.equal((await fetch(second.part_urls[0]!.url, { method: 'PUT', body: data.subarray(0, 2 * MIB) })).status, 201);
    const aborted = await post('/v1/stages/presign/multipart/abort', { stage: 'up', upload_id: second.upload_id });
    t.equal(aborted.status, 200, aborted.text);
    t.equal((await post('/v1/stages/presign/multipart/complete', { stage: 'up', upload_id: second.upload_id, parts: [{ part_number: 1 }, { part_number: 2 }] })).status, 404, 'an aborted upload is gone');
    t.notOk(await exists(`${stageKey}big/other.bin`), 'no blob');
    const manifests: string[] = [];
    for await (const b of container.listBlobsFlat({ prefix: 'wh/stages/_uploads/' })) manifests.push(b.name);
    t.same(manifests, [], 'no upload manifests left');
  });

  await t.test('the acceptance through floe sql on Azurite', async (t) => {
    await loadAcceptance(t, {
      url: http.url, clientId: TEST_CLIENT_ID, clientSecret: TEST_CLIENT_SECRET, catalog: 'lake', dir,
      async storeFiles(stageUrl) {
        const prefix = stageUrl.slice(stagePrefix.length);
        const names: string[] = [];
        for await (const b of container.listBlobsFlat({ prefix })) names.push(b.name.slice(prefix.length));
        return names;
      },
    });
  });
});
