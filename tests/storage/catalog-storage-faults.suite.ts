/**
 * The body of the object-store fault suites (catalog-storage-faults.test.ts on RGW,
 * catalog-storage-faults-on-azurite.test.ts): a catalog whose store is reached through a fault
 * proxy, over HTTP. Throttling is retried and the commit succeeds; a store that keeps failing, or
 * is stopped, makes a commit fail with 503 `ServiceUnavailableException` naming the cause, the
 * table keeps its last committed metadata (no reference to an object that was not written), and
 * commits succeed again once the store is back. The metadata write broken in flight (never
 * forwarded, cut mid-body, or written with its answer lost): once, the write is retried and the
 * commit succeeds; on every attempt, 503 and the table as it was, with no metadata file left over.
 */
import type { Test } from 'tap';
import { openStore } from '../../catalog/store/open-store.js';
import type { ObjectStoreFixture } from '../helpers/object-store-fixture.js';
import { startS3FaultProxy } from '../helpers/s3-fault-proxy.js';
import { sampleSchema, startCatalogServer } from '../catalog/helpers.js';

const escapeRegExp = (s: string): string => s.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&');

export async function catalogStorageFaultsSuite(t: Test, store: ObjectStoreFixture): Promise<void> {
  await store.createContainer('faults');
  // The proxy answers chosen requests itself (an S3- or Azure-shaped XML error) and forwards the rest.
  const proxy = await startS3FaultProxy(store.endpoint);
  t.teardown(() => proxy.close());
  const metaStore = await openStore({ kind: 'pglite-memory' });
  t.teardown(() => metaStore.close());
  const { client } = await startCatalogServer(t, metaStore);

  const created = await client.post('/v1/catalogs', { name: 'lake', 'storage-profile': store.storageProfile('faults', '', proxy.endpoint) });
  t.equal(created.status, 201, created.text);
  const base = '/v1/lake/namespaces';
  t.equal((await client.post(base, { namespace: ['db'], properties: {} })).status, 200);
  const table = await client.post(`${base}/db/tables`, { name: 't', schema: sampleSchema() });
  t.equal(table.status, 200, table.text);
  const commit = (owner: string) => client.post(`${base}/db/tables/t`, { requirements: [], updates: [{ action: 'set-properties', updates: { owner } }] });

  proxy.failNext(2, store.throttle);
  const throttled = await commit('a');
  t.equal(throttled.status, 200, 'a commit through two throttled answers succeeds');
  t.equal(proxy.faults, 2);

  proxy.failNext(1000, { status: 500, code: 'InternalError' });
  const failing = await commit('b');
  t.equal(failing.status, 503, 'a store that keeps failing: 503');
  t.equal(failing.body.error.type, 'ServiceUnavailableException');
  const metadataFile = `${escapeRegExp(store.warehouseLocation('faults', ''))}/db/t-[0-9a-f]+/metadata/00002-.*\\.metadata\\.json`;
  t.match(failing.body.error.message, new RegExp(`Storage write failed for ${metadataFile}: the store did not answer successfully \\(500`));
  t.notOk(failing.text.includes(store.secret.value), `no ${store.secret.name} in the error`);
  proxy.failNext(0);
  const after = await client.get(`${base}/db/tables/t`);
  t.equal(after.status, 200);
  t.equal(after.body.metadata.properties.owner, 'a', 'the table keeps its last committed metadata');
  t.equal(after.body['metadata-location'], throttled.body['metadata-location'], `and points at a ${store.nouns.object} that exists`);

  const again = await commit('c');
  t.equal(again.status, 200, 'commits succeed once the store is back');

  // The commit's metadata write broken in flight. Iceberg's REST spec answers an unknown commit
  // outcome with CommitStateUnknownException; here the outcome is known: the pointer lives in the
  // metadata store and is swapped only after the write is known to have landed, so a write Floe
  // cannot confirm is a failed commit (503), never a half one, and the table stays as it was.
  const warehouse = store.warehouseLocation('faults', '');
  const metadataFiles = async (): Promise<readonly string[]> => (await store.listKeys('faults', '')).filter((k) => k.endsWith('.metadata.json')).map((k) => `${warehouse}/${k}`).sort();
  /** The table's pointer names a file that exists, its properties say `owner`, and these are all its metadata files. */
  const unchangedOr = async (what: string, owner: string, location: string, files: readonly string[]): Promise<void> => {
    const now = await client.get(`${base}/db/tables/t`);
    t.equal(now.status, 200, `${what}: the table loads`);
    t.equal(now.body['metadata-location'], location, `${what}: the table points at ${location.slice(location.lastIndexOf('/') + 1)}`);
    t.equal(now.body.metadata.properties.owner, owner, `${what}: with owner ${owner}`);
    t.same(await metadataFiles(), [...files].sort(), `${what}: its metadata files are exactly these, the current one among them`);
  };
  const anyMetadataFile = `${escapeRegExp(warehouse)}/db/t-[0-9a-f]+/metadata/[0-9]{5}-.*\\.metadata\\.json`;
  const metadataPut = { method: 'PUT', pathIncludes: '.metadata.json' } as const;

  let current = again.body['metadata-location'] as string;
  let files = await metadataFiles();
  t.ok(files.includes(current), `the current metadata ${store.nouns.object} is in the ${store.nouns.container}`);
  for (const [what, fault] of [
    ['the metadata PUT never reaches the store', { kind: 'reset-before-forward' }],
    ['the metadata PUT is cut after 64 bytes of its body', { kind: 'reset-after-bytes', bytes: 64 }],
    ['the metadata PUT is written but its answer is lost', { kind: 'lose-answer' }],
  ] as const) {
    const once = proxy.interrupt(metadataPut, fault);
    const retried = await commit(`once: ${what}`);
    once.cancel();
    t.equal(retried.status, 200, `${what}, once: the write is retried and the commit succeeds (${retried.text.slice(0, 200)})`);
    t.equal(once.hits, 1, 'one attempt hit');
    if (fault.kind === 'lose-answer') t.ok(once.lostAnswers[0]! >= 200 && once.lostAnswers[0]! < 300, `the store had written it (${once.lostAnswers[0]}); the retry found its own bytes there`);
    current = retried.body['metadata-location'] as string;
    files = [...files, current];
    await unchangedOr(`${what}, once`, `once: ${what}`, current, files);

    const always = proxy.interrupt(metadataPut, fault, { count: Infinity });
    const failed = await commit(`always: ${what}`);
    always.cancel();
    t.equal(failed.status, 503, `${what}, on every attempt: 503`);
    t.equal(failed.body.error.type, 'ServiceUnavailableException');
    t.match(failed.body.error.message, new RegExp(`Storage write failed for ${anyMetadataFile}`), 'naming the file');
    t.ok(always.hits > 1, `every attempt hit (${always.hits})`);
    if (fault.kind === 'lose-answer') {
      const [first, ...rest] = always.lostAnswers;
      t.ok(first! >= 200 && first! < 300 && rest.length > 0 && rest.every((s) => s === 409 || s === 412), `the first attempt wrote the file, the retries found it there (${always.lostAnswers.join(', ')})`);
    }
    // A written file whose answer was lost is deleted with the failed attempt's files (the DELETE
    // is not faulted): nothing refers to it.
    await unchangedOr(`${what}, on every attempt`, `once: ${what}`, current, files);
  }

  await store.stopServer();
  const down = await commit('d');
  t.equal(down.status, 503, `the ${store.nouns.server} stopped: 503`);
  t.match(down.body.error.message, /the store did not answer successfully/);
}
