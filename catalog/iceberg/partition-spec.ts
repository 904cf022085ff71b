/**
 * Partition specs: how a table's rows map to partition tuples. A spec in a request may omit field ids
 * ("unbound"); `bindPartitionSpec` validates it against the current schema and assigns ids the way
 * Java's `TableMetadata.Builder` does for v2 (reuse the id of an identical source/transform pair from
 * an earlier spec, else the next id after `last-partition-id`).
 */
import type { IcebergValue } from './conversions.js';
import { validationError } from './errors.js';
import { asArray, asObject, field, optionalInt, requiredInt, requiredString } from './json-fields.js';
import type { JsonValue } from './json.js';
import { indexSchema } from './schema.js';
import type { Schema } from './schema.js';
import { parseTransform, toHumanString, transformResultType, transformToString, transformsEqual, urlEncodePathSegment } from './transforms.js';
import type { Transform } from './transforms.js';
import { Types, isPrimitive } from './types.js';
import type { NestedField, PrimitiveType, StructType } from './types.js';

/** Partition field ids start here, so they never collide with column ids in manifests. */
export const PARTITION_DATA_ID_START = 1000;
/** `last-partition-id` of a table that has never been partitioned. */
export const INITIAL_LAST_PARTITION_ID = PARTITION_DATA_ID_START - 1;

export interface PartitionField {
  /** Column the value is derived from. */
  readonly sourceId: number;
  /** Id of the partition field in manifests' `partition` struct (≥ 1000). */
  readonly fieldId: number;
  readonly name: string;
  readonly transform: Transform;
}

export interface PartitionSpec {
  readonly specId: number;
  readonly fields: readonly PartitionField[];
}

/** A partition field as a client sends it: `field-id` may be absent. */
export interface UnboundPartitionField {
  readonly sourceId: number;
  readonly fieldId?: number;
  readonly name: string;
  readonly transform: Transform;
}

/** A partition spec as a client sends it: `spec-id` and field ids may be absent. */
export interface UnboundPartitionSpec {
  readonly specId?: number;
  readonly fields: readonly UnboundPartitionField[];
}

/** The unpartitioned spec with id 0. */
export const UNPARTITIONED_SPEC: PartitionSpec = { specId: 0, fields: [] };

/** Reads a `PartitionSpec` (field ids optional). */
export function unboundPartitionSpecFromJson(json: JsonValue | undefined): UnboundPartitionSpec {
  const obj = asObject(json, 'partition spec');
  const specId = optionalInt(obj, 'spec-id', 'partition spec');
  return { ...(specId !== undefined ? { specId } : {}), fields: asArray(field(obj, 'fields'), 'partition fields').map(unboundFieldFromJson) };
}

function unboundFieldFromJson(json: JsonValue): UnboundPartitionField {
  const obj = asObject(json, 'partition field');
  const fieldId = optionalInt(obj, 'field-id', 'partition field');
  return {
    sourceId: requiredInt(obj, 'source-id', 'partition field'),
    ...(fieldId !== undefined ? { fieldId } : {}),
    name: requiredString(obj, 'name', 'partition field'),
    transform: parseTransform(requiredString(obj, 'transform', 'partition field')),
  };
}

/**
 * Reads a spec from table metadata, where ids are present. v1 metadata may lack field ids: they are
 * then assigned from 1000 in order, as Java does.
 */
export function partitionSpecFromJson(json: JsonValue | undefined, defaultSpecId = 0): PartitionSpec {
  const unbound = unboundPartitionSpecFromJson(json);
  let next = PARTITION_DATA_ID_START;
  return {
    specId: unbound.specId ?? defaultSpecId,
    fields: unbound.fields.map((f) => ({ sourceId: f.sourceId, fieldId: f.fieldId ?? next++, name: f.name, transform: f.transform })),
  };
}

/** Writes spec fields in Java's key order (name, transform, source-id, field-id). */
export function partitionFieldsToJson(fields: readonly (PartitionField | UnboundPartitionField)[]): JsonValue[] {
  return fields.map((f) => {
    const out: Record<string, JsonValue> = { name: f.name, transform: transformToString(f.transform), 'source-id': f.sourceId };
    if (f.fieldId !== undefined) out['field-id'] = f.fieldId;
    return out;
  });
}

export function partitionSpecToJson(spec: PartitionSpec | UnboundPartitionSpec): JsonValue {
  const out: Record<string, JsonValue> = {};
  if (spec.specId !== undefined) out['spec-id'] = spec.specId;
  out['fields'] = partitionFieldsToJson(spec.fields);
  return out;
}

/** Whether the spec has no fields, or only `void` ones (Java `isUnpartitioned`). */
export function isUnpartitioned(spec: PartitionSpec): boolean {
  return spec.fields.every((f) => f.transform.kind === 'void');
}

/** Same fields (source, transform, name) in the same order; ids not compared (Java `compatibleWith`). */
export function specsCompatible(a: readonly UnboundPartitionField[], b: readonly UnboundPartitionField[]): boolean {
  return a.length === b.length && a.every((f, i) => {
    const g = b[i];
    return g !== undefined && f.sourceId === g.sourceId && f.name === g.name && transformsEqual(f.transform, g.transform);
  });
}

/** Highest partition field id of the spec, or `INITIAL_LAST_PARTITION_ID` when it has none. */
export function lastAssignedFieldId(spec: PartitionSpec): number {
  return spec.fields.reduce((m, f) => Math.max(m, f.fieldId), INITIAL_LAST_PARTITION_ID);
}

export interface BindPartitionSpecOptions {
  readonly specId: number;
  readonly lastPartitionId: number;
  readonly formatVersion: number;
  /** Specs already in the table, whose field ids are reused for the same source and transform (v2+). */
  readonly existingSpecs?: readonly PartitionSpec[];
}

/**
 * Validates an unbound spec against `schema` and assigns missing field ids. Checks (as Java's
 * `PartitionSpec.checkCompatibility` and builder): source columns exist and are primitive, transforms
 * apply to their types, names are unique and non-empty, a name equal to a column's is only allowed for
 * an identity partition of that column, no duplicate source/transform pair; v1 ids must be sequential.
 */
export function bindPartitionSpec(unbound: UnboundPartitionSpec, schema: Schema, options: BindPartitionSpecOptions): PartitionSpec {
  const index = indexSchema(schema);
  let lastId = options.lastPartitionId;
  const names = new Set<string>();
  const pairs = new Set<string>();
  const reusable = new Map<string, number>();
  if (options.formatVersion > 1) {
    for (const spec of options.existingSpecs ?? []) {
      for (const f of spec.fields) reusable.set(`${f.sourceId}:${transformToString(f.transform)}`, f.fieldId);
    }
  }
  const usedIds = new Set<number>();
  const fields = unbound.fields.map((f, position): PartitionField => {
    if (f.name === '') throw validationError('Cannot use empty partition name');
    if (names.has(f.name)) throw validationError(`Cannot use partition name more than once: ${f.name}`);
    names.add(f.name);
    const source = index.byId.get(f.sourceId);
    if (f.transform.kind !== 'void' && f.transform.kind !== 'unknown') {
      if (source === undefined) throw validationError(`Cannot find source column for partition field: ${f.sourceId} (${f.name})`);
      if (!isPrimitive(source.field.type)) throw validationError(`Cannot partition by non-primitive source field: ${source.fullName}`);
      transformResultType(f.transform, source.field.type);
    }
    const column = index.byName.get(f.name);
    if (column !== undefined && !(f.transform.kind === 'identity' && column.field.id === f.sourceId)) {
      throw validationError(`Cannot create partition from name that exists in schema: ${f.name}`);
    }
    const pair = `${f.sourceId}:${transformToString(f.transform)}`;
    if (f.transform.kind !== 'void' && pairs.has(pair)) throw validationError(`Cannot add redundant partition: ${f.name} (${pair})`);
    pairs.add(pair);
    let fieldId = f.fieldId ?? reusable.get(pair);
    if (fieldId === undefined || usedIds.has(fieldId)) fieldId = ++lastId;
    if (options.formatVersion === 1 && fieldId !== PARTITION_DATA_ID_START + position) {
      throw validationError(`Spec does not use sequential IDs that are required in v1: ${f.name} has field id ${fieldId}`);
    }
    usedIds.add(fieldId);
    return { sourceId: f.sourceId, fieldId, name: f.name, transform: f.transform };
  });
  return { specId: options.specId, fields };
}

/**
 * The struct type of partition tuples (manifests' `partition` field): one optional field per partition
 * field, typed by the transform's result. A source column missing from the schema (dropped) gives
 * `unknown`-typed values that are carried but not interpreted.
 */
export function partitionType(spec: PartitionSpec, schema: Schema): StructType {
  const index = indexSchema(schema);
  const fields: NestedField[] = spec.fields.map((f) => ({ id: f.fieldId, name: f.name, required: false, type: partitionFieldResultType(f, index.byId.get(f.sourceId)?.field.type) }));
  return { kind: 'struct', fields };
}

function partitionFieldResultType(f: PartitionField, source: NestedField['type'] | undefined): PrimitiveType {
  if (source === undefined || !isPrimitive(source)) return f.transform.kind === 'void' ? Types.int : { kind: 'unknown' };
  return transformResultType(f.transform, source);
}

/** Source column type of each partition field (for human strings), `undefined` if the column is gone. */
export function partitionSourceTypes(spec: PartitionSpec, schema: Schema): readonly (PrimitiveType | undefined)[] {
  const index = indexSchema(schema);
  return spec.fields.map((f) => {
    const t = index.byId.get(f.sourceId)?.field.type;
    return t !== undefined && isPrimitive(t) ? t : undefined;
  });
}

/**
 * The data-file directory of a partition tuple as Java's `PartitionSpec.partitionToPath`:
 * `name=value/...`, both URL-encoded, values as human strings (`ts_day=2017-11-16`).
 */
export function partitionToPath(spec: PartitionSpec, schema: Schema, values: readonly (IcebergValue | null)[]): string {
  const sources = partitionSourceTypes(spec, schema);
  return spec.fields
    .map((f, i) => {
      const value = values[i] ?? null;
      const source = sources[i] ?? Types.string;
      return `${urlEncodePathSegment(f.name)}=${urlEncodePathSegment(toHumanString(f.transform, source, value))}`;
    })
    .join('/');
}
