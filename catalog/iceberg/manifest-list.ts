/**
 * Manifest lists: the Avro file a snapshot points at, one entry per manifest with counts, sequence
 * numbers and per-partition-field summaries (table spec "Manifest Lists"). Also the partition summary
 * computation a writer needs to describe a manifest it just wrote.
 */
import { byFieldId, withSchemaId, icebergToAvroSchema, readAvroFile, writeAvroFile } from './avro.js';
import type { AvroCodec, ById } from './avro.js';
import { compareValues, toByteBuffer } from './conversions.js';
import type { IcebergValue } from './conversions.js';
import { IcebergError } from './errors.js';
import { stringifyJson } from './json.js';
import type { ManifestContent, ManifestEntry } from './manifest.js';
import { partitionType } from './partition-spec.js';
import type { PartitionSpec } from './partition-spec.js';
import type { Schema } from './schema.js';
import { Types, nestedField, typeToJson } from './types.js';
import type { NestedField, PrimitiveType, StructType } from './types.js';

/** Summary of one partition field over all files of a manifest. */
export interface FieldSummary {
  readonly containsNull: boolean;
  /** Absent when the writer did not track NaNs (older writers). */
  readonly containsNan?: boolean;
  /** Single-value serialization of the lowest non-null value. */
  readonly lowerBound?: Uint8Array;
  readonly upperBound?: Uint8Array;
}

/** One manifest list entry. */
export interface ManifestFile {
  readonly manifestPath: string;
  readonly manifestLength: number;
  readonly partitionSpecId: number;
  readonly content: ManifestContent;
  /** Sequence number of the commit that added the manifest (0 in v1). */
  readonly sequenceNumber: number;
  /** Lowest data sequence number of the manifest's live files (0 in v1). */
  readonly minSequenceNumber: number;
  readonly addedSnapshotId: bigint;
  readonly addedFilesCount?: number;
  readonly existingFilesCount?: number;
  readonly deletedFilesCount?: number;
  readonly addedRowsCount?: number;
  readonly existingRowsCount?: number;
  readonly deletedRowsCount?: number;
  readonly partitions?: readonly FieldSummary[];
  readonly keyMetadata?: Uint8Array;
}

/** Manifest-list file metadata. */
export interface ManifestListMetadata {
  readonly formatVersion: number;
  readonly snapshotId: bigint | undefined;
  readonly parentSnapshotId: bigint | undefined;
  readonly sequenceNumber: number | undefined;
}

const F = {
  manifestPath: 500, manifestLength: 501, partitionSpecId: 502, content: 517, sequenceNumber: 515, minSequenceNumber: 516,
  addedSnapshotId: 503, addedFilesCount: 504, existingFilesCount: 505, deletedFilesCount: 506, addedRowsCount: 512,
  existingRowsCount: 513, deletedRowsCount: 514, partitions: 507, keyMetadata: 519,
  containsNull: 509, containsNan: 518, lowerBound: 510, upperBound: 511,
} as const;

const FIELD_SUMMARY: StructType = Types.struct([
  nestedField(F.containsNull, 'contains_null', Types.boolean, true, 'True if any file has a null partition value'),
  nestedField(F.containsNan, 'contains_nan', Types.boolean, false, 'True if any file has a nan partition value'),
  nestedField(F.lowerBound, 'lower_bound', Types.binary, false, 'Partition lower bound for all files'),
  nestedField(F.upperBound, 'upper_bound', Types.binary, false, 'Partition upper bound for all files'),
]);

/** The Iceberg struct of a manifest list entry for a format version (Java `V1Metadata` / `V2Metadata`). */
export function manifestFileType(formatVersion: number): StructType {
  const path = nestedField(F.manifestPath, 'manifest_path', Types.string, true, 'Location URI with FS scheme');
  const length = nestedField(F.manifestLength, 'manifest_length', Types.long, true, 'Total file size in bytes');
  const specId = nestedField(F.partitionSpecId, 'partition_spec_id', Types.int, true, 'Spec ID used to write');
  const v2 = formatVersion >= 2;
  const counts: NestedField[] = [
    nestedField(F.addedFilesCount, 'added_files_count', Types.int, v2, 'Added entry count'),
    nestedField(F.existingFilesCount, 'existing_files_count', Types.int, v2, 'Existing entry count'),
    nestedField(F.deletedFilesCount, 'deleted_files_count', Types.int, v2, 'Deleted entry count'),
  ];
  const rows: NestedField[] = [
    nestedField(F.addedRowsCount, 'added_rows_count', Types.long, v2, 'Added rows count'),
    nestedField(F.existingRowsCount, 'existing_rows_count', Types.long, v2, 'Existing rows count'),
    nestedField(F.deletedRowsCount, 'deleted_rows_count', Types.long, v2, 'Deleted rows count'),
  ];
  const partitions = nestedField(F.partitions, 'partitions', Types.list(508, FIELD_SUMMARY, true), false, 'Summary for each partition');
  const keyMetadata = nestedField(F.keyMetadata, 'key_metadata', Types.binary, false, 'Encryption key metadata blob');
  const snapshotId = nestedField(F.addedSnapshotId, 'added_snapshot_id', Types.long, true, 'Snapshot ID that added the manifest');
  if (!v2) return Types.struct([path, length, specId, snapshotId, ...counts, partitions, ...rows, keyMetadata]);
  return Types.struct([
    path, length, specId,
    nestedField(F.content, 'content', Types.int, true, 'Contents of the manifest: 0=data, 1=deletes'),
    nestedField(F.sequenceNumber, 'sequence_number', Types.long, true, 'Sequence number when the manifest was added'),
    nestedField(F.minSequenceNumber, 'min_sequence_number', Types.long, true, 'Lowest sequence number in the manifest'),
    snapshotId, ...counts, ...rows, partitions, keyMetadata,
  ]);
}

function num(v: unknown): number | undefined {
  if (v === null || v === undefined) return undefined;
  return typeof v === 'bigint' ? Number(v) : (v as number);
}

/** Reads a manifest list (any writer; fields matched by id). v1 entries get sequence numbers 0 and content `data`. */
export function readManifestList(bytes: Uint8Array): { readonly metadata: ManifestListMetadata; readonly manifests: readonly ManifestFile[] } {
  const file = readAvroFile(bytes);
  const longMeta = (k: string): bigint | undefined => {
    const v = file.metadata.get(k);
    return v === undefined || v === 'null' ? undefined : BigInt(v);
  };
  const seq = longMeta('sequence-number');
  const metadata: ManifestListMetadata = {
    formatVersion: Number(file.metadata.get('format-version') ?? '1'),
    snapshotId: longMeta('snapshot-id'),
    parentSnapshotId: longMeta('parent-snapshot-id'),
    sequenceNumber: seq === undefined ? undefined : Number(seq),
  };
  const manifests = file.records.map((record): ManifestFile => {
    const r = byFieldId(record, file.schema) as ById;
    const partitions = r.get(F.partitions) as ById[] | null | undefined;
    const bytesOf = (v: unknown): Uint8Array | undefined => (v === null || v === undefined ? undefined : new Uint8Array(v as Buffer));
    const snapshotId = r.get(F.addedSnapshotId);
    const counted = (key: keyof ManifestFile, id: number): Partial<Record<keyof ManifestFile, number>> => {
      const v = num(r.get(id));
      return v === undefined ? {} : { [key]: v };
    };
    return {
      manifestPath: r.get(F.manifestPath) as string,
      manifestLength: num(r.get(F.manifestLength)) ?? 0,
      partitionSpecId: num(r.get(F.partitionSpecId)) ?? 0,
      content: num(r.get(F.content)) === 1 ? 'deletes' : 'data',
      sequenceNumber: num(r.get(F.sequenceNumber)) ?? 0,
      minSequenceNumber: num(r.get(F.minSequenceNumber)) ?? 0,
      addedSnapshotId: snapshotId === null || snapshotId === undefined ? (metadata.snapshotId ?? 0n) : BigInt(snapshotId as bigint),
      ...(counted('addedFilesCount', F.addedFilesCount) as object),
      ...(counted('existingFilesCount', F.existingFilesCount) as object),
      ...(counted('deletedFilesCount', F.deletedFilesCount) as object),
      ...(counted('addedRowsCount', F.addedRowsCount) as object),
      ...(counted('existingRowsCount', F.existingRowsCount) as object),
      ...(counted('deletedRowsCount', F.deletedRowsCount) as object),
      ...(partitions === null || partitions === undefined
        ? {}
        : {
            partitions: partitions.map((p): FieldSummary => {
              const nan = p.get(F.containsNan);
              const lower = bytesOf(p.get(F.lowerBound));
              const upper = bytesOf(p.get(F.upperBound));
              return {
                containsNull: p.get(F.containsNull) === true,
                ...(nan === null || nan === undefined ? {} : { containsNan: nan === true }),
                ...(lower === undefined ? {} : { lowerBound: lower }),
                ...(upper === undefined ? {} : { upperBound: upper }),
              };
            }),
          }),
      ...(bytesOf(r.get(F.keyMetadata)) === undefined ? {} : { keyMetadata: bytesOf(r.get(F.keyMetadata)) as Uint8Array }),
    };
  });
  return { metadata, manifests };
}

export interface WriteManifestListInput {
  readonly formatVersion: 1 | 2;
  readonly snapshotId: bigint;
  readonly parentSnapshotId?: bigint;
  /** The snapshot's sequence number (v2): written as file metadata. */
  readonly sequenceNumber: number;
  readonly manifests: readonly ManifestFile[];
  readonly codec?: AvroCodec;
}

/** Writes a manifest list like Java's `ManifestListWriter` (metadata `snapshot-id`, `parent-snapshot-id`, `sequence-number`, `format-version`). */
export function writeManifestList(input: WriteManifestListInput): Uint8Array {
  const { formatVersion } = input;
  const type = manifestFileType(formatVersion);
  const avroSchema = icebergToAvroSchema(type, 'manifest_file');
  const records = input.manifests.map((m) => {
    if (formatVersion === 1 && m.content === 'deletes') throw new IcebergError('ValidationException', 'Delete manifests are not supported in format v1');
    const requiredCount = (v: number | undefined, name: string): number => {
      if (v === undefined) throw new IcebergError('ValidationException', `Manifest ${m.manifestPath} lacks ${name}, required in v2`);
      return v;
    };
    const count = (v: number | undefined, name: string): number | null => (formatVersion >= 2 ? requiredCount(v, name) : (v ?? null));
    const long = (v: number | undefined, name: string): bigint | null => {
      const c = count(v, name);
      return c === null ? null : BigInt(c);
    };
    const record: Record<string, unknown> = {
      manifest_path: m.manifestPath,
      manifest_length: BigInt(m.manifestLength),
      partition_spec_id: m.partitionSpecId,
      added_snapshot_id: m.addedSnapshotId,
      added_files_count: count(m.addedFilesCount, 'added_files_count'),
      existing_files_count: count(m.existingFilesCount, 'existing_files_count'),
      deleted_files_count: count(m.deletedFilesCount, 'deleted_files_count'),
      added_rows_count: long(m.addedRowsCount, 'added_rows_count'),
      existing_rows_count: long(m.existingRowsCount, 'existing_rows_count'),
      deleted_rows_count: long(m.deletedRowsCount, 'deleted_rows_count'),
      partitions: m.partitions === undefined ? null : m.partitions.map((p) => ({
        contains_null: p.containsNull,
        contains_nan: p.containsNan ?? null,
        lower_bound: p.lowerBound === undefined ? null : Buffer.from(p.lowerBound),
        upper_bound: p.upperBound === undefined ? null : Buffer.from(p.upperBound),
      })),
      key_metadata: m.keyMetadata === undefined ? null : Buffer.from(m.keyMetadata),
    };
    if (formatVersion >= 2) {
      record['content'] = m.content === 'deletes' ? 1 : 0;
      record['sequence_number'] = BigInt(m.sequenceNumber);
      record['min_sequence_number'] = BigInt(m.minSequenceNumber);
    }
    return record;
  });
  const metadata = new Map<string, string>([
    ['snapshot-id', input.snapshotId.toString()],
    ['parent-snapshot-id', input.parentSnapshotId === undefined ? 'null' : input.parentSnapshotId.toString()],
  ]);
  if (formatVersion >= 2) metadata.set('sequence-number', String(input.sequenceNumber));
  metadata.set('format-version', String(formatVersion));
  metadata.set('iceberg.schema', stringifyJson(withSchemaId(typeToJson(type))));
  return writeAvroFile(avroSchema, records, metadata, input.codec ?? 'deflate');
}

/**
 * Per-field partition summaries over the entries of a manifest (Java `PartitionSummary`): whether a
 * null or NaN was seen, and the lowest and highest non-null values, serialized.
 */
export function summarizePartitions(spec: PartitionSpec, schema: Schema, entries: readonly ManifestEntry[]): readonly FieldSummary[] {
  const types = partitionType(spec, schema).fields.map((f) => f.type as PrimitiveType);
  return types.map((type, i) => {
    let containsNull = false;
    let containsNan = false;
    let lower: IcebergValue | undefined;
    let upper: IcebergValue | undefined;
    for (const e of entries) {
      const v = e.dataFile.partition[i] ?? null;
      if (v === null) {
        containsNull = true;
      } else if (typeof v === 'number' && Number.isNaN(v)) {
        containsNan = true;
      } else {
        if (lower === undefined || compareValues(type, v, lower) < 0) lower = v;
        if (upper === undefined || compareValues(type, v, upper) > 0) upper = v;
      }
    }
    const canSerialize = type.kind !== 'unknown';
    return {
      containsNull,
      containsNan,
      ...(lower !== undefined && canSerialize ? { lowerBound: toByteBuffer(type, lower) } : {}),
      ...(upper !== undefined && canSerialize ? { upperBound: toByteBuffer(type, upper) } : {}),
    };
  });
}

export interface DescribeManifestInput {
  readonly manifestPath: string;
  readonly manifestLength: number;
  readonly spec: PartitionSpec;
  readonly schema: Schema;
  readonly content: ManifestContent;
  readonly entries: readonly ManifestEntry[];
  /** Snapshot committing the manifest. */
  readonly addedSnapshotId: bigint;
  /** Its sequence number (v2; 0 for v1). Entries without one inherit it. */
  readonly sequenceNumber: number;
}

/**
 * The manifest list entry for a manifest just written (Java `ManifestWriter.toManifestFile`): counts by
 * status, rows by status, partition summaries, and the minimum data sequence number of non-deleted
 * entries (entries without one count as the commit's sequence number).
 */
export function describeManifest(input: DescribeManifestInput): ManifestFile {
  let addedFiles = 0, existingFiles = 0, deletedFiles = 0, addedRows = 0, existingRows = 0, deletedRows = 0;
  let minSeq = input.sequenceNumber;
  for (const e of input.entries) {
    const rows = e.dataFile.recordCount;
    if (e.status === 'added') {
      addedFiles++;
      addedRows += rows;
    } else if (e.status === 'existing') {
      existingFiles++;
      existingRows += rows;
    } else {
      deletedFiles++;
      deletedRows += rows;
    }
    if (e.status !== 'deleted' && e.sequenceNumber !== null) minSeq = Math.min(minSeq, e.sequenceNumber);
  }
  return {
    manifestPath: input.manifestPath,
    manifestLength: input.manifestLength,
    partitionSpecId: input.spec.specId,
    content: input.content,
    sequenceNumber: input.sequenceNumber,
    minSequenceNumber: minSeq,
    addedSnapshotId: input.addedSnapshotId,
    addedFilesCount: addedFiles,
    existingFilesCount: existingFiles,
    deletedFilesCount: deletedFiles,
    addedRowsCount: addedRows,
    existingRowsCount: existingRows,
    deletedRowsCount: deletedRows,
    partitions: summarizePartitions(input.spec, input.schema, input.entries),
  };
}
