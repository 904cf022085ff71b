/**
 * Partition transforms (table spec "Partition Transforms"): parsing from their string form
 * (`bucket[16]`), the result type for a source type, applying them to values, and Java's human
 * strings for partition paths (`ts_day=2017-11-16`).
 */
import { bigintFromBytes, bigintToMinimalBytes, decimalToString, uuidToBytes } from './conversions.js';
import type { IcebergValue } from './conversions.js';
import { MICROS_PER_HOUR, civilFromDays, floorDiv, floorMod, formatDate, formatTime, formatTimestamp } from './datetime.js';
import { badRequest, unreachable, validationError } from './errors.js';
import { hashInt, hashLong, murmur3Hash32 } from './murmur3.js';
import { Types } from './types.js';
import type { IcebergType, PrimitiveType } from './types.js';

export type Transform =
  | { readonly kind: 'identity' }
  | { readonly kind: 'bucket'; readonly numBuckets: number }
  | { readonly kind: 'truncate'; readonly width: number }
  | { readonly kind: 'year' }
  | { readonly kind: 'month' }
  | { readonly kind: 'day' }
  | { readonly kind: 'hour' }
  | { readonly kind: 'void' }
  /** A transform this build does not know (a newer writer's); kept verbatim, never applied. */
  | { readonly kind: 'unknown'; readonly text: string };

export const Transforms = {
  identity: { kind: 'identity' } as Transform,
  bucket: (numBuckets: number): Transform => ({ kind: 'bucket', numBuckets }),
  truncate: (width: number): Transform => ({ kind: 'truncate', width }),
  year: { kind: 'year' } as Transform,
  month: { kind: 'month' } as Transform,
  day: { kind: 'day' } as Transform,
  hour: { kind: 'hour' } as Transform,
  void: { kind: 'void' } as Transform,
} as const;

/**
 * Parses a transform string. Like Java, `bucket[N]`/`truncate[W]` need a positive parameter, and an
 * unrecognised name becomes `unknown` (readers must tolerate transforms from newer writers).
 */
export function parseTransform(text: string): Transform {
  const t = text.trim();
  const lower = t.toLowerCase();
  switch (lower) {
    case 'identity':
    case 'year':
    case 'month':
    case 'day':
    case 'hour':
    case 'void':
      return { kind: lower };
    case 'years':
      return Transforms.year;
    case 'months':
      return Transforms.month;
    case 'days':
      return Transforms.day;
    case 'hours':
      return Transforms.hour;
    case 'alwaysnull':
      return Transforms.void;
  }
  const m = /^(bucket|truncate)\[(\d+)\]$/i.exec(t);
  if (m !== null) {
    const n = Number(m[2]);
    if (!(n > 0) || n > 2147483647) throw badRequest(`Invalid transform parameter: ${t}`);
    return (m[1] as string).toLowerCase() === 'bucket' ? Transforms.bucket(n) : Transforms.truncate(n);
  }
  return { kind: 'unknown', text: t };
}

/** The canonical string form (`bucket[16]`, `day`, …). */
export function transformToString(t: Transform): string {
  switch (t.kind) {
    case 'bucket':
      return `bucket[${t.numBuckets}]`;
    case 'truncate':
      return `truncate[${t.width}]`;
    case 'unknown':
      return t.text;
    case 'identity': case 'year': case 'month': case 'day': case 'hour': case 'void':
      return t.kind;
    default:
      return unreachable(t);
  }
}

const TIME_KINDS = new Set(['timestamp', 'timestamptz', 'timestamp_ns', 'timestamptz_ns']);

/** Whether the transform can be applied to values of `source`. */
export function canTransform(t: Transform, source: IcebergType): boolean {
  const k = source.kind;
  switch (t.kind) {
    case 'identity':
      return k !== 'struct' && k !== 'list' && k !== 'map' && k !== 'variant' && k !== 'geometry' && k !== 'geography' && k !== 'unknown';
    case 'void':
      return true;
    case 'bucket':
      return ['int', 'long', 'decimal', 'date', 'time', 'timestamp', 'timestamptz', 'timestamp_ns', 'timestamptz_ns', 'string', 'uuid', 'fixed', 'binary'].includes(k);
    case 'truncate':
      return ['int', 'long', 'decimal', 'string', 'binary'].includes(k);
    case 'year':
    case 'month':
    case 'day':
      return k === 'date' || TIME_KINDS.has(k);
    case 'hour':
      return TIME_KINDS.has(k);
    case 'unknown':
      return true;
    default:
      return unreachable(t);
  }
}

/**
 * Type of the partition value. year/month/hour/bucket give `int`; `day` gives `date` (same physical
 * int, as Java writes it); identity, truncate and void keep the source type. Throws a
 * `ValidationException` for an invalid source type. An unknown transform yields `string` for display.
 */
export function transformResultType(t: Transform, source: IcebergType): PrimitiveType {
  if (!canTransform(t, source)) throw validationError(`Invalid source type ${describeKind(source)} for transform: ${transformToString(t)}`);
  switch (t.kind) {
    case 'bucket':
    case 'year':
    case 'month':
    case 'hour':
      return Types.int;
    case 'day':
      return Types.date;
    case 'identity':
    case 'truncate':
    case 'void':
      if (source.kind === 'struct' || source.kind === 'list' || source.kind === 'map') {
        if (t.kind === 'void') return Types.int;
        throw validationError(`Cannot partition by nested type ${source.kind}`);
      }
      return source;
    case 'unknown':
      return Types.string;
    default:
      return unreachable(t);
  }
}

function describeKind(t: IcebergType): string {
  return t.kind;
}

/** Whether two transforms are the same (for spec/sort-order equality). */
export function transformsEqual(a: Transform, b: Transform): boolean {
  return transformToString(a) === transformToString(b);
}

/**
 * The bucket hash of a value (Appendix B): ints and dates via `hashLong`, longs/times/timestamps
 * (µs; nanosecond timestamps are reduced to µs) via `hashLong`, decimals as minimal two's-complement
 * bytes of the unscaled value, strings as UTF-8, uuids as 16 big-endian bytes, fixed/binary as is.
 */
export function bucketHash(source: PrimitiveType, value: IcebergValue): number {
  switch (source.kind) {
    case 'int':
    case 'date':
      return hashInt(value as number);
    case 'long':
    case 'time':
    case 'timestamp':
    case 'timestamptz':
      return hashLong(toBigInt(value));
    case 'timestamp_ns':
    case 'timestamptz_ns':
      return hashLong(floorDiv(toBigInt(value), 1000n));
    case 'decimal':
      return murmur3Hash32(bigintToMinimalBytes(value as bigint));
    case 'string':
      return murmur3Hash32(Buffer.from(value as string, 'utf8'));
    case 'uuid':
      return murmur3Hash32(typeof value === 'string' ? uuidToBytes(value) : (value as Uint8Array));
    case 'fixed':
    case 'binary':
      return murmur3Hash32(value as Uint8Array);
    default:
      throw validationError(`Cannot bucket by type ${source.kind}`);
  }
}

function toBigInt(v: IcebergValue): bigint {
  if (typeof v === 'bigint') return v;
  if (typeof v === 'number') return BigInt(v);
  throw badRequest(`Expected an integer value, got ${typeof v}`);
}

/** Days from epoch of a date, or of a timestamp in µs / ns. */
function toDays(source: PrimitiveType, value: IcebergValue): number {
  if (source.kind === 'date') return value as number;
  const perDay = source.kind === 'timestamp_ns' || source.kind === 'timestamptz_ns' ? 86_400_000_000_000n : 86_400_000_000n;
  return Number(floorDiv(toBigInt(value), perDay));
}

/**
 * Applies `t` to a source value; `null` in gives `null` out, and `void` always gives `null`. Time
 * transforms use floor semantics before 1970 (1969-12-31 is year -1, month -1, day -1).
 */
export function applyTransform(t: Transform, source: PrimitiveType, value: IcebergValue | null): IcebergValue | null {
  if (value === null) return null;
  switch (t.kind) {
    case 'identity':
      return value;
    case 'void':
      return null;
    case 'bucket':
      return (bucketHash(source, value) & 0x7fffffff) % t.numBuckets;
    case 'truncate':
      return truncateValue(source, t.width, value);
    case 'year':
      return civilFromDays(toDays(source, value)).year - 1970;
    case 'month': {
      const d = civilFromDays(toDays(source, value));
      return (d.year - 1970) * 12 + (d.month - 1);
    }
    case 'day':
      return toDays(source, value);
    case 'hour': {
      const perHour = source.kind === 'timestamp_ns' || source.kind === 'timestamptz_ns' ? MICROS_PER_HOUR * 1000n : MICROS_PER_HOUR;
      return Number(floorDiv(toBigInt(value), perHour));
    }
    case 'unknown':
      throw validationError(`Cannot apply unknown transform: ${t.text}`);
    default:
      return unreachable(t);
  }
}

/** `truncate[W]`: ints/longs/decimals (on the unscaled value) down to a multiple of W; strings to W code points; binary to W bytes. */
function truncateValue(source: PrimitiveType, width: number, value: IcebergValue): IcebergValue {
  switch (source.kind) {
    case 'int': {
      const v = value as number;
      return v - (((v % width) + width) % width);
    }
    case 'long':
    case 'decimal': {
      const v = toBigInt(value);
      return v - floorMod(v, BigInt(width));
    }
    case 'string': {
      const codePoints = [...(value as string)];
      return codePoints.length <= width ? (value as string) : codePoints.slice(0, width).join('');
    }
    case 'binary':
      return (value as Uint8Array).slice(0, width);
    default:
      throw validationError(`Cannot truncate type ${source.kind}`);
  }
}

/**
 * The human string Java writes for a partition value in paths and `toString`s: dates `yyyy-MM-dd`,
 * timestamps ISO (`Z` for timestamptz), `year` → `2017`, `month` → `2017-11`, `hour` → `2017-11-16-22`,
 * binary/fixed base64, null → `null`. `source` is the partition field's source column type.
 */
export function toHumanString(t: Transform, source: PrimitiveType, value: IcebergValue | null): string {
  if (value === null) return 'null';
  switch (t.kind) {
    case 'year':
      return String(1970 + (value as number)).padStart(4, '0');
    case 'month': {
      const m = value as number;
      const year = 1970 + Math.floor(m / 12);
      return `${String(year).padStart(4, '0')}-${String(floorModNumber(m, 12) + 1).padStart(2, '0')}`;
    }
    case 'day':
      return formatDate(value as number);
    case 'hour': {
      const h = value as number;
      const days = Math.floor(h / 24);
      return `${formatDate(days)}-${String(floorModNumber(h, 24)).padStart(2, '0')}`;
    }
    case 'bucket':
      return String(value);
    case 'void':
      return 'null';
    case 'identity':
    case 'truncate':
      return valueToHumanString(source, value);
    case 'unknown':
      return String(value);
    default:
      return unreachable(t);
  }
}

function floorModNumber(a: number, b: number): number {
  return ((a % b) + b) % b;
}

/** Human string of a source value (identity / truncate partitions). */
export function valueToHumanString(type: PrimitiveType, value: IcebergValue): string {
  switch (type.kind) {
    case 'date':
      return formatDate(value as number);
    case 'time':
      return formatTime(toBigInt(value));
    case 'timestamp':
      return formatTimestamp(toBigInt(value), 'micros', false);
    case 'timestamptz':
      return formatTimestamp(toBigInt(value), 'micros', true);
    case 'timestamp_ns':
      return formatTimestamp(toBigInt(value), 'nanos', false);
    case 'timestamptz_ns':
      return formatTimestamp(toBigInt(value), 'nanos', true);
    case 'decimal':
      return decimalToString(toBigInt(value), type.scale);
    case 'fixed':
    case 'binary':
      return Buffer.from(value as Uint8Array).toString('base64');
    case 'uuid':
      return typeof value === 'string' ? value : bigintFromBytes(value as Uint8Array).toString(16);
    default:
      return String(value);
  }
}

/** Java's `URLEncoder.encode(s, UTF_8)`: keeps `A-Za-z0-9.-*_`, space → `+`, the rest `%XX`. */
export function urlEncodePathSegment(s: string): string {
  let out = '';
  for (const byte of Buffer.from(s, 'utf8')) {
    const c = String.fromCharCode(byte);
    if (/[A-Za-z0-9.\-*_]/.test(c)) out += c;
    else if (byte === 0x20) out += '+';
    else out += '%' + byte.toString(16).toUpperCase().padStart(2, '0');
  }
  return out;
}
