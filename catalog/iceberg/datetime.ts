/**
 * Calendar arithmetic for Iceberg's physical date/time values (days and microseconds from the Unix
 * epoch, proleptic Gregorian, UTC), without `Date` so years before 1970 or after 9999 are exact.
 */

export const MICROS_PER_SECOND = 1_000_000n;
export const MICROS_PER_HOUR = 3_600_000_000n;
export const MICROS_PER_DAY = 86_400_000_000n;

/** Floor division for bigints (BigInt `/` truncates toward zero). */
export function floorDiv(a: bigint, b: bigint): bigint {
  const q = a / b;
  return (a % b !== 0n && (a < 0n) !== (b < 0n)) ? q - 1n : q;
}

/** Floor modulo for bigints: result has the sign of `b`. */
export function floorMod(a: bigint, b: bigint): bigint {
  return a - floorDiv(a, b) * b;
}

/** A civil date. `month` 1–12. */
export interface CivilDate {
  readonly year: number;
  readonly month: number;
  readonly day: number;
}

/** Days since 1970-01-01 → civil date (H. Hinnant's `civil_from_days`). */
export function civilFromDays(days: number): CivilDate {
  const z = days + 719468;
  const era = Math.floor(z / 146097);
  const doe = z - era * 146097;
  const yoe = Math.floor((doe - Math.floor(doe / 1460) + Math.floor(doe / 36524) - Math.floor(doe / 146096)) / 365);
  const doy = doe - (365 * yoe + Math.floor(yoe / 4) - Math.floor(yoe / 100));
  const mp = Math.floor((5 * doy + 2) / 153);
  const day = doy - Math.floor((153 * mp + 2) / 5) + 1;
  const month = mp < 10 ? mp + 3 : mp - 9;
  return { year: yoe + era * 400 + (month <= 2 ? 1 : 0), month, day };
}

/** Civil date → days since 1970-01-01 (`days_from_civil`). */
export function daysFromCivil(year: number, month: number, day: number): number {
  const y = month <= 2 ? year - 1 : year;
  const era = Math.floor(y / 400);
  const yoe = y - era * 400;
  const doy = Math.floor((153 * (month + (month > 2 ? -3 : 9)) + 2) / 5) + day - 1;
  const doe = yoe * 365 + Math.floor(yoe / 4) - Math.floor(yoe / 100) + doy;
  return era * 146097 + doe - 719468;
}

const pad = (n: number, width = 2): string => (n < 0 ? '-' + String(-n).padStart(width, '0') : String(n).padStart(width, '0'));

/** `yyyy-MM-dd` for days from epoch. */
export function formatDate(days: number): string {
  const d = civilFromDays(days);
  return `${pad(d.year, 4)}-${pad(d.month)}-${pad(d.day)}`;
}

/** Parses `yyyy-MM-dd` to days from epoch. */
export function parseDate(text: string): number {
  const m = /^(-?\d{4,})-(\d{2})-(\d{2})$/.exec(text);
  if (m === null) throw new RangeError(`Invalid date: ${text}`);
  return daysFromCivil(Number(m[1]), Number(m[2]), Number(m[3]));
}

/** Fractional seconds as Java's `LocalTime.toString` prints them: omitted, or 3, 6 or 9 digits. */
function javaFraction(nanos: number): string {
  if (nanos === 0) return '';
  if (nanos % 1_000_000 === 0) return '.' + pad(nanos / 1_000_000, 3);
  if (nanos % 1_000 === 0) return '.' + pad(nanos / 1_000, 6);
  return '.' + pad(nanos, 9);
}

/** Time of day as Java's `LocalTime.toString` (`HH:mm`, `HH:mm:ss`, or with fraction). */
function javaTime(nanosOfDay: bigint): string {
  const totalSeconds = Number(nanosOfDay / 1_000_000_000n);
  const nanos = Number(nanosOfDay % 1_000_000_000n);
  const h = Math.floor(totalSeconds / 3600);
  const m = Math.floor((totalSeconds % 3600) / 60);
  const s = totalSeconds % 60;
  const base = `${pad(h)}:${pad(m)}`;
  return s === 0 && nanos === 0 ? base : `${base}:${pad(s)}${javaFraction(nanos)}`;
}

/** Microseconds from midnight → `HH:mm:ss[.ffffff]` as Java prints a `LocalTime`. */
export function formatTime(micros: bigint): string {
  return javaTime(micros * 1000n);
}

/** Timestamp (micros or nanos from epoch) → Java `LocalDateTime.toString()`; `Z` suffix when `withZone`. */
export function formatTimestamp(value: bigint, unit: 'micros' | 'nanos', withZone: boolean): string {
  const perDay = unit === 'micros' ? MICROS_PER_DAY * 1000n : MICROS_PER_DAY * 1000n;
  const nanos = unit === 'micros' ? value * 1000n : value;
  const days = floorDiv(nanos, perDay);
  const nanosOfDay = floorMod(nanos, perDay);
  return `${formatDate(Number(days))}T${javaTime(nanosOfDay)}${withZone ? 'Z' : ''}`;
}

function fractionToNanos(fraction: string | undefined): bigint {
  if (fraction === undefined || fraction === '') return 0n;
  return BigInt(fraction.slice(0, 9).padEnd(9, '0'));
}

/** Parses `HH:mm[:ss[.fffffffff]]` to microseconds from midnight. */
export function parseTime(text: string): bigint {
  const m = /^(\d{2}):(\d{2})(?::(\d{2})(?:\.(\d{1,9}))?)?$/.exec(text);
  if (m === null) throw new RangeError(`Invalid time: ${text}`);
  const seconds = Number(m[1]) * 3600 + Number(m[2]) * 60 + Number(m[3] ?? '0');
  return BigInt(seconds) * MICROS_PER_SECOND + fractionToNanos(m[4]) / 1000n;
}

/**
 * Parses an ISO-8601 timestamp (`yyyy-MM-ddTHH:mm:ss[.f…][Z|±HH:mm]`) to nanoseconds from the epoch,
 * UTC; an offset, when present, is subtracted. Callers divide by 1000 for micros.
 */
export function parseTimestampNanos(text: string): bigint {
  const m = /^(-?\d{4,}-\d{2}-\d{2})[T ](\d{2}):(\d{2})(?::(\d{2})(?:\.(\d{1,9}))?)?(Z|[+-]\d{2}:?\d{2})?$/.exec(text);
  if (m === null) throw new RangeError(`Invalid timestamp: ${text}`);
  const days = BigInt(parseDate(m[1] as string));
  const seconds = BigInt(Number(m[2]) * 3600 + Number(m[3]) * 60 + Number(m[4] ?? '0'));
  let nanos = (days * 86_400n + seconds) * 1_000_000_000n + fractionToNanos(m[5]);
  const zone = m[6];
  if (zone !== undefined && zone !== 'Z') {
    const sign = zone.startsWith('-') ? -1n : 1n;
    const digits = zone.slice(1).replace(':', '');
    const offsetMinutes = BigInt(Number(digits.slice(0, 2)) * 60 + Number(digits.slice(2, 4)));
    nanos -= sign * offsetMinutes * 60_000_000_000n;
  }
  return nanos;
}

/** Parses an ISO-8601 timestamp to microseconds from the epoch (sub-microsecond digits truncated). */
export function parseTimestampMicros(text: string): bigint {
  return floorDiv(parseTimestampNanos(text), 1000n);
}
