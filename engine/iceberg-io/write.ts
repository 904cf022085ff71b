/**
 * Writing Iceberg: from rows written by a worker (Parquet files with field ids, one per partition
 * tuple) to the manifest, the manifest list and the snapshot, returned as the updates and
 * requirements of one catalog commit.
 *
 * The flow of an INSERT:
 *   1. `appendWriteRequest(metadata, sql, scans)` → a `WriteRequest` for `Executor.write`;
 *   2. `dataFilesFromWritten(metadata, written, dataLocation)` → `DataFile`s with full column stats;
 *   3. `stageAppend(io, metadata, dataFiles)` writes the manifest once → a `StagedChange`;
 *   4. `commitUpdates(io, metadata, staged)` writes a manifest list on the current snapshot and returns
 *      `add-snapshot` + `set-snapshot-ref` with `assert-ref-snapshot-id`. After a 409, call it again
 *      with the newer metadata: the staged manifest is reused, only the list and snapshot are rebuilt
 *      (`appendSnapshot` is the pure core of that step).
 *
 * UPDATE/DELETE/MERGE: copy-on-write by default (`stageOverwrite`: the affected data files are
 * marked deleted in rewritten manifests, the rewritten rows added), merge-on-read when the table
 * property `write.delete.mode` (or `write.update.mode`/`write.merge.mode`) is `merge-on-read`
 * (`positionDeleteWriteRequest` + `deleteFilesFromWritten` + `stageRowDelta`). Neither may be re-based
 * (the rows they removed were read from one snapshot): a conflict is COMMIT_CONFLICT (40001).
 */
import { randomUUID } from 'node:crypto';
import * as nodePath from 'node:path';
import { fromByteBuffer, compareValues, parseDecimal, toByteBuffer } from '../../catalog/iceberg/conversions.js';
import type { IcebergValue } from '../../catalog/iceberg/conversions.js';
import { parseDate, parseTime, parseTimestampMicros } from '../../catalog/iceberg/datetime.js';
import { readManifest, writeManifest } from '../../catalog/iceberg/manifest.js';
import type { DataFile, ManifestEntry } from '../../catalog/iceberg/manifest.js';
import { describeManifest, writeManifestList } from '../../catalog/iceberg/manifest-list.js';
import type { ManifestFile } from '../../catalog/iceberg/manifest-list.js';
import type { PartitionSpec } from '../../catalog/iceberg/partition-spec.js';
import { loadManifestFiles } from '../../catalog/iceberg/scan.js';
import type { ScanFile } from '../../catalog/iceberg/scan.js';
import type { Schema } from '../../catalog/iceberg/schema.js';
import { MAIN_BRANCH } from '../../catalog/iceberg/snapshot.js';
import type { Snapshot, SnapshotOperation } from '../../catalog/iceberg/snapshot.js';
import { currentSchema, currentSnapshot, defaultPartitionSpec, partitionSpecById, snapshotForRef } from '../../catalog/iceberg/table-metadata.js';
import type { TableMetadata } from '../../catalog/iceberg/table-metadata.js';
import type { TableRequirement, TableUpdate } from '../../catalog/iceberg/table-updates.js';
import { transformResultType, Transforms } from '../../catalog/iceberg/transforms.js';
import type { IcebergType, PrimitiveType } from '../../catalog/iceberg/types.js';
import { floeError } from '../../grammar/errors.js';
import { appendRetryDelayMs } from './append-retry.js';
import { remapLocation } from '../../storage-creds/file-io.js';
import type { FileIO, LocationMapping } from '../../storage-creds/file-io.js';
import { isLocalLocation } from '../../storage-creds/local-file-io.js';
import type { WriteRequest } from '../exec/executor.js';
import type { WrittenFile } from '../exec/protocol.js';
import type { WireValue } from '../exec/values.js';
import type { TableScanInput } from '../fragments.js';
import { POSITION_DELETE_FILE_PATH_ID, POSITION_DELETE_POS_ID, duckdbType, localPath, sqlString } from './read.js';

// ---------------------------------------------------------------------------------------------
// Write requests

/** The `FIELD_IDS` entry of a column for DuckDB's Parquet writer (nested ids included). */
export function fieldIdsSpec(id: number, type: IcebergType): string {
  switch (type.kind) {
    case 'struct':
      return `{__duckdb_field_id: ${id}, ${type.fields.map((f) => `${sqlString(f.name)}: ${fieldIdsSpec(f.id, f.type)}`).join(', ')}}`;
    case 'list':
      return `{__duckdb_field_id: ${id}, element: ${fieldIdsSpec(type.elementId, type.element)}}`;
    case 'map':
      return `{__duckdb_field_id: ${id}, key: ${fieldIdsSpec(type.keyId, type.key)}, value: ${fieldIdsSpec(type.valueId, type.value)}}`;
    default:
      return String(id);
  }
}

/** Where a table's data files go: `<location>/data`. */
export function dataLocationOf(metadata: TableMetadata): string {
  return `${metadata.location.replace(/\/$/, '')}/data`;
}

export interface WriteRequestOptions {
  /** Location remapping of the table's catalog (the worker writes to the mapped local folder). */
  readonly locationMappings?: readonly LocationMapping[];
  /** File name prefix (default: a fresh UUID, so concurrent writers never collide). */
  readonly fileNamePrefix?: string;
  /** The table's catalog: its storage receives the files when the table is on object storage. */
  readonly catalog?: string;
}

/**
 * Where the worker writes the files of `dataLocation`: the mapped local folder, or, for a location
 * on object storage, a staging folder the executor picks, with the files uploaded afterwards.
 */
function writeTarget(dataLocation: string, options: WriteRequestOptions): Pick<WriteRequest, 'dataDirectory' | 'uploadLocation' | 'targetCatalog'> {
  const mapped = remapLocation(dataLocation, options.locationMappings ?? []);
  if (isLocalLocation(mapped)) return { dataDirectory: localPath(dataLocation, options.locationMappings ?? []) };
  return { dataDirectory: '', uploadLocation: dataLocation, ...(options.catalog !== undefined ? { targetCatalog: options.catalog } : {}) };
}

/**
 * A write of `sql`'s rows into the table's current schema and default partition spec. `sql` yields
 * the schema's top-level columns in schema order (names are taken positionally).
 */
export function appendWriteRequest(metadata: TableMetadata, sql: string, scans: readonly TableScanInput[], options: WriteRequestOptions = {}): { readonly request: WriteRequest; readonly dataLocation: string } {
  const schema = currentSchema(metadata);
  const spec = defaultPartitionSpec(metadata);
  const byId = new Map(schema.fields.map((f) => [f.id, f] as const));
  const dataLocation = dataLocationOf(metadata);
  return {
    dataLocation,
    request: {
      sql,
      scans,
      columns: schema.fields.map((f) => ({ name: f.name, fieldId: f.id, duckdbType: duckdbType(f.type), fieldIdsSpec: fieldIdsSpec(f.id, f.type) })),
      partitionFields: spec.fields.map((pf) => {
        const source = byId.get(pf.sourceId);
        if (source === undefined) throw floeError('DATA_EXCEPTION', { detail: `partition field ${pf.name} has no source column in the current schema` });
        return { column: source.name, transform: pf.transform, sourceType: source.type as PrimitiveType };
      }),
      ...writeTarget(dataLocation, options),
      fileNamePrefix: options.fileNamePrefix ?? randomUUID(),
    },
  };
}

/**
 * A write of position deletes: `sql` yields `(file_path, pos)` (the data file's location as the
 * manifests list it, and the 0-based row position), one delete file per data file, sorted by position.
 */
export function positionDeleteWriteRequest(metadata: TableMetadata, sql: string, scans: readonly TableScanInput[], options: WriteRequestOptions = {}): { readonly request: WriteRequest; readonly dataLocation: string } {
  const dataLocation = dataLocationOf(metadata);
  return {
    dataLocation,
    request: {
      sql,
      scans,
      columns: [
        { name: 'file_path', fieldId: POSITION_DELETE_FILE_PATH_ID, duckdbType: 'VARCHAR', fieldIdsSpec: String(POSITION_DELETE_FILE_PATH_ID) },
        { name: 'pos', fieldId: POSITION_DELETE_POS_ID, duckdbType: 'BIGINT', fieldIdsSpec: String(POSITION_DELETE_POS_ID) },
      ],
      partitionFields: [{ column: 'file_path', transform: Transforms.identity, sourceType: { kind: 'string' } }],
      orderBy: ['file_path', 'pos'],
      ...writeTarget(dataLocation, options),
      fileNamePrefix: `delete-${options.fileNamePrefix ?? randomUUID()}`,
    },
  };
}

// ---------------------------------------------------------------------------------------------
// Written files → DataFiles

/** A partition value as the worker returned it (wire form) → the Iceberg value of the result type. */
export function partitionValueFromWire(type: PrimitiveType, v: WireValue): IcebergValue | null {
  if (v === null) return null;
  switch (type.kind) {
    case 'boolean':
      return v === true;
    case 'int':
      return Number(v);
    case 'date':
      return typeof v === 'string' ? parseDate(v) : Number(v);
    case 'long':
    case 'time':
      return typeof v === 'string' && v.includes(':') ? parseTime(v) : BigInt(v as number | string);
    case 'timestamp':
    case 'timestamptz':
      return typeof v === 'string' && /[T:]/.test(v) ? parseTimestampMicros(v) : BigInt(v as number | string);
    case 'timestamp_ns':
    case 'timestamptz_ns':
      return typeof v === 'string' && /[T:]/.test(v) ? parseTimestampMicros(v) * 1000n : BigInt(v as number | string);
    case 'float':
    case 'double':
      return Number(v);
    case 'decimal':
      return parseDecimal(String(v), type.scale);
    case 'string':
    case 'uuid':
      return String(v);
    case 'binary':
    case 'fixed':
      return new Uint8Array(Buffer.from(String(v), 'base64'));
    default:
      return null;
  }
}

/** A Parquet statistics string (as `parquet_metadata` prints it) → the Iceberg value, or `undefined` when not usable as a bound. */
export function statValue(type: PrimitiveType, text: string): IcebergValue | undefined {
  try {
    switch (type.kind) {
      case 'boolean':
        return text === 'true';
      case 'int':
        return Number(text);
      case 'long':
        return BigInt(text);
      case 'float':
      case 'double': {
        const n = Number(text);
        return Number.isNaN(n) ? undefined : type.kind === 'float' ? Math.fround(n) : n;
      }
      case 'decimal':
        return parseDecimal(text, type.scale);
      case 'date':
        return parseDate(text);
      case 'time':
        return parseTime(text);
      case 'timestamp':
        return parseTimestampMicros(text);
      case 'timestamptz':
        return parseTimestampMicros(text.replace(/([+-]\d{2})$/, '$1:00'));
      case 'string':
        return text;
      case 'uuid':
        return /^[0-9a-f-]{36}$/i.test(text) ? text : undefined;
      default:
        return undefined;
    }
  } catch {
    return undefined;
  }
}

/**
 * The manifest view of files a worker wrote: location under `dataLocation`, partition tuple decoded
 * per the spec's result types, and full metrics for top-level primitive columns (value and null
 * counts, column sizes, lower/upper bounds in single-value serialization).
 */
export function dataFilesFromWritten(metadata: TableMetadata, files: readonly WrittenFile[], dataLocation: string, spec: PartitionSpec = defaultPartitionSpec(metadata), schema: Schema = currentSchema(metadata)): readonly DataFile[] {
  const byId = new Map(schema.fields.map((f) => [f.id, f] as const));
  const resultTypes = spec.fields.map((pf) => transformResultType(pf.transform, byId.get(pf.sourceId)?.type ?? { kind: 'string' }));
  return files.map((w) => ({
    content: 'data' as const,
    filePath: `${dataLocation}/${nodePath.basename(w.path)}`,
    fileFormat: 'PARQUET',
    partition: resultTypes.map((t, i) => partitionValueFromWire(t, w.partition[i] ?? null)),
    recordCount: w.recordCount,
    fileSizeInBytes: w.fileSizeInBytes,
    ...columnMetrics(schema.fields.map((f) => ({ id: f.id, name: f.name, type: f.type })), w),
  }));
}

type Metrics = Pick<DataFile, 'columnSizes' | 'valueCounts' | 'nullValueCounts' | 'lowerBounds' | 'upperBounds'>;

function columnMetrics(columns: readonly { readonly id: number; readonly name: string; readonly type: IcebergType }[], w: WrittenFile): Metrics {
  const columnSizes = new Map<number, number>();
  const valueCounts = new Map<number, number>();
  const nullValueCounts = new Map<number, number>();
  const lowerBounds = new Map<number, Uint8Array>();
  const upperBounds = new Map<number, Uint8Array>();
  for (const c of columns) {
    const chunks = w.columns.filter((x) => x.name === c.name);
    if (chunks.length === 0) continue;
    columnSizes.set(c.id, chunks.reduce((n, x) => n + x.compressedSize, 0));
    if (c.type.kind === 'struct' || c.type.kind === 'list' || c.type.kind === 'map') continue;
    const type = c.type;
    valueCounts.set(c.id, chunks.reduce((n, x) => n + x.valueCount, 0));
    if (chunks.every((x) => x.nullCount !== null)) nullValueCounts.set(c.id, chunks.reduce((n, x) => n + (x.nullCount ?? 0), 0));
    let lower: IcebergValue | undefined;
    let upper: IcebergValue | undefined;
    let lowerOk = true;
    let upperOk = true;
    for (const x of chunks) {
      const allNull = x.nullCount !== null && x.nullCount === x.valueCount;
      if (allNull) continue;
      const lo = x.min === null ? undefined : statValue(type, x.min);
      // DuckDB truncates string statistics to 256 bytes: a truncated minimum is still a lower bound
      // (a prefix sorts first), a truncated maximum is not an upper bound, so it is dropped.
      const hi = x.max === null || (type.kind === 'string' && Buffer.byteLength(x.max, 'utf8') >= 256) ? undefined : statValue(type, x.max);
      if (lo === undefined) lowerOk = false;
      else if (lower === undefined || compareValues(type, lo, lower) < 0) lower = lo;
      if (hi === undefined) upperOk = false;
      else if (upper === undefined || compareValues(type, hi, upper) > 0) upper = hi;
    }
    if (lowerOk && lower !== undefined) lowerBounds.set(c.id, toByteBuffer(type, lower));
    if (upperOk && upper !== undefined) upperBounds.set(c.id, toByteBuffer(type, upper));
  }
  return { columnSizes, valueCounts, nullValueCounts, lowerBounds, upperBounds };
}

/**
 * Position delete files a worker wrote (one per referenced data file; the partition "value" the
 * worker returns is the data file's location) → delete `DataFile`s in the data file's partition.
 */
export function deleteFilesFromWritten(files: readonly WrittenFile[], dataLocation: string, dataFiles: ReadonlyMap<string, ScanFile>): readonly { readonly file: DataFile; readonly specId: number }[] {
  return files.map((w) => {
    const target = String(w.partition[0]);
    const data = dataFiles.get(target);
    if (data === undefined) throw new Error(`Bug: position deletes for a data file not in the scan: ${target}`);
    return {
      specId: data.specId,
      file: {
        content: 'position-deletes' as const,
        filePath: `${dataLocation}/${nodePath.basename(w.path)}`,
        fileFormat: 'PARQUET',
        partition: data.file.partition,
        recordCount: w.recordCount,
        fileSizeInBytes: w.fileSizeInBytes,
        referencedDataFile: target,
        ...columnMetrics([
          { id: POSITION_DELETE_FILE_PATH_ID, name: 'file_path', type: { kind: 'string' } },
          { id: POSITION_DELETE_POS_ID, name: 'pos', type: { kind: 'long' } },
        ], w),
      },
    };
  });
}

// ---------------------------------------------------------------------------------------------
// Staged changes and snapshots

/** Counters a change contributes to the snapshot summary. */
export interface SummaryDelta {
  readonly addedDataFiles: number;
  readonly addedRecords: number;
  readonly addedFilesSize: number;
  readonly deletedDataFiles: number;
  readonly deletedRecords: number;
  readonly removedFilesSize: number;
  readonly addedDeleteFiles: number;
  readonly addedPositionDeleteFiles: number;
  readonly addedPositionDeletes: number;
  readonly changedPartitionCount: number;
}

/** Manifests written for a change, ready to be listed by a snapshot. */
export interface StagedChange {
  readonly snapshotId: bigint;
  readonly operation: SnapshotOperation;
  /** New manifests; their `sequenceNumber`/`minSequenceNumber` are set when the snapshot is built. */
  readonly manifests: readonly ManifestFile[];
  /** Lowest explicit data sequence number in each new manifest (existing entries), by path. */
  readonly minExplicitSequence: ReadonlyMap<string, number>;
  /** Parent manifests this change replaces (rewritten with deleted entries); empty for appends. */
  readonly replacedManifests: ReadonlySet<string>;
  /** Whether the change may be re-based onto a newer snapshot (appends only). */
  readonly rebaseable: boolean;
  /** Snapshot the change was staged against. */
  readonly baseSnapshotId: bigint | null;
  readonly summary: SummaryDelta;
}

/** A fresh positive 63-bit snapshot id. */
export function newSnapshotId(): bigint {
  const hex = randomUUID().replace(/-/g, '');
  return BigInt.asUintN(63, BigInt(`0x${hex.slice(0, 16)}`) ^ BigInt(`0x${hex.slice(16)}`)) || 1n;
}

function writableVersion(metadata: TableMetadata): 1 | 2 {
  if (metadata.formatVersion > 2) throw floeError('UNSUPPORTED_STATEMENT', { what: `writing format v${metadata.formatVersion} tables` });
  return metadata.formatVersion as 1 | 2;
}

function manifestLocation(metadata: TableMetadata, n: number): string {
  return `${metadata.location.replace(/\/$/, '')}/metadata/${randomUUID()}-m${n}.avro`;
}

function distinctPartitions(files: readonly { readonly specId: number; readonly file: DataFile }[]): number {
  return new Set(files.map((f) => `${f.specId}|${f.file.partition.map((v) => (v instanceof Uint8Array ? Buffer.from(v).toString('hex') : String(v))).join('|')}`)).size;
}

async function writeNewManifest(io: FileIO, metadata: TableMetadata, specId: number, content: 'data' | 'deletes', entries: readonly ManifestEntry[], n: number): Promise<{ manifest: ManifestFile; minExplicit: number | undefined }> {
  const formatVersion = writableVersion(metadata);
  const spec = partitionSpecById(metadata, specId);
  if (spec === undefined) throw new Error(`Bug: unknown partition spec ${specId}`);
  const schema = currentSchema(metadata);
  const bytes = writeManifest({ formatVersion, spec, schema, content, entries });
  const location = manifestLocation(metadata, n);
  await io.write(location, bytes);
  const manifest = describeManifest({
    manifestPath: location,
    manifestLength: bytes.length,
    spec,
    schema,
    content,
    entries,
    addedSnapshotId: entries[0]?.snapshotId ?? 0n,
    sequenceNumber: Number.MAX_SAFE_INTEGER,
  });
  return { manifest, minExplicit: manifest.minSequenceNumber === Number.MAX_SAFE_INTEGER ? undefined : manifest.minSequenceNumber };
}

const ZERO: SummaryDelta = {
  addedDataFiles: 0, addedRecords: 0, addedFilesSize: 0, deletedDataFiles: 0, deletedRecords: 0, removedFilesSize: 0,
  addedDeleteFiles: 0, addedPositionDeleteFiles: 0, addedPositionDeletes: 0, changedPartitionCount: 0,
};

/** Writes the manifest(s) of an append of `dataFiles` (in the default spec). Nothing is committed yet. */
export async function stageAppend(io: FileIO, metadata: TableMetadata, dataFiles: readonly DataFile[], snapshotId: bigint = newSnapshotId()): Promise<StagedChange> {
  const specId = metadata.defaultSpecId;
  const entries: ManifestEntry[] = dataFiles.map((dataFile) => ({ status: 'added', snapshotId, sequenceNumber: null, fileSequenceNumber: null, dataFile }));
  const manifests: ManifestFile[] = [];
  if (entries.length > 0) manifests.push((await writeNewManifest(io, metadata, specId, 'data', entries, 0)).manifest);
  return {
    snapshotId,
    operation: 'append',
    manifests,
    minExplicitSequence: new Map(),
    replacedManifests: new Set(),
    rebaseable: true,
    baseSnapshotId: currentSnapshot(metadata)?.snapshotId ?? null,
    summary: {
      ...ZERO,
      addedDataFiles: dataFiles.length,
      addedRecords: dataFiles.reduce((n, f) => n + f.recordCount, 0),
      addedFilesSize: dataFiles.reduce((n, f) => n + f.fileSizeInBytes, 0),
      changedPartitionCount: distinctPartitions(dataFiles.map((file) => ({ specId, file }))),
    },
  };
}

/**
 * Copy-on-write: the data files at `removedPaths` (locations as the manifests list them) are deleted
 * and `added` data files appended, in one `overwrite` snapshot (`delete` when nothing is added).
 * Manifests of the current snapshot that list a removed file are rewritten (removed → `deleted`,
 * others → `existing`, sequence numbers kept).
 */
export async function stageOverwrite(io: FileIO, metadata: TableMetadata, removedPaths: ReadonlySet<string>, added: readonly DataFile[], snapshotId: bigint = newSnapshotId()): Promise<StagedChange> {
  const parent = currentSnapshot(metadata);
  const manifests: ManifestFile[] = [];
  const minExplicitSequence = new Map<string, number>();
  const replaced = new Set<string>();
  let deletedDataFiles = 0, deletedRecords = 0, removedFilesSize = 0;
  const touched: { specId: number; file: DataFile }[] = [];
  let n = 0;
  if (parent !== undefined && removedPaths.size > 0) {
    for (const m of await loadManifestFiles(io, parent)) {
      if (m.content !== 'data') continue;
      const manifest = readManifest(await io.read(m.manifestPath), { addedSnapshotId: m.addedSnapshotId, sequenceNumber: m.sequenceNumber });
      const live = manifest.entries.filter((e) => e.status !== 'deleted');
      if (!live.some((e) => removedPaths.has(e.dataFile.filePath))) continue;
      const entries: ManifestEntry[] = live.map((e) => {
        if (removedPaths.has(e.dataFile.filePath)) {
          deletedDataFiles++;
          deletedRecords += e.dataFile.recordCount;
          removedFilesSize += e.dataFile.fileSizeInBytes;
          touched.push({ specId: m.partitionSpecId, file: e.dataFile });
          return { ...e, status: 'deleted', snapshotId };
        }
        return { ...e, status: 'existing' };
      });
      const written = await writeNewManifest(io, metadata, m.partitionSpecId, 'data', entries, n++);
      manifests.push(written.manifest);
      if (written.minExplicit !== undefined) minExplicitSequence.set(written.manifest.manifestPath, written.minExplicit);
      replaced.add(m.manifestPath);
    }
  }
  if (deletedDataFiles !== removedPaths.size) throw floeError('COMMIT_CONFLICT', { detail: 'a data file to rewrite is no longer in the table; retry the statement' });
  const specId = metadata.defaultSpecId;
  if (added.length > 0) {
    const entries: ManifestEntry[] = added.map((dataFile) => ({ status: 'added', snapshotId, sequenceNumber: null, fileSequenceNumber: null, dataFile }));
    manifests.push((await writeNewManifest(io, metadata, specId, 'data', entries, n++)).manifest);
  }
  return {
    snapshotId,
    operation: added.length === 0 ? 'delete' : 'overwrite',
    manifests,
    minExplicitSequence,
    replacedManifests: replaced,
    rebaseable: false,
    baseSnapshotId: parent?.snapshotId ?? null,
    summary: {
      ...ZERO,
      addedDataFiles: added.length,
      addedRecords: added.reduce((x, f) => x + f.recordCount, 0),
      addedFilesSize: added.reduce((x, f) => x + f.fileSizeInBytes, 0),
      deletedDataFiles,
      deletedRecords,
      removedFilesSize,
      changedPartitionCount: distinctPartitions([...touched, ...added.map((file) => ({ specId, file }))]),
    },
  };
}

/**
 * Merge-on-read: position delete files (and, for UPDATE/MERGE, new data files) in one snapshot.
 * The operation is Java Iceberg's `BaseRowDelta`'s: `append` when only data files are added,
 * `delete` when only delete files are, else `overwrite`. Needs format v2.
 */
export async function stageRowDelta(io: FileIO, metadata: TableMetadata, deleteFiles: readonly { readonly file: DataFile; readonly specId: number }[], added: readonly DataFile[], snapshotId: bigint = newSnapshotId()): Promise<StagedChange> {
  if (writableVersion(metadata) < 2) throw floeError('UNSUPPORTED_STATEMENT', { what: 'merge-on-read deletes on a format v1 table' });
  const manifests: ManifestFile[] = [];
  const bySpec = new Map<number, DataFile[]>();
  for (const d of deleteFiles) bySpec.set(d.specId, [...(bySpec.get(d.specId) ?? []), d.file]);
  let n = 0;
  for (const [specId, files] of bySpec) {
    const entries: ManifestEntry[] = files.map((dataFile) => ({ status: 'added', snapshotId, sequenceNumber: null, fileSequenceNumber: null, dataFile }));
    manifests.push((await writeNewManifest(io, metadata, specId, 'deletes', entries, n++)).manifest);
  }
  const specId = metadata.defaultSpecId;
  if (added.length > 0) {
    const entries: ManifestEntry[] = added.map((dataFile) => ({ status: 'added', snapshotId, sequenceNumber: null, fileSequenceNumber: null, dataFile }));
    manifests.push((await writeNewManifest(io, metadata, specId, 'data', entries, n++)).manifest);
  }
  return {
    snapshotId,
    operation: deleteFiles.length === 0 && added.length > 0 ? 'append' : added.length === 0 ? 'delete' : 'overwrite',
    manifests,
    minExplicitSequence: new Map(),
    replacedManifests: new Set(),
    rebaseable: false,
    baseSnapshotId: currentSnapshot(metadata)?.snapshotId ?? null,
    summary: {
      ...ZERO,
      addedDataFiles: added.length,
      addedRecords: added.reduce((x, f) => x + f.recordCount, 0),
      addedFilesSize: added.reduce((x, f) => x + f.fileSizeInBytes, 0) + deleteFiles.reduce((x, f) => x + f.file.fileSizeInBytes, 0),
      addedDeleteFiles: deleteFiles.length,
      addedPositionDeleteFiles: deleteFiles.length,
      addedPositionDeletes: deleteFiles.reduce((x, f) => x + f.file.recordCount, 0),
      changedPartitionCount: distinctPartitions([...deleteFiles, ...added.map((file) => ({ specId, file }))]),
    },
  };
}

/** Whether the table asks for merge-on-read for a row-level operation. */
export function isMergeOnRead(metadata: TableMetadata, operation: 'delete' | 'update' | 'merge'): boolean {
  return metadata.properties.get(`write.${operation}.mode`) === 'merge-on-read';
}

/** The snapshot summary: the change's counters and totals carried from the parent's summary. */
export function snapshotSummary(operation: SnapshotOperation, delta: SummaryDelta, parent: Snapshot | undefined): ReadonlyMap<string, string> {
  const s = new Map<string, string>([['operation', operation]]);
  const put = (key: string, v: number): void => {
    if (v !== 0) s.set(key, String(v));
  };
  put('added-data-files', delta.addedDataFiles);
  put('deleted-data-files', delta.deletedDataFiles);
  put('added-delete-files', delta.addedDeleteFiles);
  put('added-position-delete-files', delta.addedPositionDeleteFiles);
  put('added-records', delta.addedRecords);
  put('deleted-records', delta.deletedRecords);
  put('added-files-size', delta.addedFilesSize);
  put('removed-files-size', delta.removedFilesSize);
  put('added-position-deletes', delta.addedPositionDeletes);
  s.set('changed-partition-count', String(delta.changedPartitionCount));
  const total = (key: string, change: number): void => {
    const before = parent === undefined ? '0' : parent.summary.get(key);
    if (before === undefined || !/^-?\d+$/.test(before)) return;
    s.set(key, String(Number(before) + change));
  };
  total('total-records', delta.addedRecords - delta.deletedRecords);
  total('total-files-size', delta.addedFilesSize - delta.removedFilesSize);
  total('total-data-files', delta.addedDataFiles - delta.deletedDataFiles);
  total('total-delete-files', delta.addedDeleteFiles);
  total('total-position-deletes', delta.addedPositionDeletes);
  total('total-equality-deletes', 0);
  return s;
}

/** What one commit needs: the manifest list to write first, then the updates and requirements. */
export interface SnapshotCommit {
  readonly snapshot: Snapshot;
  readonly manifestListLocation: string;
  readonly manifestList: Uint8Array;
  readonly updates: readonly TableUpdate[];
  readonly requirements: readonly TableRequirement[];
}

export interface SnapshotOptions {
  /** Commit time (ms). */
  readonly now: number;
  /** Where the manifest list goes (default `<location>/metadata/snap-<id>-<attempt>-<uuid>.avro`). */
  readonly manifestListLocation?: string;
}

/**
 * The snapshot of a staged change on top of `metadata`'s current main snapshot, given that
 * snapshot's manifests: pure. For an append this is also the re-base after a 409: call it with the
 * newer metadata and its manifests. A non-rebaseable change on a different base is COMMIT_CONFLICT.
 */
export function appendSnapshot(metadata: TableMetadata, parentManifests: readonly ManifestFile[], change: StagedChange, options: SnapshotOptions): SnapshotCommit {
  const formatVersion = writableVersion(metadata);
  const parent = snapshotForRef(metadata, MAIN_BRANCH) ?? currentSnapshot(metadata);
  const parentId = parent?.snapshotId ?? null;
  if (!change.rebaseable && parentId !== change.baseSnapshotId) {
    throw floeError('COMMIT_CONFLICT', { detail: 'the table changed while the statement ran; retry it' });
  }
  const sequenceNumber = formatVersion >= 2 ? metadata.lastSequenceNumber + 1 : 0;
  const manifests: ManifestFile[] = [
    ...change.manifests.map((m) => ({
      ...m,
      addedSnapshotId: change.snapshotId,
      sequenceNumber,
      minSequenceNumber: formatVersion >= 2 ? Math.min(sequenceNumber, change.minExplicitSequence.get(m.manifestPath) ?? sequenceNumber) : 0,
    })),
    ...parentManifests.filter((m) => !change.replacedManifests.has(m.manifestPath)),
  ];
  const manifestListLocation = options.manifestListLocation ?? `${metadata.location.replace(/\/$/, '')}/metadata/snap-${change.snapshotId}-1-${randomUUID()}.avro`;
  const manifestList = writeManifestList({
    formatVersion,
    snapshotId: change.snapshotId,
    ...(parentId !== null ? { parentSnapshotId: parentId } : {}),
    sequenceNumber,
    manifests,
  });
  const snapshot: Snapshot = {
    snapshotId: change.snapshotId,
    ...(parentId !== null ? { parentSnapshotId: parentId } : {}),
    sequenceNumber,
    timestampMs: Math.max(options.now, metadata.lastUpdatedMs),
    manifestList: manifestListLocation,
    summary: snapshotSummary(change.operation, change.summary, parent),
    schemaId: metadata.currentSchemaId,
  };
  return {
    snapshot,
    manifestListLocation,
    manifestList,
    updates: [
      { action: 'add-snapshot', snapshot },
      { action: 'set-snapshot-ref', refName: MAIN_BRANCH, ref: { type: 'branch', snapshotId: change.snapshotId } },
    ],
    requirements: [{ type: 'assert-ref-snapshot-id', ref: MAIN_BRANCH, snapshotId: parentId }],
  };
}

/**
 * Loads the current snapshot's manifests, builds the snapshot (`appendSnapshot`) and writes its
 * manifest list. Returns what to send to the catalog's commit function.
 */
export async function commitUpdates(io: FileIO, metadata: TableMetadata, change: StagedChange, now: number = Date.now()): Promise<SnapshotCommit> {
  const parent = snapshotForRef(metadata, MAIN_BRANCH) ?? currentSnapshot(metadata);
  const parentManifests = parent === undefined ? [] : await loadManifestFiles(io, parent);
  const commit = appendSnapshot(metadata, parentManifests, change, { now });
  await io.write(commit.manifestListLocation, commit.manifestList);
  return commit;
}

/** Decodes a bound for tests and tools (`fromByteBuffer` re-exported with the column type). */
export function decodeBound(type: PrimitiveType, bytes: Uint8Array): IcebergValue {
  return fromByteBuffer(type, bytes);
}


/** How `commitChange` reaches the catalog (the statement's commit function behind it). */
export interface CommitPort {
  /** The table's current metadata (reloaded after a conflict). */
  load(): Promise<TableMetadata>;
  /**
   * Commits through the catalog. `'conflict'` when a requirement failed (409: someone else
   * committed first); any other failure is thrown, and nothing is cleaned up for it (a commit whose
   * outcome is unknown may have landed, with the manifest list it points to).
   */
  commit(requirements: readonly TableRequirement[], updates: readonly TableUpdate[]): Promise<'committed' | 'conflict'>;
}

export interface CommitChangeOptions {
  /** The metadata the change was staged on (else `port.load()`). */
  readonly metadata?: TableMetadata;
  /** Names the table in COMMIT_CONFLICT details. */
  readonly display?: string;
  readonly now?: () => number;
  /** The back-off's random draw (tests pass a fixed one). */
  readonly random?: () => number;
}

/**
 * Commits a staged change (SQL INSERT, CTAS fill, UPDATE/DELETE/MERGE, COPY INTO): builds the
 * snapshot on the current metadata and commits it, asserting the schema it was staged against.
 * After a conflict an append is re-based on the reloaded table and retried after the back-off of
 * `append-retry.ts`; a rewrite (not rebaseable), a schema changed meanwhile, or retries run out
 * are COMMIT_CONFLICT. A conflicting attempt's manifest list is deleted (nothing points to it).
 */
export async function commitChange(io: FileIO, port: CommitPort, change: StagedChange, options: CommitChangeOptions = {}): Promise<void> {
  const now = options.now ?? Date.now;
  const table = options.display ?? 'the table';
  let metadata = options.metadata ?? await port.load();
  const schemaId = currentSchema(metadata).schemaId;
  const startedAt = now();
  for (let attempt = 1; ; attempt++) {
    if (currentSchema(metadata).schemaId !== schemaId) throw floeError('COMMIT_CONFLICT', { detail: `the schema of ${table} changed while the statement ran; run it again` });
    const c = await commitUpdates(io, metadata, change, now());
    const requirements: TableRequirement[] = [...c.requirements, { type: 'assert-current-schema-id', currentSchemaId: schemaId }];
    if (await port.commit(requirements, c.updates) === 'committed') return;
    await io.delete(c.manifestListLocation).catch(() => undefined);
    if (!change.rebaseable) throw floeError('COMMIT_CONFLICT', { detail: `${table} changed while the statement ran; run it again` });
    const wait = appendRetryDelayMs(attempt, startedAt, now(), options.random);
    if (wait === undefined) throw floeError('COMMIT_CONFLICT', { detail: `${table} kept changing: gave up after ${attempt} attempts in ${Math.round((now() - startedAt) / 1000)} s; run it again` });
    await new Promise((resolve) => setTimeout(resolve, wait));
    metadata = await port.load();
  }
}
