/**
 * Manifests: Avro files listing data or delete files with their partition tuple and column stats
 * (table spec "Manifests"). Read any writer's manifests (fields matched by field id, v1 and v2), and
 * write them the way Java Iceberg does, so Java, PyIceberg and DuckDB's iceberg extension read ours.
 */
import { IcebergError } from './errors.js';
import { bigintFromBytes, bigintToFixedBytes, uuidFromBytes, uuidToBytes } from './conversions.js';
import type { IcebergValue } from './conversions.js';
import { byFieldId, withSchemaId, fieldSchemaById, icebergToAvroSchema, icebergTypeOfAvro, readAvroFile, writeAvroFile } from './avro.js';
import type { AvroCodec, AvroSchema, ById } from './avro.js';
import { stringifyJson } from './json.js';
import { partitionFieldsToJson, partitionType } from './partition-spec.js';
import type { PartitionSpec } from './partition-spec.js';
import { schemaToJson } from './schema.js';
import type { Schema } from './schema.js';
import { decimalRequiredBytes, nestedField, typeToJson, Types } from './types.js';
import type { NestedField, PrimitiveType, StructType } from './types.js';

/** Entry status: 0 existing, 1 added in the manifest's snapshot, 2 deleted in it. */
export type ManifestEntryStatus = 'existing' | 'added' | 'deleted';
/** What a content file holds: 0 data, 1 position deletes, 2 equality deletes. */
export type DataFileContent = 'data' | 'position-deletes' | 'equality-deletes';
/** Whether a manifest lists data files or delete files. */
export type ManifestContent = 'data' | 'deletes';

const STATUS_CODES: readonly ManifestEntryStatus[] = ['existing', 'added', 'deleted'];
const CONTENT_CODES: readonly DataFileContent[] = ['data', 'position-deletes', 'equality-deletes'];

/** A data or delete file as a manifest describes it. */
export interface DataFile {
  readonly content: DataFileContent;
  readonly filePath: string;
  /** `PARQUET`, `AVRO`, `ORC` or `PUFFIN` (upper case as Java writes it). */
  readonly fileFormat: string;
  /** Partition tuple in spec field order (see conversions.ts for value types). */
  readonly partition: readonly (IcebergValue | null)[];
  readonly recordCount: number;
  readonly fileSizeInBytes: number;
  /** Column id → bytes on disk. */
  readonly columnSizes?: ReadonlyMap<number, number>;
  /** Column id → values including nulls and NaNs. */
  readonly valueCounts?: ReadonlyMap<number, number>;
  readonly nullValueCounts?: ReadonlyMap<number, number>;
  readonly nanValueCounts?: ReadonlyMap<number, number>;
  /** Column id → lower bound in single-value serialization (decode with `fromByteBuffer`). */
  readonly lowerBounds?: ReadonlyMap<number, Uint8Array>;
  readonly upperBounds?: ReadonlyMap<number, Uint8Array>;
  readonly keyMetadata?: Uint8Array;
  readonly splitOffsets?: readonly number[];
  /** Equality delete files: the column ids compared. */
  readonly equalityIds?: readonly number[];
  readonly sortOrderId?: number;
  /** Position delete files that all refer to one data file. */
  readonly referencedDataFile?: string;
}

export interface ManifestEntry {
  readonly status: ManifestEntryStatus;
  /** Snapshot that added or deleted the file; inherited from the manifest when absent on disk. */
  readonly snapshotId: bigint | null;
  /** Data sequence number (delete applicability); inherited for added entries in v2, 0 in v1. */
  readonly sequenceNumber: number | null;
  /** Sequence number of the commit that wrote the file. */
  readonly fileSequenceNumber: number | null;
  readonly dataFile: DataFile;
}

/** Manifest-level facts from the Avro file metadata (Java writes all of them). */
export interface ManifestMetadata {
  readonly formatVersion: number;
  readonly content: ManifestContent;
  readonly partitionSpecId: number | undefined;
  /** `partition-spec` as JSON text, when present. */
  readonly partitionSpecJson: string | undefined;
  /** `schema` as JSON text, when present. */
  readonly schemaJson: string | undefined;
  /** Partition field ids and types, in tuple order, from the file's own Avro schema. */
  readonly partitionFields: readonly { readonly fieldId: number; readonly name: string; readonly type: PrimitiveType }[];
}

export interface Manifest {
  readonly metadata: ManifestMetadata;
  readonly entries: readonly ManifestEntry[];
}

/** What readers inherit from the manifest list entry (spec "Sequence Number Inheritance"). */
export interface ManifestInheritance {
  readonly addedSnapshotId: bigint;
  readonly sequenceNumber: number;
}

// ---------------------------------------------------------------------------------------------
// Field ids of the manifest schemas (table spec "Manifests")

const F = {
  status: 0, snapshotId: 1, sequenceNumber: 3, fileSequenceNumber: 4, dataFile: 2,
  content: 134, filePath: 100, fileFormat: 101, partition: 102, recordCount: 103, fileSizeInBytes: 104, blockSizeInBytes: 105,
  columnSizes: 108, valueCounts: 109, nullValueCounts: 110, nanValueCounts: 137, lowerBounds: 125, upperBounds: 128,
  keyMetadata: 131, splitOffsets: 132, equalityIds: 135, sortOrderId: 140, referencedDataFile: 143,
} as const;

/** Java's default `block_size_in_bytes` for v1 manifests (the field is required there but unused). */
const V1_BLOCK_SIZE = 64 * 1024 * 1024;

/** The Iceberg struct of a `data_file` for a partition type (Java `DataFile.getType`). */
export function dataFileType(partition: StructType, formatVersion: number): StructType {
  const long = Types.long;
  const int = Types.int;
  const counts = (id: number, keyId: number, name: string, doc: string): NestedField => nestedField(id, name, Types.map(keyId, int, keyId + 1, long, true), false, doc);
  const bounds = (id: number, keyId: number, name: string, doc: string): NestedField => nestedField(id, name, Types.map(keyId, int, keyId + 1, Types.binary, true), false, doc);
  const fields: NestedField[] = [];
  if (formatVersion >= 2) fields.push(nestedField(F.content, 'content', int, true, 'Contents of the file: 0=data, 1=position deletes, 2=equality deletes'));
  fields.push(
    nestedField(F.filePath, 'file_path', Types.string, true, 'Location URI with FS scheme'),
    nestedField(F.fileFormat, 'file_format', Types.string, true, 'File format name: avro, orc, or parquet'),
    nestedField(F.partition, 'partition', partition, true, 'Partition data tuple, schema based on the partition spec'),
    nestedField(F.recordCount, 'record_count', long, true, 'Number of records in the file'),
    nestedField(F.fileSizeInBytes, 'file_size_in_bytes', long, true, 'Total file size in bytes'),
  );
  if (formatVersion === 1) fields.push(nestedField(F.blockSizeInBytes, 'block_size_in_bytes', long, true, 'Block size'));
  fields.push(
    counts(F.columnSizes, 117, 'column_sizes', 'Map of column id to total size on disk'),
    counts(F.valueCounts, 119, 'value_counts', 'Map of column id to total count, including null and NaN'),
    counts(F.nullValueCounts, 121, 'null_value_counts', 'Map of column id to null value count'),
    counts(F.nanValueCounts, 138, 'nan_value_counts', 'Map of column id to number of NaN values in the column'),
    bounds(F.lowerBounds, 126, 'lower_bounds', 'Map of column id to lower bound'),
    bounds(F.upperBounds, 129, 'upper_bounds', 'Map of column id to upper bound'),
    nestedField(F.keyMetadata, 'key_metadata', Types.binary, false, 'Encryption key metadata blob'),
    nestedField(F.splitOffsets, 'split_offsets', Types.list(133, long, true), false, 'Splittable offsets'),
  );
  if (formatVersion >= 2) fields.push(nestedField(F.equalityIds, 'equality_ids', Types.list(136, int, true), false, 'Equality comparison field IDs'));
  fields.push(nestedField(F.sortOrderId, 'sort_order_id', int, false, 'Sort order ID'));
  if (formatVersion >= 2) {
    fields.push(nestedField(F.referencedDataFile, 'referenced_data_file', Types.string, false, 'Fully qualified location (URI with FS scheme) of a data file that all deletes reference'));
  }
  return Types.struct(fields);
}

/** The Iceberg struct of a manifest entry (v1: `snapshot_id` required, no sequence numbers). */
export function manifestEntryType(partition: StructType, formatVersion: number): StructType {
  if (formatVersion === 1) {
    return Types.struct([
      nestedField(F.status, 'status', Types.int, true),
      nestedField(F.snapshotId, 'snapshot_id', Types.long, true),
      nestedField(F.dataFile, 'data_file', dataFileType(partition, 1), true),
    ]);
  }
  return Types.struct([
    nestedField(F.status, 'status', Types.int, true),
    nestedField(F.snapshotId, 'snapshot_id', Types.long, false),
    nestedField(F.sequenceNumber, 'sequence_number', Types.long, false),
    nestedField(F.fileSequenceNumber, 'file_sequence_number', Types.long, false),
    nestedField(F.dataFile, 'data_file', dataFileType(partition, formatVersion), true),
  ]);
}

// ---------------------------------------------------------------------------------------------
// Reading

function num(v: unknown): number {
  if (typeof v === 'bigint') {
    if (v > BigInt(Number.MAX_SAFE_INTEGER) || v < BigInt(Number.MIN_SAFE_INTEGER)) throw new IcebergError('BadRequestException', `Value out of range: ${v}`);
    return Number(v);
  }
  return v as number;
}

function optionalNum(v: unknown): number | null {
  return v === null || v === undefined ? null : num(v);
}

function longMap(v: unknown): ReadonlyMap<number, number> | undefined {
  if (v === null || v === undefined) return undefined;
  return new Map((v as ById[]).map((kv) => {
    const [k, val] = [...kv.values()];
    return [num(k), num(val)];
  }));
}

function bytesMap(v: unknown): ReadonlyMap<number, Uint8Array> | undefined {
  if (v === null || v === undefined) return undefined;
  return new Map((v as ById[]).map((kv) => {
    const [k, val] = [...kv.values()];
    return [num(k), new Uint8Array(val as Buffer)];
  }));
}

/** Converts an Avro partition value to the in-memory value of its Iceberg type. */
function partitionValue(type: PrimitiveType, v: unknown): IcebergValue | null {
  if (v === null || v === undefined) return null;
  switch (type.kind) {
    case 'long': case 'time': case 'timestamp': case 'timestamptz': case 'timestamp_ns': case 'timestamptz_ns':
      return typeof v === 'bigint' ? v : BigInt(v as number);
    case 'int': case 'date':
      return num(v);
    case 'decimal':
      return bigintFromBytes(v as Buffer);
    case 'uuid':
      return typeof v === 'string' ? v : uuidFromBytes(v as Buffer);
    case 'fixed': case 'binary':
      return new Uint8Array(v as Buffer);
    default:
      return v as IcebergValue;
  }
}

function contentFromMetadata(v: string | undefined): ManifestContent {
  return v === 'deletes' ? 'deletes' : 'data';
}

/**
 * Reads a manifest. With `inherit` (from its manifest list entry), entries without a snapshot id get
 * the manifest's `added_snapshot_id`, and in v2 added entries without sequence numbers get the
 * manifest's sequence number; v1 entries have sequence number 0.
 */
export function readManifest(bytes: Uint8Array, inherit?: ManifestInheritance): Manifest {
  const file = readAvroFile(bytes);
  const formatVersion = Number(file.metadata.get('format-version') ?? '1');
  const dataFileSchema = fieldSchemaById(file.schema, F.dataFile);
  const partitionSchema = dataFileSchema === undefined ? undefined : fieldSchemaById(dataFileSchema, F.partition);
  const partitionFieldSchemas = ((typeof partitionSchema === 'object' && !Array.isArray(partitionSchema) ? (partitionSchema as { fields?: unknown }).fields : undefined) ?? []) as readonly { name: string; type: AvroSchema; 'field-id'?: number }[];
  const partitionFields = partitionFieldSchemas.map((f, i) => ({ fieldId: f['field-id'] ?? 1000 + i, name: f.name, type: icebergTypeOfAvro(f.type) }));
  const specId = file.metadata.get('partition-spec-id');
  const metadata: ManifestMetadata = {
    formatVersion,
    content: contentFromMetadata(file.metadata.get('content')),
    partitionSpecId: specId === undefined ? undefined : Number(specId),
    partitionSpecJson: file.metadata.get('partition-spec'),
    schemaJson: file.metadata.get('schema'),
    partitionFields,
  };
  const entries = file.records.map((record): ManifestEntry => {
    const e = byFieldId(record, file.schema) as ById;
    const df = e.get(F.dataFile) as ById;
    const partition = df.get(F.partition) as ById | undefined;
    const status = STATUS_CODES[num(e.get(F.status))];
    if (status === undefined) throw new IcebergError('BadRequestException', `Invalid manifest entry status: ${String(e.get(F.status))}`);
    const contentCode = df.get(F.content);
    const content = contentCode === undefined || contentCode === null ? 'data' : CONTENT_CODES[num(contentCode)];
    if (content === undefined) throw new IcebergError('BadRequestException', `Invalid data file content: ${String(contentCode)}`);
    const snapshotIdRaw = e.get(F.snapshotId);
    let snapshotId = snapshotIdRaw === null || snapshotIdRaw === undefined ? null : BigInt(snapshotIdRaw as bigint);
    let sequenceNumber = formatVersion === 1 ? 0 : optionalNum(e.get(F.sequenceNumber));
    let fileSequenceNumber = formatVersion === 1 ? 0 : optionalNum(e.get(F.fileSequenceNumber));
    if (inherit !== undefined) {
      if (snapshotId === null) snapshotId = inherit.addedSnapshotId;
      if (status === 'added') {
        sequenceNumber ??= inherit.sequenceNumber;
        fileSequenceNumber ??= inherit.sequenceNumber;
      }
    }
    const optional = <T>(id: number, f: (v: unknown) => T): T | undefined => {
      const v = df.get(id);
      return v === null || v === undefined ? undefined : f(v);
    };
    const dataFile: DataFile = {
      content,
      filePath: df.get(F.filePath) as string,
      fileFormat: String(df.get(F.fileFormat)).toUpperCase(),
      partition: partitionFields.map((pf) => partitionValue(pf.type, partition?.get(pf.fieldId))),
      recordCount: num(df.get(F.recordCount)),
      fileSizeInBytes: num(df.get(F.fileSizeInBytes)),
      ...opt('columnSizes', longMap(df.get(F.columnSizes))),
      ...opt('valueCounts', longMap(df.get(F.valueCounts))),
      ...opt('nullValueCounts', longMap(df.get(F.nullValueCounts))),
      ...opt('nanValueCounts', longMap(df.get(F.nanValueCounts))),
      ...opt('lowerBounds', bytesMap(df.get(F.lowerBounds))),
      ...opt('upperBounds', bytesMap(df.get(F.upperBounds))),
      ...opt('keyMetadata', optional(F.keyMetadata, (v) => new Uint8Array(v as Buffer))),
      ...opt('splitOffsets', optional(F.splitOffsets, (v) => (v as unknown[]).map(num))),
      ...opt('equalityIds', optional(F.equalityIds, (v) => (v as unknown[]).map(num))),
      ...opt('sortOrderId', optional(F.sortOrderId, num)),
      ...opt('referencedDataFile', optional(F.referencedDataFile, (v) => v as string)),
    };
    return { status, snapshotId, sequenceNumber, fileSequenceNumber, dataFile };
  });
  return { metadata, entries };
}

function opt<K extends string, V>(key: K, value: V | undefined): { [P in K]?: V } {
  return (value === undefined ? {} : { [key]: value }) as { [P in K]?: V };
}

// ---------------------------------------------------------------------------------------------
// Writing

export interface WriteManifestInput {
  readonly formatVersion: 1 | 2;
  /** Spec every entry's partition tuple follows. */
  readonly spec: PartitionSpec;
  /** Table schema the spec binds to (also stored in the file's `schema` metadata). */
  readonly schema: Schema;
  readonly content: ManifestContent;
  readonly entries: readonly ManifestEntry[];
  /** Java writes `deflate`. */
  readonly codec?: AvroCodec;
}

/** Avro value of a partition field for its Iceberg result type. */
function avroPartitionValue(type: PrimitiveType, v: IcebergValue | null): unknown {
  if (v === null) return null;
  switch (type.kind) {
    case 'long': case 'time': case 'timestamp': case 'timestamptz': case 'timestamp_ns': case 'timestamptz_ns':
      return typeof v === 'bigint' ? v : BigInt(v as number);
    case 'decimal':
      return Buffer.from(bigintToFixedBytes(v as bigint, decimalRequiredBytes(type.precision)));
    case 'uuid':
      return Buffer.from(typeof v === 'string' ? uuidToBytes(v) : (v as Uint8Array));
    case 'fixed': case 'binary':
      return Buffer.from(v as Uint8Array);
    default:
      return v;
  }
}

function avroLongMap(m: ReadonlyMap<number, number> | undefined): unknown {
  return m === undefined ? null : [...m].map(([key, value]) => ({ key, value: BigInt(value) }));
}

function avroBytesMap(m: ReadonlyMap<number, Uint8Array> | undefined): unknown {
  return m === undefined ? null : [...m].map(([key, value]) => ({ key, value: Buffer.from(value) }));
}

/**
 * Writes a manifest as Java's `ManifestWriter` does: Avro schema derived from the spec's partition
 * type with Iceberg field ids, and file metadata `schema`, `schema-id`, `partition-spec`,
 * `partition-spec-id`, `format-version`, `content` (v2), plus `iceberg.schema`.
 */
export function writeManifest(input: WriteManifestInput): Uint8Array {
  const { formatVersion, spec, schema, content } = input;
  if (formatVersion === 1 && content === 'deletes') throw new IcebergError('ValidationException', 'Delete manifests are not supported in format v1');
  const pType = partitionType(spec, schema);
  const entryType = manifestEntryType(pType, formatVersion);
  const avroSchema = icebergToAvroSchema(entryType, 'manifest_entry');
  const partitionTypes = pType.fields.map((f) => f.type as PrimitiveType);
  const records = input.entries.map((e) => {
    const f = e.dataFile;
    if (f.partition.length !== spec.fields.length) throw new IcebergError('ValidationException', `Partition tuple has ${f.partition.length} values, spec ${spec.specId} has ${spec.fields.length} fields`);
    if ((content === 'data') !== (f.content === 'data')) throw new IcebergError('ValidationException', `Cannot write a ${f.content} file into a ${content} manifest`);
    const partition: Record<string, unknown> = {};
    pType.fields.forEach((pf, i) => {
      partition[avroFieldName(avroSchema, pf.id)] = avroPartitionValue(partitionTypes[i] as PrimitiveType, f.partition[i] ?? null);
    });
    const dataFile: Record<string, unknown> = {
      file_path: f.filePath,
      file_format: f.fileFormat,
      partition,
      record_count: BigInt(f.recordCount),
      file_size_in_bytes: BigInt(f.fileSizeInBytes),
      column_sizes: avroLongMap(f.columnSizes),
      value_counts: avroLongMap(f.valueCounts),
      null_value_counts: avroLongMap(f.nullValueCounts),
      nan_value_counts: avroLongMap(f.nanValueCounts),
      lower_bounds: avroBytesMap(f.lowerBounds),
      upper_bounds: avroBytesMap(f.upperBounds),
      key_metadata: f.keyMetadata === undefined ? null : Buffer.from(f.keyMetadata),
      split_offsets: f.splitOffsets === undefined ? null : f.splitOffsets.map((o) => BigInt(o)),
      sort_order_id: f.sortOrderId ?? null,
    };
    if (formatVersion === 1) {
      dataFile['block_size_in_bytes'] = BigInt(V1_BLOCK_SIZE);
      if (e.snapshotId === null) throw new IcebergError('ValidationException', 'v1 manifest entries need a snapshot id');
      return { status: STATUS_CODES.indexOf(e.status), snapshot_id: e.snapshotId, data_file: dataFile };
    }
    dataFile['content'] = CONTENT_CODES.indexOf(f.content);
    dataFile['equality_ids'] = f.equalityIds === undefined ? null : [...f.equalityIds];
    dataFile['referenced_data_file'] = f.referencedDataFile ?? null;
    return {
      status: STATUS_CODES.indexOf(e.status),
      snapshot_id: e.snapshotId,
      sequence_number: e.sequenceNumber === null ? null : BigInt(e.sequenceNumber),
      file_sequence_number: e.fileSequenceNumber === null ? null : BigInt(e.fileSequenceNumber),
      data_file: dataFile,
    };
  });
  const metadata = new Map<string, string>([
    ['schema', stringifyJson(schemaToJson(schema))],
    ['schema-id', String(schema.schemaId)],
    ['partition-spec', stringifyJson(partitionFieldsToJson(spec.fields))],
    ['partition-spec-id', String(spec.specId)],
    ['format-version', String(formatVersion)],
  ]);
  if (formatVersion >= 2) metadata.set('content', content);
  metadata.set('iceberg.schema', stringifyJson(withSchemaId(typeToJson(entryType))));
  return writeAvroFile(avroSchema, records, metadata, input.codec ?? 'deflate');
}

/** Avro field name used for the partition field `fieldId` (names are sanitized for Avro). */
function avroFieldName(entrySchema: AvroSchema, fieldId: number): string {
  const dataFile = fieldSchemaById(entrySchema, F.dataFile) as AvroSchema;
  const partition = fieldSchemaById(dataFile, F.partition) as unknown as { fields: readonly { name: string; 'field-id': number }[] };
  const f = partition.fields.find((x) => x['field-id'] === fieldId);
  if (f === undefined) throw new Error(`Bug: partition field ${fieldId} missing from Avro schema`);
  return f.name;
}
