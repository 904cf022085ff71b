/**
 * Issue 16, class 2: column names that differ only in case (`user_id` and `uSeR_Id`, legal in
 * Iceberg). Each column reads its own data and is selected by its exact quoted name; an unquoted
 * name matching both is an ambiguity error (42702), never the other column's data.
 */
import t from 'tap';
import * as path from 'node:path';
import { craftTable, openForeignCatalog } from '../helpers/foreign-tables.js';

const { root, duck, floe, admin } = await openForeignCatalog(t, 'case');

// DuckDB cannot write two columns differing only in case into one file: the file names them
// differently, and the Parquet field ids say which is which (as a Java writer's file would).
const location = await craftTable(duck, {
  dir: path.join(root, 'cased'),
  formatVersion: 2,
  schemas: [{
    type: 'struct', 'schema-id': 0,
    fields: [
      { id: 1, name: 'user_id', required: false, type: 'int' },
      { id: 2, name: 'uSeR_Id', required: false, type: 'string' },
      { id: 3, name: 'other', required: false, type: 'int' },
    ],
  }],
  files: [{ select: "SELECT range::INTEGER AS c1, 'u' || range AS c2, (range * 100)::INTEGER AS other FROM range(3)", fieldIds: { c1: 1, c2: 2, other: 3 } }],
});
await floe.state.catalog.registerTable(admin, 'ext', ['ns'], { name: 'cased', metadataLocation: location });

t.test('each column reads its own data by its exact quoted name', async (t) => {
  const r = await floe.sql('SELECT "user_id", "uSeR_Id", other FROM ext.ns.cased ORDER BY "user_id"');
  t.same(r.columns, ['user_id', 'uSeR_Id', 'other']);
  t.same(r.rows, [[0, 'u0', 0], [1, 'u1', 100], [2, 'u2', 200]]);
  const star = await floe.sql('SELECT * FROM ext.ns.cased ORDER BY other');
  t.same(star.columns, ['user_id', 'uSeR_Id', 'other']);
  t.same(star.rows, [[0, 'u0', 0], [1, 'u1', 100], [2, 'u2', 200]]);
  const qualified = await floe.sql('SELECT c."uSeR_Id" AS x FROM ext.ns.cased AS c WHERE c."user_id" = 1');
  t.same(qualified.rows, [['u1']]);
  t.same((await floe.sql('SELECT "uSeR_Id" FROM ext.ns.cased WHERE "uSeR_Id" = \'u2\'')).rows, [['u2']]);
  t.same((await floe.sql('SELECT count(*) FROM ext.ns.cased WHERE "user_id" >= 1')).rows, [[2]]);
  t.same((await floe.sql('SELECT other FROM ext.ns.cased WHERE OTHER = 200')).rows, [[200]], 'names that do not collide stay case-insensitive');
});

t.test('an unquoted name matching both columns is ambiguous, and a wrong exact name does not exist', async (t) => {
  for (const sql of ['SELECT user_id FROM ext.ns.cased', 'SELECT USER_ID FROM ext.ns.cased', 'SELECT other FROM ext.ns.cased WHERE user_id = 1', 'SELECT c.user_id FROM ext.ns.cased c']) {
    const e = await floe.sql(sql).then(() => undefined, (x: unknown) => x);
    t.match(e, { code: 'AMBIGUOUS_COLUMN', sqlState: '42702' }, sql);
    t.match(String((e as Error).message), /"user_id", "uSeR_Id"/);
  }
  t.match(await floe.sql('SELECT "USER_ID" FROM ext.ns.cased').then(() => undefined, (x: unknown) => x), { code: 'UNDEFINED_COLUMN' });
});

t.test('writes to such a table are refused clearly, not done to the wrong column', async (t) => {
  const e = await floe.sql('INSERT INTO ext.ns.cased ("user_id") VALUES (9)').then(() => undefined, (x: unknown) => x);
  t.match(e, { sqlState: '0A000' });
  t.same((await floe.sql('SELECT count(*) FROM ext.ns.cased')).rows, [[3]]);
});
