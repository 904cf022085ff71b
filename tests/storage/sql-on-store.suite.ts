/**
 * The body of the SQL-on-object-storage suites (sql-on-rgw.test.ts, sql-on-azurite.test.ts,
 * sql-on-gcs.test.ts): a catalog whose warehouse is container `sqlwh` under `wh/` on the store;
 * DDL, INSERT, CTAS, copy-on-write and merge-on-read UPDATE/DELETE, MERGE and time travel, the data
 * and delete files landing in the container and read back through the read-through cache, and a
 * second Floe on the same metadata store (nothing cached) reading what the first wrote. Returns
 * what a store's own checks after it need.
 */
import type { Test } from 'tap';
import { Floe } from '../../index.js';
import type { CatalogContext } from '../../catalog/rest/context.js';
import { openStore } from '../../catalog/store/open-store.js';
import type { ObjectStoreFixture } from '../helpers/object-store-fixture.js';

export interface SqlOnStore {
  readonly floe: Floe;
  readonly admin: CatalogContext;
  /** The catalog's container and key prefix. */
  readonly container: string;
  readonly keyPrefix: string;
}

export async function sqlOnStoreSuite(t: Test, store: ObjectStoreFixture): Promise<SqlOnStore> {
  const container = 'sqlwh';
  const keyPrefix = 'wh';
  await store.createContainer(container);
  const metaStore = await openStore({ kind: 'pglite-memory' });
  const floe = await Floe.open({ store: metaStore });
  t.teardown(() => floe.close());
  const admin = { tenantId: 'default', principalId: 'test', roles: ['tenant_admin'] };
  await floe.state.catalog.createCatalog(admin, { name: 'lake', ...store.catalogStorage(container, keyPrefix) });
  const sql = (text: string) => floe.sql(text);
  const rows = async (text: string) => (await floe.sql(text)).rows;
  await sql('CREATE SCHEMA lake.shop');
  await sql('CREATE TABLE lake.shop.items (id bigint NOT NULL, name string)');
  t.same((await sql("INSERT INTO lake.shop.items VALUES (1, 'apple'), (2, 'pear')")).rows, [[2]]);
  t.same(await rows('SELECT id, name FROM lake.shop.items ORDER BY id'), [[1, 'apple'], [2, 'pear']]);
  const keys = await store.listKeys(container, `${keyPrefix}/shop/`);
  t.ok(keys.some((k) => k.endsWith('.parquet')), `a data file is in the ${store.nouns.container}`);
  t.ok(keys.some((k) => k.endsWith('.metadata.json')), 'and the metadata');

  t.same((await sql("CREATE TABLE lake.shop.copy AS SELECT id, upper(name) AS name FROM lake.shop.items")).rows.length, 1, 'CTAS');
  t.same(await rows('SELECT name FROM lake.shop.copy ORDER BY id'), [['APPLE'], ['PEAR']]);
  t.same((await sql("UPDATE lake.shop.items SET name = 'green apple' WHERE id = 1")).rows, [[1]], 'copy-on-write UPDATE');
  t.same((await sql('DELETE FROM lake.shop.items WHERE id = 2')).rows, [[1]], 'copy-on-write DELETE');
  t.same(await rows('SELECT id, name FROM lake.shop.items ORDER BY id'), [[1, 'green apple']]);

  await sql("CREATE TABLE lake.shop.mor (id int, v string) TBLPROPERTIES ('write.delete.mode' = 'merge-on-read', 'write.update.mode' = 'merge-on-read')");
  await sql("INSERT INTO lake.shop.mor VALUES (1, 'a'), (2, 'b'), (3, 'c')");
  t.same((await sql('DELETE FROM lake.shop.mor WHERE id = 2')).rows, [[1]]);
  t.same((await sql("UPDATE lake.shop.mor SET v = 'z' WHERE id = 3")).rows, [[1]]);
  t.same(await rows('SELECT id, v FROM lake.shop.mor ORDER BY id'), [[1, 'a'], [3, 'z']], 'position deletes on object storage applied');

  const merged = await sql(`MERGE INTO lake.shop.mor AS m USING (SELECT 1 AS id UNION ALL SELECT 4) AS s ON m.id = s.id
    WHEN MATCHED THEN UPDATE SET v = 'merged' WHEN NOT MATCHED THEN INSERT (id, v) VALUES (s.id, 'new')`);
  t.same(merged.rows, [[1, 1, 0]], 'MERGE');
  const meta = (await floe.state.catalog.loadTable(admin, 'lake', { namespace: ['shop'], name: 'mor' })).metadata;
  const first = meta.snapshots[0]!.snapshotId;
  t.same(await rows(`SELECT count(*) FROM lake.shop.mor FOR VERSION AS OF ${first}`), [[3]], 'time travel to the first insert');

  // A second server on the same metadata store: it opens the sealed keys and fetches every file afresh.
  const other = await Floe.open({ store: metaStore });
  t.teardown(() => other.close());
  t.same((await other.sql('SELECT id, v FROM lake.shop.mor ORDER BY id')).rows, [[1, 'merged'], [3, 'z'], [4, 'new']], 'the other instance reads the same rows');
  t.same((await other.sql('SELECT count(*) FROM lake.shop.copy')).rows, [[2]]);
  return { floe, admin, container, keyPrefix };
}
