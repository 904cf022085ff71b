/**
 * The wire types of a table commit: `TableRequirement` and `TableUpdate` of the REST OpenAPI spec, as
 * readonly discriminated unions tagged by their wire `type` / `action`, with JSON readers (unknown
 * kinds → `BadRequestException`) and writers.
 */
import { badRequest, unreachable } from './errors.js';
import { asArray, asObject, field, intArray, optionalInt, requiredInt, requiredString, stringArray, stringMap, toLong } from './json-fields.js';
import type { JsonObject, JsonValue } from './json.js';
import { partitionSpecToJson, unboundPartitionSpecFromJson } from './partition-spec.js';
import type { UnboundPartitionSpec } from './partition-spec.js';
import { schemaFromJson, schemaToJson } from './schema.js';
import type { Schema } from './schema.js';
import {
  SNAPSHOT_OPERATIONS, partitionStatisticsFileFromJson, partitionStatisticsFileToJson, snapshotFromJson, snapshotRefFromJson, snapshotRefToJson,
  snapshotToJson, statisticsFileFromJson, statisticsFileToJson,
} from './snapshot.js';
import type { PartitionStatisticsFile, Snapshot, SnapshotRef, StatisticsFile } from './snapshot.js';
import { sortOrderFromJson, sortOrderToJson } from './sort-order.js';
import type { SortOrder } from './sort-order.js';

export type TableRequirement =
  /** The table must not exist (create transactions). */
  | { readonly type: 'assert-create' }
  | { readonly type: 'assert-table-uuid'; readonly uuid: string }
  /** `snapshotId: null` means the ref must not exist. */
  | { readonly type: 'assert-ref-snapshot-id'; readonly ref: string; readonly snapshotId: bigint | null }
  | { readonly type: 'assert-last-assigned-field-id'; readonly lastAssignedFieldId: number }
  | { readonly type: 'assert-current-schema-id'; readonly currentSchemaId: number }
  | { readonly type: 'assert-last-assigned-partition-id'; readonly lastAssignedPartitionId: number }
  | { readonly type: 'assert-default-spec-id'; readonly defaultSpecId: number }
  | { readonly type: 'assert-default-sort-order-id'; readonly defaultSortOrderId: number };

export type TableRequirementType = TableRequirement['type'];

export type TableUpdate =
  | { readonly action: 'assign-uuid'; readonly uuid: string }
  | { readonly action: 'upgrade-format-version'; readonly formatVersion: number }
  /** `lastColumnId` is deprecated on the wire; computed when absent. */
  | { readonly action: 'add-schema'; readonly schema: Schema; readonly lastColumnId?: number }
  /** `-1` = the schema added last in this commit. */
  | { readonly action: 'set-current-schema'; readonly schemaId: number }
  | { readonly action: 'add-spec'; readonly spec: UnboundPartitionSpec }
  /** `-1` = the spec added last in this commit. */
  | { readonly action: 'set-default-spec'; readonly specId: number }
  | { readonly action: 'add-sort-order'; readonly sortOrder: SortOrder }
  /** `-1` = the sort order added last in this commit. */
  | { readonly action: 'set-default-sort-order'; readonly sortOrderId: number }
  | { readonly action: 'add-snapshot'; readonly snapshot: Snapshot }
  | { readonly action: 'set-snapshot-ref'; readonly refName: string; readonly ref: SnapshotRef }
  | { readonly action: 'remove-snapshots'; readonly snapshotIds: readonly bigint[] }
  | { readonly action: 'remove-snapshot-ref'; readonly refName: string }
  | { readonly action: 'set-location'; readonly location: string }
  | { readonly action: 'set-properties'; readonly updates: ReadonlyMap<string, string> }
  | { readonly action: 'remove-properties'; readonly removals: readonly string[] }
  | { readonly action: 'set-statistics'; readonly statistics: StatisticsFile }
  | { readonly action: 'remove-statistics'; readonly snapshotId: bigint }
  | { readonly action: 'set-partition-statistics'; readonly partitionStatistics: PartitionStatisticsFile }
  | { readonly action: 'remove-partition-statistics'; readonly snapshotId: bigint }
  | { readonly action: 'remove-partition-specs'; readonly specIds: readonly number[] }
  | { readonly action: 'remove-schemas'; readonly schemaIds: readonly number[] }
  /** v3 encryption keys, kept as their JSON (`key-id` required). */
  | { readonly action: 'add-encryption-key'; readonly encryptionKey: JsonObject }
  | { readonly action: 'remove-encryption-key'; readonly keyId: string };

export type TableUpdateAction = TableUpdate['action'];

function requiredSnapshotId(obj: JsonObject, key: string, what: string): bigint {
  const v = toLong(field(obj, key));
  if (v === undefined) throw badRequest(`Cannot parse missing or non-integer '${key}' in ${what}`);
  return v;
}

/** Reads one requirement; unknown `type` → `BadRequestException`. */
export function tableRequirementFromJson(json: JsonValue): TableRequirement {
  const obj = asObject(json, 'table requirement');
  const type = requiredString(obj, 'type', 'table requirement');
  const what = type;
  switch (type) {
    case 'assert-create':
      return { type };
    case 'assert-table-uuid':
      return { type, uuid: requiredString(obj, 'uuid', what) };
    case 'assert-ref-snapshot-id': {
      if (!Object.prototype.hasOwnProperty.call(obj, 'snapshot-id')) throw badRequest(`Cannot parse missing 'snapshot-id' in ${what}`);
      const raw = field(obj, 'snapshot-id');
      return { type, ref: requiredString(obj, 'ref', what), snapshotId: raw === null ? null : requiredSnapshotId(obj, 'snapshot-id', what) };
    }
    case 'assert-last-assigned-field-id':
      return { type, lastAssignedFieldId: requiredInt(obj, 'last-assigned-field-id', what) };
    case 'assert-current-schema-id':
      return { type, currentSchemaId: requiredInt(obj, 'current-schema-id', what) };
    case 'assert-last-assigned-partition-id':
      return { type, lastAssignedPartitionId: requiredInt(obj, 'last-assigned-partition-id', what) };
    case 'assert-default-spec-id':
      return { type, defaultSpecId: requiredInt(obj, 'default-spec-id', what) };
    case 'assert-default-sort-order-id':
      return { type, defaultSortOrderId: requiredInt(obj, 'default-sort-order-id', what) };
    default:
      throw badRequest(`Cannot parse unknown table requirement type: ${type}`);
  }
}

export function tableRequirementToJson(r: TableRequirement): JsonObject {
  switch (r.type) {
    case 'assert-create':
      return { type: r.type };
    case 'assert-table-uuid':
      return { type: r.type, uuid: r.uuid };
    case 'assert-ref-snapshot-id':
      return { type: r.type, ref: r.ref, 'snapshot-id': r.snapshotId };
    case 'assert-last-assigned-field-id':
      return { type: r.type, 'last-assigned-field-id': r.lastAssignedFieldId };
    case 'assert-current-schema-id':
      return { type: r.type, 'current-schema-id': r.currentSchemaId };
    case 'assert-last-assigned-partition-id':
      return { type: r.type, 'last-assigned-partition-id': r.lastAssignedPartitionId };
    case 'assert-default-spec-id':
      return { type: r.type, 'default-spec-id': r.defaultSpecId };
    case 'assert-default-sort-order-id':
      return { type: r.type, 'default-sort-order-id': r.defaultSortOrderId };
    default:
      return unreachable(r);
  }
}

/** Reads one update; unknown `action` → `BadRequestException`. */
export function tableUpdateFromJson(json: JsonValue): TableUpdate {
  const obj = asObject(json, 'table update');
  const action = requiredString(obj, 'action', 'table update');
  const what = action;
  switch (action) {
    case 'assign-uuid':
      return { action, uuid: requiredString(obj, 'uuid', what) };
    case 'upgrade-format-version':
      return { action, formatVersion: requiredInt(obj, 'format-version', what) };
    case 'add-schema': {
      const lastColumnId = optionalInt(obj, 'last-column-id', what);
      return { action, schema: schemaFromJson(field(obj, 'schema')), ...(lastColumnId !== undefined ? { lastColumnId } : {}) };
    }
    case 'set-current-schema':
      return { action, schemaId: requiredInt(obj, 'schema-id', what) };
    case 'add-spec':
      return { action, spec: unboundPartitionSpecFromJson(field(obj, 'spec')) };
    case 'set-default-spec':
      return { action, specId: requiredInt(obj, 'spec-id', what) };
    case 'add-sort-order':
      return { action, sortOrder: sortOrderFromJson(field(obj, 'sort-order')) };
    case 'set-default-sort-order':
      return { action, sortOrderId: requiredInt(obj, 'sort-order-id', what) };
    case 'add-snapshot': {
      const snapshot = snapshotFromJson(field(obj, 'snapshot'));
      const op = snapshot.summary.get('operation');
      if (op === undefined || !(SNAPSHOT_OPERATIONS as readonly string[]).includes(op)) throw badRequest(`Cannot parse snapshot summary: invalid operation ${String(op)}`);
      return { action, snapshot };
    }
    case 'set-snapshot-ref':
      return { action, refName: requiredString(obj, 'ref-name', what), ref: snapshotRefFromJson(obj) };
    case 'remove-snapshots':
      return {
        action,
        snapshotIds: asArray(field(obj, 'snapshot-ids'), 'snapshot-ids').map((v) => {
          const n = toLong(v);
          if (n === undefined) throw badRequest('Cannot parse snapshot-ids: expected integers');
          return n;
        }),
      };
    case 'remove-snapshot-ref':
      return { action, refName: requiredString(obj, 'ref-name', what) };
    case 'set-location':
      return { action, location: requiredString(obj, 'location', what) };
    case 'set-properties':
      asObject(field(obj, 'updates'), 'updates');
      return { action, updates: stringMap(field(obj, 'updates'), 'updates') };
    case 'remove-properties':
      return { action, removals: stringArray(field(obj, 'removals'), 'removals') };
    case 'set-statistics': {
      const statistics = statisticsFileFromJson(field(obj, 'statistics'));
      const legacy = toLong(field(obj, 'snapshot-id'));
      if (legacy !== undefined && legacy !== statistics.snapshotId) throw badRequest(`Snapshot id ${legacy} does not match statistics snapshot id ${statistics.snapshotId}`);
      return { action, statistics };
    }
    case 'remove-statistics':
      return { action, snapshotId: requiredSnapshotId(obj, 'snapshot-id', what) };
    case 'set-partition-statistics':
      return { action, partitionStatistics: partitionStatisticsFileFromJson(field(obj, 'partition-statistics')) };
    case 'remove-partition-statistics':
      return { action, snapshotId: requiredSnapshotId(obj, 'snapshot-id', what) };
    case 'remove-partition-specs':
      return { action, specIds: intArray(field(obj, 'spec-ids'), 'spec-ids') };
    case 'remove-schemas':
      return { action, schemaIds: intArray(field(obj, 'schema-ids'), 'schema-ids') };
    case 'add-encryption-key': {
      const key = asObject(field(obj, 'encryption-key'), 'encryption-key');
      requiredString(key, 'key-id', 'encryption-key');
      return { action, encryptionKey: key };
    }
    case 'remove-encryption-key':
      return { action, keyId: requiredString(obj, 'key-id', what) };
    default:
      throw badRequest(`Cannot parse unknown table update action: ${action}`);
  }
}

function mapToObject(map: ReadonlyMap<string, string>): JsonObject {
  const out: Record<string, JsonValue> = {};
  for (const [k, v] of map) Object.defineProperty(out, k, { value: v, enumerable: true, writable: true, configurable: true });
  return out;
}

export function tableUpdateToJson(u: TableUpdate): JsonObject {
  switch (u.action) {
    case 'assign-uuid':
      return { action: u.action, uuid: u.uuid };
    case 'upgrade-format-version':
      return { action: u.action, 'format-version': u.formatVersion };
    case 'add-schema':
      return { action: u.action, schema: schemaToJson(u.schema), ...(u.lastColumnId !== undefined ? { 'last-column-id': u.lastColumnId } : {}) };
    case 'set-current-schema':
      return { action: u.action, 'schema-id': u.schemaId };
    case 'add-spec':
      return { action: u.action, spec: partitionSpecToJson(u.spec) };
    case 'set-default-spec':
      return { action: u.action, 'spec-id': u.specId };
    case 'add-sort-order':
      return { action: u.action, 'sort-order': sortOrderToJson(u.sortOrder) };
    case 'set-default-sort-order':
      return { action: u.action, 'sort-order-id': u.sortOrderId };
    case 'add-snapshot':
      return { action: u.action, snapshot: snapshotToJson(u.snapshot) };
    case 'set-snapshot-ref':
      return { action: u.action, 'ref-name': u.refName, ...snapshotRefToJson(u.ref) };
    case 'remove-snapshots':
      return { action: u.action, 'snapshot-ids': [...u.snapshotIds] };
    case 'remove-snapshot-ref':
      return { action: u.action, 'ref-name': u.refName };
    case 'set-location':
      return { action: u.action, location: u.location };
    case 'set-properties':
      return { action: u.action, updates: mapToObject(u.updates) };
    case 'remove-properties':
      return { action: u.action, removals: [...u.removals] };
    case 'set-statistics':
      return { action: u.action, statistics: statisticsFileToJson(u.statistics) };
    case 'remove-statistics':
      return { action: u.action, 'snapshot-id': u.snapshotId };
    case 'set-partition-statistics':
      return { action: u.action, 'partition-statistics': partitionStatisticsFileToJson(u.partitionStatistics) };
    case 'remove-partition-statistics':
      return { action: u.action, 'snapshot-id': u.snapshotId };
    case 'remove-partition-specs':
      return { action: u.action, 'spec-ids': [...u.specIds] };
    case 'remove-schemas':
      return { action: u.action, 'schema-ids': [...u.schemaIds] };
    case 'add-encryption-key':
      return { action: u.action, 'encryption-key': u.encryptionKey };
    case 'remove-encryption-key':
      return { action: u.action, 'key-id': u.keyId };
    default:
      return unreachable(u);
  }
}
