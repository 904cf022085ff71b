/**
 * Results as an Arrow IPC stream (`application/vnd.apache.arrow.stream`), built from the wire rows so
 * the two forms agree value for value. Types: integers, floats, BOOLEAN, VARCHAR, BLOB map to their
 * Arrow types; DECIMAL(p,s) and HUGEINT to Decimal128 (exact); DATE to DateDay; TIMESTAMP and
 * TIMESTAMPTZ to microsecond timestamps (the latter with zone `UTC`); anything else (nested types,
 * intervals, UUID, TIME) to Utf8 holding the wire value (JSON text for nested values).
 */
import {
  Binary, Bool, DateDay, Decimal, Float32, Float64, Int16, Int32, Int64, Int8, RecordBatch, Schema, Field, Struct, Table, TimestampMicrosecond,
  Uint16, Uint32, Uint64, Uint8, Utf8, makeData, makeVector, tableToIPC, vectorFromArray,
} from 'apache-arrow';
import type { DataType, Vector } from 'apache-arrow';
import { parseTimestampMicros } from '../../catalog/iceberg/datetime.js';
import type { WireValue } from './values.js';

function decimalParams(type: string): { precision: number; scale: number } | undefined {
  const m = /^DECIMAL\((\d+),\s*(\d+)\)$/.exec(type);
  if (m !== null) return { precision: Number(m[1]), scale: Number(m[2]) };
  if (type === 'HUGEINT' || type === 'UHUGEINT') return { precision: 38, scale: 0 };
  return undefined;
}

/** The unscaled value of an exact decimal string at `scale`. */
function unscaled(text: string, scale: number): bigint {
  const negative = text.startsWith('-');
  const body = negative ? text.slice(1) : text;
  const [whole = '0', frac = ''] = body.split('.');
  const digits = `${whole}${frac.padEnd(scale, '0').slice(0, scale)}`;
  const v = BigInt(digits === '' ? '0' : digits);
  return negative ? -v : v;
}

function nullBitmap(values: readonly WireValue[]): { bitmap: Uint8Array; nullCount: number } {
  const bitmap = new Uint8Array(Math.ceil(values.length / 8));
  let nullCount = 0;
  values.forEach((v, i) => {
    if (v === null) nullCount++;
    else bitmap[i >> 3]! |= 1 << (i & 7);
  });
  return { bitmap, nullCount };
}

function toText(v: WireValue): string | null {
  return v === null ? null : typeof v === 'string' ? v : JSON.stringify(v);
}

function column(type: string, values: readonly WireValue[]): Vector {
  const decimal = decimalParams(type);
  if (decimal !== undefined) {
    const words = new Uint32Array(values.length * 4);
    values.forEach((v, i) => {
      if (v === null) return;
      let x = BigInt.asUintN(128, unscaled(String(v), decimal.scale));
      for (let w = 0; w < 4; w++) {
        words[i * 4 + w] = Number(x & 0xffffffffn);
        x >>= 32n;
      }
    });
    const { bitmap, nullCount } = nullBitmap(values);
    const data = makeData({ type: new Decimal(decimal.scale, decimal.precision, 128), length: values.length, nullCount, nullBitmap: bitmap, data: words });
    return makeVector(data);
  }
  if (type === 'TIMESTAMP' || type === 'TIMESTAMP WITH TIME ZONE') {
    const micros = new BigInt64Array(values.length);
    const cleaned = values.map((v) => (typeof v === 'string' && !v.includes('infinity') ? v : null));
    cleaned.forEach((v, i) => {
      if (v !== null) micros[i] = parseTimestampMicros(v);
    });
    const { bitmap, nullCount } = nullBitmap(cleaned);
    const data = makeData({ type: new TimestampMicrosecond(type === 'TIMESTAMP' ? null : 'UTC'), length: values.length, nullCount, nullBitmap: bitmap, data: micros });
    return makeVector(data);
  }
  const simple = (t: DataType, map: (v: WireValue) => unknown): Vector => vectorFromArray(values.map((v) => (v === null ? null : map(v))), t);
  switch (type) {
    case 'BOOLEAN': return simple(new Bool(), (v) => v === true);
    case 'TINYINT': return simple(new Int8(), Number);
    case 'SMALLINT': return simple(new Int16(), Number);
    case 'INTEGER': return simple(new Int32(), Number);
    case 'BIGINT': return simple(new Int64(), (v) => BigInt(v as string | number));
    case 'UTINYINT': return simple(new Uint8(), Number);
    case 'USMALLINT': return simple(new Uint16(), Number);
    case 'UINTEGER': return simple(new Uint32(), Number);
    case 'UBIGINT': return simple(new Uint64(), (v) => BigInt(v as string | number));
    case 'FLOAT': return simple(new Float32(), Number);
    case 'DOUBLE': return simple(new Float64(), Number);
    case 'DATE': return simple(new DateDay(), (v) => (String(v).includes('infinity') ? null : Date.parse(`${String(v)}T00:00:00Z`)));
    case 'BLOB': return simple(new Binary(), (v) => new Uint8Array(Buffer.from(String(v), 'base64')));
    default: return simple(new Utf8(), toText);
  }
}

/**
 * Field names for Arrow, which keys columns by name (arrow-js merges equal names into one field,
 * polars refuses them): a name a result repeats (`SELECT 1 AS a, 'x' AS a`) gets `_1`, `_2`, … as
 * DuckDB names the repeated columns of a subquery. The JSON answer keeps the names as they are.
 */
export function uniqueNames(columns: readonly string[]): string[] {
  const taken = new Set(columns);
  const seen = new Set<string>();
  return columns.map((name) => {
    if (!seen.has(name)) {
      seen.add(name);
      return name;
    }
    let n = 1;
    while (taken.has(`${name}_${n}`)) n++;
    const renamed = `${name}_${n}`;
    taken.add(renamed);
    seen.add(renamed);
    return renamed;
  });
}

/** Encodes a result (columns, DuckDB type names, wire rows) as one Arrow IPC stream. */
export function toArrowIpc(columns: readonly string[], types: readonly string[], rows: readonly (readonly WireValue[])[]): Uint8Array {
  const vectors = columns.map((_, c) => column(types[c] ?? 'VARCHAR', rows.map((r) => r[c] ?? null)));
  const fields = uniqueNames(columns).map((name, c) => new Field(name, (vectors[c] as Vector).type, true));
  const schema = new Schema(fields);
  const data = makeData({ type: new Struct(fields), length: rows.length, nullCount: 0, children: vectors.map((v) => v.data[0]!) });
  const table = new Table(schema, [new RecordBatch(schema, data)]);
  return tableToIPC(table, 'stream');
}
