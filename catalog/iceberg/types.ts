/**
 * The Iceberg type system (table spec "Schemas and Data Types") and its JSON form, exactly as the REST
 * OpenAPI `Type` schema: primitives are strings (`"decimal(9,2)"`, `"fixed[16]"`), nested types objects.
 * Every nested field carries its id; the `kind` tag is the wire name.
 */
import { badRequest, unreachable } from './errors.js';
import { asArray, asObject, field, requiredBoolean, requiredInt, requiredString } from './json-fields.js';
import type { JsonValue } from './json.js';

/** Primitive kinds without parameters. `unknown`, `variant`, `geometry`, `geography` are v3 kinds read but not computed on. */
export type SimplePrimitiveKind =
  | 'boolean'
  | 'int'
  | 'long'
  | 'float'
  | 'double'
  | 'date'
  | 'time'
  | 'timestamp'
  | 'timestamptz'
  | 'timestamp_ns'
  | 'timestamptz_ns'
  | 'string'
  | 'uuid'
  | 'binary'
  | 'unknown'
  | 'variant';

export interface SimplePrimitiveType {
  readonly kind: SimplePrimitiveKind;
}
/** `decimal(P,S)`: `precision` ≤ 38 digits, `scale` digits after the point. */
export interface DecimalType {
  readonly kind: 'decimal';
  readonly precision: number;
  readonly scale: number;
}
/** `fixed[L]`: exactly `length` bytes. */
export interface FixedType {
  readonly kind: 'fixed';
  readonly length: number;
}
/** v3 `geometry(crs)` / `geography(crs, algorithm)`: tolerated on read, the text is kept verbatim. */
export interface GeoType {
  readonly kind: 'geometry' | 'geography';
  readonly text: string;
}
export type PrimitiveType = SimplePrimitiveType | DecimalType | FixedType | GeoType;

/** A field of a struct (or of a schema). */
export interface NestedField {
  /** Unique id across the whole table schema history; data files refer to columns by it. */
  readonly id: number;
  readonly name: string;
  /** `true` = not null. */
  readonly required: boolean;
  readonly type: IcebergType;
  readonly doc?: string;
  /** v3 default for rows written before the field existed; kept as its JSON single-value form. */
  readonly initialDefault?: JsonValue;
  /** v3 default for writers that omit the field; kept as its JSON single-value form. */
  readonly writeDefault?: JsonValue;
}
export interface StructType {
  readonly kind: 'struct';
  readonly fields: readonly NestedField[];
}
export interface ListType {
  readonly kind: 'list';
  readonly elementId: number;
  readonly elementRequired: boolean;
  readonly element: IcebergType;
}
export interface MapType {
  readonly kind: 'map';
  readonly keyId: number;
  readonly key: IcebergType;
  readonly valueId: number;
  readonly valueRequired: boolean;
  readonly value: IcebergType;
}
export type NestedType = StructType | ListType | MapType;
export type IcebergType = PrimitiveType | NestedType;

const SIMPLE_KINDS: ReadonlySet<string> = new Set<SimplePrimitiveKind>([
  'boolean', 'int', 'long', 'float', 'double', 'date', 'time', 'timestamp', 'timestamptz',
  'timestamp_ns', 'timestamptz_ns', 'string', 'uuid', 'binary', 'unknown', 'variant',
]);

/** Factories for the parameterless primitives and the parameterised ones. */
export const Types = {
  boolean: { kind: 'boolean' } as SimplePrimitiveType,
  int: { kind: 'int' } as SimplePrimitiveType,
  long: { kind: 'long' } as SimplePrimitiveType,
  float: { kind: 'float' } as SimplePrimitiveType,
  double: { kind: 'double' } as SimplePrimitiveType,
  date: { kind: 'date' } as SimplePrimitiveType,
  time: { kind: 'time' } as SimplePrimitiveType,
  timestamp: { kind: 'timestamp' } as SimplePrimitiveType,
  timestamptz: { kind: 'timestamptz' } as SimplePrimitiveType,
  timestampNs: { kind: 'timestamp_ns' } as SimplePrimitiveType,
  timestamptzNs: { kind: 'timestamptz_ns' } as SimplePrimitiveType,
  string: { kind: 'string' } as SimplePrimitiveType,
  uuid: { kind: 'uuid' } as SimplePrimitiveType,
  binary: { kind: 'binary' } as SimplePrimitiveType,
  decimal: (precision: number, scale: number): DecimalType => ({ kind: 'decimal', precision, scale }),
  fixed: (length: number): FixedType => ({ kind: 'fixed', length }),
  struct: (fields: readonly NestedField[]): StructType => ({ kind: 'struct', fields }),
  list: (elementId: number, element: IcebergType, elementRequired = false): ListType => ({ kind: 'list', elementId, element, elementRequired }),
  map: (keyId: number, key: IcebergType, valueId: number, value: IcebergType, valueRequired = false): MapType => ({
    kind: 'map', keyId, key, valueId, value, valueRequired,
  }),
} as const;

/** Builds a field; `required` defaults to false (optional) as in Iceberg's `optional(...)`. */
export function nestedField(id: number, name: string, type: IcebergType, required = false, doc?: string): NestedField {
  return doc === undefined ? { id, name, required, type } : { id, name, required, type, doc };
}

export function isPrimitive(type: IcebergType): type is PrimitiveType {
  return type.kind !== 'struct' && type.kind !== 'list' && type.kind !== 'map';
}

/** The spec's string form of a primitive type: `decimal(9, 2)` as Java prints it, `fixed[16]`. */
export function primitiveToString(type: PrimitiveType): string {
  switch (type.kind) {
    case 'decimal':
      return `decimal(${type.precision}, ${type.scale})`;
    case 'fixed':
      return `fixed[${type.length}]`;
    case 'geometry':
    case 'geography':
      return type.text;
    default:
      return type.kind;
  }
}

/** Parses a primitive type string; `undefined` if it is not one we know. */
export function parsePrimitiveType(text: string): PrimitiveType | undefined {
  const t = text.trim();
  const lower = t.toLowerCase();
  if (SIMPLE_KINDS.has(lower)) return { kind: lower as SimplePrimitiveKind };
  let m = /^decimal\s*\(\s*(\d+)\s*,\s*(\d+)\s*\)$/i.exec(t);
  if (m !== null) return Types.decimal(Number(m[1]), Number(m[2]));
  m = /^fixed\s*\[\s*(\d+)\s*\]$/i.exec(t);
  if (m !== null) return Types.fixed(Number(m[1]));
  if (/^geometry(\s*\(.*\))?$/i.test(t)) return { kind: 'geometry', text: t };
  if (/^geography(\s*\(.*\))?$/i.test(t)) return { kind: 'geography', text: t };
  return undefined;
}

/** Reads a `Type` from its JSON form. */
export function typeFromJson(json: JsonValue | undefined): IcebergType {
  if (typeof json === 'string') {
    const p = parsePrimitiveType(json);
    if (p === undefined) throw badRequest(`Cannot parse type string to primitive: ${json}`);
    return p;
  }
  const obj = asObject(json, 'type');
  const kind = field(obj, 'type');
  switch (kind) {
    case 'struct':
      return { kind: 'struct', fields: asArray(field(obj, 'fields'), 'struct fields').map(nestedFieldFromJson) };
    case 'list':
      return {
        kind: 'list',
        elementId: requiredInt(obj, 'element-id', 'list type'),
        element: typeFromJson(field(obj, 'element')),
        elementRequired: requiredBoolean(obj, 'element-required', 'list type'),
      };
    case 'map':
      return {
        kind: 'map',
        keyId: requiredInt(obj, 'key-id', 'map type'),
        key: typeFromJson(field(obj, 'key')),
        valueId: requiredInt(obj, 'value-id', 'map type'),
        value: typeFromJson(field(obj, 'value')),
        valueRequired: requiredBoolean(obj, 'value-required', 'map type'),
      };
    default:
      throw badRequest(`Cannot parse type from json: ${String(kind)}`);
  }
}

/** Reads a `StructField`. */
export function nestedFieldFromJson(json: JsonValue): NestedField {
  const obj = asObject(json, 'struct field');
  const doc = field(obj, 'doc');
  const initialDefault = field(obj, 'initial-default');
  const writeDefault = field(obj, 'write-default');
  return {
    id: requiredInt(obj, 'id', 'struct field'),
    name: requiredString(obj, 'name', 'struct field'),
    required: requiredBoolean(obj, 'required', 'struct field'),
    type: typeFromJson(field(obj, 'type')),
    ...(typeof doc === 'string' ? { doc } : {}),
    ...(initialDefault !== undefined ? { initialDefault } : {}),
    ...(writeDefault !== undefined ? { writeDefault } : {}),
  };
}

/** Writes a type in the spec's JSON form, keys in Java's order. */
export function typeToJson(type: IcebergType): JsonValue {
  switch (type.kind) {
    case 'struct':
      return { type: 'struct', fields: type.fields.map(nestedFieldToJson) };
    case 'list':
      return { type: 'list', 'element-id': type.elementId, element: typeToJson(type.element), 'element-required': type.elementRequired };
    case 'map':
      return {
        type: 'map',
        'key-id': type.keyId,
        key: typeToJson(type.key),
        'value-id': type.valueId,
        value: typeToJson(type.value),
        'value-required': type.valueRequired,
      };
    default:
      return primitiveToString(type);
  }
}

export function nestedFieldToJson(f: NestedField): JsonValue {
  const out: Record<string, JsonValue> = { id: f.id, name: f.name, required: f.required, type: typeToJson(f.type) };
  if (f.doc !== undefined) out['doc'] = f.doc;
  if (f.initialDefault !== undefined) out['initial-default'] = f.initialDefault;
  if (f.writeDefault !== undefined) out['write-default'] = f.writeDefault;
  return out;
}

/** Structural equality of types (field ids, names, requiredness and docs included). */
export function typesEqual(a: IcebergType, b: IcebergType): boolean {
  switch (a.kind) {
    case 'struct':
      return (
        b.kind === 'struct' &&
        a.fields.length === b.fields.length &&
        a.fields.every((f, i) => {
          const g = b.fields[i];
          return (
            g !== undefined &&
            f.id === g.id &&
            f.name === g.name &&
            f.required === g.required &&
            f.doc === g.doc &&
            jsonEqual(f.initialDefault, g.initialDefault) &&
            jsonEqual(f.writeDefault, g.writeDefault) &&
            typesEqual(f.type, g.type)
          );
        })
      );
    case 'list':
      return b.kind === 'list' && a.elementId === b.elementId && a.elementRequired === b.elementRequired && typesEqual(a.element, b.element);
    case 'map':
      return (
        b.kind === 'map' &&
        a.keyId === b.keyId &&
        a.valueId === b.valueId &&
        a.valueRequired === b.valueRequired &&
        typesEqual(a.key, b.key) &&
        typesEqual(a.value, b.value)
      );
    case 'decimal':
      return b.kind === 'decimal' && a.precision === b.precision && a.scale === b.scale;
    case 'fixed':
      return b.kind === 'fixed' && a.length === b.length;
    case 'geometry':
    case 'geography':
      return b.kind === a.kind && b.text === a.text;
    case 'boolean': case 'int': case 'long': case 'float': case 'double': case 'date': case 'time':
    case 'timestamp': case 'timestamptz': case 'timestamp_ns': case 'timestamptz_ns': case 'string':
    case 'uuid': case 'binary': case 'unknown': case 'variant':
      return b.kind === a.kind;
    default:
      return unreachable(a);
  }
}

function jsonEqual(a: JsonValue | undefined, b: JsonValue | undefined): boolean {
  if (a === undefined || b === undefined) return a === b;
  const norm = (v: JsonValue): string => JSON.stringify(v, (_k, x: unknown) => (typeof x === 'bigint' ? `${x}n` : x));
  return norm(a) === norm(b);
}

/**
 * Whether a column of type `from` may be changed to `to` by schema evolution (spec "Schema Evolution"):
 * int → long, float → double, decimal(P,S) → decimal(P',S) with P' ≥ P; and any type to itself.
 */
export function isPromotionAllowed(from: PrimitiveType, to: PrimitiveType): boolean {
  if (typesEqual(from, to)) return true;
  if (from.kind === 'int') return to.kind === 'long';
  if (from.kind === 'float') return to.kind === 'double';
  if (from.kind === 'decimal') return to.kind === 'decimal' && to.scale === from.scale && to.precision >= from.precision;
  return false;
}

/** Bytes Java Iceberg uses to store a decimal of `precision` digits as Avro/Parquet fixed (TypeUtil.decimalRequiredBytes). */
export function decimalRequiredBytes(precision: number): number {
  if (precision < 0 || precision > 40) throw badRequest(`Unsupported decimal precision: ${precision}`);
  for (let bytes = 1; ; bytes++) {
    // The largest value storable in `bytes` two's-complement bytes has floor(log10(2^(8*bytes-1) - 1)) digits.
    const digits = Math.floor(Math.log10(2 ** (8 * bytes - 1) - 1));
    if (digits >= precision) return bytes;
  }
}
