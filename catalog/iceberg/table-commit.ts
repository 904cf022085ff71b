/**
 * The pure core of a table commit (architecture "A catalog commit", step 2): check the requirements
 * against the current metadata, then apply the updates in memory, validating each as Java's
 * `TableMetadata.Builder` does. No I/O: the caller writes the result and swaps the pointer.
 */
import { randomUUID } from 'node:crypto';
import { IcebergError, unreachable, validationError } from './errors.js';
import type { JsonValue } from './json.js';
import { INITIAL_LAST_PARTITION_ID, UNPARTITIONED_SPEC, bindPartitionSpec, lastAssignedFieldId, specsCompatible } from './partition-spec.js';
import type { PartitionSpec } from './partition-spec.js';
import { highestFieldId, indexSchema, sameSchema, validateUniqueFieldIds } from './schema.js';
import type { Schema } from './schema.js';
import { MAIN_BRANCH, snapshotRefsEqual, validateSnapshotRef } from './snapshot.js';
import type { MetadataLogEntry, PartitionStatisticsFile, Snapshot, SnapshotLogEntry, SnapshotRef, StatisticsFile } from './snapshot.js';
import { UNSORTED_ORDER, UNSORTED_ORDER_ID, sameSortOrder, validateSortOrder } from './sort-order.js';
import type { SortOrder } from './sort-order.js';
import { DEFAULT_FORMAT_VERSION, MAX_WRITABLE_FORMAT_VERSION, withPreviousMetadataFile } from './table-metadata.js';
import type { FormatVersion, TableMetadata } from './table-metadata.js';
import type { TableRequirement, TableUpdate } from './table-updates.js';

/** A requirement that did not hold, with Java's message. */
export interface RequirementFailure {
  readonly requirement: TableRequirement;
  readonly message: string;
}

/**
 * Checks every requirement against `current` (`undefined` = the table does not exist) and returns the
 * failures, in order; empty means the commit may proceed. Messages are Java's `UpdateRequirement` ones.
 */
export function checkRequirements(current: TableMetadata | undefined, requirements: readonly TableRequirement[]): readonly RequirementFailure[] {
  const failures: RequirementFailure[] = [];
  for (const r of requirements) {
    const message = requirementFailure(current, r);
    if (message !== undefined) failures.push({ requirement: r, message });
  }
  return failures;
}

/** Throws `CommitFailedException` with the first failure's message if any requirement fails. */
export function assertRequirements(current: TableMetadata | undefined, requirements: readonly TableRequirement[]): void {
  const first = checkRequirements(current, requirements)[0];
  if (first !== undefined) throw new IcebergError('CommitFailedException', first.message);
}

function requirementFailure(m: TableMetadata | undefined, r: TableRequirement): string | undefined {
  if (r.type === 'assert-create') return m === undefined ? undefined : 'Requirement failed: table already exists';
  if (m === undefined) return 'Requirement failed: table does not exist';
  switch (r.type) {
    case 'assert-table-uuid':
      return r.uuid.toLowerCase() === m.tableUuid.toLowerCase() ? undefined : `Requirement failed: UUID does not match: expected ${m.tableUuid} != ${r.uuid}`;
    case 'assert-ref-snapshot-id': {
      const ref = m.refs.get(r.ref);
      if (ref !== undefined) {
        if (r.snapshotId === null) return `Requirement failed: ${ref.type} ${r.ref} was created concurrently`;
        if (r.snapshotId !== ref.snapshotId) return `Requirement failed: ${ref.type} ${r.ref} has changed: expected id ${r.snapshotId} != ${ref.snapshotId}`;
        return undefined;
      }
      return r.snapshotId === null ? undefined : `Requirement failed: branch or tag ${r.ref} is missing, expected ${r.snapshotId}`;
    }
    case 'assert-last-assigned-field-id':
      return m.lastColumnId === r.lastAssignedFieldId ? undefined : `Requirement failed: last assigned field id changed: expected id ${r.lastAssignedFieldId} != ${m.lastColumnId}`;
    case 'assert-current-schema-id':
      return m.currentSchemaId === r.currentSchemaId ? undefined : `Requirement failed: current schema changed: expected id ${r.currentSchemaId} != ${m.currentSchemaId}`;
    case 'assert-last-assigned-partition-id':
      return m.lastPartitionId === r.lastAssignedPartitionId ? undefined : `Requirement failed: last assigned partition id changed: expected id ${r.lastAssignedPartitionId} != ${m.lastPartitionId}`;
    case 'assert-default-spec-id':
      return m.defaultSpecId === r.defaultSpecId ? undefined : `Requirement failed: default partition spec changed: expected id ${r.defaultSpecId} != ${m.defaultSpecId}`;
    case 'assert-default-sort-order-id':
      return m.defaultSortOrderId === r.defaultSortOrderId ? undefined : `Requirement failed: default sort order changed: expected id ${r.defaultSortOrderId} != ${m.defaultSortOrderId}`;
    default:
      return unreachable(r);
  }
}

export interface ApplyUpdatesOptions {
  /** Commit time (ms): `last-updated-ms` unless a snapshot added in this commit sets it. */
  readonly now: number;
  /**
   * The metadata file being replaced; when given (and something changed) it is appended to
   * `metadata-log` with the base's `last-updated-ms`, trimmed to `write.metadata.previous-versions-max`.
   */
  readonly previousMetadataLocation?: string;
  /** UUID for a table created from empty without `assign-uuid` (default: random). */
  readonly newTableUuid?: string;
}

/**
 * Applies `updates` in order to `base` (`undefined` = create from empty, as a create transaction does)
 * and returns the new metadata. Returns `base` itself when no update changes anything. Invalid updates
 * throw `IcebergError('ValidationException')`.
 *
 * Java rules kept: add-schema/add-spec/add-sort-order reuse the id of an identical existing entry;
 * `-1` in set-current-schema/set-default-spec/set-default-sort-order means "added last in this commit";
 * add-snapshot needs a fresh id and (v2) a sequence number above `last-sequence-number` unless it has no
 * parent, and sets `last-updated-ms` to the snapshot's timestamp; set-snapshot-ref on `main` moves the
 * current snapshot and appends to `snapshot-log`; removing snapshots drops refs to them and cuts the
 * snapshot log before any entry that no longer resolves.
 */
export function applyUpdates(base: TableMetadata | undefined, updates: readonly TableUpdate[], options: ApplyUpdatesOptions): TableMetadata {
  const b = new MetadataBuilder(base, options);
  for (const u of updates) b.apply(u);
  return b.build();
}

/** The mutable working copy used while applying one commit's updates. */
class MetadataBuilder {
  private formatVersion: FormatVersion;
  private tableUuid: string | undefined;
  private location: string | undefined;
  private lastSequenceNumber: number;
  private lastColumnId: number;
  private schemas: Schema[];
  private currentSchemaId: number;
  private specs: PartitionSpec[];
  private defaultSpecId: number;
  private lastPartitionId: number;
  private readonly properties: Map<string, string>;
  private currentSnapshotId: bigint | null;
  private snapshots: Snapshot[];
  private readonly refs: Map<string, SnapshotRef>;
  private snapshotLog: SnapshotLogEntry[];
  private sortOrders: SortOrder[];
  private defaultSortOrderId: number;
  private statistics: StatisticsFile[];
  private partitionStatistics: PartitionStatisticsFile[];
  private encryptionKeys: JsonValue[] | undefined;

  private lastAddedSchemaId: number | undefined;
  private lastAddedSpecId: number | undefined;
  private lastAddedOrderId: number | undefined;
  private readonly addedSnapshotIds = new Set<bigint>();
  /** Set by add-snapshot / set-snapshot-ref as Java's `lastUpdatedMillis`. */
  private lastUpdatedMs: number | undefined;
  private changed = false;

  constructor(
    private readonly base: TableMetadata | undefined,
    private readonly options: ApplyUpdatesOptions,
  ) {
    this.formatVersion = base?.formatVersion ?? DEFAULT_FORMAT_VERSION;
    this.tableUuid = base?.tableUuid;
    this.location = base?.location;
    this.lastSequenceNumber = base?.lastSequenceNumber ?? 0;
    this.lastColumnId = base?.lastColumnId ?? 0;
    this.schemas = [...(base?.schemas ?? [])];
    this.currentSchemaId = base?.currentSchemaId ?? -1;
    this.specs = [...(base?.partitionSpecs ?? [])];
    this.defaultSpecId = base?.defaultSpecId ?? -1;
    this.lastPartitionId = base?.lastPartitionId ?? INITIAL_LAST_PARTITION_ID;
    this.properties = new Map(base?.properties ?? []);
    this.currentSnapshotId = base?.currentSnapshotId ?? null;
    this.snapshots = [...(base?.snapshots ?? [])];
    this.refs = new Map(base?.refs ?? []);
    this.snapshotLog = [...(base?.snapshotLog ?? [])];
    this.sortOrders = [...(base?.sortOrders ?? [])];
    this.defaultSortOrderId = base?.defaultSortOrderId ?? -1;
    this.statistics = [...(base?.statistics ?? [])];
    this.partitionStatistics = [...(base?.partitionStatistics ?? [])];
    this.encryptionKeys = base?.encryptionKeys === undefined ? undefined : [...base.encryptionKeys];
  }

  apply(u: TableUpdate): void {
    switch (u.action) {
      case 'assign-uuid':
        if (u.uuid === '') throw validationError('Cannot assign an empty UUID');
        if (this.tableUuid !== undefined && this.tableUuid.toLowerCase() === u.uuid.toLowerCase()) return;
        this.tableUuid = u.uuid;
        break;
      case 'upgrade-format-version':
        if (u.formatVersion > MAX_WRITABLE_FORMAT_VERSION || u.formatVersion < 1) {
          throw validationError(`Cannot upgrade table to unsupported format version: v${u.formatVersion} (supported: v${MAX_WRITABLE_FORMAT_VERSION})`);
        }
        if (u.formatVersion < this.formatVersion) throw validationError(`Cannot downgrade v${this.formatVersion} table to v${u.formatVersion}`);
        if (u.formatVersion === this.formatVersion) return;
        this.formatVersion = u.formatVersion as FormatVersion;
        break;
      case 'add-schema':
        this.addSchema(u.schema, u.lastColumnId);
        return;
      case 'set-current-schema': {
        const id = u.schemaId === -1 ? this.lastAddedSchemaId : u.schemaId;
        if (id === undefined) throw validationError('Cannot set last added schema: no schema has been added');
        if (!this.schemas.some((s) => s.schemaId === id)) throw validationError(`Cannot set current schema to unknown schema: ${id}`);
        if (id === this.currentSchemaId) return;
        this.currentSchemaId = id;
        break;
      }
      case 'add-spec':
        this.addSpec(u.spec);
        return;
      case 'set-default-spec': {
        const id = u.specId === -1 ? this.lastAddedSpecId : u.specId;
        if (id === undefined) throw validationError('Cannot set last added spec: no spec has been added');
        if (!this.specs.some((s) => s.specId === id)) throw validationError(`Cannot set default partition spec to unknown spec: ${id}`);
        if (id === this.defaultSpecId) return;
        this.defaultSpecId = id;
        break;
      }
      case 'add-sort-order':
        this.addSortOrder(u.sortOrder);
        return;
      case 'set-default-sort-order': {
        const id = u.sortOrderId === -1 ? this.lastAddedOrderId : u.sortOrderId;
        if (id === undefined) throw validationError('Cannot set last added sort order: no sort order has been added');
        if (!this.sortOrders.some((o) => o.orderId === id)) throw validationError(`Cannot set default sort order to unknown order: ${id}`);
        if (id === this.defaultSortOrderId) return;
        this.defaultSortOrderId = id;
        break;
      }
      case 'add-snapshot':
        this.addSnapshot(u.snapshot);
        return;
      case 'set-snapshot-ref':
        this.setRef(u.refName, u.ref);
        return;
      case 'remove-snapshots':
        this.removeSnapshots(u.snapshotIds);
        return;
      case 'remove-snapshot-ref':
        if (!this.refs.has(u.refName)) return;
        this.refs.delete(u.refName);
        if (u.refName === MAIN_BRANCH) this.currentSnapshotId = null;
        break;
      case 'set-location':
        if (u.location === '') throw validationError('Cannot set an empty location');
        if (u.location === this.location) return;
        this.location = u.location;
        break;
      case 'set-properties':
        if (u.updates.size === 0) return;
        for (const [k, v] of u.updates) this.properties.set(k, v);
        break;
      case 'remove-properties':
        if (u.removals.length === 0) return;
        for (const k of u.removals) this.properties.delete(k);
        break;
      case 'set-statistics':
        this.statistics = [...this.statistics.filter((s) => s.snapshotId !== u.statistics.snapshotId), u.statistics];
        break;
      case 'remove-statistics': {
        const before = this.statistics.length;
        this.statistics = this.statistics.filter((s) => s.snapshotId !== u.snapshotId);
        if (before === this.statistics.length) return;
        break;
      }
      case 'set-partition-statistics':
        this.partitionStatistics = [...this.partitionStatistics.filter((s) => s.snapshotId !== u.partitionStatistics.snapshotId), u.partitionStatistics];
        break;
      case 'remove-partition-statistics': {
        const before = this.partitionStatistics.length;
        this.partitionStatistics = this.partitionStatistics.filter((s) => s.snapshotId !== u.snapshotId);
        if (before === this.partitionStatistics.length) return;
        break;
      }
      case 'remove-partition-specs': {
        if (u.specIds.includes(this.defaultSpecId)) throw validationError('Cannot remove the default partition spec');
        const remove = new Set(u.specIds);
        const kept = this.specs.filter((s) => !remove.has(s.specId));
        if (kept.length === this.specs.length) return;
        this.specs = kept;
        break;
      }
      case 'remove-schemas': {
        if (u.schemaIds.includes(this.currentSchemaId)) throw validationError('Cannot remove current schema');
        const remove = new Set(u.schemaIds);
        const kept = this.schemas.filter((s) => !remove.has(s.schemaId));
        if (kept.length === this.schemas.length) return;
        this.schemas = kept;
        break;
      }
      case 'add-encryption-key': {
        const keyId = u.encryptionKey['key-id'];
        const others = (this.encryptionKeys ?? []).filter((k) => !(typeof k === 'object' && k !== null && !Array.isArray(k) && (k as Record<string, JsonValue>)['key-id'] === keyId));
        this.encryptionKeys = [...others, u.encryptionKey];
        break;
      }
      case 'remove-encryption-key': {
        const before = this.encryptionKeys?.length ?? 0;
        this.encryptionKeys = (this.encryptionKeys ?? []).filter((k) => !(typeof k === 'object' && k !== null && !Array.isArray(k) && (k as Record<string, JsonValue>)['key-id'] === u.keyId));
        if (before === this.encryptionKeys.length) return;
        break;
      }
      default:
        return unreachable(u);
    }
    this.changed = true;
  }

  private addSchema(schema: Schema, requestedLastColumnId: number | undefined): void {
    validateUniqueFieldIds(schema);
    const newLastColumnId = Math.max(requestedLastColumnId ?? this.lastColumnId, highestFieldId(schema));
    if (requestedLastColumnId !== undefined && requestedLastColumnId < this.lastColumnId) {
      throw validationError(`Invalid last column ID: ${requestedLastColumnId} < ${this.lastColumnId} (previous last column ID)`);
    }
    const index = indexSchema(schema);
    for (const id of schema.identifierFieldIds) {
      const f = index.byId.get(id);
      if (f === undefined) throw validationError(`Cannot add fieldId ${id} as an identifier field: field does not exist`);
      if (!f.field.required) throw validationError(`Cannot add field ${f.fullName} as an identifier field: not a required field`);
      if (f.field.type.kind === 'float' || f.field.type.kind === 'double') throw validationError(`Cannot add field ${f.fullName} as an identifier field: must not be float or double field`);
    }
    const existing = this.schemas.find((s) => sameSchema(s, schema));
    if (existing !== undefined) {
      // Java reuses the id of an identical schema and records nothing new, except the column id bump.
      this.lastAddedSchemaId = existing.schemaId;
      if (newLastColumnId !== this.lastColumnId) {
        this.lastColumnId = newLastColumnId;
        this.changed = true;
      }
      return;
    }
    const newId = this.schemas.reduce((m, s) => Math.max(m, s.schemaId + 1), 0);
    this.schemas.push({ ...schema, schemaId: newId });
    this.lastColumnId = newLastColumnId;
    this.lastAddedSchemaId = newId;
    this.changed = true;
  }

  /** The schema new specs and orders are bound to: current, or the one just added in a create. */
  private schemaForBinding(): Schema {
    const s = this.schemas.find((x) => x.schemaId === this.currentSchemaId) ?? this.schemas.find((x) => x.schemaId === this.lastAddedSchemaId);
    if (s === undefined) throw validationError('Cannot bind partition spec or sort order: the table has no schema');
    return s;
  }

  private addSpec(unbound: Parameters<typeof bindPartitionSpec>[0]): void {
    const existing = this.specs.find((s) => specsCompatible(s.fields, unbound.fields) && unbound.fields.every((f, i) => f.fieldId === undefined || f.fieldId === s.fields[i]?.fieldId));
    if (existing !== undefined) {
      this.lastAddedSpecId = existing.specId;
      return;
    }
    const newId = this.specs.reduce((m, s) => Math.max(m, s.specId + 1), 0);
    const spec = bindPartitionSpec(unbound, this.schemaForBinding(), {
      specId: newId,
      lastPartitionId: this.lastPartitionId,
      formatVersion: this.formatVersion,
      existingSpecs: this.specs,
    });
    this.specs.push(spec);
    this.lastPartitionId = Math.max(this.lastPartitionId, lastAssignedFieldId(spec));
    this.lastAddedSpecId = newId;
    this.changed = true;
  }

  private addSortOrder(order: SortOrder): void {
    const existing = this.sortOrders.find((o) => sameSortOrder(o, order));
    if (existing !== undefined) {
      this.lastAddedOrderId = existing.orderId;
      return;
    }
    validateSortOrder(order, this.schemaForBinding());
    const newId = order.fields.length === 0 ? UNSORTED_ORDER_ID : this.sortOrders.reduce((m, o) => Math.max(m, o.orderId + 1), 1);
    this.sortOrders.push({ orderId: newId, fields: order.fields });
    this.lastAddedOrderId = newId;
    this.changed = true;
  }

  private addSnapshot(snapshot: Snapshot): void {
    if (this.snapshots.some((s) => s.snapshotId === snapshot.snapshotId)) throw validationError(`Snapshot already exists for id: ${snapshot.snapshotId}`);
    if (this.formatVersion > 1 && snapshot.parentSnapshotId !== undefined && snapshot.sequenceNumber <= this.lastSequenceNumber) {
      throw validationError(`Cannot add snapshot with sequence number ${snapshot.sequenceNumber} older than last sequence number ${this.lastSequenceNumber}`);
    }
    if (this.formatVersion > 1 && snapshot.manifestList === undefined) throw validationError('Snapshots must have a manifest list in format v2');
    this.snapshots.push(snapshot);
    this.addedSnapshotIds.add(snapshot.snapshotId);
    this.lastUpdatedMs = snapshot.timestampMs;
    if (this.formatVersion > 1) this.lastSequenceNumber = Math.max(this.lastSequenceNumber, snapshot.sequenceNumber);
    this.changed = true;
  }

  private setRef(name: string, ref: SnapshotRef): void {
    validateSnapshotRef(ref);
    if (name === '') throw validationError('Ref name must not be empty');
    if (name === MAIN_BRANCH && ref.type !== 'branch') throw validationError(`Cannot set ${MAIN_BRANCH} to a tag`);
    const existing = this.refs.get(name);
    if (existing !== undefined && snapshotRefsEqual(existing, ref)) return;
    const snapshot = this.snapshots.find((s) => s.snapshotId === ref.snapshotId);
    if (snapshot === undefined) throw validationError(`Cannot set ${name} to unknown snapshot: ${ref.snapshotId}`);
    if (this.addedSnapshotIds.has(ref.snapshotId)) this.lastUpdatedMs = snapshot.timestampMs;
    if (name === MAIN_BRANCH) {
      this.currentSnapshotId = ref.snapshotId;
      if (this.lastUpdatedMs === undefined) this.lastUpdatedMs = this.options.now;
      this.snapshotLog.push({ timestampMs: this.lastUpdatedMs, snapshotId: ref.snapshotId });
    }
    this.refs.set(name, ref);
    this.changed = true;
  }

  private removeSnapshots(ids: readonly bigint[]): void {
    const remove = new Set(ids);
    const kept = this.snapshots.filter((s) => !remove.has(s.snapshotId));
    if (kept.length === this.snapshots.length) return;
    this.snapshots = kept;
    for (const [name, ref] of [...this.refs]) {
      if (remove.has(ref.snapshotId)) {
        this.refs.delete(name);
        if (name === MAIN_BRANCH) this.currentSnapshotId = null;
      }
    }
    this.statistics = this.statistics.filter((s) => !remove.has(s.snapshotId));
    this.partitionStatistics = this.partitionStatistics.filter((s) => !remove.has(s.snapshotId));
    this.changed = true;
  }

  build(): TableMetadata {
    if (!this.changed && this.base !== undefined) return this.base;
    if (this.location === undefined) throw validationError('Invalid table metadata: location is required');
    if (this.schemas.length === 0) throw validationError('Invalid table metadata: a table needs a schema');
    if (this.currentSchemaId === -1) throw validationError('Invalid table metadata: current schema is not set');
    if (this.specs.length === 0) {
      this.specs.push(UNPARTITIONED_SPEC);
      this.defaultSpecId = UNPARTITIONED_SPEC.specId;
    }
    if (this.defaultSpecId === -1) throw validationError('Invalid table metadata: default partition spec is not set');
    if (this.sortOrders.length === 0) {
      this.sortOrders.push(UNSORTED_ORDER);
      this.defaultSortOrderId = UNSORTED_ORDER_ID;
    }
    if (this.defaultSortOrderId === -1) throw validationError('Invalid table metadata: default sort order is not set');
    // Java's updateSnapshotLog: history before an entry whose snapshot is gone is dropped.
    const live = new Set(this.snapshots.map((s) => s.snapshotId));
    let snapshotLog: SnapshotLogEntry[] = [];
    for (const entry of this.snapshotLog) {
      if (live.has(entry.snapshotId)) snapshotLog.push(entry);
      else snapshotLog = [];
    }
    let metadata: TableMetadata = {
      formatVersion: this.formatVersion,
      tableUuid: this.tableUuid ?? this.options.newTableUuid ?? randomUUID(),
      location: this.location,
      lastSequenceNumber: this.lastSequenceNumber,
      lastUpdatedMs: this.lastUpdatedMs ?? this.options.now,
      lastColumnId: this.lastColumnId,
      schemas: this.schemas,
      currentSchemaId: this.currentSchemaId,
      partitionSpecs: this.specs,
      defaultSpecId: this.defaultSpecId,
      lastPartitionId: this.lastPartitionId,
      properties: this.properties,
      currentSnapshotId: this.currentSnapshotId,
      snapshots: this.snapshots,
      refs: this.refs,
      snapshotLog,
      metadataLog: this.base?.metadataLog ?? [],
      sortOrders: this.sortOrders,
      defaultSortOrderId: this.defaultSortOrderId,
      statistics: this.statistics,
      partitionStatistics: this.partitionStatistics,
      ...(this.base?.nextRowId !== undefined ? { nextRowId: this.base.nextRowId } : {}),
      ...(this.encryptionKeys !== undefined ? { encryptionKeys: this.encryptionKeys } : {}),
      unknownFields: this.base?.unknownFields ?? new Map(),
    };
    if (this.base !== undefined && this.options.previousMetadataLocation !== undefined) {
      const previous: MetadataLogEntry = { timestampMs: this.base.lastUpdatedMs, metadataFile: this.options.previousMetadataLocation };
      metadata = withPreviousMetadataFile(metadata, previous);
    }
    return metadata;
  }
}
