/**
 * Issue 16, class 1: identity-partitioned columns whose values live only in the manifests. A writer
 * may leave an identity source column out of its data files (the spec's column projection rule 2:
 * the value comes from the partition tuple). Every primitive type must come back with its value,
 * and filters (with pruning) on those columns agree with what is read.
 */
import t from 'tap';
import * as path from 'node:path';
import { craftTable, openForeignCatalog } from '../helpers/foreign-tables.js';

const { root, duck, floe, admin } = await openForeignCatalog(t, 'identity');

// Field 1 `id` is in the files; every other column is an identity partition source the files leave out.
const columns = [
  ['b', 'boolean'], ['i', 'int'], ['l', 'long'], ['f', 'float'], ['d', 'double'], ['dec', 'decimal(9,2)'],
  ['dt', 'date'], ['t', 'time'], ['ts', 'timestamp'], ['tstz', 'timestamptz'], ['tsns', 'timestamp_ns'],
  ['s', 'string'], ['u', 'uuid'], ['fx', 'fixed[4]'], ['bin', 'binary'],
] as const;
const schemaJson = {
  type: 'struct', 'schema-id': 0,
  fields: [{ id: 1, name: 'id', required: false, type: 'int' }, ...columns.map(([name, type], i) => ({ id: i + 2, name, required: false, type }))],
};
const specJson = { 'spec-id': 0, fields: columns.map(([name], i) => ({ 'source-id': i + 2, 'field-id': 1000 + i, name: `${name}_p`, transform: 'identity' })) };

// Values as manifests decode them (conversions.ts): see each type's in-memory form.
const first = [
  true, 7, 9007199254740993n, 1.5, -2.25, 1234n /* 12.34 */, 19_000 /* 2022-01-08 */, 3_723_000_001n /* 01:02:03.000001 */,
  1_641_600_000_123_456n /* 2022-01-08 00:00:00.123456 */, 1_641_600_000_000_000n, 1_641_600_000_123_456_789n,
  'héllo', 'f79c3e09-677c-4bbd-a479-3f349cb785e7', Uint8Array.from([0, 1, 2, 255]), Uint8Array.from([0xca, 0xfe]),
] as const;
const second = [
  false, -1, -5n, 0, 0, -50n, 0, 0n, 0n, 0n, 0n, '', '00000000-0000-0000-0000-000000000000', Uint8Array.from([9, 9, 9, 9]), Uint8Array.from([]),
] as const;

const location = await craftTable(duck, {
  dir: path.join(root, 'identity'),
  formatVersion: 3,
  schemas: [schemaJson],
  specs: [specJson],
  files: [
    { select: 'SELECT 1::INTEGER AS id', fieldIds: { id: 1 }, partition: [...first] },
    { select: 'SELECT 2::INTEGER AS id', fieldIds: { id: 1 }, partition: [...second] },
    { select: 'SELECT 3::INTEGER AS id', fieldIds: { id: 1 }, partition: columns.map(() => null) },
  ],
});
await floe.state.catalog.registerTable(admin, 'ext', ['ns'], { name: 'identity', metadataLocation: location });

t.test('every primitive type reads its partition value from the manifest', async (t) => {
  const r = await floe.sql('SELECT id, b, i, l, f, d, dec, dt, t, ts, tstz, tsns, s, u, hex(fx), hex(bin) FROM ext.ns.identity ORDER BY id');
  t.same(r.rows, [
    [1, true, 7, '9007199254740993', 1.5, -2.25, '12.34', '2022-01-08', '01:02:03.000001', '2022-01-08T00:00:00.123456', '2022-01-08T00:00:00Z', '2022-01-08T00:00:00.123456789', 'héllo', 'f79c3e09-677c-4bbd-a479-3f349cb785e7', '000102FF', 'CAFE'],
    [2, false, -1, -5, 0, 0, '-0.50', '1970-01-01', '00:00:00', '1970-01-01T00:00:00', '1970-01-01T00:00:00Z', '1970-01-01T00:00:00', '', '00000000-0000-0000-0000-000000000000', '09090909', ''],
    [3, null, null, null, null, null, null, null, null, null, null, null, null, null, null, null],
  ]);
});

t.test('filters on those columns match what is read, with pruning', async (t) => {
  const cases: [string, number[]][] = [
    ["t = TIME '01:02:03.000001'", [1]],
    ["t < TIME '01:00:00'", [2]],
    ["fx = from_hex('000102FF')", [1]],
    ["bin = from_hex('CAFE')", [1]],
    ["bin = from_hex('')", [2]],
    ["u = 'f79c3e09-677c-4bbd-a479-3f349cb785e7'", [1]],
    ['dec = 12.34', [1]],
    ['dec < 0', [2]],
    ["tsns = '2022-01-08 00:00:00.123456789'", [1]],
    ["tsns > '2022-01-08 00:00:00.123456788'", [1]],
    ["ts = TIMESTAMP '2022-01-08 00:00:00.123456'", [1]],
    ["tstz = TIMESTAMPTZ '2022-01-08 00:00:00+00'", [1]],
    ["dt = DATE '1970-01-01'", [2]],
    ['l = 9007199254740993', [1]],
    ["s = 'héllo'", [1]],
    ["s LIKE 'h%'", [1]],
    ['b', [1]],
    ['NOT b', [2]],
    ['f = 1.5', [1]],
    ['i IS NULL', [3]],
    ['fx IS NULL', [3]],
    ['bin IS NOT NULL', [1, 2]],
    ['t IS NOT NULL AND dec > 0', [1]],
  ];
  let pruned = 0;
  for (const [where, ids] of cases) {
    const r = await floe.sql(`SELECT id FROM ext.ns.identity WHERE ${where} ORDER BY id`);
    t.same(r.rows.map((row) => row[0]), ids, where);
    const plan = (await floe.sql(`EXPLAIN SELECT id FROM ext.ns.identity WHERE ${where}`)).rows.map((row) => String(row[0])).join('\n');
    if (!/: 3 files/.test(plan)) pruned++;
  }
  t.ok(pruned >= 10, `partition values pruned files in ${pruned} of ${cases.length} filters`);
});
