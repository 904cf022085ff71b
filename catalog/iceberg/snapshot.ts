/**
 * Snapshots, snapshot references (branches and tags), the snapshot and metadata logs, and statistics
 * files, with their JSON forms. Snapshot ids are `bigint` because they use all 64 bits.
 */
import { badRequest, validationError } from './errors.js';
import {
  asArray, asObject, field, intArray, optionalInt, optionalLong, optionalString, requiredInt, requiredLong, requiredString, stringMap,
} from './json-fields.js';
import type { JsonValue } from './json.js';

/** The snapshot operations of the spec. */
export type SnapshotOperation = 'append' | 'replace' | 'overwrite' | 'delete';
export const SNAPSHOT_OPERATIONS: readonly SnapshotOperation[] = ['append', 'replace', 'overwrite', 'delete'];

/** Name of the branch that is the table's current state. */
export const MAIN_BRANCH = 'main';

export interface Snapshot {
  readonly snapshotId: bigint;
  readonly parentSnapshotId?: bigint;
  /** Data sequence number assigned at commit (0 for v1 tables). */
  readonly sequenceNumber: number;
  readonly timestampMs: number;
  /** Location of the manifest list. Absent only for v1 snapshots that embed `manifests`. */
  readonly manifestList?: string;
  /** v1 only: manifest locations listed inline instead of a manifest list. */
  readonly manifests?: readonly string[];
  /** `operation` plus free-form counters (`added-data-files`, `total-records`, …); `Map` as keys are writer-defined. */
  readonly summary: ReadonlyMap<string, string>;
  /** Current schema when the snapshot was written. */
  readonly schemaId?: number;
  /** v3 row lineage: first row id assigned by this snapshot. */
  readonly firstRowId?: number;
  /** v3 row lineage: rows assigned ids by this snapshot. */
  readonly addedRows?: number;
  /** v3 encryption key id of the manifest list. */
  readonly keyId?: string;
}

/** The operation recorded in the summary, if any (v1 snapshots may lack one). */
export function snapshotOperation(s: Snapshot): SnapshotOperation | undefined {
  const op = s.summary.get('operation');
  return op !== undefined && (SNAPSHOT_OPERATIONS as readonly string[]).includes(op) ? (op as SnapshotOperation) : undefined;
}

export function snapshotFromJson(json: JsonValue | undefined): Snapshot {
  const obj = asObject(json, 'snapshot');
  const what = 'snapshot';
  const parent = optionalLong(obj, 'parent-snapshot-id', what);
  const manifestList = optionalString(obj, 'manifest-list', what);
  const manifests = field(obj, 'manifests');
  const schemaId = optionalInt(obj, 'schema-id', what);
  const firstRowId = optionalLong(obj, 'first-row-id', what);
  const addedRows = optionalLong(obj, 'added-rows', what);
  const keyId = optionalString(obj, 'key-id', what);
  if (manifestList === undefined && manifests === undefined) throw badRequest("Cannot parse snapshot: missing 'manifest-list'");
  return {
    snapshotId: requiredLong(obj, 'snapshot-id', what),
    ...(parent !== undefined ? { parentSnapshotId: parent } : {}),
    sequenceNumber: optionalInt(obj, 'sequence-number', what) ?? 0,
    timestampMs: requiredInt(obj, 'timestamp-ms', what),
    ...(manifestList !== undefined ? { manifestList } : {}),
    ...(manifests !== undefined && manifestList === undefined ? { manifests: asArray(manifests, 'manifests').map((m) => String(m)) } : {}),
    summary: stringMap(field(obj, 'summary'), 'snapshot summary'),
    ...(schemaId !== undefined ? { schemaId } : {}),
    ...(firstRowId !== undefined ? { firstRowId: Number(firstRowId) } : {}),
    ...(addedRows !== undefined ? { addedRows: Number(addedRows) } : {}),
    ...(keyId !== undefined ? { keyId } : {}),
  };
}

/** Writes a snapshot as Java's `SnapshotParser` (sequence number only when > 0, operation first in the summary). */
export function snapshotToJson(s: Snapshot): JsonValue {
  const out: Record<string, JsonValue> = {};
  if (s.sequenceNumber > 0) out['sequence-number'] = s.sequenceNumber;
  out['snapshot-id'] = s.snapshotId;
  if (s.parentSnapshotId !== undefined) out['parent-snapshot-id'] = s.parentSnapshotId;
  out['timestamp-ms'] = s.timestampMs;
  if (s.summary.size > 0) out['summary'] = summaryToJson(s.summary);
  if (s.manifestList !== undefined) out['manifest-list'] = s.manifestList;
  else if (s.manifests !== undefined) out['manifests'] = [...s.manifests];
  if (s.schemaId !== undefined) out['schema-id'] = s.schemaId;
  if (s.firstRowId !== undefined) out['first-row-id'] = s.firstRowId;
  if (s.addedRows !== undefined) out['added-rows'] = s.addedRows;
  if (s.keyId !== undefined) out['key-id'] = s.keyId;
  return out;
}

function summaryToJson(summary: ReadonlyMap<string, string>): Record<string, JsonValue> {
  const out: Record<string, JsonValue> = {};
  const op = summary.get('operation');
  if (op !== undefined) out['operation'] = op;
  for (const [k, v] of summary) {
    if (k !== 'operation') Object.defineProperty(out, k, { value: v, enumerable: true, writable: true, configurable: true });
  }
  return out;
}

export type SnapshotRefType = 'branch' | 'tag';

/** A named pointer to a snapshot, with retention settings (branches only for the first two). */
export interface SnapshotRef {
  readonly type: SnapshotRefType;
  readonly snapshotId: bigint;
  /** Branches: keep at least this many snapshots when expiring. */
  readonly minSnapshotsToKeep?: number;
  /** Branches: expire snapshots older than this. */
  readonly maxSnapshotAgeMs?: number;
  /** Drop the ref itself when older than this (never for main). */
  readonly maxRefAgeMs?: number;
}

/** Reads a `SnapshotReference` (also the body of `set-snapshot-ref`). Validates like Java's `SnapshotRef.Builder`. */
export function snapshotRefFromJson(json: JsonValue | undefined): SnapshotRef {
  const obj = asObject(json, 'snapshot ref');
  const what = 'snapshot ref';
  const type = requiredString(obj, 'type', what).toLowerCase();
  if (type !== 'branch' && type !== 'tag') throw badRequest(`Invalid snapshot ref type: ${type}`);
  const minSnapshotsToKeep = optionalInt(obj, 'min-snapshots-to-keep', what);
  const maxSnapshotAgeMs = optionalLong(obj, 'max-snapshot-age-ms', what);
  const maxRefAgeMs = optionalLong(obj, 'max-ref-age-ms', what);
  const ref: SnapshotRef = {
    type,
    snapshotId: requiredLong(obj, 'snapshot-id', what),
    ...(minSnapshotsToKeep !== undefined ? { minSnapshotsToKeep } : {}),
    ...(maxSnapshotAgeMs !== undefined ? { maxSnapshotAgeMs: Number(maxSnapshotAgeMs) } : {}),
    ...(maxRefAgeMs !== undefined ? { maxRefAgeMs: Number(maxRefAgeMs) } : {}),
  };
  validateSnapshotRef(ref);
  return ref;
}

/** Java `SnapshotRef.Builder` checks: tags carry no snapshot retention; retention values positive. */
export function validateSnapshotRef(ref: SnapshotRef): void {
  if (ref.type === 'tag' && ref.minSnapshotsToKeep !== undefined) throw validationError('Tags do not support setting minSnapshotsToKeep');
  if (ref.type === 'tag' && ref.maxSnapshotAgeMs !== undefined) throw validationError('Tags do not support setting maxSnapshotAgeMs');
  if (ref.minSnapshotsToKeep !== undefined && ref.minSnapshotsToKeep <= 0) throw validationError('Min snapshots to keep must be greater than 0');
  if (ref.maxSnapshotAgeMs !== undefined && ref.maxSnapshotAgeMs <= 0) throw validationError('Max snapshot age must be greater than 0 ms');
  if (ref.maxRefAgeMs !== undefined && ref.maxRefAgeMs <= 0) throw validationError('Max reference age must be greater than 0');
}

/** Writes a ref in Java's key order. */
export function snapshotRefToJson(ref: SnapshotRef): Record<string, JsonValue> {
  const out: Record<string, JsonValue> = { 'snapshot-id': ref.snapshotId, type: ref.type };
  if (ref.minSnapshotsToKeep !== undefined) out['min-snapshots-to-keep'] = ref.minSnapshotsToKeep;
  if (ref.maxSnapshotAgeMs !== undefined) out['max-snapshot-age-ms'] = ref.maxSnapshotAgeMs;
  if (ref.maxRefAgeMs !== undefined) out['max-ref-age-ms'] = ref.maxRefAgeMs;
  return out;
}

export function snapshotRefsEqual(a: SnapshotRef, b: SnapshotRef): boolean {
  return (
    a.type === b.type &&
    a.snapshotId === b.snapshotId &&
    a.minSnapshotsToKeep === b.minSnapshotsToKeep &&
    a.maxSnapshotAgeMs === b.maxSnapshotAgeMs &&
    a.maxRefAgeMs === b.maxRefAgeMs
  );
}

/** When the main branch started pointing at a snapshot. */
export interface SnapshotLogEntry {
  readonly timestampMs: number;
  readonly snapshotId: bigint;
}

/** A previous metadata file of the table and its `last-updated-ms`. */
export interface MetadataLogEntry {
  readonly timestampMs: number;
  readonly metadataFile: string;
}

export function snapshotLogFromJson(json: JsonValue | undefined): readonly SnapshotLogEntry[] {
  if (json === undefined || json === null) return [];
  return asArray(json, 'snapshot-log').map((e) => {
    const o = asObject(e, 'snapshot-log entry');
    return { timestampMs: requiredInt(o, 'timestamp-ms', 'snapshot-log entry'), snapshotId: requiredLong(o, 'snapshot-id', 'snapshot-log entry') };
  });
}

export function metadataLogFromJson(json: JsonValue | undefined): readonly MetadataLogEntry[] {
  if (json === undefined || json === null) return [];
  return asArray(json, 'metadata-log').map((e) => {
    const o = asObject(e, 'metadata-log entry');
    return { timestampMs: requiredInt(o, 'timestamp-ms', 'metadata-log entry'), metadataFile: requiredString(o, 'metadata-file', 'metadata-log entry') };
  });
}

/** Statistics of one blob in a Puffin statistics file. */
export interface BlobMetadata {
  readonly type: string;
  readonly sourceSnapshotId: bigint;
  readonly sourceSnapshotSequenceNumber: number;
  readonly fields: readonly number[];
  readonly properties?: ReadonlyMap<string, string>;
}

/** A Puffin table-statistics file for a snapshot. */
export interface StatisticsFile {
  readonly snapshotId: bigint;
  readonly statisticsPath: string;
  readonly fileSizeInBytes: number;
  readonly fileFooterSizeInBytes: number;
  readonly keyMetadata?: string;
  readonly blobMetadata: readonly BlobMetadata[];
}

/** A partition-statistics file for a snapshot. */
export interface PartitionStatisticsFile {
  readonly snapshotId: bigint;
  readonly statisticsPath: string;
  readonly fileSizeInBytes: number;
}

export function statisticsFileFromJson(json: JsonValue | undefined): StatisticsFile {
  const o = asObject(json, 'statistics file');
  const what = 'statistics file';
  const keyMetadata = optionalString(o, 'key-metadata', what);
  return {
    snapshotId: requiredLong(o, 'snapshot-id', what),
    statisticsPath: requiredString(o, 'statistics-path', what),
    fileSizeInBytes: requiredInt(o, 'file-size-in-bytes', what),
    fileFooterSizeInBytes: requiredInt(o, 'file-footer-size-in-bytes', what),
    ...(keyMetadata !== undefined ? { keyMetadata } : {}),
    blobMetadata: asArray(field(o, 'blob-metadata'), 'blob-metadata').map((b) => {
      const bo = asObject(b, 'blob metadata');
      const props = field(bo, 'properties');
      return {
        type: requiredString(bo, 'type', 'blob metadata'),
        sourceSnapshotId: requiredLong(bo, 'snapshot-id', 'blob metadata'),
        sourceSnapshotSequenceNumber: requiredInt(bo, 'sequence-number', 'blob metadata'),
        fields: intArray(field(bo, 'fields'), 'blob fields'),
        ...(props !== undefined && props !== null ? { properties: stringMap(props, 'blob properties') } : {}),
      };
    }),
  };
}

export function statisticsFileToJson(s: StatisticsFile): JsonValue {
  const out: Record<string, JsonValue> = {
    'snapshot-id': s.snapshotId,
    'statistics-path': s.statisticsPath,
    'file-size-in-bytes': s.fileSizeInBytes,
    'file-footer-size-in-bytes': s.fileFooterSizeInBytes,
  };
  if (s.keyMetadata !== undefined) out['key-metadata'] = s.keyMetadata;
  out['blob-metadata'] = s.blobMetadata.map((b) => {
    const bo: Record<string, JsonValue> = { type: b.type, 'snapshot-id': b.sourceSnapshotId, 'sequence-number': b.sourceSnapshotSequenceNumber, fields: [...b.fields] };
    if (b.properties !== undefined && b.properties.size > 0) bo['properties'] = Object.fromEntries(b.properties);
    return bo;
  });
  return out;
}

export function partitionStatisticsFileFromJson(json: JsonValue | undefined): PartitionStatisticsFile {
  const o = asObject(json, 'partition statistics file');
  const what = 'partition statistics file';
  return {
    snapshotId: requiredLong(o, 'snapshot-id', what),
    statisticsPath: requiredString(o, 'statistics-path', what),
    fileSizeInBytes: requiredInt(o, 'file-size-in-bytes', what),
  };
}

export function partitionStatisticsFileToJson(s: PartitionStatisticsFile): JsonValue {
  return { 'snapshot-id': s.snapshotId, 'statistics-path': s.statisticsPath, 'file-size-in-bytes': s.fileSizeInBytes };
}

/**
 * The snapshots reachable from `snapshotId` through parents, newest first (the branch history). Stops
 * at a parent that is no longer in the table (expired).
 */
export function ancestorsOf(snapshotId: bigint, snapshotsById: ReadonlyMap<bigint, Snapshot>): readonly Snapshot[] {
  const out: Snapshot[] = [];
  let current = snapshotsById.get(snapshotId);
  const seen = new Set<bigint>();
  while (current !== undefined && !seen.has(current.snapshotId)) {
    out.push(current);
    seen.add(current.snapshotId);
    current = current.parentSnapshotId === undefined ? undefined : snapshotsById.get(current.parentSnapshotId);
  }
  return out;
}
