import t from 'tap';
import fc from 'fast-check';
import { IcebergError } from './errors.js';
import { parseJson, stringifyJson } from './json.js';
import { schema } from './schema.js';
import type { Snapshot } from './snapshot.js';
import { applyUpdates, checkRequirements } from './table-commit.js';
import { newTableMetadata, parseTableMetadata, serializeTableMetadata, tableMetadataFromJson, tableMetadataToJson } from './table-metadata.js';
import type { TableMetadata } from './table-metadata.js';
import { tableRequirementFromJson, tableRequirementToJson, tableUpdateFromJson, tableUpdateToJson } from './table-updates.js';
import type { TableRequirement, TableUpdate } from './table-updates.js';
import { Transforms } from './transforms.js';
import { Types, nestedField } from './types.js';

const NOW = 1_700_000_000_000;

function baseTable(): TableMetadata {
  return newTableMetadata({
    schema: schema(7, [nestedField(10, 'id', Types.long, true), nestedField(11, 'ts', Types.timestamptz), nestedField(12, 'tags', Types.list(13, Types.string))], [10]),
    partitionSpec: { fields: [{ sourceId: 11, name: 'ts_day', transform: Transforms.day }] },
    sortOrder: { orderId: 5, fields: [{ sourceId: 10, transform: Transforms.identity, direction: 'asc', nullOrder: 'nulls-first' }] },
    location: 'file:///warehouse/db/t/',
    properties: new Map([['owner', 'floe']]),
    tableUuid: '11111111-2222-3333-4444-555555555555',
    now: NOW,
  });
}

function snapshot(id: bigint, seq: number, parent?: bigint, ts = NOW + seq * 1000): Snapshot {
  return {
    snapshotId: id,
    ...(parent !== undefined ? { parentSnapshotId: parent } : {}),
    sequenceNumber: seq,
    timestampMs: ts,
    manifestList: `file:///warehouse/db/t/metadata/snap-${id}.avro`,
    summary: new Map([['operation', 'append'], ['added-records', '10']]),
    schemaId: 0,
  };
}

t.test('newTableMetadata assigns fresh ids and rebinds spec and order', async (t) => {
  const m = baseTable();
  t.equal(m.formatVersion, 2);
  t.equal(m.location, 'file:///warehouse/db/t');
  t.same(m.schemas[0]?.fields.map((f) => f.id), [1, 2, 3]);
  t.equal(m.schemas[0]?.schemaId, 0);
  t.same(m.schemas[0]?.identifierFieldIds, [1]);
  t.equal(m.lastColumnId, 4, 'list element got id 4');
  t.same(m.partitionSpecs[0]?.fields, [{ sourceId: 2, fieldId: 1000, name: 'ts_day', transform: Transforms.day }]);
  t.equal(m.lastPartitionId, 1000);
  t.equal(m.sortOrders[0]?.orderId, 1);
  t.equal(m.sortOrders[0]?.fields[0]?.sourceId, 1);
  t.equal(m.defaultSortOrderId, 1);
  t.equal(m.currentSnapshotId, null);
  const v1 = newTableMetadata({ schema: schema(0, [nestedField(1, 'a', Types.int)]), location: '/x', properties: new Map([['format-version', '1']]), now: NOW });
  t.equal(v1.formatVersion, 1);
  t.notOk(v1.properties.has('format-version'));
  t.throws(() => newTableMetadata({ schema: schema(0, [nestedField(1, 'a', Types.int)]), location: '/x', properties: new Map([['format-version', '9']]), now: NOW }), { name: 'ValidationException' });
});

t.test('round trip: create, evolve, snapshot, ref, properties, serialize, parse', async (t) => {
  const m0 = baseTable();
  const updates: TableUpdate[] = [
    { action: 'add-schema', schema: schema(0, [...(m0.schemas[0]?.fields ?? []), nestedField(5, 'note', Types.string)], [1]) },
    { action: 'set-current-schema', schemaId: -1 },
    { action: 'add-spec', spec: { fields: [{ sourceId: 2, name: 'ts_day', transform: Transforms.day }, { sourceId: 1, name: 'id_bucket', transform: Transforms.bucket(16) }] } },
    { action: 'set-default-spec', specId: -1 },
    { action: 'add-snapshot', snapshot: snapshot(7817332053627255703n, 1) },
    { action: 'set-snapshot-ref', refName: 'main', ref: { type: 'branch', snapshotId: 7817332053627255703n } },
    { action: 'set-snapshot-ref', refName: 'v1', ref: { type: 'tag', snapshotId: 7817332053627255703n, maxRefAgeMs: 86_400_000 } },
    { action: 'set-properties', updates: new Map([['write.format.default', 'parquet'], ['constructor', 'ok']]) },
    { action: 'remove-properties', removals: ['owner'] },
  ];
  const m1 = applyUpdates(m0, updates, { now: NOW + 5000, previousMetadataLocation: 'file:///warehouse/db/t/metadata/00000-a.metadata.json' });
  t.equal(m1.currentSchemaId, 1);
  t.equal(m1.lastColumnId, 5);
  t.equal(m1.defaultSpecId, 1);
  t.same(m1.partitionSpecs[1]?.fields.map((f) => f.fieldId), [1000, 1001], 'ts_day keeps its id, the new field gets the next');
  t.equal(m1.lastPartitionId, 1001);
  t.equal(m1.currentSnapshotId, 7817332053627255703n);
  t.equal(m1.lastSequenceNumber, 1);
  t.equal(m1.lastUpdatedMs, NOW + 1000, 'last-updated-ms is the added snapshot timestamp');
  t.same(m1.snapshotLog, [{ timestampMs: NOW + 1000, snapshotId: 7817332053627255703n }]);
  t.same(m1.metadataLog, [{ timestampMs: NOW, metadataFile: 'file:///warehouse/db/t/metadata/00000-a.metadata.json' }]);
  t.equal(m1.properties.get('constructor'), 'ok');
  t.notOk(m1.properties.has('owner'));

  const text = serializeTableMetadata(m1);
  t.match(text, /"snapshot-id" : 7817332053627255703/, 'int64 written exactly');
  t.match(text, /^\{\n {2}"format-version" : 2,\n {2}"table-uuid" : /);
  const back = parseTableMetadata(text);
  t.same(back, m1);
  t.equal(serializeTableMetadata(back), text);
  // And through the compact REST form.
  t.same(tableMetadataFromJson(parseJson(stringifyJson(tableMetadataToJson(m1)))), m1);
});

t.test('requirements: each passes and fails', async (t) => {
  const m = applyUpdates(baseTable(), [
    { action: 'add-snapshot', snapshot: snapshot(42n, 1) },
    { action: 'set-snapshot-ref', refName: 'main', ref: { type: 'branch', snapshotId: 42n } },
  ], { now: NOW });
  const ok: TableRequirement[] = [
    { type: 'assert-table-uuid', uuid: '11111111-2222-3333-4444-555555555555' },
    { type: 'assert-ref-snapshot-id', ref: 'main', snapshotId: 42n },
    { type: 'assert-ref-snapshot-id', ref: 'dev', snapshotId: null },
    { type: 'assert-last-assigned-field-id', lastAssignedFieldId: 4 },
    { type: 'assert-current-schema-id', currentSchemaId: 0 },
    { type: 'assert-last-assigned-partition-id', lastAssignedPartitionId: 1000 },
    { type: 'assert-default-spec-id', defaultSpecId: 0 },
    { type: 'assert-default-sort-order-id', defaultSortOrderId: 1 },
  ];
  t.same(checkRequirements(m, ok), []);
  t.same(checkRequirements(undefined, [{ type: 'assert-create' }]), []);
  const bad: [TableRequirement, RegExp][] = [
    [{ type: 'assert-create' }, /table already exists/],
    [{ type: 'assert-table-uuid', uuid: 'x' }, /UUID does not match/],
    [{ type: 'assert-ref-snapshot-id', ref: 'main', snapshotId: 41n }, /branch main has changed: expected id 41 != 42/],
    [{ type: 'assert-ref-snapshot-id', ref: 'main', snapshotId: null }, /branch main was created concurrently/],
    [{ type: 'assert-ref-snapshot-id', ref: 'dev', snapshotId: 42n }, /branch or tag dev is missing/],
    [{ type: 'assert-last-assigned-field-id', lastAssignedFieldId: 3 }, /last assigned field id changed/],
    [{ type: 'assert-current-schema-id', currentSchemaId: 1 }, /current schema changed/],
    [{ type: 'assert-last-assigned-partition-id', lastAssignedPartitionId: 999 }, /last assigned partition id changed/],
    [{ type: 'assert-default-spec-id', defaultSpecId: 1 }, /default partition spec changed/],
    [{ type: 'assert-default-sort-order-id', defaultSortOrderId: 0 }, /default sort order changed/],
  ];
  for (const [r, msg] of bad) {
    const failures = checkRequirements(m, [r]);
    t.equal(failures.length, 1, r.type);
    t.match(failures[0]?.message, msg);
    t.same(tableRequirementFromJson(parseJson(stringifyJson(tableRequirementToJson(r)))), r, `${r.type} JSON round trip`);
  }
  t.match(checkRequirements(undefined, [{ type: 'assert-current-schema-id', currentSchemaId: 0 }])[0]?.message, /does not exist/);
  t.same(tableRequirementFromJson(parseJson('{"type":"assert-ref-snapshot-id","ref":"main","snapshot-id":null}')), { type: 'assert-ref-snapshot-id', ref: 'main', snapshotId: null });
  t.throws(() => tableRequirementFromJson(parseJson('{"type":"assert-ref-snapshot-id","ref":"main"}')), { name: 'BadRequestException' });
  t.throws(() => tableRequirementFromJson(parseJson('{"type":"assert-nothing"}')), { name: 'BadRequestException' });
});

t.test('update validation as Java builder', async (t) => {
  const m = baseTable();
  const fails = (updates: TableUpdate[], re: RegExp, name = 'ValidationException'): void => {
    try {
      applyUpdates(m, updates, { now: NOW });
      t.fail(`expected ${re}`);
    } catch (e) {
      t.ok(e instanceof IcebergError, 'typed error');
      t.equal((e as IcebergError).name, name);
      t.match((e as Error).message, re);
    }
  };
  fails([{ action: 'set-current-schema', schemaId: -1 }], /no schema has been added/);
  fails([{ action: 'set-current-schema', schemaId: 9 }], /unknown schema: 9/);
  fails([{ action: 'set-default-spec', specId: -1 }], /no spec has been added/);
  fails([{ action: 'set-default-sort-order', sortOrderId: 3 }], /unknown order: 3/);
  fails([{ action: 'upgrade-format-version', formatVersion: 1 }], /Cannot downgrade v2 table to v1/);
  fails([{ action: 'upgrade-format-version', formatVersion: 4 }], /unsupported format version/);
  fails([{ action: 'add-schema', schema: schema(0, [nestedField(1, 'a', Types.int)]), lastColumnId: 2 }], /Invalid last column ID: 2 < 4/);
  fails([{ action: 'add-schema', schema: schema(0, [nestedField(1, 'a', Types.int), nestedField(1, 'b', Types.int)]) }], /duplicate field id 1/);
  fails([{ action: 'add-spec', spec: { fields: [{ sourceId: 99, name: 'x', transform: Transforms.identity }] } }], /Cannot find source column/);
  fails([{ action: 'add-spec', spec: { fields: [{ sourceId: 1, name: 'x', transform: Transforms.hour }] } }], /Invalid source type long for transform: hour/);
  fails([{ action: 'add-spec', spec: { fields: [{ sourceId: 1, name: 'ts', transform: Transforms.bucket(2) }] } }], /name that exists in schema/);
  fails([{ action: 'add-snapshot', snapshot: snapshot(1n, 1) }, { action: 'add-snapshot', snapshot: snapshot(1n, 2) }], /Snapshot already exists for id: 1/);
  fails([{ action: 'add-snapshot', snapshot: snapshot(1n, 2) }, { action: 'add-snapshot', snapshot: snapshot(2n, 2, 1n) }], /sequence number 2 older than last sequence number 2/);
  fails([{ action: 'set-snapshot-ref', refName: 'main', ref: { type: 'branch', snapshotId: 5n } }], /Cannot set main to unknown snapshot: 5/);
  fails([{ action: 'add-snapshot', snapshot: snapshot(1n, 1) }, { action: 'set-snapshot-ref', refName: 'main', ref: { type: 'tag', snapshotId: 1n } }], /to a tag/);
  fails([{ action: 'remove-schemas', schemaIds: [0] }], /Cannot remove current schema/);
  fails([{ action: 'remove-partition-specs', specIds: [0] }], /Cannot remove the default partition spec/);
  t.throws(() => tableUpdateFromJson(parseJson('{"action":"explode"}')), { name: 'BadRequestException' });
  t.throws(() => tableUpdateFromJson(parseJson('{"action":"add-snapshot","snapshot":{"snapshot-id":1,"timestamp-ms":1,"manifest-list":"x","summary":{"operation":"merge"}}}')), { name: 'BadRequestException' });
});

t.test('reuse of identical schema, spec and order; no-op commit returns base', async (t) => {
  const m = baseTable();
  const same = applyUpdates(m, [
    { action: 'add-schema', schema: { ...m.schemas[0]!, schemaId: 12 } },
    { action: 'set-current-schema', schemaId: -1 },
    { action: 'add-spec', spec: { fields: [{ sourceId: 2, name: 'ts_day', transform: Transforms.day }] } },
    { action: 'set-default-spec', specId: -1 },
    { action: 'add-sort-order', sortOrder: { orderId: 9, fields: m.sortOrders[0]!.fields } },
    { action: 'set-default-sort-order', sortOrderId: -1 },
    { action: 'set-location', location: m.location },
    { action: 'set-properties', updates: new Map() },
  ], { now: NOW + 1, previousMetadataLocation: 'x' });
  t.equal(same, m, 'nothing changed: base returned, no metadata-log entry');
  const unsorted = applyUpdates(m, [{ action: 'add-sort-order', sortOrder: { orderId: 3, fields: [] } }, { action: 'set-default-sort-order', sortOrderId: -1 }], { now: NOW + 1 });
  t.equal(unsorted.defaultSortOrderId, 0, 'unsorted order always has id 0');
  t.equal(unsorted.lastUpdatedMs, NOW + 1);
});

t.test('create from empty like a REST create transaction', async (t) => {
  const created = applyUpdates(undefined, [
    { action: 'assign-uuid', uuid: 'aaaaaaaa-bbbb-cccc-dddd-eeeeeeeeeeee' },
    { action: 'upgrade-format-version', formatVersion: 2 },
    { action: 'add-schema', schema: schema(0, [nestedField(1, 'id', Types.int, true), nestedField(2, 'name', Types.string)]), lastColumnId: 2 },
    { action: 'set-current-schema', schemaId: -1 },
    { action: 'add-spec', spec: { specId: 0, fields: [] } },
    { action: 'set-default-spec', specId: -1 },
    { action: 'add-sort-order', sortOrder: { orderId: 0, fields: [] } },
    { action: 'set-default-sort-order', sortOrderId: -1 },
    { action: 'set-location', location: 'file:///w/t' },
    { action: 'set-properties', updates: new Map([['a', 'b']]) },
  ], { now: NOW });
  t.equal(created.tableUuid, 'aaaaaaaa-bbbb-cccc-dddd-eeeeeeeeeeee');
  t.equal(created.currentSchemaId, 0);
  t.equal(created.lastColumnId, 2);
  t.equal(created.defaultSpecId, 0);
  t.equal(created.lastPartitionId, 999);
  t.equal(created.defaultSortOrderId, 0);
  t.equal(created.lastUpdatedMs, NOW);
  t.throws(() => applyUpdates(undefined, [{ action: 'set-location', location: '/x' }], { now: NOW }), { name: 'ValidationException' });
});

t.test('snapshots, refs, removal and logs', async (t) => {
  let m = baseTable();
  m = applyUpdates(m, [
    { action: 'add-snapshot', snapshot: snapshot(1n, 1) },
    { action: 'set-snapshot-ref', refName: 'main', ref: { type: 'branch', snapshotId: 1n } },
  ], { now: NOW + 10_000 });
  m = applyUpdates(m, [
    { action: 'add-snapshot', snapshot: snapshot(2n, 2, 1n) },
    { action: 'set-snapshot-ref', refName: 'main', ref: { type: 'branch', snapshotId: 2n } },
    { action: 'set-snapshot-ref', refName: 'audit', ref: { type: 'branch', snapshotId: 1n, minSnapshotsToKeep: 3 } },
    { action: 'set-statistics', statistics: { snapshotId: 1n, statisticsPath: '/s.puffin', fileSizeInBytes: 10, fileFooterSizeInBytes: 2, blobMetadata: [] } },
  ], { now: NOW + 20_000 });
  t.equal(m.snapshotLog.length, 2);
  t.equal(m.refs.get('audit')?.minSnapshotsToKeep, 3);
  // Rolling main back to an older snapshot: timestamp is `now`, not the snapshot's.
  const rolled = applyUpdates(m, [{ action: 'set-snapshot-ref', refName: 'main', ref: { type: 'branch', snapshotId: 1n } }], { now: NOW + 30_000 });
  t.same(rolled.snapshotLog.at(-1), { timestampMs: NOW + 30_000, snapshotId: 1n });
  t.equal(rolled.lastUpdatedMs, NOW + 30_000);
  const removed = applyUpdates(m, [{ action: 'remove-snapshots', snapshotIds: [1n] }], { now: NOW + 40_000 });
  t.notOk(removed.refs.has('audit'), 'ref to a removed snapshot is dropped');
  t.equal(removed.statistics.length, 0, 'its statistics too');
  t.same(removed.snapshotLog.map((e) => e.snapshotId), [2n], 'log cut before the removed snapshot');
  const noMain = applyUpdates(m, [{ action: 'remove-snapshot-ref', refName: 'main' }], { now: NOW + 50_000 });
  t.equal(noMain.currentSnapshotId, null);
  t.match(serializeTableMetadata(noMain), /"current-snapshot-id" : -1/);
});

t.test('metadata-log trimmed to write.metadata.previous-versions-max', async (t) => {
  let m = applyUpdates(baseTable(), [{ action: 'set-properties', updates: new Map([['write.metadata.previous-versions-max', '3']]) }], { now: NOW });
  for (let i = 0; i < 6; i++) m = applyUpdates(m, [{ action: 'set-properties', updates: new Map([['n', String(i)]]) }], { now: NOW + i + 1, previousMetadataLocation: `m${i}.json` });
  t.same(m.metadataLog.map((e) => e.metadataFile), ['m3.json', 'm4.json', 'm5.json']);
});

t.test('every update kind survives its JSON form', async (t) => {
  const all: TableUpdate[] = [
    { action: 'assign-uuid', uuid: 'u' },
    { action: 'upgrade-format-version', formatVersion: 2 },
    { action: 'add-schema', schema: schema(1, [nestedField(1, 'a', Types.map(2, Types.string, 3, Types.decimal(10, 2), true), true)]), lastColumnId: 3 },
    { action: 'set-current-schema', schemaId: -1 },
    { action: 'add-spec', spec: { fields: [{ sourceId: 1, fieldId: 1000, name: 'a_b', transform: Transforms.truncate(4) }] } },
    { action: 'set-default-spec', specId: 0 },
    { action: 'add-sort-order', sortOrder: { orderId: 1, fields: [{ sourceId: 1, transform: Transforms.void, direction: 'desc', nullOrder: 'nulls-last' }] } },
    { action: 'set-default-sort-order', sortOrderId: -1 },
    { action: 'add-snapshot', snapshot: snapshot(9007199254740993n, 3, 1n) },
    { action: 'set-snapshot-ref', refName: 'b', ref: { type: 'branch', snapshotId: 9007199254740993n, minSnapshotsToKeep: 1, maxSnapshotAgeMs: 5, maxRefAgeMs: 6 } },
    { action: 'remove-snapshots', snapshotIds: [1n, 9007199254740993n] },
    { action: 'remove-snapshot-ref', refName: 'b' },
    { action: 'set-location', location: 's3://x/y' },
    { action: 'set-properties', updates: new Map([['__proto__', 'x']]) },
    { action: 'remove-properties', removals: ['a'] },
    { action: 'set-statistics', statistics: { snapshotId: 3n, statisticsPath: 'p', fileSizeInBytes: 1, fileFooterSizeInBytes: 1, blobMetadata: [{ type: 'apache-datasketches-theta-v1', sourceSnapshotId: 3n, sourceSnapshotSequenceNumber: 1, fields: [1], properties: new Map([['ndv', '3']]) }] } },
    { action: 'remove-statistics', snapshotId: 3n },
    { action: 'set-partition-statistics', partitionStatistics: { snapshotId: 3n, statisticsPath: 'p', fileSizeInBytes: 4 } },
    { action: 'remove-partition-statistics', snapshotId: 3n },
    { action: 'remove-partition-specs', specIds: [1, 2] },
    { action: 'remove-schemas', schemaIds: [3] },
    { action: 'add-encryption-key', encryptionKey: { 'key-id': 'k', 'encrypted-key-metadata': 'AA==' } },
    { action: 'remove-encryption-key', keyId: 'k' },
  ];
  for (const u of all) t.same(tableUpdateFromJson(parseJson(stringifyJson(tableUpdateToJson(u)))), u, u.action);
  const proto = tableUpdateFromJson(parseJson('{"action":"set-properties","updates":{"__proto__":"x","constructor":"y"}}'));
  t.same(proto.action === 'set-properties' ? [...proto.updates] : [], [['__proto__', 'x'], ['constructor', 'y']]);
});

// Property tests: invariants of applyUpdates over random update sequences.
const arbitraryUpdate: fc.Arbitrary<TableUpdate> = fc.oneof(
  fc.integer({ min: 1, max: 4 }).map((n): TableUpdate => ({
    action: 'add-schema',
    schema: schema(0, [nestedField(1, 'id', Types.long, true), nestedField(2, 'ts', Types.timestamptz), nestedField(3, 'tags', Types.list(4, Types.string)), ...Array.from({ length: n }, (_, i) => nestedField(10 + i, `c${i}`, Types.string))]),
  })),
  fc.constantFrom(-1, 0, 1, 2).map((schemaId): TableUpdate => ({ action: 'set-current-schema', schemaId })),
  fc.constantFrom('identity', 'bucket[4]', 'day', 'void').map((tr): TableUpdate => ({ action: 'add-spec', spec: { fields: [{ sourceId: tr === 'day' ? 2 : 1, name: `p_${tr.replace(/\W/g, '')}`, transform: tr === 'identity' ? Transforms.identity : tr === 'day' ? Transforms.day : tr === 'void' ? Transforms.void : Transforms.bucket(4) }] } })),
  fc.constantFrom(-1, 0, 1).map((specId): TableUpdate => ({ action: 'set-default-spec', specId })),
  fc.constantFrom('asc', 'desc').map((d): TableUpdate => ({ action: 'add-sort-order', sortOrder: { orderId: 0, fields: [{ sourceId: 1, transform: Transforms.identity, direction: d as 'asc' | 'desc', nullOrder: 'nulls-first' }] } })),
  fc.constantFrom(-1, 0, 1).map((sortOrderId): TableUpdate => ({ action: 'set-default-sort-order', sortOrderId })),
  fc.bigInt({ min: 1n, max: 2n ** 63n - 1n }).map((id): TableUpdate => ({ action: 'add-snapshot', snapshot: snapshot(id, 1_000_000) })),
  fc.dictionary(fc.string({ maxLength: 5 }), fc.string({ maxLength: 5 }), { maxKeys: 3 }).map((d): TableUpdate => ({ action: 'set-properties', updates: new Map(Object.entries(d)) })),
);

t.test('property: ids only grow, -1 resolves to the last added, and the result re-parses', async (t) => {
  fc.assert(
    fc.property(fc.array(arbitraryUpdate, { maxLength: 12 }), (updates) => {
      const base = baseTable();
      let m: TableMetadata;
      try {
        m = applyUpdates(base, updates, { now: NOW + 1 });
      } catch (e) {
        if (e instanceof IcebergError && e.type === 'ValidationException') return true;
        throw e;
      }
      if (m.lastColumnId < base.lastColumnId || m.lastPartitionId < base.lastPartitionId) return false;
      if (m.schemas.length < base.schemas.length || m.partitionSpecs.length < base.partitionSpecs.length) return false;
      const schemaIds = m.schemas.map((s) => s.schemaId);
      if (new Set(schemaIds).size !== schemaIds.length) return false;
      if (!m.schemas.some((s) => s.schemaId === m.currentSchemaId)) return false;
      if (!m.partitionSpecs.some((s) => s.specId === m.defaultSpecId)) return false;
      if (!m.sortOrders.some((o) => o.orderId === m.defaultSortOrderId)) return false;
      for (const s of m.schemas) for (const f of s.fields) if (f.id > m.lastColumnId) return false;
      for (const s of m.partitionSpecs) for (const f of s.fields) if (f.fieldId > m.lastPartitionId) return false;
      // -1 rule: a set-current-schema -1 directly after an add-schema selects that schema.
      for (let i = 0; i + 1 < updates.length; i++) {
        const a = updates[i];
        const b = updates[i + 1];
        if (a?.action === 'add-schema' && b?.action === 'set-current-schema' && b.schemaId === -1 && i + 2 === updates.length) {
          const current = m.schemas.find((s) => s.schemaId === m.currentSchemaId);
          if (current === undefined || current.fields.length !== a.schema.fields.length) return false;
        }
      }
      const again = parseTableMetadata(serializeTableMetadata(m));
      return serializeTableMetadata(again) === serializeTableMetadata(m);
    }),
    { numRuns: 300 },
  );
  t.pass('invariants hold');
});
