/**
 * SQL over a catalog whose warehouse is a GCS bucket on the checking server (a `gcs` storage
 * profile, `gs://` locations): the shared body in sql-on-store.suite.ts (DDL, INSERT, CTAS,
 * copy-on-write and merge-on-read UPDATE/DELETE, MERGE and time travel, files landing in the
 * bucket, a second Floe reading them), then the engine's read-through cache on GCS (generations
 * checked on hits, so an object rewritten in place is refetched), a name GCS cannot store, and
 * what the server saw: nothing refused, every request with the service account's token.
 */
import t from 'tap';
import { startGcsCheckingServer } from '../helpers/gcs-checking-server.js';
import { gcsFixture } from '../helpers/object-store-fixture.js';
import { GcsFileIO } from '../../storage-creds/gcs-file-io.js';
import { sqlOnStoreSuite } from './sql-on-store.suite.js';

t.test('SQL on the GCS checking server', async (t) => {
  const gcs = await startGcsCheckingServer();
  t.teardown(() => gcs.close());
  const store = gcsFixture(gcs);
  const { floe, admin, container: bucket } = await sqlOnStoreSuite(t, store);
  const sql = (text: string) => floe.sql(text);
  const rows = async (text: string) => (await floe.sql(text)).rows;

  // The read-through cache: a second scan fetches no data file; one rewritten in place with the
  // same bytes has a new generation, so the cache must fetch it again.
  await sql('CREATE TABLE lake.shop.cached (id bigint)');
  await sql('INSERT INTO lake.shop.cached VALUES (1), (2)');
  const { location } = (await floe.state.catalog.loadTable(admin, 'lake', { namespace: ['shop'], name: 'cached' })).metadata;
  const dataKeys = await store.listKeys(bucket, `${location.slice(`gs://${bucket}/`.length)}/data/`);
  t.equal(dataKeys.length, 1, 'one data file');
  const reads = (): number => gcs.requests.filter((r) => r.method === 'GET' && r.query.alt === 'media' && (r.object ?? '').endsWith('.parquet')).length;
  t.same(await rows('SELECT count(*) FROM lake.shop.cached'), [[2]]);
  const before = reads();
  t.same(await rows('SELECT count(*) FROM lake.shop.cached'), [[2]]);
  t.equal(reads(), before, 'a second scan is served from the file cache (no data file fetched again)');
  const direct = new GcsFileIO({ credentials: { type: 'service-account', key: gcs.serviceAccountKey }, apiEndpoint: gcs.endpoint });
  const dataFile = `gs://${bucket}/${dataKeys[0]!}`;
  await direct.write(dataFile, await direct.read(dataFile), { overwrite: true });
  const beforeRewrite = reads();
  t.same(await rows('SELECT count(*) FROM lake.shop.cached'), [[2]]);
  t.ok(reads() > beforeRewrite, 'a data file rewritten in place (new generation, same size) is fetched again, not served stale');

  // A name GCS cannot store is the statement's error; a store that stays unavailable a retryable one.
  const badName = await sql('CREATE TABLE lake.shop."line\nbreak" (id int)').catch((e: unknown) => e);
  t.match(badName, { code: 'INVALID_REQUEST', message: /object names cannot contain carriage returns or line feeds/ }, 'a name with a line break: INVALID_REQUEST, not an internal error');
  const storage = gcs.requests.filter((r) => r.path !== '/token');
  t.same(storage.filter((r) => r.status === 400 || r.status === 401 || r.status === 403 || r.status >= 500).map((r) => `${r.method} ${r.path} ${r.status}`), [], 'the server refused nothing');
  t.ok(storage.every((r) => r.token === 'service-account' || (r.token === 'none' && r.query.upload_id !== undefined)), 'every request carried the service account\'s token');
});
