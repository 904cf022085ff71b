/**
 * Manifests and manifest lists we write: read back identically by our reader, decoded independently
 * by plain `avsc` (field ids present in the embedded Avro schema), the same Avro schema Java Iceberg
 * 1.8 writes for the same table, and, end to end, a table committed over real Parquet files whose
 * planned scan DuckDB reads with the expected row counts.
 */
import t from 'tap';
import fc from 'fast-check';
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import avro from 'avsc';
import { DuckDBInstance } from '@duckdb/node-api';
import { readAvroFile } from '../../catalog/iceberg/avro.js';
import { parseDecimal, toByteBuffer } from '../../catalog/iceberg/conversions.js';
import type { IcebergValue } from '../../catalog/iceberg/conversions.js';
import { readManifest, writeManifest } from '../../catalog/iceberg/manifest.js';
import type { DataFile, ManifestEntry } from '../../catalog/iceberg/manifest.js';
import { describeManifest, readManifestList, writeManifestList } from '../../catalog/iceberg/manifest-list.js';
import type { ManifestFile } from '../../catalog/iceberg/manifest-list.js';
import { bindPartitionSpec, partitionType } from '../../catalog/iceberg/partition-spec.js';
import type { PartitionSpec } from '../../catalog/iceberg/partition-spec.js';
import { planScan } from '../../catalog/iceberg/scan.js';
import { schema } from '../../catalog/iceberg/schema.js';
import type { Schema } from '../../catalog/iceberg/schema.js';
import { applyUpdates } from '../../catalog/iceberg/table-commit.js';
import { newTableMetadata, parseTableMetadata, serializeTableMetadata } from '../../catalog/iceberg/table-metadata.js';
import { parseTransform } from '../../catalog/iceberg/transforms.js';
import { Types, nestedField } from '../../catalog/iceberg/types.js';
import type { PrimitiveType } from '../../catalog/iceberg/types.js';
import { LocalFileIO, resolveLocalPath } from '../../storage-creds/local-file-io.js';
import { ICEBERG_DATA, remappedIo, sharedTable } from './helpers.js';

const PEOPLE: Schema = schema(0, [nestedField(1, 'id', Types.int, true), nestedField(2, 'name', Types.string), nestedField(3, 'bir', Types.date)]);
const BY_NAME: PartitionSpec = { specId: 0, fields: [{ sourceId: 2, fieldId: 1000, name: 'name', transform: parseTransform('identity') }] };

function entry(overrides: Partial<DataFile>, status: ManifestEntry['status'] = 'added', snapshotId: bigint | null = 883882341917253211n): ManifestEntry {
  return {
    status,
    snapshotId,
    sequenceNumber: null,
    fileSequenceNumber: null,
    dataFile: {
      content: 'data',
      filePath: 'file:///w/t/data/name=e/f.parquet',
      fileFormat: 'PARQUET',
      partition: ['e'],
      recordCount: 1,
      fileSizeInBytes: 891,
      columnSizes: new Map([[1, 39], [2, 46], [3, 44]]),
      valueCounts: new Map([[1, 1], [2, 1], [3, 1]]),
      nullValueCounts: new Map([[1, 0], [2, 0], [3, 0]]),
      nanValueCounts: new Map(),
      lowerBounds: new Map([[1, toByteBuffer(Types.int, 5)], [2, toByteBuffer(Types.string, 'e')]]),
      upperBounds: new Map([[1, toByteBuffer(Types.int, 5)], [2, toByteBuffer(Types.string, 'e')]]),
      splitOffsets: [4],
      sortOrderId: 0,
      ...overrides,
    },
  };
}

t.test('Avro schema equals what Java Iceberg 1.8 writes for the same table', async (t) => {
  const javaManifest = readAvroFile(readFileSync(path.join(ICEBERG_DATA, 'equality_deletes/warehouse/mydb/mytable_partitioned/metadata/ec04e9ce-e03b-4fbe-a707-3645c1938319-m0.avro')));
  const ours = readAvroFile(writeManifest({ formatVersion: 2, spec: BY_NAME, schema: PEOPLE, content: 'data', entries: [entry({})] }));
  t.same(ours.schema, javaManifest.schema, 'manifest_entry schema identical');
  for (const key of ['schema', 'schema-id', 'partition-spec', 'partition-spec-id', 'format-version', 'content']) {
    t.ok(ours.metadata.has(key), `metadata key ${key}`);
  }
  t.same(JSON.parse(ours.metadata.get('partition-spec')!), JSON.parse(javaManifest.metadata.get('partition-spec')!));
  t.same(JSON.parse(ours.metadata.get('iceberg.schema')!), JSON.parse(javaManifest.metadata.get('iceberg.schema')!), 'iceberg.schema identical');
  t.equal(ours.metadata.get('avro.codec'), 'deflate');

  const javaList = readAvroFile(readFileSync(path.join(ICEBERG_DATA, 'equality_deletes/warehouse/mydb/mytable_partitioned/metadata/snap-883882341917253211-1-ec04e9ce-e03b-4fbe-a707-3645c1938319.avro')));
  const list = readAvroFile(writeManifestList({ formatVersion: 2, snapshotId: 883882341917253211n, parentSnapshotId: 6022113614852838397n, sequenceNumber: 4, manifests: [] }));
  t.same(list.schema, javaList.schema, 'manifest_file schema identical');
  t.same(JSON.parse(list.metadata.get('iceberg.schema')!), JSON.parse(javaList.metadata.get('iceberg.schema')!));
  for (const key of ['snapshot-id', 'parent-snapshot-id', 'sequence-number', 'format-version']) t.equal(list.metadata.get(key), javaList.metadata.get(key), key);
});

t.test('a Java-written manifest re-written by us reads back identically', async (t) => {
  const io = remappedIo(sharedTable('mytable_partitioned'));
  for (const name of ['2b5d4ce3-154e-4498-a648-89be96ebd74a-m0.avro', 'ff275eec-b23b-435f-a6a5-1ab7ce1c8749-m0.avro']) {
    const original = readManifest(await io.read(`data/persistent/equality_deletes/warehouse/mydb/mytable_partitioned/metadata/${name}`));
    const rewritten = readManifest(writeManifest({ formatVersion: 2, spec: BY_NAME, schema: PEOPLE, content: original.metadata.content, entries: original.entries }));
    t.same(rewritten.entries, original.entries, name);
  }
});

async function avscDecode(bytes: Uint8Array): Promise<{ schema: Record<string, unknown>; records: unknown[]; meta: Record<string, Buffer> }> {
  return new Promise((resolve, reject) => {
    const records: unknown[] = [];
    let header: { meta: Record<string, Buffer> } | undefined;
    let type: avro.Type | undefined;
    const decoder = new avro.streams.BlockDecoder({ parseHook: (s: avro.Schema) => avro.Type.forSchema(s, { wrapUnions: false }) } as never);
    decoder.on('metadata', (ty: avro.Type, _codec: string, h: { meta: Record<string, Buffer> }) => {
      type = ty;
      header = h;
    });
    decoder.on('data', (r: unknown) => records.push(r));
    decoder.on('end', () => resolve({ schema: JSON.parse(header!.meta['avro.schema']!.toString()) as Record<string, unknown>, records, meta: header!.meta }));
    decoder.on('error', reject);
    void type;
    decoder.end(Buffer.from(bytes));
  });
}

t.test('plain avsc decodes our manifest; field ids are in its schema', async (t) => {
  const bytes = writeManifest({
    formatVersion: 2,
    spec: BY_NAME,
    schema: PEOPLE,
    content: 'deletes',
    entries: [entry({ content: 'equality-deletes', equalityIds: [2, 1], partition: ['c'] }, 'added', 42n)],
  });
  const decoded = await avscDecode(bytes);
  const record = decoded.records[0] as { status: number; snapshot_id: number; data_file: Record<string, unknown> };
  t.equal(record.status, 1);
  t.equal(record.snapshot_id, 42);
  t.same(record.data_file['equality_ids'], [2, 1]);
  t.same(record.data_file['partition'], { name: 'c' });
  t.equal(record.data_file['content'], 2);
  t.equal(decoded.meta['content']!.toString(), 'deletes');
  const fieldIds: number[] = [];
  const walk = (s: unknown): void => {
    if (Array.isArray(s)) s.forEach(walk);
    else if (typeof s === 'object' && s !== null) {
      const o = s as Record<string, unknown>;
      if (typeof o['field-id'] === 'number') fieldIds.push(o['field-id']);
      for (const k of ['element-id', 'key-id', 'value-id']) if (typeof o[k] === 'number') fieldIds.push(o[k] as number);
      Object.values(o).forEach(walk);
    }
  };
  walk(decoded.schema);
  for (const id of [0, 1, 2, 3, 4, 100, 101, 102, 103, 104, 108, 109, 110, 117, 118, 125, 126, 127, 128, 131, 132, 133, 134, 135, 136, 137, 140, 143, 1000]) t.ok(fieldIds.includes(id), `field id ${id}`);
});

t.test('v1 manifests and manifest lists', async (t) => {
  const entries = [entry({}, 'added', 7n), entry({ filePath: 'file:///w/x.parquet', partition: [null] }, 'existing', 3n)];
  const bytes = writeManifest({ formatVersion: 1, spec: BY_NAME, schema: PEOPLE, content: 'data', entries });
  const back = readManifest(bytes);
  t.equal(back.metadata.formatVersion, 1);
  t.same(back.entries.map((e) => [e.status, e.snapshotId, e.sequenceNumber, e.dataFile.partition[0]]), [['added', 7n, 0, 'e'], ['existing', 3n, 0, null]]);
  const fields = (readAvroFile(bytes).schema as unknown as { fields: { name: string; type: unknown }[] }).fields;
  t.same(fields.map((f) => f.name), ['status', 'snapshot_id', 'data_file']);
  t.equal(fields[1]!.type, 'long', 'v1 snapshot_id is required');
  t.ok(JSON.stringify(fields[2]).includes('"block_size_in_bytes"'), 'v1 data_file has block_size_in_bytes');
  t.throws(() => writeManifest({ formatVersion: 1, spec: BY_NAME, schema: PEOPLE, content: 'deletes', entries: [] }), { name: 'ValidationException' });
  const manifest: ManifestFile = describeManifest({ manifestPath: '/m.avro', manifestLength: bytes.length, spec: BY_NAME, schema: PEOPLE, content: 'data', entries, addedSnapshotId: 7n, sequenceNumber: 0 });
  const list = readManifestList(writeManifestList({ formatVersion: 1, snapshotId: 7n, sequenceNumber: 0, manifests: [manifest] }));
  t.equal(list.metadata.parentSnapshotId, undefined);
  t.same(list.manifests[0], { ...manifest, sequenceNumber: 0, minSequenceNumber: 0 });
  const listFields = (readAvroFile(writeManifestList({ formatVersion: 1, snapshotId: 7n, sequenceNumber: 0, manifests: [] })).schema as unknown as { fields: { name: string; type: unknown }[] }).fields;
  t.equal(listFields.find((f) => f.name === 'added_snapshot_id')?.type, 'long', 'v1 added_snapshot_id required');
  t.notOk(listFields.some((f) => f.name === 'sequence_number'));
});

t.test('v2 sequence-number inheritance and manifest summaries', async (t) => {
  const entries = [
    entry({ partition: ['a'] }, 'added', null),
    { ...entry({ partition: ['b'], recordCount: 5 }, 'existing', 1n), sequenceNumber: 2, fileSequenceNumber: 2 },
    { ...entry({ partition: [null], recordCount: 7 }, 'deleted', 1n), sequenceNumber: 1, fileSequenceNumber: 1 },
  ];
  const bytes = writeManifest({ formatVersion: 2, spec: BY_NAME, schema: PEOPLE, content: 'data', entries });
  const raw = readManifest(bytes);
  t.same(raw.entries.map((e) => [e.snapshotId, e.sequenceNumber]), [[null, null], [1n, 2], [1n, 1]], 'nulls kept without inheritance');
  const inherited = readManifest(bytes, { addedSnapshotId: 99n, sequenceNumber: 5 });
  t.same(inherited.entries.map((e) => [e.snapshotId, e.sequenceNumber, e.fileSequenceNumber]), [[99n, 5, 5], [1n, 2, 2], [1n, 1, 1]], 'only added entries inherit sequence numbers');
  const m = describeManifest({ manifestPath: '/m', manifestLength: bytes.length, spec: BY_NAME, schema: PEOPLE, content: 'data', entries, addedSnapshotId: 99n, sequenceNumber: 5 });
  t.same([m.addedFilesCount, m.existingFilesCount, m.deletedFilesCount, m.addedRowsCount, m.existingRowsCount, m.deletedRowsCount, m.minSequenceNumber], [1, 1, 1, 1, 5, 7, 2]);
  t.same(m.partitions, [{ containsNull: true, containsNan: false, lowerBound: toByteBuffer(Types.string, 'a'), upperBound: toByteBuffer(Types.string, 'b') }]);
  const list = readManifestList(writeManifestList({ formatVersion: 2, snapshotId: 99n, parentSnapshotId: 98n, sequenceNumber: 5, manifests: [m] }));
  t.same(list.manifests, [m]);
  t.same(list.metadata, { formatVersion: 2, snapshotId: 99n, parentSnapshotId: 98n, sequenceNumber: 5 });
});

// Every partition-able type through a manifest and back, with random values.
const PARTITION_CASES: readonly { readonly source: PrimitiveType; readonly transform: string; readonly value: fc.Arbitrary<IcebergValue> }[] = [
  { source: Types.boolean, transform: 'identity', value: fc.boolean() },
  { source: Types.int, transform: 'identity', value: fc.integer() },
  { source: Types.long, transform: 'identity', value: fc.bigInt({ min: -(2n ** 63n), max: 2n ** 63n - 1n }) },
  { source: Types.float, transform: 'identity', value: fc.float({ noNaN: true, noDefaultInfinity: true }) },
  { source: Types.double, transform: 'identity', value: fc.double({ noNaN: true }) },
  { source: Types.decimal(9, 2), transform: 'identity', value: fc.bigInt({ min: -(10n ** 9n) + 1n, max: 10n ** 9n - 1n }) },
  { source: Types.decimal(38, 10), transform: 'identity', value: fc.bigInt({ min: -(10n ** 38n) + 1n, max: 10n ** 38n - 1n }) },
  { source: Types.date, transform: 'identity', value: fc.integer({ min: -100000, max: 100000 }) },
  { source: Types.time, transform: 'identity', value: fc.bigInt({ min: 0n, max: 86_399_999_999n }) },
  { source: Types.timestamp, transform: 'identity', value: fc.bigInt({ min: -(2n ** 60n), max: 2n ** 60n }) },
  { source: Types.timestamptz, transform: 'identity', value: fc.bigInt({ min: -(2n ** 60n), max: 2n ** 60n }) },
  { source: Types.string, transform: 'identity', value: fc.string() },
  { source: Types.uuid, transform: 'identity', value: fc.uuid() },
  { source: Types.fixed(3), transform: 'identity', value: fc.uint8Array({ minLength: 3, maxLength: 3 }) },
  { source: Types.binary, transform: 'identity', value: fc.uint8Array() },
  { source: Types.long, transform: 'bucket[16]', value: fc.integer({ min: 0, max: 15 }) },
  { source: Types.string, transform: 'truncate[3]', value: fc.string({ maxLength: 3 }) },
  { source: Types.timestamptz, transform: 'day', value: fc.integer({ min: -30000, max: 30000 }) },
  { source: Types.timestamp, transform: 'hour', value: fc.integer({ min: -1000000, max: 1000000 }) },
  { source: Types.date, transform: 'month', value: fc.integer({ min: -1000, max: 1000 }) },
  { source: Types.date, transform: 'year', value: fc.integer({ min: -100, max: 100 }) },
];

t.test('property: partition tuples of every type round trip through a manifest', async (t) => {
  const fields = PARTITION_CASES.map((c, i) => nestedField(i + 1, `c${i}`, c.source));
  const tableSchema = schema(0, fields);
  const spec = bindPartitionSpec({ fields: PARTITION_CASES.map((c, i) => ({ sourceId: i + 1, name: `p${i}_${c.transform.replace(/\W/g, '')}`, transform: parseTransform(c.transform) })) }, tableSchema, { specId: 3, lastPartitionId: 999, formatVersion: 2 });
  t.equal(partitionType(spec, tableSchema).fields.length, PARTITION_CASES.length);
  const tuple = fc.tuple(...PARTITION_CASES.map((c) => fc.option(c.value, { nil: null })));
  fc.assert(
    fc.property(fc.array(tuple, { minLength: 1, maxLength: 4 }), (tuples) => {
      const entries = tuples.map((p, i) => entry({ filePath: `file:///f${i}.parquet`, partition: p as (IcebergValue | null)[] }, 'added', BigInt(i)));
      const back = readManifest(writeManifest({ formatVersion: 2, spec, schema: tableSchema, content: 'data', entries, codec: i2codec(tuples.length) }));
      const norm = (v: unknown): unknown => (v instanceof Uint8Array ? Buffer.from(v).toString('hex') : typeof v === 'number' && Object.is(v, -0) ? 0 : v);
      return JSON.stringify(back.entries.map((e) => e.dataFile.partition.map(norm)), big) === JSON.stringify(entries.map((e) => e.dataFile.partition.map(norm)), big);
    }),
    { numRuns: 150 },
  );
  t.pass('round trips');
});

const i2codec = (n: number): 'null' | 'deflate' => (n % 2 === 0 ? 'null' : 'deflate');
const big = (_k: string, v: unknown): unknown => (typeof v === 'bigint' ? `${v}n` : v);

t.test('end to end: a table committed over real Parquet files, planned and read by DuckDB', async (t) => {
  const dir = mkdtempSync(path.join(tmpdir(), 'floe-iceberg-'));
  const io = new LocalFileIO();
  const location = `file://${dir}/lineitem`;
  const source = sharedTable('lineitem_iceberg');
  // Reuse lineitem's data file (the v2 one, 51,793 rows) and its column stats from Spark's manifest.
  const sparkPlan = await planScan(parseTableMetadata(readFileSync(path.join(ICEBERG_DATA, 'lineitem_iceberg/metadata/v2.metadata.json'), 'utf8')), remappedIo(source));
  const sparkFile = sparkPlan.tasks[0]!.file;
  const lineitemSchema = sparkPlan.schema;
  const dataPath = `file://${path.join(ICEBERG_DATA, 'lineitem_iceberg/data', path.basename(sparkFile.filePath))}`;

  let metadata = newTableMetadata({ schema: lineitemSchema, location, now: 1_700_000_000_000, tableUuid: '00000000-0000-4000-8000-000000000001' });
  const spec = metadata.partitionSpecs[0]!;
  const snapshotId = 1234567890123456789n;
  const entries: ManifestEntry[] = [{ status: 'added', snapshotId, sequenceNumber: null, fileSequenceNumber: null, dataFile: { ...sparkFile, filePath: dataPath } }];
  const manifestPath = `${location}/metadata/${snapshotId}-m0.avro`;
  const manifestBytes = writeManifest({ formatVersion: 2, spec, schema: metadata.schemas[0]!, content: 'data', entries });
  await io.write(manifestPath, manifestBytes);
  const manifestFile = describeManifest({ manifestPath, manifestLength: manifestBytes.length, spec, schema: metadata.schemas[0]!, content: 'data', entries, addedSnapshotId: snapshotId, sequenceNumber: 1 });
  const listPath = `${location}/metadata/snap-${snapshotId}-1.avro`;
  await io.write(listPath, writeManifestList({ formatVersion: 2, snapshotId, sequenceNumber: 1, manifests: [manifestFile] }));
  metadata = applyUpdates(metadata, [
    { action: 'add-snapshot', snapshot: { snapshotId, sequenceNumber: 1, timestampMs: 1_700_000_001_000, manifestList: listPath, summary: new Map([['operation', 'append'], ['added-records', String(sparkFile.recordCount)]]), schemaId: 0 } },
    { action: 'set-snapshot-ref', refName: 'main', ref: { type: 'branch', snapshotId } },
  ], { now: 1_700_000_002_000 });
  const metadataPath = `${location}/metadata/00001-x.metadata.json`;
  await io.write(metadataPath, Buffer.from(serializeTableMetadata(metadata)));

  const reloaded = parseTableMetadata((await io.read(metadataPath)).toString());
  const plan = await planScan(reloaded, io);
  t.equal(plan.totalRecords, 51793);
  t.equal(plan.tasks[0]!.sequenceNumber, 1, 'inherited data sequence number');
  t.equal(plan.tasks[0]!.snapshotId, snapshotId);
  const db = await DuckDBInstance.create(':memory:');
  const conn = await db.connect();
  const files = plan.tasks.map((task) => `'${resolveLocalPath(task.file.filePath)}'`).join(', ');
  const rows = await conn.runAndReadAll(`SELECT count(*)::INTEGER AS n, sum(l_extendedprice * l_discount)::DOUBLE AS revenue FROM read_parquet([${files}]) WHERE l_shipdate >= DATE '1994-01-01' AND l_shipdate < DATE '1995-01-01' AND l_discount BETWEEN 0.05 AND 0.07 AND l_quantity < 24`);
  const all = await conn.runAndReadAll(`SELECT count(*)::INTEGER FROM read_parquet([${files}])`);
  t.equal(all.getRows()[0]![0], 51793, 'DuckDB reads the files the written manifest references');
  t.equal(Math.round(Number(rows.getRows()[0]![1]) * 10000) / 10000, 1077536.9101, 'TPC-H Q6 on the planned files');
  conn.closeSync();
  t.equal(parseDecimal('1077536.9101', 4), 10775369101n);
});
