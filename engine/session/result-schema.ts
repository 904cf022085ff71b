/**
 * The Iceberg schema of a query's result, from the DuckDB type names the executor reports: what
 * CREATE TABLE AS creates and what a view records. Pure.
 */
import { floeError } from '../../grammar/errors.js';
import { schema as makeSchema, type Schema } from '../../catalog/iceberg/schema.js';
import { Types, nestedField, type IcebergType, type NestedField } from '../../catalog/iceberg/types.js';
import { FieldIds } from './schema-from-ir.js';

/** Splits `a, b<c, d>, e(1,2)` at top-level commas. */
function splitTop(text: string): string[] {
  const out: string[] = [];
  let depth = 0;
  let start = 0;
  let quote = false;
  for (let i = 0; i < text.length; i++) {
    const c = text[i]!;
    if (c === '"') quote = !quote;
    if (quote) continue;
    if (c === '(' || c === '<' || c === '[') depth++;
    else if (c === ')' || c === '>' || c === ']') depth--;
    else if (c === ',' && depth === 0) {
      out.push(text.slice(start, i).trim());
      start = i + 1;
    }
  }
  out.push(text.slice(start).trim());
  return out.filter((s) => s.length > 0);
}

/** One DuckDB type name (as `DESCRIBE` and the executor print it) → an Iceberg type. */
export function icebergTypeOfDuckdb(name: string, ids: FieldIds, column: string): IcebergType {
  const t = name.trim();
  const upper = t.toUpperCase();
  if (upper.endsWith('[]')) return Types.list(ids.take(), icebergTypeOfDuckdb(t.slice(0, -2), ids, column), false);
  const dec = /^DECIMAL\((\d+),\s*(\d+)\)$/.exec(upper);
  if (dec) return Types.decimal(Number(dec[1]), Number(dec[2]));
  if (upper.startsWith('STRUCT(') && upper.endsWith(')')) {
    const parts = splitTop(t.slice(7, -1));
    const fieldIds = parts.map(() => ids.take());
    const fields: NestedField[] = parts.map((p, i) => {
      const m = /^("(?:[^"]|"")*"|\S+)\s+(.+)$/.exec(p);
      if (!m) throw floeError('DATATYPE_MISMATCH', { detail: `cannot store column ${column} of type ${name}` });
      const fieldName = m[1]!.startsWith('"') ? m[1]!.slice(1, -1).replaceAll('""', '"') : m[1]!;
      return nestedField(fieldIds[i]!, fieldName, icebergTypeOfDuckdb(m[2]!, ids, column), false);
    });
    return Types.struct(fields);
  }
  if (upper.startsWith('MAP(') && upper.endsWith(')')) {
    const [k, v] = splitTop(t.slice(4, -1));
    if (k === undefined || v === undefined) throw floeError('DATATYPE_MISMATCH', { detail: `cannot store column ${column} of type ${name}` });
    const keyId = ids.take();
    const valueId = ids.take();
    return Types.map(keyId, icebergTypeOfDuckdb(k, ids, column), valueId, icebergTypeOfDuckdb(v, ids, column), false);
  }
  switch (upper) {
    case 'BOOLEAN': return Types.boolean;
    case 'TINYINT': case 'SMALLINT': case 'INTEGER': case 'UTINYINT': case 'USMALLINT': return Types.int;
    case 'BIGINT': case 'UINTEGER': return Types.long;
    case 'HUGEINT': case 'UBIGINT': case 'UHUGEINT': return Types.decimal(38, 0);
    case 'FLOAT': return Types.float;
    case 'DOUBLE': return Types.double;
    case 'DATE': return Types.date;
    case 'TIME': return Types.time;
    case 'TIMESTAMP': case 'TIMESTAMP_S': case 'TIMESTAMP_MS': return Types.timestamp;
    case 'TIMESTAMP WITH TIME ZONE': case 'TIMESTAMPTZ': return Types.timestamptz;
    case 'TIMESTAMP_NS': return Types.timestampNs;
    case 'VARCHAR': case 'JSON': return Types.string;
    case 'UUID': return Types.uuid;
    case 'BLOB': return Types.binary;
    case 'INTERVAL': case 'NULL': case '"NULL"':
    default:
      throw floeError('DATATYPE_MISMATCH', { detail: `column ${column} has type ${name}, which an Iceberg table cannot store (cast it)` });
  }
}

/** A result's columns as a fresh Iceberg schema (ids from 1, top-level first). */
export function schemaOfResult(columns: readonly string[], types: readonly string[]): Schema {
  const seen = new Set<string>();
  for (const c of columns) {
    const k = c.toLowerCase();
    if (seen.has(k)) throw floeError('DUPLICATE_OBJECT', { kind: 'column', name: c });
    seen.add(k);
  }
  const ids = new FieldIds(1);
  const top = columns.map(() => ids.take());
  return makeSchema(0, columns.map((c, i) => nestedField(top[i]!, c, icebergTypeOfDuckdb(types[i]!, ids, c), false)));
}
