/**
 * Issue 16, class 3: format v3 `initial-default` and `write-default`. Rows written before a column
 * was added read its initial default (top level, inside structs, for a struct added whole), files
 * that store the column read what they store (a stored NULL stays NULL), and statements that give a
 * column no value write its write-default.
 */
import t from 'tap';
import * as path from 'node:path';
import { craftTable, openForeignCatalog } from '../helpers/foreign-tables.js';

const { root, duck, floe, admin } = await openForeignCatalog(t, 'defaults');

const v0 = {
  type: 'struct', 'schema-id': 0,
  fields: [
    { id: 1, name: 'id', required: true, type: 'int' },
    { id: 2, name: 's', required: false, type: { type: 'struct', fields: [{ id: 3, name: 'x', required: false, type: 'int' }] } },
  ],
};
const v1 = {
  type: 'struct', 'schema-id': 1,
  fields: [
    { id: 1, name: 'id', required: true, type: 'int' },
    {
      id: 2, name: 's', required: false,
      type: { type: 'struct', fields: [{ id: 3, name: 'x', required: false, type: 'int' }, { id: 6, name: 'y', required: true, type: 'int', 'initial-default': 5, 'write-default': 5 }] },
    },
    { id: 4, name: 'c', required: true, type: 'int', 'initial-default': 42, 'write-default': 7 },
    { id: 5, name: 'tag', required: false, type: 'string', 'initial-default': 'none' },
    { id: 7, name: 'dt', required: false, type: 'date', 'initial-default': '2024-01-01' },
    { id: 8, name: 'dec', required: false, type: 'decimal(5,2)', 'initial-default': '1.50' },
    { id: 9, name: 'r', required: false, type: { type: 'struct', fields: [{ id: 10, name: 'a', required: false, type: 'int', 'initial-default': 3 }] }, 'initial-default': {} },
    { id: 11, name: 'bin', required: false, type: 'binary', 'initial-default': 'cafe' },
    { id: 12, name: 'ts', required: false, type: 'timestamp', 'initial-default': '2024-01-01T10:00:00.500' },
  ],
};

const location = await craftTable(duck, {
  dir: path.join(root, 'defaults'),
  formatVersion: 3,
  schemas: [v0, v1],
  currentSchemaId: 1,
  properties: { 'schema.name-mapping.default': JSON.stringify([{ 'field-id': 1, names: ['id'] }, { 'field-id': 4, names: ['c'] }]) },
  files: [
    // Written under schema 0: no c, tag, dt, dec, r, bin, ts; s without y.
    { select: "SELECT 1::INTEGER AS id, {'x': 10::INTEGER} AS s", fieldIds: { id: 1, s: { __duckdb_field_id: 2, x: 3 } } },
    // Written under schema 1: stores every column, c NULL (NOT NULL is the writer's business; it is stored) and s.y.
    {
      select: "SELECT 2::INTEGER AS id, {'x': 20::INTEGER, 'y': 21::INTEGER} AS s, NULL::INTEGER AS c, 'two' AS tag, DATE '2020-02-02' AS dt, 2.5::DECIMAL(5,2) AS dec, {'a': 22::INTEGER} AS r, from_hex('00') AS bin, TIMESTAMP '2020-01-01 00:00:00' AS ts",
      fieldIds: { id: 1, s: { __duckdb_field_id: 2, x: 3, y: 6 }, c: 4, tag: 5, dt: 7, dec: 8, r: { __duckdb_field_id: 9, a: 10 }, bin: 11, ts: 12 },
    },
    // A migrated file without field ids (name mapping): id only.
    { select: 'SELECT 3::INTEGER AS id' },
  ],
});
await floe.state.catalog.registerTable(admin, 'ext', ['ns'], { name: 'defaults', metadataLocation: location });

t.test('rows written before a column existed read its initial default', async (t) => {
  const r = await floe.sql('SELECT id, c, tag, dt, dec, hex(bin), ts, s.x, s.y, r.a, r IS NULL FROM ext.ns.defaults ORDER BY id');
  t.same(r.rows, [
    [1, 42, 'none', '2024-01-01', '1.50', 'CAFE', '2024-01-01T10:00:00.500', 10, 5, 3, false],
    [2, null, 'two', '2020-02-02', '2.50', '00', '2020-01-01T00:00:00', 20, 21, 22, false],
    [3, 42, 'none', '2024-01-01', '1.50', 'CAFE', '2024-01-01T10:00:00.500', null, null, 3, false],
  ]);
  // The defaults take part in filters like stored values.
  t.same((await floe.sql('SELECT id FROM ext.ns.defaults WHERE c = 42 ORDER BY id')).rows, [[1], [3]]);
  t.same((await floe.sql("SELECT id FROM ext.ns.defaults WHERE tag = 'none' AND s.y = 5")).rows, [[1]]);
  t.same((await floe.sql('SELECT count(*) FROM ext.ns.defaults WHERE c IS NULL')).rows, [[1]]);
  // Projections that leave the struct out, or take only it.
  t.same((await floe.sql('SELECT s FROM ext.ns.defaults ORDER BY id')).rows.map((row) => row[0]), [{ x: 10, y: 5 }, { x: 20, y: 21 }, null]);
});

// Floe writes format v1 and v2 tables (v3 writes are refused with 0A000, docs/spec-differences.md), so
// the write-default is exercised on a v2 table whose schema carries one, as a v2 writer that reads
// the field would.
const writable = await craftTable(duck, {
  dir: path.join(root, 'writable'),
  formatVersion: 2,
  schemas: [{
    type: 'struct', 'schema-id': 0,
    fields: [
      { id: 1, name: 'id', required: true, type: 'int' },
      { id: 2, name: 'c', required: false, type: 'int', 'write-default': 7 },
      { id: 3, name: 'tag', required: false, type: 'string', 'write-default': 'fresh' },
      { id: 4, name: 'dt', required: false, type: 'date' },
    ],
  }],
  files: [{ select: "SELECT 1::INTEGER AS id, 1::INTEGER AS c, 'one' AS tag, DATE '2020-01-01' AS dt", fieldIds: { id: 1, c: 2, tag: 3, dt: 4 } }],
});
await floe.state.catalog.registerTable(admin, 'ext', ['ns'], { name: 'writable', metadataLocation: writable });

t.test('a column a statement gives no value gets its write-default', async (t) => {
  await floe.sql("INSERT INTO ext.ns.writable (id, tag) VALUES (2, 'two')");
  t.same((await floe.sql('SELECT id, c, tag, dt FROM ext.ns.writable WHERE id = 2')).rows, [[2, 7, 'two', null]], 'c takes its write-default 7, dt (none) NULL');
  await floe.sql('UPDATE ext.ns.writable SET c = DEFAULT, tag = DEFAULT WHERE id = 1');
  t.same((await floe.sql('SELECT id, c, tag FROM ext.ns.writable ORDER BY id')).rows, [[1, 7, 'fresh'], [2, 7, 'two']]);
  const v3 = await floe.sql('INSERT INTO ext.ns.defaults (id) VALUES (9)').then(() => undefined, (e: unknown) => e);
  t.match(v3, { sqlState: '0A000' }, 'writing a v3 table is refused clearly, not done wrong');
});
