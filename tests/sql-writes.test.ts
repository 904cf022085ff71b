/**
 * SQL writes end to end on both store backends: INSERT (VALUES, SELECT, column lists, NOT NULL),
 * CREATE TABLE AS with partitioning, UPDATE and DELETE (copy-on-write), views, time travel across
 * the snapshots the writes made, eight sessions inserting into one table at once (every row, every
 * commit), and the snapshot summaries and partition layout of what was written.
 */
import t from 'tap';
import { Floe } from '../index.js';
import { floeErrorOf } from './helpers/floe-error.js';
import { currentSnapshot, defaultPartitionSpec } from '../catalog/iceberg/table-metadata.js';
import { planScan } from '../catalog/iceberg/scan.js';
import { onEachBackend } from './helpers/stores.js';

await onEachBackend(t, async (t, store) => {
  const floe = await Floe.open({ store });
  t.teardown(() => floe.close());
  const sql = (text: string) => floe.sql(text);
  const rows = async (text: string) => (await floe.sql(text)).rows;
  const fails = (text: string) => floeErrorOf(floe.sql(text), text);
  const admin = { tenantId: 'default', principalId: 'test', roles: ['tenant_admin'] };
  const meta = async (name: string) => (await floe.state.catalog.loadTable(admin, 'default', { namespace: ['shop'], name })).metadata;

  await sql('CREATE SCHEMA shop');
  await sql('CREATE TABLE shop.items (id bigint NOT NULL, name string, price decimal(10,2), added date)');

  await t.test('INSERT VALUES and SELECT back', async (t) => {
    const r = await sql("INSERT INTO shop.items VALUES (1, 'apple', 1.25, DATE '2024-01-01'), (2, 'pear', 2.50, DATE '2024-01-02')");
    t.same(r.columns, ['rows_inserted']);
    t.same(r.rows, [[2]]);
    await sql("INSERT INTO shop.items (name, id) VALUES ('plum', 3)");
    t.same(await rows('SELECT id, name, price, added FROM shop.items ORDER BY id'), [
      [1, 'apple', '1.25', '2024-01-01'], [2, 'pear', '2.50', '2024-01-02'], [3, 'plum', null, null],
    ]);
    const m = await meta('items');
    t.equal(m.snapshots.length, 2, 'one snapshot per INSERT');
    t.match(Object.fromEntries(currentSnapshot(m)!.summary), { operation: 'append', 'added-records': '1', 'total-records': '3', 'added-data-files': '1', 'total-data-files': '2' });
  });

  await t.test('INSERT refuses what does not fit', async (t) => {
    t.match(await fails("INSERT INTO shop.items (name) VALUES ('no id')"), { message: /NOT NULL/ });
    t.match(await fails('INSERT INTO shop.items VALUES (1, 2)'), { code: 'DATATYPE_MISMATCH', sqlState: '42804' });
    t.match(await fails("INSERT INTO shop.items (nope) VALUES (1)"), { code: 'UNDEFINED_COLUMN' });
    t.match(await fails("INSERT INTO shop.missing VALUES (1)"), { code: 'UNDEFINED_TABLE' });
    t.equal((await meta('items')).snapshots.length, 2, 'nothing was committed');
  });

  await t.test('CREATE TABLE AS with partitioning, INSERT … SELECT', async (t) => {
    const r = await sql('CREATE TABLE shop.by_day PARTITIONED BY (day(added)) AS SELECT id, name, added FROM shop.items WHERE added IS NOT NULL');
    t.same(r.rows, [[2]]);
    await sql('INSERT INTO shop.by_day SELECT id + 10, name, added FROM shop.items WHERE added IS NOT NULL');
    t.same(await rows('SELECT count(*), count(DISTINCT added) FROM shop.by_day'), [[4, 2]]);
    const m = await meta('by_day');
    t.equal(defaultPartitionSpec(m).fields.length, 1);
    const plan = await planScan(m, await floe.state.catalog.fileIOFor(admin, 'default'));
    t.equal(plan.tasks.length, 4, 'one file per day per insert');
    t.ok(plan.tasks.every((task) => (task.file.lowerBounds?.size ?? 0) > 0 && (task.file.valueCounts?.size ?? 0) > 0), 'column statistics in the manifests');
    t.same(await rows("SELECT id FROM shop.by_day WHERE added = DATE '2024-01-02' ORDER BY id"), [[2], [12]]);
    t.match(await fails('CREATE TABLE shop.by_day AS SELECT 1 AS x'), { code: 'DUPLICATE_TABLE' });
  });

  await t.test('UPDATE and DELETE rewrite the files they touch', async (t) => {
    const before = (await meta('items')).snapshots.length;
    t.same((await sql("UPDATE shop.items SET price = price * 2, name = upper(name) WHERE id = 1")).rows, [[1]]);
    t.same(await rows('SELECT name, price FROM shop.items WHERE id = 1'), [['APPLE', '2.50']]);
    t.same((await sql('DELETE FROM shop.items WHERE price IS NULL')).rows, [[1]]);
    t.same((await sql('DELETE FROM shop.items WHERE id > 100')).rows, [[0]]);
    t.match(await fails('UPDATE shop.items SET id = NULL WHERE id = 1'), { message: /NOT NULL/ }, 'UPDATE keeps NOT NULL');
    t.same(await rows('SELECT id FROM shop.items ORDER BY id'), [[1], [2]]);
    const m = await meta('items');
    t.equal(m.snapshots.length, before + 2, 'a snapshot per changing statement, none for no match');
    t.match(Object.fromEntries(currentSnapshot(m)!.summary).operation, /^(overwrite|delete)$/);
    const first = m.snapshots[0]!.snapshotId;
    t.same(await rows(`SELECT count(*) FROM shop.items FOR VERSION AS OF ${first}`), [[2]], 'time travel to the first insert');
  });

  await t.test('merge-on-read DELETE and UPDATE write position deletes, not new data files', async (t) => {
    await sql("CREATE TABLE shop.mor (id int, v string) TBLPROPERTIES ('write.delete.mode' = 'merge-on-read', 'write.update.mode' = 'merge-on-read')");
    await sql("INSERT INTO shop.mor VALUES (1, 'a'), (2, 'b'), (3, 'c')");
    const io = await floe.state.catalog.fileIOFor(admin, 'default');
    const original = (await planScan(await meta('mor'), io)).tasks.map((x) => x.file.filePath);
    t.same((await sql('DELETE FROM shop.mor WHERE id = 2')).rows, [[1]]);
    t.same((await sql("UPDATE shop.mor SET v = 'z' WHERE id = 3")).rows, [[1]]);
    t.same(await rows('SELECT id, v FROM shop.mor ORDER BY id'), [[1, 'a'], [3, 'z']]);
    const plan = await planScan(await meta('mor'), io);
    t.ok(original.every((p) => plan.tasks.some((x) => x.file.filePath === p)), 'the original data file is still live');
    t.equal(plan.deleteFiles.length, 2, 'two position delete files');
    t.match(Object.fromEntries(currentSnapshot(await meta('mor'))!.summary), { 'added-position-deletes': '1' });
  });

  await t.test('MERGE updates, deletes and inserts in one snapshot', async (t) => {
    await sql('CREATE TABLE shop.stock (sku int NOT NULL, qty int, note string)');
    await sql("INSERT INTO shop.stock VALUES (1, 10, 'a'), (2, 20, 'b'), (3, 30, 'c')");
    await sql('CREATE TABLE shop.delivery (sku int, qty int)');
    await sql('INSERT INTO shop.delivery VALUES (1, 5), (2, -20), (4, 7)');
    const before = (await meta('stock')).snapshots.length;
    const r = await sql(`MERGE INTO shop.stock AS s USING shop.delivery AS d ON s.sku = d.sku
      WHEN MATCHED AND s.qty + d.qty <= 0 THEN DELETE
      WHEN MATCHED THEN UPDATE SET qty = s.qty + d.qty, note = 'restocked'
      WHEN NOT MATCHED THEN INSERT (sku, qty, note) VALUES (d.sku, d.qty, 'new')`);
    t.same(r.columns, ['rows_inserted', 'rows_updated', 'rows_deleted']);
    t.same(r.rows, [[1, 1, 1]]);
    t.same(await rows('SELECT sku, qty, note FROM shop.stock ORDER BY sku'), [[1, 15, 'restocked'], [3, 30, 'c'], [4, 7, 'new']]);
    t.equal((await meta('stock')).snapshots.length, before + 1, 'one snapshot');
    const noop = await sql('MERGE INTO shop.stock AS s USING (SELECT 99 AS sku) AS d ON s.sku = d.sku WHEN MATCHED THEN DELETE');
    t.same(noop.rows, [[0, 0, 0]]);
    await sql('INSERT INTO shop.delivery VALUES (1, 1)');
    t.match(await fails('MERGE INTO shop.stock AS s USING shop.delivery AS d ON s.sku = d.sku WHEN MATCHED THEN UPDATE SET qty = d.qty'), { message: /more than one source row/ });
  });

  await t.test('views', async (t) => {
    await sql('CREATE VIEW shop.cheap AS SELECT id, name FROM shop.items WHERE price < 3');
    t.same(await rows('SELECT name FROM shop.cheap ORDER BY id'), [['APPLE'], ['pear']]);
    await sql('CREATE OR REPLACE VIEW shop.cheap (item) AS SELECT name FROM shop.items WHERE price < 2.6 AND id = 2');
    t.same(await rows('SELECT item FROM shop.cheap'), [['pear']]);
    const v = await floe.state.catalog.loadView(admin, 'default', { namespace: ['shop'], name: 'cheap' });
    t.equal(v.metadata.versions.length, 2, 'the replaced view keeps its history');
    t.match(await fails('CREATE VIEW shop.bad AS SELECT nope FROM shop.items'), { code: 'UNDEFINED_COLUMN' });
    await sql('DROP VIEW shop.cheap');
  });

  await t.test('eight sessions insert into one table at once', async (t) => {
    await sql('CREATE TABLE shop.events (session int, n int)');
    await Promise.all(Array.from({ length: 8 }, (_, s) => (async () => {
      for (let i = 0; i < 3; i++) await sql(`INSERT INTO shop.events VALUES (${s}, ${i}), (${s}, ${i + 100})`);
    })()));
    t.same(await rows('SELECT count(*), count(DISTINCT session) FROM shop.events'), [[48, 8]]);
    const m = await meta('events');
    t.equal(m.snapshots.length, 24, 'every commit is in the table history');
    const history = await floe.state.history.list({ tenantId: 'default', principalId: 'x', isTenantAdmin: true }, { limit: 500, queryType: 'insert' });
    t.equal(history.filter((h) => String(h.sql).startsWith('INSERT INTO shop.events') && h.status === 'completed').length, 24, 'every insert is in query history');
  });
});
