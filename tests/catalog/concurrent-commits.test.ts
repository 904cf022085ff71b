/**
 * Concurrency on both backends: 32 clients appending to one table (each retrying on 409 from a
 * fresh load) and 32 clients creating the same table name at once. Every acknowledged append is
 * in the final history (ancestry of main), exactly one create wins, and every metadata file on
 * disk is referenced by the committed pointer or its metadata-log.
 */
import t from 'tap';
import { readdirSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { onEachBackend } from '../helpers/stores.js';
import { CAT, appendCommit, createNamespace, createTable, sampleSchema, startCatalogServer, type CatalogClient } from './helpers.js';

const CLIENTS = 32;
const MAX_ATTEMPTS = 400;

function metadataFilesOnDisk(tableLocation: string): string[] {
  const dir = `${fileURLToPath(tableLocation)}/metadata`;
  return readdirSync(dir).filter((f) => f.endsWith('.metadata.json')).map((f) => `${tableLocation}/metadata/${f}`);
}

async function appendUntilAcknowledged(client: CatalogClient, url: string, snapshotId: bigint): Promise<{ acknowledged: boolean; attempts: number }> {
  for (let attempt = 1; attempt <= MAX_ATTEMPTS; attempt++) {
    const table = (await client.get(url)).body;
    const r = await client.post(url, appendCommit(table, snapshotId));
    if (r.status === 200) return { acknowledged: true, attempts: attempt };
    if (r.status !== 409) throw new Error(`unexpected ${r.status}: ${r.text}`);
  }
  return { acknowledged: false, attempts: MAX_ATTEMPTS };
}

t.test('32 concurrent appenders and 32 concurrent creators', async (t) => {
  await onEachBackend(t, async (t, store) => {
    const { client } = await startCatalogServer(t, store);
    await createNamespace(client, 'db');
    const created = await createTable(client, ['db'], 'hot');
    const url = `${CAT}/namespaces/db/tables/hot`;

    const results = await Promise.all(Array.from({ length: CLIENTS }, (_, i) => appendUntilAcknowledged(client, url, 5_000_000n + BigInt(i))));
    const acknowledged = results.map((r, i) => (r.acknowledged ? 5_000_000n + BigInt(i) : undefined)).filter((x): x is bigint => x !== undefined);
    t.equal(acknowledged.length, CLIENTS, 'every client got its append in');
    t.ok(results.some((r) => r.attempts > 1), 'there were conflicts to retry');

    const final = (await client.get(url)).body;
    const byId = new Map<bigint, any>(final.metadata.snapshots.map((s: any) => [BigInt(s['snapshot-id']), s]));
    const ancestry = new Set<bigint>();
    for (let id: bigint | undefined = BigInt(final.metadata['current-snapshot-id']); id !== undefined; ) {
      ancestry.add(id);
      const parent: unknown = byId.get(id)?.['parent-snapshot-id'];
      id = parent === undefined ? undefined : BigInt(parent as bigint);
    }
    for (const id of acknowledged) t.ok(ancestry.has(id), `acknowledged snapshot ${id} is in main's history`);
    t.equal(final.metadata['snapshot-log'].length, CLIENTS);
    t.equal(final.metadata['last-sequence-number'], CLIENTS, 'sequence numbers are dense');

    const referenced = new Set<string>([final['metadata-location'], ...final.metadata['metadata-log'].map((e: any) => e['metadata-file'])]);
    const onDisk = metadataFilesOnDisk(created.body.metadata.location);
    t.equal(onDisk.length, CLIENTS + 1, 'one metadata file per acknowledged commit plus the create');
    for (const f of onDisk) t.ok(referenced.has(f), `${f.slice(-50)} is referenced`);

    // 32 creators of one name: exactly one wins, the others get 409 and leave no metadata file.
    const creates = await Promise.all(Array.from({ length: CLIENTS }, () => client.post(`${CAT}/namespaces/db/tables`, { name: 'race', schema: sampleSchema() })));
    const statuses = creates.map((r) => r.status);
    t.equal(statuses.filter((s) => s === 200).length, 1, 'exactly one create wins');
    t.equal(statuses.filter((s) => s === 409).length, CLIENTS - 1, 'the others get 409');
    const winner = creates.find((r) => r.status === 200)!.body;
    t.equal((await client.get(`${CAT}/namespaces/db/tables/race`)).body['metadata-location'], winner['metadata-location']);
    const namespaceDir = fileURLToPath(winner.metadata.location.slice(0, winner.metadata.location.lastIndexOf('/')));
    const leftovers: string[] = [];
    for (const d of readdirSync(namespaceDir).filter((x) => x.startsWith('race-'))) {
      const meta = `${namespaceDir}/${d}/metadata`;
      for (const f of readdirSync(meta)) leftovers.push(`${meta}/${f}`);
    }
    t.same(leftovers, [fileURLToPath(winner['metadata-location'])], 'only the winner\'s metadata file exists');
  });
});
