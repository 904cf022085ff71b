/**
 * Predicates pushed down to a scan for file pruning: conjuncts of the WHERE clause (and of inner
 * join conditions) that compare one column of one scan with literals. They only decide which files
 * are read; DuckDB still evaluates the whole WHERE clause, so an unsupported shape is simply not
 * pushed (never wrong, only less pruning).
 */
import type { ComparisonOp, Expr } from '../../grammar/index.js';
import type { IcebergValue } from '../../catalog/iceberg/conversions.js';
import { parseDecimal } from '../../catalog/iceberg/conversions.js';
import { parseDate, parseTimestampMicros } from '../../catalog/iceberg/datetime.js';
import type { PrimitiveType } from '../../catalog/iceberg/types.js';

/** A pushed-down predicate on one top-level column (by field id), values in the column's Iceberg type. */
export type ScanPredicate =
  | { readonly kind: 'compare'; readonly fieldId: number; readonly op: ComparisonOp; readonly value: IcebergValue }
  | { readonly kind: 'in'; readonly fieldId: number; readonly values: readonly IcebergValue[] }
  | { readonly kind: 'is-null'; readonly fieldId: number; readonly negated: boolean };

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
  | { readonly kind: 'timestamp'; readonly value: string; readonly zoned: boolean };

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
        return undefined;
      case 'timestamp':
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
