/**
 * SQL over a catalog whose warehouse is an Azure Blob container on Azurite (an `adls` storage
 * profile, `abfss://` locations): the shared body in sql-on-store.suite.ts (DDL, INSERT, CTAS,
 * copy-on-write and merge-on-read UPDATE/DELETE, MERGE and time travel, files landing in the
 * container, a second Floe reading them), then the read-through cache's ETag check on a blob
 * rewritten in place.
 */
import t from 'tap';
import { azuriteFixture } from '../helpers/object-store-fixture.js';
import { onAzurite } from '../helpers/azurite.js';
import { parseExposition } from '../helpers/prometheus.js';
import { sqlOnStoreSuite } from './sql-on-store.suite.js';

await onAzurite(t, 'SQL on Azurite', async (t, azurite) => {
  const store = azuriteFixture(azurite);
  const { floe, admin, container: containerName } = await sqlOnStoreSuite(t, store);
  const sql = (text: string) => floe.sql(text);
  const rows = async (text: string) => (await floe.sql(text)).rows;

  // The read-through cache checks each hit against the blob's ETag: a data file rewritten in place
  // at the same size (which Iceberg never does, but an operator might) is fetched again.
  const staleRefetches = async (): Promise<number> => Number(parseExposition(await floe.state.metrics.registry.metrics()).samples.find((s) => s.name === 'floe_file_cache_stale_refetches_total')?.value);
  for (const [name, id] of [['one', 1], ['two', 2]] as const) {
    await sql(`CREATE TABLE lake.shop.${name} (id bigint)`);
    await sql(`INSERT INTO lake.shop.${name} VALUES (${id})`);
  }
  t.same(await rows('SELECT id FROM lake.shop.one'), [[1]], 'cached');
  const container = azurite.client().getContainerClient(containerName);
  const dataOf = async (table: string): Promise<{ name: string; size: number }> => {
    const { location } = (await floe.state.catalog.loadTable(admin, 'lake', { namespace: ['shop'], name: table })).metadata;
    const prefix = `${location.slice(`${store.warehouseLocation(containerName, '')}/`.length)}/data/`;
    for await (const b of container.listBlobsFlat({ prefix })) if (b.name.endsWith('.parquet')) return { name: b.name, size: b.properties.contentLength ?? 0 };
    throw new Error(`no data file under ${prefix}`);
  };
  const [one, two] = [await dataOf('one'), await dataOf('two')];
  t.equal(one.size, two.size, 'the replacement has the same size');
  const before = await staleRefetches();
  const replacement = await container.getBlockBlobClient(two.name).downloadToBuffer();
  await container.getBlockBlobClient(one.name).upload(replacement, replacement.length);
  t.same(await rows('SELECT id FROM lake.shop.one'), [[2]], 'the bytes now in storage, not the cached ones');
  t.equal(await staleRefetches(), before + 1, 'floe_file_cache_stale_refetches_total counts it');
});
