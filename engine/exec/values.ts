/**
 * Result values on the wire. DuckDB values become JSON that never loses precision:
 * - integers as JSON numbers while they are safe integers (|v| ≤ 2^53 − 1), otherwise as decimal
 *   strings (BIGINT, UBIGINT, HUGEINT, UHUGEINT beyond 2^53), so a column's values compare exactly;
 * - DECIMAL as the exact decimal string (`"1.50"`, scale kept);
 * - DATE `YYYY-MM-DD`; TIMESTAMP `YYYY-MM-DDTHH:MM:SS[.ffffff]`; TIMESTAMPTZ the same in UTC with `Z`;
 *   TIME `HH:MM:SS[.ffffff]` (ISO 8601); infinities as `"infinity"` / `"-infinity"`;
 * - FLOAT/DOUBLE as numbers, NaN and ±Infinity as the strings `"NaN"`, `"Infinity"`, `"-Infinity"`;
 * - BLOB as base64; UUID, VARCHAR, ENUM, BIT, INTERVAL as DuckDB prints them;
 * - LIST/ARRAY as arrays, STRUCT as objects, MAP as `[{key, value}]`, UNION as `{tag, value}`.
 */
import {
  DuckDBArrayValue, DuckDBBitValue, DuckDBBlobValue, DuckDBDateValue, DuckDBDecimalValue, DuckDBIntervalValue, DuckDBListValue,
  DuckDBMapValue, DuckDBStructValue, DuckDBTimeNSValue, DuckDBTimeTZValue, DuckDBTimeValue, DuckDBTimestampMillisecondsValue,
  DuckDBTimestampNanosecondsValue, DuckDBTimestampSecondsValue, DuckDBTimestampTZValue, DuckDBTimestampValue, DuckDBUUIDValue, DuckDBUnionValue,
} from '@duckdb/node-api';
import type { DuckDBValue } from '@duckdb/node-api';

/** A JSON value as the query API sends it. */
export type WireValue = null | boolean | number | string | readonly WireValue[] | { readonly [key: string]: WireValue };

const MAX_SAFE = BigInt(Number.MAX_SAFE_INTEGER);

/** An integer as a number when exact, else its decimal string. */
export function wireInteger(v: bigint): number | string {
  return v <= MAX_SAFE && v >= -MAX_SAFE ? Number(v) : v.toString();
}

/** A float as a number; NaN and infinities (not JSON) as strings. */
export function wireFloat(v: number): number | string {
  if (Number.isNaN(v)) return 'NaN';
  if (v === Infinity) return 'Infinity';
  if (v === -Infinity) return '-Infinity';
  return v;
}

const MICROS_PER_DAY = 86_400_000_000n;

function floorDiv(a: bigint, b: bigint): bigint {
  const q = a / b;
  return (a % b !== 0n && (a < 0n) !== (b < 0n)) ? q - 1n : q;
}

function pad(n: number | bigint, width: number): string {
  return String(n).padStart(width, '0');
}

/** Days since 1970-01-01 → `YYYY-MM-DD` (proleptic Gregorian; years beyond 9999 or before 0 signed). */
export function isoDate(days: number): string {
  // Howard Hinnant's civil_from_days.
  const z = days + 719468;
  const era = Math.floor(z / 146097);
  const doe = z - era * 146097;
  const yoe = Math.floor((doe - Math.floor(doe / 1460) + Math.floor(doe / 36524) - Math.floor(doe / 146096)) / 365);
  const doy = doe - (365 * yoe + Math.floor(yoe / 4) - Math.floor(yoe / 100));
  const mp = Math.floor((5 * doy + 2) / 153);
  const d = doy - Math.floor((153 * mp + 2) / 5) + 1;
  const m = mp < 10 ? mp + 3 : mp - 9;
  const y = yoe + era * 400 + (m <= 2 ? 1 : 0);
  const year = y < 0 ? `-${pad(-y, 4)}` : y > 9999 ? `+${y}` : pad(y, 4);
  return `${year}-${pad(m, 2)}-${pad(d, 2)}`;
}

/** Sub-day nanoseconds → `HH:MM:SS[.fraction]` with trailing zeros of the fraction trimmed to 3/6/9 digits. */
function isoTimeOfDay(nanosOfDay: bigint): string {
  const totalSeconds = nanosOfDay / 1_000_000_000n;
  const frac = nanosOfDay % 1_000_000_000n;
  const h = totalSeconds / 3600n;
  const m = (totalSeconds % 3600n) / 60n;
  const s = totalSeconds % 60n;
  let f = '';
  if (frac !== 0n) {
    f = `.${pad(frac, 9)}`;
    if (f.endsWith('000000')) f = f.slice(0, 4);
    else if (f.endsWith('000')) f = f.slice(0, 7);
  }
  return `${pad(h, 2)}:${pad(m, 2)}:${pad(s, 2)}${f}`;
}

/** A timestamp in nanoseconds since the epoch → ISO 8601 (`Z` appended when it is an instant). */
export function isoTimestampNanos(nanos: bigint, instant: boolean): string {
  const perDay = MICROS_PER_DAY * 1000n;
  const days = floorDiv(nanos, perDay);
  const rest = nanos - days * perDay;
  return `${isoDate(Number(days))}T${isoTimeOfDay(rest)}${instant ? 'Z' : ''}`;
}

/** Microsecond timestamps, with DuckDB's ±infinity sentinels. */
function isoTimestampMicros(micros: bigint, instant: boolean): string {
  if (micros === 9223372036854775807n) return 'infinity';
  if (micros === -9223372036854775807n) return '-infinity';
  return isoTimestampNanos(micros * 1000n, instant);
}

/** Converts one DuckDB value (as `@duckdb/node-api` reads it) to its wire form. */
export function toWire(v: DuckDBValue): WireValue {
  if (v === null || v === undefined) return null;
  switch (typeof v) {
    case 'boolean':
    case 'string':
      return v;
    case 'number':
      return Number.isInteger(v) ? v : wireFloat(v);
    case 'bigint':
      return wireInteger(v);
    default:
      break;
  }
  if (v instanceof DuckDBDecimalValue) return v.toString();
  if (v instanceof DuckDBDateValue) {
    if (v.days === 2147483647) return 'infinity';
    if (v.days === -2147483647) return '-infinity';
    return isoDate(v.days);
  }
  if (v instanceof DuckDBTimestampTZValue) return isoTimestampMicros(v.micros, true);
  if (v instanceof DuckDBTimestampValue) return isoTimestampMicros(v.micros, false);
  if (v instanceof DuckDBTimestampSecondsValue) return isoTimestampNanos(v.seconds * 1_000_000_000n, false);
  if (v instanceof DuckDBTimestampMillisecondsValue) return isoTimestampNanos(v.millis * 1_000_000n, false);
  if (v instanceof DuckDBTimestampNanosecondsValue) return isoTimestampNanos(v.nanos, false);
  if (v instanceof DuckDBTimeValue) return isoTimeOfDay(v.micros * 1000n);
  if (v instanceof DuckDBTimeNSValue) return isoTimeOfDay(v.nanos);
  if (v instanceof DuckDBTimeTZValue) return v.toString();
  if (v instanceof DuckDBBlobValue) return Buffer.from(v.bytes).toString('base64');
  if (v instanceof DuckDBUUIDValue || v instanceof DuckDBBitValue || v instanceof DuckDBIntervalValue) return v.toString();
  if (v instanceof DuckDBListValue || v instanceof DuckDBArrayValue) return v.items.map(toWire);
  if (v instanceof DuckDBStructValue) {
    const out: Record<string, WireValue> = {};
    for (const [k, x] of Object.entries(v.entries)) Object.defineProperty(out, k, { value: toWire(x), enumerable: true, writable: true, configurable: true });
    return out;
  }
  if (v instanceof DuckDBMapValue) return v.entries.map((e) => ({ key: toWire(e.key), value: toWire(e.value) }));
  if (v instanceof DuckDBUnionValue) return { tag: v.tag, value: toWire(v.value) };
  return String(v);
}
