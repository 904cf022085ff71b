/**
 * SQL over a catalog whose warehouse is a bucket on a real Ceph RGW (storage profile): DDL,
 * INSERT, CTAS, copy-on-write and merge-on-read UPDATE/DELETE, MERGE and time travel, the data and
 * delete files landing in the bucket and read back through the read-through cache, and a second
 * Floe on the same metadata store (nothing cached) reading what the first wrote.
 */
import t from 'tap';
import { ListObjectsV2Command } from '@aws-sdk/client-s3';
import { Floe } from '../../index.js';
import { openStore } from '../../catalog/store/open-store.js';
import { onRgw } from '../helpers/rgw.js';

await onRgw(t, 'SQL on RGW', async (t, rgw) => {
  await rgw.createBucket('sqlwh');
  const store = await openStore({ kind: 'pglite-memory' });
  const floe = await Floe.open({ store });
  t.teardown(() => floe.close());
  const admin = { tenantId: 'default', principalId: 'test', roles: ['tenant_admin'] };
  await floe.state.catalog.createCatalog(admin, {
    name: 'lake', warehouseLocation: 's3://sqlwh/wh',
    storage: {
      profile: { type: 's3', bucket: 'sqlwh', keyPrefix: 'wh', region: rgw.region, endpoint: rgw.endpoint, pathStyleAccess: true, credentialSource: 'access-key' },
      secret: { type: 's3-keys', accessKeyId: rgw.accessKeyId, secretAccessKey: rgw.secretAccessKey },
    },
  });
  const sql = (text: string) => floe.sql(text);
  const rows = async (text: string) => (await floe.sql(text)).rows;
  await sql('CREATE SCHEMA lake.shop');
  await sql('CREATE TABLE lake.shop.items (id bigint NOT NULL, name string)');
  t.same((await sql("INSERT INTO lake.shop.items VALUES (1, 'apple'), (2, 'pear')")).rows, [[2]]);
  t.same(await rows('SELECT id, name FROM lake.shop.items ORDER BY id'), [[1, 'apple'], [2, 'pear']]);
  const s3 = rgw.client();
  t.teardown(() => s3.destroy());
  const keys = ((await s3.send(new ListObjectsV2Command({ Bucket: 'sqlwh', Prefix: 'wh/shop/' }))).Contents ?? []).map((o) => o.Key ?? '');
  t.ok(keys.some((k) => k.endsWith('.parquet')), 'a data file is in the bucket');
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
  const admin2 = admin;
  const meta = (await floe.state.catalog.loadTable(admin2, 'lake', { namespace: ['shop'], name: 'mor' })).metadata;
  const first = meta.snapshots[0]!.snapshotId;
  t.same(await rows(`SELECT count(*) FROM lake.shop.mor FOR VERSION AS OF ${first}`), [[3]], 'time travel to the first insert');

  // A second server on the same metadata store: it opens the sealed keys and fetches every file afresh.
  const other = await Floe.open({ store });
  t.teardown(() => other.close());
  t.same((await other.sql('SELECT id, v FROM lake.shop.mor ORDER BY id')).rows, [[1, 'merged'], [3, 'z'], [4, 'new']], 'the other instance reads the same rows');
  t.same((await other.sql('SELECT count(*) FROM lake.shop.copy')).rows, [[2]]);
});
