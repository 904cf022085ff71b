/**
 * Table schemas: a top-level struct with a `schema-id` and optional identifier fields. Parsing and
 * writing follow the REST `Schema` shape; `assignFreshIds` renumbers a client-supplied schema the way
 * Java's `TypeUtil.assignFreshIds` does for a new table (breadth-first: a struct's own fields first,
 * then their children).
 */
import { badRequest, unreachable, validationError } from './errors.js';
import { asArray, asObject, field, intArray, optionalInt } from './json-fields.js';
import type { JsonValue } from './json.js';
import { isPrimitive, isPromotionAllowed, nestedFieldFromJson, nestedFieldToJson, typesEqual } from './types.js';
import type { IcebergType, NestedField, StructType } from './types.js';

/** A table (or view) schema. */
export interface Schema {
  readonly schemaId: number;
  /** Field ids that together identify a row (for upserts); empty when none. */
  readonly identifierFieldIds: readonly number[];
  readonly fields: readonly NestedField[];
}

/** Builds a schema. */
export function schema(schemaId: number, fields: readonly NestedField[], identifierFieldIds: readonly number[] = []): Schema {
  return { schemaId, fields, identifierFieldIds };
}

/** The schema as a struct type (for visitors that work on types). */
export function schemaStruct(s: Schema): StructType {
  return { kind: 'struct', fields: s.fields };
}

/** Reads a REST/metadata `Schema`. A missing `schema-id` (it is read-only in requests) becomes `defaultSchemaId`. */
export function schemaFromJson(json: JsonValue | undefined, defaultSchemaId = 0): Schema {
  const obj = asObject(json, 'schema');
  const type = field(obj, 'type');
  if (type !== undefined && type !== 'struct') throw badRequest(`Cannot parse schema: type must be 'struct', got ${String(type)}`);
  const ids = field(obj, 'identifier-field-ids');
  return {
    schemaId: optionalInt(obj, 'schema-id', 'schema') ?? defaultSchemaId,
    identifierFieldIds: ids === undefined || ids === null ? [] : intArray(ids, 'identifier-field-ids'),
    fields: asArray(field(obj, 'fields'), 'schema fields').map(nestedFieldFromJson),
  };
}

/** Writes a schema like Java's `SchemaParser` (identifier-field-ids only when present). */
export function schemaToJson(s: Schema): JsonValue {
  const out: Record<string, JsonValue> = { type: 'struct', 'schema-id': s.schemaId };
  if (s.identifierFieldIds.length > 0) out['identifier-field-ids'] = [...s.identifierFieldIds];
  out['fields'] = s.fields.map(nestedFieldToJson);
  return out;
}

/** Same columns, types and identifier fields, ignoring the schema id (Java `Schema.sameSchema`). */
export function sameSchema(a: Schema, b: Schema): boolean {
  return (
    typesEqual(schemaStruct(a), schemaStruct(b)) &&
    a.identifierFieldIds.length === b.identifierFieldIds.length &&
    [...a.identifierFieldIds].sort((x, y) => x - y).every((id, i) => id === [...b.identifierFieldIds].sort((x, y) => x - y)[i])
  );
}

/** Calls `visit` on every field, list element and map key/value id in the type, depth first. */
function forEachId(type: IcebergType, visit: (id: number) => void): void {
  switch (type.kind) {
    case 'struct':
      for (const f of type.fields) {
        visit(f.id);
        forEachId(f.type, visit);
      }
      return;
    case 'list':
      visit(type.elementId);
      forEachId(type.element, visit);
      return;
    case 'map':
      visit(type.keyId);
      visit(type.valueId);
      forEachId(type.key, visit);
      forEachId(type.value, visit);
      return;
    default:
      return;
  }
}

/** The highest field id used anywhere in the schema (0 for an empty one). */
export function highestFieldId(s: Schema): number {
  let max = 0;
  forEachId(schemaStruct(s), (id) => {
    if (id > max) max = id;
  });
  return max;
}

/** Every field id of the schema, for duplicate checks. Throws `ValidationException` on a duplicate. */
export function validateUniqueFieldIds(s: Schema): void {
  const seen = new Set<number>();
  forEachId(schemaStruct(s), (id) => {
    if (seen.has(id)) throw validationError(`Invalid schema: duplicate field id ${id}`);
    seen.add(id);
  });
}

/**
 * Renumbers every field id from `nextId()` (Java `TypeUtil.assignFreshIds`): a struct's direct fields
 * get consecutive ids first, then each child type is numbered in field order. Identifier field ids are
 * carried over by position. Returns the new schema with `schemaId`.
 */
export function assignFreshIds(s: Schema, schemaId: number, nextId: () => number): Schema {
  const idMap = new Map<number, number>();
  const renumber = (type: IcebergType): IcebergType => {
    switch (type.kind) {
      case 'struct': {
        const newIds = type.fields.map((f) => {
          const id = nextId();
          idMap.set(f.id, id);
          return id;
        });
        return { kind: 'struct', fields: type.fields.map((f, i) => ({ ...f, id: newIds[i] as number, type: renumber(f.type) })) };
      }
      case 'list': {
        const elementId = nextId();
        idMap.set(type.elementId, elementId);
        return { ...type, elementId, element: renumber(type.element) };
      }
      case 'map': {
        const keyId = nextId();
        const valueId = nextId();
        idMap.set(type.keyId, keyId);
        idMap.set(type.valueId, valueId);
        return { ...type, keyId, valueId, key: renumber(type.key), value: renumber(type.value) };
      }
      default:
        return type;
    }
  };
  const struct = renumber(schemaStruct(s)) as StructType;
  const identifierFieldIds = s.identifierFieldIds.map((id) => {
    const mapped = idMap.get(id);
    if (mapped === undefined) throw validationError(`Cannot find identifier field id ${id} in schema`);
    return mapped;
  });
  return { schemaId, fields: struct.fields, identifierFieldIds };
}

/** A field found by id or name, with its full dotted name. */
export interface FieldLookup {
  readonly field: NestedField;
  readonly fullName: string;
}

/**
 * Index of the schema by field id and by full dotted name (`a.b`, list elements `l.element`, map parts
 * `m.key` / `m.value`), as Java's `TypeUtil.indexByName`. Build once per schema and reuse.
 */
export interface SchemaIndex {
  readonly byId: ReadonlyMap<number, FieldLookup>;
  readonly byName: ReadonlyMap<string, FieldLookup>;
  /** Lower-cased names for case-insensitive lookup (first match wins). */
  readonly byLowerName: ReadonlyMap<string, FieldLookup>;
}

export function indexSchema(s: Schema): SchemaIndex {
  const byId = new Map<number, FieldLookup>();
  const byName = new Map<string, FieldLookup>();
  const byLowerName = new Map<string, FieldLookup>();
  const add = (f: NestedField, fullName: string): void => {
    const entry = { field: f, fullName };
    byId.set(f.id, entry);
    byName.set(fullName, entry);
    if (!byLowerName.has(fullName.toLowerCase())) byLowerName.set(fullName.toLowerCase(), entry);
  };
  const walk = (type: IcebergType, prefix: string): void => {
    switch (type.kind) {
      case 'struct':
        for (const f of type.fields) {
          const name = prefix === '' ? f.name : `${prefix}.${f.name}`;
          add(f, name);
          walk(f.type, name);
        }
        return;
      case 'list': {
        const name = `${prefix}.element`;
        add({ id: type.elementId, name: 'element', required: type.elementRequired, type: type.element }, name);
        walk(type.element, name);
        return;
      }
      case 'map': {
        add({ id: type.keyId, name: 'key', required: true, type: type.key }, `${prefix}.key`);
        add({ id: type.valueId, name: 'value', required: type.valueRequired, type: type.value }, `${prefix}.value`);
        walk(type.key, `${prefix}.key`);
        walk(type.value, `${prefix}.value`);
        return;
      }
      default:
        return;
    }
  };
  walk(schemaStruct(s), '');
  return { byId, byName, byLowerName };
}

/** The field with `id`, or `undefined`. */
export function findFieldById(s: Schema, id: number): NestedField | undefined {
  return indexSchema(s).byId.get(id)?.field;
}

/** The field with full dotted `name`, or `undefined`. */
export function findFieldByName(s: Schema, name: string, caseSensitive = true): NestedField | undefined {
  const index = indexSchema(s);
  return (caseSensitive ? index.byName.get(name) : index.byLowerName.get(name.toLowerCase()))?.field;
}

/** One reason a new schema cannot replace the old one while reading old data files. */
export interface SchemaEvolutionProblem {
  readonly fieldId: number;
  readonly message: string;
}

/**
 * Checks that `next` can read data written with `previous`: for every field id present in both, the
 * type is unchanged or an allowed promotion, nested kinds match, and an optional field did not become
 * required (a column added as required must also not appear, since old files lack it — unless it has
 * an `initial-default`). Returns every problem found; empty means compatible.
 */
export function schemaEvolutionProblems(previous: Schema, next: Schema): readonly SchemaEvolutionProblem[] {
  const problems: SchemaEvolutionProblem[] = [];
  const old = indexSchema(previous).byId;
  for (const { field: f, fullName } of indexSchema(next).byId.values()) {
    const before = old.get(f.id);
    if (before === undefined) {
      if (f.required && f.initialDefault === undefined) problems.push({ fieldId: f.id, message: `Incompatible change: cannot add required column without a default: ${fullName}` });
      continue;
    }
    const a = before.field.type;
    const b = f.type;
    if (isPrimitive(a) && isPrimitive(b)) {
      if (!isPromotionAllowed(a, b)) problems.push({ fieldId: f.id, message: `Cannot change column type: ${fullName}: ${describe(a)} -> ${describe(b)}` });
    } else if (a.kind !== b.kind) {
      problems.push({ fieldId: f.id, message: `Cannot change column type: ${fullName}: ${a.kind} -> ${b.kind}` });
    }
    if (f.required && !before.field.required) problems.push({ fieldId: f.id, message: `Cannot change column nullability: ${fullName}: optional -> required` });
  }
  return problems;
}

function describe(t: IcebergType): string {
  switch (t.kind) {
    case 'decimal':
      return `decimal(${t.precision}, ${t.scale})`;
    case 'fixed':
      return `fixed[${t.length}]`;
    case 'struct':
    case 'list':
    case 'map':
      return t.kind;
    case 'geometry':
    case 'geography':
      return t.text;
    case 'boolean': case 'int': case 'long': case 'float': case 'double': case 'date': case 'time':
    case 'timestamp': case 'timestamptz': case 'timestamp_ns': case 'timestamptz_ns': case 'string':
    case 'uuid': case 'binary': case 'unknown': case 'variant':
      return t.kind;
    default:
      return unreachable(t);
  }
}
