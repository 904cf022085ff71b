/**
 * Signing reuses what it knows of a table (its locations) for one second from the start of the
 * store read that gave it, and renews it behind the requests from half a second on (docs/vending.md,
 * "Caching"). The bound must hold through renewals: a change is seen by every signature asked for
 * a second after the change committed, whether or not a renewal ran in between; a renewal that
 * fails (the table was dropped) is not kept; concurrent signs of a cold table share one read.
 * The waits here only bound from below (a sign at least a second after a change), so a slow
 * machine cannot make them fail.
 */
import t from 'tap';
import { openStore } from '../../catalog/store/open-store.js';
import { onRgw } from '../helpers/rgw.js';
import { vendingProfile } from '../helpers/vending.js';
import { sampleSchema, startCatalogServer } from '../catalog/helpers.js';

const BUCKET = 'freshness';
const TTL_MS = 1000;
const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

await onRgw(t, 'sign-table freshness on RGW', async (t, rgw) => {
  await rgw.createBucket(BUCKET);
  const store = await openStore({ kind: 'pglite-memory' });
  t.teardown(() => store.close());
  const { client, server } = await startCatalogServer(t, store);
  const token = await server.token();
  const created = await client.post('/v1/catalogs', { name: 'lake', 'storage-profile': vendingProfile(rgw, BUCKET, 'wh', false) });
  t.equal(created.status, 201, created.text);
  t.equal((await client.post('/v1/lake/namespaces', { namespace: ['db'], properties: {} })).status, 200);
  const table = async (name: string): Promise<string> => {
    const r = await client.post('/v1/lake/namespaces/db/tables', { name, schema: sampleSchema() });
    t.equal(r.status, 200, r.text);
    return r.body['metadata-location'] as string;
  };
  // Straight to the server, not through the spec-validating client: the spec lists no 404 for a
  // sign, which Floe answers for a table that does not exist (NoSuchTableException).
  const sign = async (name: string, metadataLocation: string): Promise<number> => {
    const r = await server.app.inject({
      method: 'POST', url: `/v1/lake/namespaces/db/tables/${name}/sign`, headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      payload: JSON.stringify({
        region: rgw.region, method: 'GET', uri: `${rgw.endpoint}/${BUCKET}/${metadataLocation.slice(`s3://${BUCKET}/`.length)}`,
        headers: { 'x-amz-content-sha256': ['UNSIGNED-PAYLOAD'] },
      }),
    });
    return r.statusCode;
  };

  await t.test('a location moved out is refused a second after the commit, a renewal in between or not', async (t) => {
    const meta = await table('moved');
    t.equal(await sign('moved', meta), 200, 'signed while inside (the entry is read)');
    await sleep(TTL_MS / 2 + 100);
    t.equal(await sign('moved', meta), 200, 'still signed: past half its life the entry is renewed behind this request');
    const moved = await client.post('/v1/lake/namespaces/db/tables/moved', {
      requirements: [], updates: [{ action: 'set-properties', updates: { 'write.metadata.path': `s3://${BUCKET}/elsewhere/meta` } }],
    });
    t.equal(moved.status, 200, 'write.metadata.path moved outside the warehouse');
    await sleep(TTL_MS + 50);
    t.equal(await sign('moved', meta), 403, 'refused: no entry older than a second is used');
  });

  await t.test('steady signing renews the entry; a dropped table is refused a second after the drop', async (t) => {
    const meta = await table('dropped');
    // Three TTLs of signing, and at least four signs however long a loaded machine makes each one.
    const until = Date.now() + 3 * TTL_MS;
    let signed = 0;
    while (Date.now() < until || signed < 4) {
      t.equal(await sign('dropped', meta), 200);
      signed++;
      await sleep(50);
    }
    t.ok(signed > 3, 'signed throughout several renewals');
    t.equal((await client.delete('/v1/lake/namespaces/db/tables/dropped')).status, 204);
    await sleep(TTL_MS + 50);
    t.equal(await sign('dropped', meta), 404, 'the dropped table is not signed for');
  });

  await t.test('concurrent signs of a table nobody signed for share one read and all succeed', async (t) => {
    const meta = await table('burst');
    const statuses = await Promise.all(Array.from({ length: 24 }, () => sign('burst', meta)));
    t.same(statuses, Array.from({ length: 24 }, () => 200));
  });
});
