/**
 * A catalog on RGW whose store fails under it, over HTTP: transient 5xx and throttling are retried
 * and the commit succeeds; a store that keeps failing, or is stopped, makes a commit fail with 503
 * `ServiceUnavailableException` naming the cause, the table keeps its last committed metadata (no
 * reference to a file that was not written), and commits succeed again once the store is back.
 */
import t from 'tap';
import { openStore } from '../../catalog/store/open-store.js';
import { onRgw } from '../helpers/rgw.js';
import { startS3FaultProxy } from '../helpers/s3-fault-proxy.js';
import { sampleSchema, startCatalogServer } from '../catalog/helpers.js';

await onRgw(t, 'object-store faults under a catalog', async (t, rgw) => {
  await rgw.createBucket('faults');
  const proxy = await startS3FaultProxy(rgw.endpoint);
  t.teardown(() => proxy.close());
  const store = await openStore({ kind: 'pglite-memory' });
  t.teardown(() => store.close());
  const { client } = await startCatalogServer(t, store);

  const created = await client.post('/v1/catalogs', {
    name: 'lake',
    'storage-profile': {
      type: 's3', bucket: 'faults', region: rgw.region, endpoint: proxy.endpoint, 'path-style-access': true,
      credentials: { type: 'access-key', 'access-key-id': rgw.accessKeyId, 'secret-access-key': rgw.secretAccessKey },
    },
  });
  t.equal(created.status, 201, created.text);
  const base = '/v1/lake/namespaces';
  t.equal((await client.post(base, { namespace: ['db'], properties: {} })).status, 200);
  const table = await client.post(`${base}/db/tables`, { name: 't', schema: sampleSchema() });
  t.equal(table.status, 200, table.text);
  const commit = (owner: string) => client.post(`${base}/db/tables/t`, { requirements: [], updates: [{ action: 'set-properties', updates: { owner } }] });

  proxy.failNext(2, { status: 503, code: 'SlowDown' });
  const throttled = await commit('a');
  t.equal(throttled.status, 200, 'a commit through two throttled answers succeeds');
  t.equal(proxy.faults, 2);

  proxy.failNext(1000, { status: 500, code: 'InternalError' });
  const failing = await commit('b');
  t.equal(failing.status, 503, 'a store that keeps failing: 503');
  t.equal(failing.body.error.type, 'ServiceUnavailableException');
  t.match(failing.body.error.message, /Storage write failed for s3:\/\/faults\/db\/t-[0-9a-f]+\/metadata\/00002-.*\.metadata\.json: the store did not answer successfully \(500/);
  t.notMatch(failing.text, new RegExp(rgw.secretAccessKey), 'no secret in the error');
  proxy.failNext(0);
  const after = await client.get(`${base}/db/tables/t`);
  t.equal(after.status, 200);
  t.equal(after.body.metadata.properties.owner, 'a', 'the table keeps its last committed metadata');
  t.equal(after.body['metadata-location'], throttled.body['metadata-location'], 'and points at a file that exists');

  const again = await commit('c');
  t.equal(again.status, 200, 'commits succeed once the store is back');

  await rgw.stopGateway();
  const down = await commit('d');
  t.equal(down.status, 503, 'the gateway stopped: 503');
  t.match(down.body.error.message, /the store did not answer successfully/);
});
