/**
 * Iceberg values in memory and their single-value binary serialization (table spec Appendix D), used
 * for manifest `lower_bounds` / `upper_bounds` and partition summaries.
 *
 * In-memory representation by type (chosen so 64-bit values are exact):
 * - boolean → `boolean`; int, date (days) → `number`; float, double → `number`
 * - long, time (µs), timestamp/timestamptz (µs), timestamp_ns/timestamptz_ns (ns) → `bigint`
 * - decimal(P,S) → `bigint` unscaled value (the type carries the scale)
 * - string → `string`; uuid → canonical lower-case `string`; fixed, binary → `Uint8Array`
 */
import { badRequest } from './errors.js';
import type { IcebergType, PrimitiveType } from './types.js';

/** A value of a primitive Iceberg type (see the module comment for which JS type goes with which). */
export type IcebergValue = boolean | number | bigint | string | Uint8Array;

/** Minimal big-endian two's complement bytes of `value` (Java `BigInteger.toByteArray`). */
export function bigintToMinimalBytes(value: bigint): Uint8Array {
  let byteCount = 1;
  // Smallest n with -2^(8n-1) <= value < 2^(8n-1).
  while (value >= 1n << BigInt(8 * byteCount - 1) || value < -(1n << BigInt(8 * byteCount - 1))) byteCount++;
  return bigintToFixedBytes(value, byteCount);
}

/** Big-endian two's complement of `value` sign-extended to exactly `length` bytes. */
export function bigintToFixedBytes(value: bigint, length: number): Uint8Array {
  const out = new Uint8Array(length);
  let v = BigInt.asUintN(8 * length, value);
  for (let i = length - 1; i >= 0; i--) {
    out[i] = Number(v & 0xffn);
    v >>= 8n;
  }
  if (BigInt.asIntN(8 * length, BigInt.asUintN(8 * length, value)) !== value) throw new RangeError(`${value} does not fit in ${length} bytes`);
  return out;
}

/** Reads big-endian two's complement bytes as a signed bigint. */
export function bigintFromBytes(bytes: Uint8Array): bigint {
  if (bytes.length === 0) return 0n;
  let v = 0n;
  for (const b of bytes) v = (v << 8n) | BigInt(b);
  return BigInt.asIntN(8 * bytes.length, v);
}

/** Formats an unscaled decimal like Java's `BigDecimal.toPlainString()` (`1420n, 2` → `"14.20"`). */
export function decimalToString(unscaled: bigint, scale: number): string {
  const negative = unscaled < 0n;
  const digits = (negative ? -unscaled : unscaled).toString();
  if (scale <= 0) return (negative ? '-' : '') + digits + '0'.repeat(-scale);
  const padded = digits.padStart(scale + 1, '0');
  return `${negative ? '-' : ''}${padded.slice(0, -scale)}.${padded.slice(-scale)}`;
}

/** Parses a decimal literal to its unscaled value at `scale` (`"14.2", 2` → `1420n`). Rejects extra digits. */
export function parseDecimal(text: string, scale: number): bigint {
  const m = /^([+-]?)(\d*)(?:\.(\d*))?$/.exec(text.trim());
  if (m === null || ((m[2] ?? '') === '' && (m[3] ?? '') === '')) throw new RangeError(`Invalid decimal: ${text}`);
  const fraction = m[3] ?? '';
  if (fraction.length > scale && /[1-9]/.test(fraction.slice(scale))) throw new RangeError(`Decimal ${text} has more than ${scale} fraction digits`);
  const unscaled = BigInt((m[2] === '' ? '0' : m[2]) + fraction.slice(0, scale).padEnd(scale, '0'));
  return m[1] === '-' ? -unscaled : unscaled;
}

/** UUID string → 16 bytes, big-endian (most significant bits first). */
export function uuidToBytes(uuid: string): Uint8Array {
  const hex = uuid.replace(/-/g, '');
  if (!/^[0-9a-fA-F]{32}$/.test(hex)) throw new RangeError(`Invalid UUID: ${uuid}`);
  return Uint8Array.from(Buffer.from(hex, 'hex'));
}

/** 16 bytes → canonical lower-case UUID string. */
export function uuidFromBytes(bytes: Uint8Array): string {
  if (bytes.length !== 16) throw new RangeError(`UUID needs 16 bytes, got ${bytes.length}`);
  const h = Buffer.from(bytes).toString('hex');
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-${h.slice(12, 16)}-${h.slice(16, 20)}-${h.slice(20)}`;
}

function expect<T>(ok: boolean, value: unknown, type: PrimitiveType, v: T): T {
  if (!ok) throw badRequest(`Invalid value for type ${type.kind}: ${typeof value === 'bigint' ? `${value}n` : String(value)}`);
  return v;
}

/**
 * Single-value serialization (Appendix D): int/date 4-byte LE; long, time, timestamps 8-byte LE;
 * float/double IEEE LE; string UTF-8 without length; uuid 16 bytes big-endian; fixed/binary as is;
 * decimal minimal big-endian two's complement of the unscaled value; boolean 0x00 / 0x01.
 */
export function toByteBuffer(type: PrimitiveType, value: IcebergValue): Uint8Array {
  switch (type.kind) {
    case 'boolean':
      return expect(typeof value === 'boolean', value, type, Uint8Array.of(value ? 1 : 0));
    case 'int':
    case 'date': {
      const b = Buffer.alloc(4);
      expect(typeof value === 'number' && Number.isInteger(value), value, type, null);
      b.writeInt32LE(value as number);
      return new Uint8Array(b);
    }
    case 'long':
    case 'time':
    case 'timestamp':
    case 'timestamptz':
    case 'timestamp_ns':
    case 'timestamptz_ns': {
      const b = Buffer.alloc(8);
      const v = typeof value === 'number' && Number.isInteger(value) ? BigInt(value) : value;
      expect(typeof v === 'bigint', value, type, null);
      b.writeBigInt64LE(v as bigint);
      return new Uint8Array(b);
    }
    case 'float': {
      const b = Buffer.alloc(4);
      b.writeFloatLE(expect(typeof value === 'number', value, type, value as number));
      return new Uint8Array(b);
    }
    case 'double': {
      const b = Buffer.alloc(8);
      b.writeDoubleLE(expect(typeof value === 'number', value, type, value as number));
      return new Uint8Array(b);
    }
    case 'string':
      return new Uint8Array(Buffer.from(expect(typeof value === 'string', value, type, value as string), 'utf8'));
    case 'uuid':
      return typeof value === 'string' ? uuidToBytes(value) : expect(value instanceof Uint8Array && value.length === 16, value, type, value as Uint8Array);
    case 'fixed':
    case 'binary':
    case 'geometry':
    case 'geography':
      return expect(value instanceof Uint8Array, value, type, value as Uint8Array);
    case 'decimal':
      return bigintToMinimalBytes(expect(typeof value === 'bigint', value, type, value as bigint));
    case 'unknown':
    case 'variant':
      throw badRequest(`Cannot serialize a single value of type ${type.kind}`);
  }
}

/** Inverse of `toByteBuffer`. Like Java, a 4-byte `long` bound (written before int → long promotion) is read as an int, and a 4-byte `double` as a float. */
export function fromByteBuffer(type: PrimitiveType, bytes: Uint8Array): IcebergValue {
  const b = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  switch (type.kind) {
    case 'boolean':
      return b.length > 0 && b[0] !== 0;
    case 'int':
    case 'date':
      return b.readInt32LE(0);
    case 'long':
    case 'time':
    case 'timestamp':
    case 'timestamptz':
    case 'timestamp_ns':
    case 'timestamptz_ns':
      return b.length < 8 ? BigInt(b.readInt32LE(0)) : b.readBigInt64LE(0);
    case 'float':
      return b.readFloatLE(0);
    case 'double':
      return b.length < 8 ? b.readFloatLE(0) : b.readDoubleLE(0);
    case 'string':
      return b.toString('utf8');
    case 'uuid':
      return uuidFromBytes(bytes);
    case 'fixed':
    case 'binary':
    case 'geometry':
    case 'geography':
      return Uint8Array.from(bytes);
    case 'decimal':
      return bigintFromBytes(bytes);
    case 'unknown':
    case 'variant':
      throw badRequest(`Cannot deserialize a single value of type ${type.kind}`);
  }
}

/** Compares two values of the same primitive type (for bounds); strings by code point, bytes unsigned. */
export function compareValues(type: PrimitiveType, a: IcebergValue, b: IcebergValue): number {
  if (a instanceof Uint8Array && b instanceof Uint8Array) return Buffer.compare(a, b);
  if (type.kind === 'string' && typeof a === 'string' && typeof b === 'string') {
    // UTF-8 byte order equals code point order, unlike UTF-16 `<`.
    return Buffer.compare(Buffer.from(a, 'utf8'), Buffer.from(b, 'utf8'));
  }
  if (typeof a === 'boolean' && typeof b === 'boolean') return a === b ? 0 : a ? 1 : -1;
  if ((typeof a === 'number' || typeof a === 'bigint') && (typeof b === 'number' || typeof b === 'bigint')) {
    if (typeof a === 'number' && Number.isNaN(a)) return typeof b === 'number' && Number.isNaN(b) ? 0 : 1;
    if (typeof b === 'number' && Number.isNaN(b)) return -1;
    return a < b ? -1 : a > b ? 1 : 0;
  }
  if (typeof a === 'string' && typeof b === 'string') return a < b ? -1 : a > b ? 1 : 0;
  throw new TypeError(`Cannot compare values of type ${type.kind}`);
}

/** Whether `value` has the in-memory representation `type` expects. */
export function isValidValue(type: IcebergType, value: unknown): value is IcebergValue {
  switch (type.kind) {
    case 'boolean':
      return typeof value === 'boolean';
    case 'int':
      return typeof value === 'number' && Number.isInteger(value) && value >= -(2 ** 31) && value < 2 ** 31;
    case 'date':
      return typeof value === 'number' && Number.isInteger(value);
    case 'long':
    case 'time':
    case 'timestamp':
    case 'timestamptz':
    case 'timestamp_ns':
    case 'timestamptz_ns':
      return typeof value === 'bigint' && BigInt.asIntN(64, value) === value;
    case 'decimal':
      return typeof value === 'bigint';
    case 'float':
    case 'double':
      return typeof value === 'number';
    case 'string':
      return typeof value === 'string';
    case 'uuid':
      return typeof value === 'string' && /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/.test(value);
    case 'fixed':
      return value instanceof Uint8Array && value.length === type.length;
    case 'binary':
    case 'geometry':
    case 'geography':
      return value instanceof Uint8Array;
    default:
      return false;
  }
}
