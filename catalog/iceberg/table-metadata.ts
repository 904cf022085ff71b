/**
 * Table metadata (the `*.metadata.json` file and the REST `TableMetadata` shape): model, tolerant
 * parsing of format v1, v2 and v3, serialization in Java's key order and layout, `newTableMetadata`
 * for a create, the metadata-log helper the commit path uses, and metadata file naming.
 *
 * The commit core (requirements and updates) lives in `table-commit.ts`.
 */
import { randomUUID } from 'node:crypto';
import { gunzipSync, gzipSync } from 'node:zlib';
import { IcebergError, badRequest, validationError } from './errors.js';
import { asArray, asObject, field, optionalInt, optionalString, requiredInt, requiredString, stringMap, toLong } from './json-fields.js';
import { parseJson, stringifyJson } from './json.js';
import type { JsonObject, JsonValue } from './json.js';
import {
  INITIAL_LAST_PARTITION_ID, UNPARTITIONED_SPEC, bindPartitionSpec, lastAssignedFieldId, partitionFieldsToJson, partitionSpecFromJson, partitionSpecToJson,
} from './partition-spec.js';
import type { PartitionSpec, UnboundPartitionSpec } from './partition-spec.js';
import { assignFreshIds, highestFieldId, indexSchema, schemaFromJson, schemaToJson, validateUniqueFieldIds } from './schema.js';
import type { Schema } from './schema.js';
import {
  MAIN_BRANCH, metadataLogFromJson, partitionStatisticsFileFromJson, partitionStatisticsFileToJson, snapshotFromJson, snapshotLogFromJson,
  snapshotRefFromJson, snapshotRefToJson, snapshotToJson, statisticsFileFromJson, statisticsFileToJson,
} from './snapshot.js';
import type { MetadataLogEntry, PartitionStatisticsFile, Snapshot, SnapshotLogEntry, SnapshotRef, StatisticsFile } from './snapshot.js';
import { UNSORTED_ORDER, sortOrderFromJson, sortOrderToJson, validateSortOrder } from './sort-order.js';
import type { SortOrder } from './sort-order.js';

/** Format versions this layer reads. It writes v1 and v2; v3 metadata is read and re-written verbatim where unknown. */
export type FormatVersion = 1 | 2 | 3;
/** Format version of new tables unless the caller asks otherwise. */
export const DEFAULT_FORMAT_VERSION: FormatVersion = 2;
/** Highest version `upgrade-format-version` accepts (v3 needs row lineage and deletion vectors we do not write). */
export const MAX_WRITABLE_FORMAT_VERSION: FormatVersion = 2;

/** Table property: how many previous metadata files `metadata-log` keeps. */
export const PREVIOUS_VERSIONS_MAX_PROPERTY = 'write.metadata.previous-versions-max';
export const PREVIOUS_VERSIONS_MAX_DEFAULT = 100;
/** Table property: directory for metadata files (default `<location>/metadata`). */
export const METADATA_PATH_PROPERTY = 'write.metadata.path';
/**
 * Table properties that may put a table's files outside its location (Iceberg's names; Java's
 * location providers read the last two when `write.data.path` is unset). Vending covers them and
 * the catalog's location rules apply to them (docs/catalog.md "Table locations").
 */
export const LOCATION_PROPERTIES = ['write.data.path', METADATA_PATH_PROPERTY, 'write.object-storage.path', 'write.folder-storage.path'] as const;
/** Reserved property a create request may use to choose the format version (removed from properties). */
export const FORMAT_VERSION_PROPERTY = 'format-version';

export interface TableMetadata {
  readonly formatVersion: FormatVersion;
  readonly tableUuid: string;
  /** Base location of the table's files. */
  readonly location: string;
  /** Highest sequence number assigned to a snapshot (0 for v1). */
  readonly lastSequenceNumber: number;
  /** When the metadata last changed (ms since epoch). */
  readonly lastUpdatedMs: number;
  /** Highest column id ever assigned; new columns get higher ids. */
  readonly lastColumnId: number;
  readonly schemas: readonly Schema[];
  readonly currentSchemaId: number;
  readonly partitionSpecs: readonly PartitionSpec[];
  readonly defaultSpecId: number;
  /** Highest partition field id ever assigned (999 when never partitioned). */
  readonly lastPartitionId: number;
  readonly properties: ReadonlyMap<string, string>;
  /** Snapshot the main branch points at; `null` for an empty table (`-1` on the wire). */
  readonly currentSnapshotId: bigint | null;
  readonly snapshots: readonly Snapshot[];
  /** Branches and tags by name (`main` included when the table has a snapshot). */
  readonly refs: ReadonlyMap<string, SnapshotRef>;
  /** History of the main branch's current snapshot. */
  readonly snapshotLog: readonly SnapshotLogEntry[];
  /** Previous metadata files, oldest first. */
  readonly metadataLog: readonly MetadataLogEntry[];
  readonly sortOrders: readonly SortOrder[];
  readonly defaultSortOrderId: number;
  readonly statistics: readonly StatisticsFile[];
  readonly partitionStatistics: readonly PartitionStatisticsFile[];
  /** v3 row lineage counter, kept as read. */
  readonly nextRowId?: number;
  /** v3 `encryption-keys`, kept as read. */
  readonly encryptionKeys?: readonly JsonValue[];
  /** Top-level keys this layer does not model (from newer writers), re-written as read. */
  readonly unknownFields: ReadonlyMap<string, JsonValue>;
}

const KNOWN_KEYS = new Set([
  'format-version', 'table-uuid', 'location', 'last-sequence-number', 'last-updated-ms', 'next-row-id', 'last-column-id', 'schema',
  'schemas', 'current-schema-id', 'partition-spec', 'partition-specs', 'default-spec-id', 'last-partition-id', 'default-sort-order-id',
  'sort-orders', 'properties', 'current-snapshot-id', 'refs', 'snapshots', 'statistics', 'partition-statistics', 'snapshot-log',
  'metadata-log', 'encryption-keys',
]);

/** Parses a metadata file's text (int64-safe). Malformed content is a `BadRequestException`. */
export function parseTableMetadata(text: string): TableMetadata {
  let json: JsonValue;
  try {
    json = parseJson(text);
  } catch (e) {
    throw badRequest(`Cannot parse table metadata: ${(e as Error).message}`);
  }
  return tableMetadataFromJson(json);
}

/**
 * Reads table metadata JSON. v1 fallbacks as Java: a single `schema` / `partition-spec` when the lists
 * are absent, missing `last-partition-id` computed, missing sort orders = unsorted. v3 fields we do not
 * model are kept in `unknownFields`; a format version above 3 is rejected.
 */
export function tableMetadataFromJson(json: JsonValue): TableMetadata {
  const obj = asObject(json, 'table metadata');
  const what = 'table metadata';
  const formatVersion = requiredInt(obj, 'format-version', what);
  if (formatVersion < 1 || formatVersion > 3) throw new IcebergError('UnsupportedOperationException', `Cannot read unsupported version ${formatVersion}`);
  const uuid = optionalString(obj, 'table-uuid', what);
  if (uuid === undefined && formatVersion > 1) throw badRequest(`Cannot parse missing 'table-uuid' in ${what}`);

  const schemasJson = field(obj, 'schemas');
  let schemas: Schema[];
  let currentSchemaId: number;
  if (schemasJson !== undefined && schemasJson !== null) {
    schemas = asArray(schemasJson, 'schemas').map((s) => schemaFromJson(s));
    currentSchemaId = optionalInt(obj, 'current-schema-id', what) ?? schemas[0]?.schemaId ?? 0;
  } else {
    if (formatVersion > 1) throw badRequest(`Cannot parse missing 'schemas' in ${what}`);
    const single = schemaFromJson(field(obj, 'schema'));
    schemas = [single];
    currentSchemaId = single.schemaId;
  }
  if (!schemas.some((s) => s.schemaId === currentSchemaId)) throw validationError(`Cannot find schema with current-schema-id=${currentSchemaId} from schemas`);

  const specsJson = field(obj, 'partition-specs');
  let partitionSpecs: PartitionSpec[];
  let defaultSpecId: number;
  if (specsJson !== undefined && specsJson !== null) {
    partitionSpecs = asArray(specsJson, 'partition-specs').map((s) => partitionSpecFromJson(s));
    defaultSpecId = requiredInt(obj, 'default-spec-id', what);
  } else {
    if (formatVersion > 1) throw badRequest(`Cannot parse missing 'partition-specs' in ${what}`);
    partitionSpecs = [partitionSpecFromJson({ fields: field(obj, 'partition-spec') ?? [] })];
    defaultSpecId = 0;
  }
  const lastPartitionId = optionalInt(obj, 'last-partition-id', what) ?? partitionSpecs.reduce((m, s) => Math.max(m, lastAssignedFieldId(s)), INITIAL_LAST_PARTITION_ID);

  const ordersJson = field(obj, 'sort-orders');
  const sortOrders = ordersJson === undefined || ordersJson === null ? [UNSORTED_ORDER] : asArray(ordersJson, 'sort-orders').map((o) => sortOrderFromJson(o));
  const defaultSortOrderId = optionalInt(obj, 'default-sort-order-id', what) ?? sortOrders[0]?.orderId ?? 0;

  const currentRaw = toLong(field(obj, 'current-snapshot-id'));
  const currentSnapshotId = currentRaw === undefined || currentRaw === -1n ? null : currentRaw;
  const snapshots = asArray(field(obj, 'snapshots') ?? [], 'snapshots').map(snapshotFromJson);

  const refs = new Map<string, SnapshotRef>();
  const refsJson = field(obj, 'refs');
  if (refsJson !== undefined && refsJson !== null) {
    for (const [name, r] of Object.entries(asObject(refsJson, 'refs'))) refs.set(name, snapshotRefFromJson(r));
  }
  // Metadata written before refs existed: main is implied by current-snapshot-id.
  if (!refs.has(MAIN_BRANCH) && currentSnapshotId !== null) refs.set(MAIN_BRANCH, { type: 'branch', snapshotId: currentSnapshotId });

  const unknownFields = new Map<string, JsonValue>();
  for (const [k, v] of Object.entries(obj)) if (!KNOWN_KEYS.has(k)) unknownFields.set(k, v);
  const nextRowId = toLong(field(obj, 'next-row-id'));
  const encryptionKeys = field(obj, 'encryption-keys');

  return {
    formatVersion: formatVersion as FormatVersion,
    tableUuid: uuid ?? '',
    location: requiredString(obj, 'location', what),
    lastSequenceNumber: formatVersion > 1 ? requiredInt(obj, 'last-sequence-number', what) : 0,
    lastUpdatedMs: requiredInt(obj, 'last-updated-ms', what),
    lastColumnId: requiredInt(obj, 'last-column-id', what),
    schemas,
    currentSchemaId,
    partitionSpecs,
    defaultSpecId,
    lastPartitionId,
    properties: stringMap(field(obj, 'properties'), 'properties'),
    currentSnapshotId,
    snapshots,
    refs,
    snapshotLog: snapshotLogFromJson(field(obj, 'snapshot-log')),
    metadataLog: metadataLogFromJson(field(obj, 'metadata-log')),
    sortOrders,
    defaultSortOrderId,
    statistics: asArray(field(obj, 'statistics') ?? [], 'statistics').map(statisticsFileFromJson),
    partitionStatistics: asArray(field(obj, 'partition-statistics') ?? [], 'partition-statistics').map(partitionStatisticsFileFromJson),
    ...(nextRowId !== undefined ? { nextRowId: Number(nextRowId) } : {}),
    ...(Array.isArray(encryptionKeys) ? { encryptionKeys } : {}),
    unknownFields,
  };
}

function mapToObject(map: ReadonlyMap<string, JsonValue>): JsonObject {
  const out: Record<string, JsonValue> = {};
  for (const [k, v] of map) Object.defineProperty(out, k, { value: v, enumerable: true, writable: true, configurable: true });
  return out;
}

/**
 * The metadata as JSON, in the key order of Java's `TableMetadataParser` (`current-snapshot-id` is -1
 * when there is none; v1 also carries the deprecated `schema` and `partition-spec`).
 */
export function tableMetadataToJson(m: TableMetadata): JsonObject {
  const out: Record<string, JsonValue> = {
    'format-version': m.formatVersion,
    'table-uuid': m.tableUuid,
    location: m.location,
  };
  if (m.formatVersion > 1) out['last-sequence-number'] = m.lastSequenceNumber;
  out['last-updated-ms'] = m.lastUpdatedMs;
  if (m.nextRowId !== undefined) out['next-row-id'] = m.nextRowId;
  out['last-column-id'] = m.lastColumnId;
  if (m.formatVersion === 1) {
    const current = m.schemas.find((s) => s.schemaId === m.currentSchemaId);
    if (current !== undefined) out['schema'] = schemaToJson(current);
  }
  out['current-schema-id'] = m.currentSchemaId;
  out['schemas'] = m.schemas.map(schemaToJson);
  if (m.formatVersion === 1) {
    const spec = m.partitionSpecs.find((s) => s.specId === m.defaultSpecId);
    out['partition-spec'] = partitionFieldsToJson(spec?.fields ?? []);
  }
  out['default-spec-id'] = m.defaultSpecId;
  out['partition-specs'] = m.partitionSpecs.map(partitionSpecToJson);
  out['last-partition-id'] = m.lastPartitionId;
  out['default-sort-order-id'] = m.defaultSortOrderId;
  out['sort-orders'] = m.sortOrders.map(sortOrderToJson);
  out['properties'] = mapToObject(m.properties);
  out['current-snapshot-id'] = m.currentSnapshotId ?? -1;
  const refs: Record<string, JsonValue> = {};
  for (const [name, ref] of m.refs) Object.defineProperty(refs, name, { value: snapshotRefToJson(ref), enumerable: true, writable: true, configurable: true });
  out['refs'] = refs;
  out['snapshots'] = m.snapshots.map(snapshotToJson);
  out['statistics'] = m.statistics.map(statisticsFileToJson);
  out['partition-statistics'] = m.partitionStatistics.map(partitionStatisticsFileToJson);
  out['snapshot-log'] = m.snapshotLog.map((e) => ({ 'timestamp-ms': e.timestampMs, 'snapshot-id': e.snapshotId }));
  out['metadata-log'] = m.metadataLog.map((e) => ({ 'timestamp-ms': e.timestampMs, 'metadata-file': e.metadataFile }));
  if (m.encryptionKeys !== undefined) out['encryption-keys'] = [...m.encryptionKeys];
  for (const [k, v] of m.unknownFields) if (!(k in out)) Object.defineProperty(out, k, { value: v, enumerable: true, writable: true, configurable: true });
  return out;
}

/** The `*.metadata.json` text, pretty-printed like Java writes it. */
export function serializeTableMetadata(m: TableMetadata): string {
  return stringifyJson(tableMetadataToJson(m), { pretty: true });
}

// ---------------------------------------------------------------------------------------------
// Lookups

export function currentSchema(m: TableMetadata): Schema {
  const s = m.schemas.find((x) => x.schemaId === m.currentSchemaId);
  if (s === undefined) throw new Error(`Bug: current schema ${m.currentSchemaId} missing`);
  return s;
}

export function schemaById(m: TableMetadata, schemaId: number): Schema | undefined {
  return m.schemas.find((s) => s.schemaId === schemaId);
}

export function defaultPartitionSpec(m: TableMetadata): PartitionSpec {
  return m.partitionSpecs.find((s) => s.specId === m.defaultSpecId) ?? UNPARTITIONED_SPEC;
}

export function partitionSpecById(m: TableMetadata, specId: number): PartitionSpec | undefined {
  return m.partitionSpecs.find((s) => s.specId === specId);
}

export function defaultSortOrder(m: TableMetadata): SortOrder {
  return m.sortOrders.find((o) => o.orderId === m.defaultSortOrderId) ?? UNSORTED_ORDER;
}

export function snapshotById(m: TableMetadata, snapshotId: bigint): Snapshot | undefined {
  return m.snapshots.find((s) => s.snapshotId === snapshotId);
}

export function currentSnapshot(m: TableMetadata): Snapshot | undefined {
  return m.currentSnapshotId === null ? undefined : snapshotById(m, m.currentSnapshotId);
}

/** The snapshot a branch or tag points at. */
export function snapshotForRef(m: TableMetadata, refName: string): Snapshot | undefined {
  const ref = m.refs.get(refName);
  return ref === undefined ? undefined : snapshotById(m, ref.snapshotId);
}

/**
 * The main branch's snapshot as of `timestampMs` (`FOR TIMESTAMP AS OF`): the last snapshot-log entry
 * at or before the timestamp, as Java's `SnapshotUtil.snapshotIdAsOfTime`.
 */
export function snapshotAsOfTime(m: TableMetadata, timestampMs: number): Snapshot | undefined {
  let found: bigint | undefined;
  for (const entry of m.snapshotLog) if (entry.timestampMs <= timestampMs) found = entry.snapshotId;
  return found === undefined ? undefined : snapshotById(m, found);
}

/** `write.metadata.previous-versions-max` (at least 1). */
export function previousVersionsMax(properties: ReadonlyMap<string, string>): number {
  const raw = properties.get(PREVIOUS_VERSIONS_MAX_PROPERTY);
  const n = raw === undefined ? PREVIOUS_VERSIONS_MAX_DEFAULT : Number.parseInt(raw, 10);
  return Math.max(1, Number.isFinite(n) ? n : PREVIOUS_VERSIONS_MAX_DEFAULT);
}

/**
 * Records the metadata file being replaced in `metadata-log` (timestamped with its own
 * `last-updated-ms`) and trims the log to `write.metadata.previous-versions-max`, oldest dropped first,
 * as Java's `TableMetadata.Builder` does. The commit path calls this once per commit with the pointer it
 * is about to swap out.
 */
export function withPreviousMetadataFile(m: TableMetadata, previous: MetadataLogEntry): TableMetadata {
  const log = [...m.metadataLog, previous];
  const max = previousVersionsMax(m.properties);
  return { ...m, metadataLog: log.length > max ? log.slice(log.length - max) : log };
}

// ---------------------------------------------------------------------------------------------
// Create

export interface NewTableInput {
  /** Schema as the client sent it; ids are reassigned from 1. */
  readonly schema: Schema;
  /** Spec referring to the client's column ids; rebound by column name, field ids from 1000. */
  readonly partitionSpec?: UnboundPartitionSpec;
  /** Order referring to the client's column ids; rebound by column name. */
  readonly sortOrder?: SortOrder;
  readonly location: string;
  /** May contain `format-version`, which chooses the version and is not stored. */
  readonly properties?: ReadonlyMap<string, string>;
  readonly formatVersion?: FormatVersion;
  /** Defaults to a random UUID. */
  readonly tableUuid?: string;
  /** Creation time (ms); becomes `last-updated-ms`. */
  readonly now: number;
}

/**
 * Metadata for a new table, as Java's `TableMetadata.newTableMetadata`: fresh column ids (breadth
 * first from 1), the spec and sort order rebound to the fresh ids by column name, spec id 0 and
 * order id 1 (or 0 when unsorted), format version 2 unless the input or the `format-version` property
 * says otherwise.
 */
export function newTableMetadata(input: NewTableInput): TableMetadata {
  const properties = new Map(input.properties ?? []);
  let formatVersion: number = input.formatVersion ?? DEFAULT_FORMAT_VERSION;
  const requested = properties.get(FORMAT_VERSION_PROPERTY);
  if (requested !== undefined) {
    formatVersion = Number.parseInt(requested, 10);
    properties.delete(FORMAT_VERSION_PROPERTY);
  }
  if (!(formatVersion >= 1 && formatVersion <= MAX_WRITABLE_FORMAT_VERSION)) {
    throw validationError(`Unsupported format version: v${String(requested ?? formatVersion)} (supported: v1 to v${MAX_WRITABLE_FORMAT_VERSION})`);
  }
  validateUniqueFieldIds(input.schema);
  let lastColumnId = 0;
  const fresh = assignFreshIds(input.schema, 0, () => ++lastColumnId);
  const oldIndex = indexSchema(input.schema);
  const freshIndex = indexSchema(fresh);
  const rebind = (sourceId: number, what: string): number => {
    const name = oldIndex.byId.get(sourceId)?.fullName;
    const target = name === undefined ? undefined : freshIndex.byName.get(name);
    if (target === undefined) throw validationError(`Cannot find source column for ${what}: ${sourceId}`);
    return target.field.id;
  };
  const unbound = input.partitionSpec ?? { fields: [] };
  const spec = bindPartitionSpec(
    { specId: 0, fields: unbound.fields.map((f) => ({ sourceId: f.transform.kind === 'void' ? f.sourceId : rebind(f.sourceId, 'partition field'), name: f.name, transform: f.transform })) },
    fresh,
    { specId: 0, lastPartitionId: INITIAL_LAST_PARTITION_ID, formatVersion },
  );
  const order = input.sortOrder ?? UNSORTED_ORDER;
  const freshOrder: SortOrder = order.fields.length === 0 ? UNSORTED_ORDER : { orderId: 1, fields: order.fields.map((f) => ({ ...f, sourceId: rebind(f.sourceId, 'sort field') })) };
  validateSortOrder(freshOrder, fresh);
  return {
    formatVersion: formatVersion as FormatVersion,
    tableUuid: input.tableUuid ?? randomUUID(),
    location: stripTrailingSlash(input.location),
    lastSequenceNumber: 0,
    lastUpdatedMs: input.now,
    lastColumnId: Math.max(lastColumnId, highestFieldId(fresh)),
    schemas: [fresh],
    currentSchemaId: 0,
    partitionSpecs: [spec],
    defaultSpecId: 0,
    lastPartitionId: Math.max(INITIAL_LAST_PARTITION_ID, lastAssignedFieldId(spec)),
    properties,
    currentSnapshotId: null,
    snapshots: [],
    refs: new Map(),
    snapshotLog: [],
    metadataLog: [],
    sortOrders: [freshOrder],
    defaultSortOrderId: freshOrder.orderId,
    statistics: [],
    partitionStatistics: [],
    unknownFields: new Map(),
  };
}

function stripTrailingSlash(location: string): string {
  return location.length > 1 && location.endsWith('/') ? location.replace(/\/+$/, '') : location;
}

// ---------------------------------------------------------------------------------------------
// Metadata file locations

/** Table property choosing the metadata file codec (`none` or `gzip`), as in Java's `TableProperties`. */
export const METADATA_COMPRESSION_PROPERTY = 'write.metadata.compression-codec';

/** The codec a table's metadata files are written with: gzip only when the property asks for it. */
export function metadataCodec(properties: ReadonlyMap<string, string>): 'none' | 'gzip' {
  return properties.get(METADATA_COMPRESSION_PROPERTY)?.trim().toLowerCase() === 'gzip' ? 'gzip' : 'none';
}

/**
 * `00001-<uuid>.metadata.json`, Java's naming for catalog-written metadata files; with gzip,
 * `00001-<uuid>.gz.metadata.json` as Java's `TableMetadataParser.Codec.GZIP` names them.
 */
export function metadataFileName(version: number, uuid: string = randomUUID(), codec: 'none' | 'gzip' = 'none'): string {
  return `${String(version).padStart(5, '0')}-${uuid}${codec === 'gzip' ? '.gz' : ''}.metadata.json`;
}

/** Whether a metadata file location names a gzip-compressed file (`.gz.metadata.json` or `.metadata.json.gz`). */
export function isGzipMetadataLocation(location: string): boolean {
  return /\.gz\.metadata\.json$|\.metadata\.json\.gz$/.test(location);
}

/**
 * The text of a metadata file's bytes. Gzip is recognised by its magic bytes, not the name: a file
 * renamed or written by a tool that names it differently still reads.
 */
export function metadataText(bytes: Uint8Array): string {
  if (bytes.length >= 2 && bytes[0] === 0x1f && bytes[1] === 0x8b) {
    try {
      return gunzipSync(bytes).toString('utf8');
    } catch (e) {
      throw new IcebergError('BadRequestException', `Cannot read gzip-compressed metadata file: ${(e as Error).message}`);
    }
  }
  return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('utf8');
}

/** The bytes of a metadata file for its location: gzip-compressed when the name says so. */
export function metadataBytes(location: string, text: string): Buffer {
  return isGzipMetadataLocation(location) ? gzipSync(text) : Buffer.from(text, 'utf8');
}

/**
 * The version number in a metadata file name: `00012-<uuid>.metadata.json` → 12, `v3.metadata.json`
 * → 3 (Hadoop tables), `undefined` when the name follows neither pattern.
 */
export function metadataFileVersion(location: string): number | undefined {
  const name = location.slice(location.lastIndexOf('/') + 1);
  const m = /^(\d+)-[^/]*\.metadata\.json(\.gz)?$/.exec(name) ?? /^v(\d+)(\.gz)?\.metadata\.json$/.exec(name);
  return m === null ? undefined : Number(m[1]);
}

/**
 * Location of the next metadata file: in `write.metadata.path` or `<location>/metadata`, numbered one
 * past the previous file's version (or 0 for a new table).
 */
export function nextMetadataLocation(m: TableMetadata, previousMetadataLocation: string | undefined, uuid: string = randomUUID()): string {
  const dir = stripTrailingSlash(m.properties.get(METADATA_PATH_PROPERTY) ?? `${m.location}/metadata`);
  const previous = previousMetadataLocation === undefined ? -1 : (metadataFileVersion(previousMetadataLocation) ?? -1);
  return `${dir}/${metadataFileName(previous + 1, uuid, metadataCodec(m.properties))}`;
}
