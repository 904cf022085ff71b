/**
 * Predicates pushed down to a scan for file pruning: conjuncts of the WHERE clause (and of inner
 * join conditions) that compare one column of one scan with literals. They only decide which files
 * are read; DuckDB still evaluates the whole WHERE clause, so an unsupported shape is simply not
 * pushed (never wrong, only less pruning).
 */
import type { ComparisonOp, Expr } from '../../grammar/index.js';
import type { IcebergValue } from '../../catalog/iceberg/conversions.js';
import { parseDecimal } from '../../catalog/iceberg/conversions.js';
import { civilFromDays, daysFromCivil, parseDate, parseTimestampMicros } from '../../catalog/iceberg/datetime.js';
import type { PrimitiveType } from '../../catalog/iceberg/types.js';

/** A pushed-down predicate on one top-level column (by field id), values in the column's Iceberg type. */
export type ScanPredicate =
  | { readonly kind: 'compare'; readonly fieldId: number; readonly op: ComparisonOp; readonly value: IcebergValue }
  | { readonly kind: 'in'; readonly fieldId: number; readonly values: readonly IcebergValue[] }
  | { readonly kind: 'is-null'; readonly fieldId: number; readonly negated: boolean }
  /** `col LIKE 'prefix%'` on a string column (case-sensitive, byte order as DuckDB compares). */
  | { readonly kind: 'starts-with'; readonly fieldId: number; readonly prefix: string };

/** `a op b` ⇔ `b flip(op) a`. */
export function flipComparison(op: ComparisonOp): ComparisonOp {
  switch (op) {
    case '<': return '>';
    case '<=': return '>=';
    case '>': return '<';
    case '>=': return '<=';
    case '=': case '<>': return op;
  }
}

/** Splits a predicate into its AND-ed conjuncts. */
export function conjuncts(e: Expr): readonly Expr[] {
  return e.kind === 'Binary' && e.op === 'AND' ? [...conjuncts(e.left), ...conjuncts(e.right)] : [e];
}

type Literal =
  | { readonly kind: 'number'; readonly text: string }
  | { readonly kind: 'string'; readonly value: string }
  | { readonly kind: 'boolean'; readonly value: boolean }
  | { readonly kind: 'date'; readonly value: string }
  | { readonly kind: 'timestamp'; readonly value: string; readonly zoned: boolean }
  /** A folded `date ± integer` (DuckDB: a DATE). */
  | { readonly kind: 'days'; readonly days: number }
  /** A folded `date|timestamp ± interval` (DuckDB: a TIMESTAMP without zone). */
  | { readonly kind: 'micros'; readonly micros: bigint };

const MICROS_PER_DAY = 86_400_000_000n;
const UNIT_MICROS: Readonly<Record<string, bigint>> = {
  week: 7n * MICROS_PER_DAY, day: MICROS_PER_DAY, hour: 3_600_000_000n, minute: 60_000_000n, second: 1_000_000n, millisecond: 1_000n, microsecond: 1n,
};

/** An interval as months plus micros (DuckDB keeps months, days and micros; days are whole here). */
function intervalOf(e: Expr): { readonly months: number; readonly micros: bigint } | undefined {
  if (e.kind !== 'IntervalLiteral') return undefined;
  let amount: string | undefined;
  let unit: string | undefined = e.unit;
  if (e.value.kind === 'NumberLiteral') amount = e.value.text;
  else if (e.value.kind === 'StringLiteral') {
    const m = /^\s*(-?\d+)\s*([a-z]*)\s*$/i.exec(e.value.value);
    if (m === null) return undefined;
    amount = m[1];
    if (m[2] !== '') {
      if (unit !== undefined) return undefined;
      unit = m[2]!.toLowerCase().replace(/s$/, '');
    }
  }
  if (amount === undefined || unit === undefined || !/^-?\d+$/.test(amount)) return undefined;
  const n = BigInt(amount);
  if (n > 1_000_000n || n < -1_000_000n) return undefined;
  if (unit === 'year') return { months: Number(n) * 12, micros: 0n };
  if (unit === 'month') return { months: Number(n), micros: 0n };
  const per = UNIT_MICROS[unit];
  return per === undefined ? undefined : { months: 0, micros: n * per };
}

/** Adds months to a day number as DuckDB does: the day of month is clamped to the month's last day. */
function addMonths(days: number, months: number): number {
  const d = civilFromDays(days);
  const total = d.year * 12 + (d.month - 1) + months;
  const year = Math.floor(total / 12);
  const month = total - year * 12 + 1;
  const last = daysFromCivil(month === 12 ? year + 1 : year, month === 12 ? 1 : month + 1, 1) - daysFromCivil(year, month, 1);
  return daysFromCivil(year, month, Math.min(d.day, last));
}

/** Micros of a date or timestamp literal (naive), for interval arithmetic. */
function baseMicros(l: Literal): bigint | undefined {
  try {
    if (l.kind === 'date') return BigInt(parseDate(l.value)) * MICROS_PER_DAY;
    if (l.kind === 'days') return BigInt(l.days) * MICROS_PER_DAY;
    if (l.kind === 'micros') return l.micros;
    if (l.kind === 'timestamp' && !l.zoned) {
      const t = timestampMicros(l.value);
      return t.zoned ? undefined : t.micros;
    }
  } catch {
    return undefined;
  }
  return undefined;
}

/** `date|timestamp ± interval` and `date ± integer`, folded as DuckDB evaluates them. */
function foldArithmetic(e: Extract<Expr, { kind: 'Binary' }>): Literal | undefined {
  if (e.op !== '+' && e.op !== '-') return undefined;
  const left = literalOf(e.left);
  if (left === undefined) return undefined;
  const sign = e.op === '+' ? 1 : -1;
  if ((left.kind === 'date' || left.kind === 'days') && e.right.kind === 'NumberLiteral' && /^\d+$/.test(e.right.text)) {
    const days = left.kind === 'days' ? left.days : (() => { try { return parseDate(left.value); } catch { return undefined; } })();
    return days === undefined ? undefined : { kind: 'days', days: days + sign * Number(e.right.text) };
  }
  const interval = intervalOf(e.right);
  const base = baseMicros(left);
  if (interval === undefined || base === undefined) return undefined;
  let micros = base;
  if (interval.months !== 0) {
    const day = Number(floorDivBig(micros, MICROS_PER_DAY));
    const timeOfDay = micros - BigInt(day) * MICROS_PER_DAY;
    micros = BigInt(addMonths(day, sign * interval.months)) * MICROS_PER_DAY + timeOfDay;
  }
  return { kind: 'micros', micros: micros + BigInt(sign) * interval.micros };
}

function floorDivBig(a: bigint, b: bigint): bigint {
  const q = a / b;
  return (a % b !== 0n && (a < 0n) !== (b < 0n)) ? q - 1n : q;
}

/** The literal an expression denotes, when it is one (signed numbers, typed literals, casts of strings). */
function literalOf(e: Expr): Literal | undefined {
  switch (e.kind) {
    case 'NumberLiteral': return { kind: 'number', text: e.text };
    case 'StringLiteral': return { kind: 'string', value: e.value };
    case 'BooleanLiteral': return { kind: 'boolean', value: e.value };
    case 'TypedLiteral':
      if (e.type === 'date') return { kind: 'date', value: e.value.trim() };
      if (e.type === 'timestamp' || e.type === 'timestamptz') return { kind: 'timestamp', value: e.value.trim(), zoned: e.type === 'timestamptz' };
      return undefined;
    case 'Unary': {
      if (e.op === 'NOT') return undefined;
      const inner = literalOf(e.operand);
      if (inner?.kind !== 'number') return undefined;
      if (e.op === '+') return inner;
      return { kind: 'number', text: inner.text.startsWith('-') ? inner.text.slice(1) : `-${inner.text}` };
    }
    case 'Binary':
      return foldArithmetic(e);
    case 'Cast': {
      if (e.try) return undefined;
      const inner = literalOf(e.expr);
      if (inner === undefined || e.type.kind !== 'PrimitiveType') return undefined;
      if (inner.kind === 'string' || inner.kind === 'date' || inner.kind === 'timestamp') {
        const text = inner.kind === 'string' ? inner.value.trim() : inner.value;
        switch (e.type.name) {
          case 'date': return inner.kind === 'timestamp' ? undefined : { kind: 'date', value: text };
          case 'timestamp': return { kind: 'timestamp', value: text, zoned: false };
          case 'string': return inner.kind === 'string' ? inner : undefined;
          default: return undefined;
        }
      }
      return undefined;
    }
    default:
      return undefined;
  }
}

const INTEGER_TEXT = /^-?\d+$/;
const DECIMAL_TEXT = /^-?(\d+\.?\d*|\.\d+)$/;

/** Timestamp text in ISO form: `T` between date and time, no space before the offset, `+HH` as `+HH:00`. */
function isoTimestamp(text: string): string {
  const t = text.trim().replace(/^(-?\d{4,}-\d{2}-\d{2}) +/, '$1T');
  if (!/T\d{2}:\d{2}/.test(t)) return t;
  return t.replace(/ +(Z|[+-]\d{2}(:?\d{2})?)$/i, '$1').replace(/(T\d{2}:\d{2}[^+-]*[+-]\d{2})$/, '$1:00').replace(/z$/, 'Z');
}

/** Whether timestamp text carries its own zone offset. */
function hasOffset(iso: string): boolean {
  return /T\d{2}:\d{2}.*(Z|[+-]\d{2}:?\d{2})$/.test(iso);
}

/** A timestamp text as micros from the epoch: naive text read as UTC; a date alone is midnight. */
export function timestampMicros(text: string): { readonly micros: bigint; readonly zoned: boolean } {
  const iso = isoTimestamp(text);
  if (/^-?\d{4,}-\d{2}-\d{2}$/.test(iso)) return { micros: BigInt(parseDate(iso)) * 86_400_000_000n, zoned: false };
  return { micros: parseTimestampMicros(iso), zoned: hasOffset(iso) };
}

/** A naive timestamp text (`2024-01-02 03:04:05`, `2024-01-02`) as micros; undefined with a zone. */
function naiveMicros(text: string): bigint | undefined {
  const t = timestampMicros(text);
  return t.zoned ? undefined : t.micros;
}

/**
 * The literal `e` converted to the Iceberg type of the column it is compared with, exactly as DuckDB
 * would compare them; undefined when that is not certain (then the conjunct is not pushed).
 */
export function literalForType(e: Expr, type: PrimitiveType): IcebergValue | undefined {
  const lit = literalOf(e);
  if (lit === undefined) return undefined;
  try {
    switch (type.kind) {
      case 'int': case 'long': {
        if (lit.kind !== 'number' || !INTEGER_TEXT.test(lit.text)) return undefined;
        const v = BigInt(lit.text);
        if (type.kind === 'long') return BigInt.asIntN(64, v) === v ? v : undefined;
        return v >= -(2n ** 31n) && v < 2n ** 31n ? Number(v) : undefined;
      }
      case 'float': case 'double':
        // Float columns compare in binary floating point; only exact small integers are safe.
        if (lit.kind !== 'number' || !INTEGER_TEXT.test(lit.text) || Math.abs(Number(lit.text)) > 2 ** 24) return undefined;
        return Number(lit.text);
      case 'decimal':
        if (lit.kind !== 'number' || !DECIMAL_TEXT.test(lit.text)) return undefined;
        return parseDecimal(lit.text, type.scale);
      case 'string':
        return lit.kind === 'string' ? lit.value : undefined;
      case 'boolean':
        return lit.kind === 'boolean' ? lit.value : undefined;
      case 'date':
        if (lit.kind === 'date' || lit.kind === 'string') return /^-?\d{4,}-\d{2}-\d{2}$/.test(lit.value) ? parseDate(lit.value) : undefined;
        if (lit.kind === 'days') return lit.days;
        // A date column against a TIMESTAMP compares as midnight: exact only when the value is midnight.
        if (lit.kind === 'micros') return lit.micros % MICROS_PER_DAY === 0n ? Number(lit.micros / MICROS_PER_DAY) : undefined;
        return undefined;
      case 'timestamp':
        if (lit.kind === 'days') return BigInt(lit.days) * MICROS_PER_DAY;
        if (lit.kind === 'micros') return lit.micros;
        if (lit.kind === 'date') return BigInt(parseDate(lit.value)) * 86_400_000_000n;
        if (lit.kind === 'string' || (lit.kind === 'timestamp' && !lit.zoned)) return naiveMicros(lit.value);
        return undefined;
      case 'timestamptz': {
        // Only literals that carry their own offset: a naive one depends on the session time zone.
        if (lit.kind !== 'string' && lit.kind !== 'timestamp') return undefined;
        const ts = timestampMicros(lit.value);
        return ts.zoned ? ts.micros : undefined;
      }
      default:
        return undefined;
    }
  } catch {
    return undefined;
  }
}

/**
 * The fixed prefix of a LIKE pattern that is `prefix%` (one trailing `%`, no other wildcard, no
 * escape), or undefined. `'abc'` without `%` is equality and `'%x'` has no prefix: neither is pushed.
 */
export function likePrefix(pattern: string): string | undefined {
  if (!pattern.endsWith('%')) return undefined;
  const prefix = pattern.slice(0, -1);
  if (prefix.length === 0 || /[%_\\]/.test(prefix)) return undefined;
  return prefix;
}
