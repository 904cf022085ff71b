/**
 * Format v3 column defaults as DuckDB SQL. A field's `initial-default` is the value of every row
 * written before the field existed (the reader supplies it where a data file lacks the field); its
 * `write-default` is what a writer stores when a statement does not give the column a value.
 *
 * Both are kept in the schema as JSON single-value serialization (table spec Appendix D, "JSON
 * single-value serialization"): booleans and numbers as JSON, decimals as strings ("14.20"), dates,
 * times and timestamps as ISO-8601 strings, uuids as strings, fixed and binary as hex strings,
 * structs as objects keyed by field id, lists as arrays, maps as `{"keys": [...], "values": [...]}`.
 */
import type { JsonValue } from '../../catalog/iceberg/json.js';
import type { IcebergType } from '../../catalog/iceberg/types.js';
import { unreachable } from '../../catalog/iceberg/errors.js';
import { quoteIdent, stringSql } from '../../grammar/unparse.js';

/**
 * The DuckDB expression of a default `value` of `type` (typed by `duckType`, the DuckDB type of the
 * field); `undefined` when the JSON does not fit the type (the caller keeps NULL and the table's
 * metadata, not the query, is at fault: a wrong constant is worse than a missing one).
 */
export function defaultValueSql(type: IcebergType, value: JsonValue | undefined, duckType: (t: IcebergType) => string): string | undefined {
  if (value === undefined || value === null) return `NULL::${duckType(type)}`;
  const cast = (text: string): string => `CAST(${stringSql(text)} AS ${duckType(type)})`;
  switch (type.kind) {
    case 'boolean':
      return typeof value === 'boolean' ? (value ? 'true' : 'false') : undefined;
    case 'int': case 'long': case 'float': case 'double':
      return typeof value === 'number' || typeof value === 'bigint' ? cast(String(value)) : typeof value === 'string' && /^(NaN|-?Infinity)$/.test(value) ? cast(value) : undefined;
    case 'decimal':
      return typeof value === 'string' && /^[+-]?\d+(\.\d+)?$/.test(value) ? cast(value) : undefined;
    case 'date':
      return typeof value === 'string' && /^-?\d{4,}-\d\d-\d\d$/.test(value) ? cast(value) : undefined;
    case 'time':
      return typeof value === 'string' && /^\d\d:\d\d(:\d\d(\.\d{1,9})?)?$/.test(value) ? cast(value) : undefined;
    case 'timestamp': case 'timestamp_ns':
      return typeof value === 'string' && /^-?\d{4,}-\d\d-\d\dT\d\d:\d\d(:\d\d(\.\d{1,9})?)?$/.test(value) ? cast(value.replace('T', ' ')) : undefined;
    case 'timestamptz': case 'timestamptz_ns':
      return typeof value === 'string' && /^-?\d{4,}-\d\d-\d\dT\d\d:\d\d(:\d\d(\.\d{1,9})?)?([+-]\d\d:\d\d|Z)$/.test(value) ? cast(value.replace('T', ' ')) : undefined;
    case 'string':
      return typeof value === 'string' ? cast(value) : undefined;
    case 'uuid':
      return typeof value === 'string' && /^[0-9a-fA-F]{8}-([0-9a-fA-F]{4}-){3}[0-9a-fA-F]{12}$/.test(value) ? cast(value) : undefined;
    case 'fixed': case 'binary':
      return typeof value === 'string' && /^([0-9a-fA-F]{2})*$/.test(value) ? `CAST(from_hex(${stringSql(value)}) AS BLOB)` : undefined;
    case 'struct': {
      if (typeof value !== 'object' || Array.isArray(value)) return undefined;
      const obj = value as Readonly<Record<string, JsonValue>>;
      const parts: string[] = [];
      for (const f of type.fields) {
        // A child absent from the struct's default takes its own initial default (or NULL).
        const own = Object.prototype.hasOwnProperty.call(obj, String(f.id)) ? obj[String(f.id)] : f.initialDefault;
        const sql = defaultValueSql(f.type, own, duckType);
        if (sql === undefined) return undefined;
        parts.push(`${quoteIdent(f.name)} := ${sql}`);
      }
      return `CAST(struct_pack(${parts.join(', ')}) AS ${duckType(type)})`;
    }
    case 'list': {
      if (!Array.isArray(value)) return undefined;
      const items = (value as readonly JsonValue[]).map((v) => defaultValueSql(type.element, v, duckType));
      if (items.some((i) => i === undefined)) return undefined;
      return `CAST([${items.join(', ')}] AS ${duckType(type)})`;
    }
    case 'map': {
      if (typeof value !== 'object' || Array.isArray(value)) return undefined;
      const obj = value as Readonly<Record<string, JsonValue>>;
      const keys = obj['keys'];
      const values = obj['values'];
      if (!Array.isArray(keys) || !Array.isArray(values) || keys.length !== values.length) return undefined;
      const k = (keys as readonly JsonValue[]).map((v) => defaultValueSql(type.key, v, duckType));
      const v = (values as readonly JsonValue[]).map((x) => defaultValueSql(type.value, x, duckType));
      if (k.some((x) => x === undefined) || v.some((x) => x === undefined)) return undefined;
      return `CAST(map([${k.join(', ')}], [${v.join(', ')}]) AS ${duckType(type)})`;
    }
    case 'geometry': case 'geography': case 'variant': case 'unknown':
      return undefined;
    default:
      return unreachable(type);
  }
}

/**
 * The ids of the struct fields (at any depth below `type`) that have an initial default: the reader
 * rebuilds a struct for files that lack one of them (defaults inside lists and maps are not read).
 */
export function defaultedFieldIds(type: IcebergType, out: Set<number> = new Set()): Set<number> {
  if (type.kind !== 'struct') return out;
  for (const f of type.fields) {
    if (f.initialDefault !== undefined) out.add(f.id);
    defaultedFieldIds(f.type, out);
  }
  return out;
}
