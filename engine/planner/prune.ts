/**
 * File pruning and row estimates. Given a scan's pushed-down predicates and the files of its
 * Iceberg scan plan, keeps only the files that may hold a matching row, judged by two facts the
 * manifests give: the file's partition tuple (through the spec's transforms: Iceberg's inclusive
 * projection) and its column metrics (lower/upper bounds, null, value and NaN counts). A file is
 * dropped only when a predicate provably matches none of its rows; anything unknown keeps it.
 */
import type { FileScanTask } from '../../catalog/iceberg/scan.js';
import type { IcebergValue } from '../../catalog/iceberg/conversions.js';
import { compareValues, fromByteBuffer } from '../../catalog/iceberg/conversions.js';
import type { DataFile } from '../../catalog/iceberg/manifest.js';
import type { PartitionSpec } from '../../catalog/iceberg/partition-spec.js';
import type { Schema } from '../../catalog/iceberg/schema.js';
import { applyTransform, transformResultType } from '../../catalog/iceberg/transforms.js';
import type { Transform } from '../../catalog/iceberg/transforms.js';
import { isPrimitive } from '../../catalog/iceberg/types.js';
import type { PrimitiveType } from '../../catalog/iceberg/types.js';
import type { ComparisonOp } from '../../grammar/index.js';
import type { ScanPredicate } from './predicates.js';

/** What a file is judged by: the file, and the spec its partition tuple follows. */
export interface PrunableFile {
  readonly file: DataFile;
  readonly specId: number;
}

/** The table facts pruning needs: the read schema and every partition spec by id. */
export interface PruneContext {
  readonly schema: Schema;
  readonly specs: ReadonlyMap<number, PartitionSpec>;
  /**
   * Whether column metrics may be used (default true). Metrics are keyed by field id and describe
   * what the file's writer resolved each id to; a file written without Parquet field ids is read
   * through the table's name mapping, which may resolve a field differently (or not at all: the
   * field then reads as its initial default or NULL). Such a file is never pruned by its metrics,
   * so pruning and the reader cannot disagree. Which files carry ids is known only from their
   * footers: the planner, before reading any, passes false for tables with a name mapping, and the
   * worker prunes again by metrics once it knows which files carry ids (`filesWithFieldIds`).
   */
  readonly useMetrics?: boolean;
}

function columnType(schema: Schema, fieldId: number): PrimitiveType | undefined {
  const f = schema.fields.find((x) => x.id === fieldId);
  return f !== undefined && isPrimitive(f.type) ? f.type : undefined;
}

/** Whether a value range [lower, upper] (either end unknown) can satisfy `x op v`. */
function rangeMayMatch(type: PrimitiveType, op: ComparisonOp, v: IcebergValue, lower: IcebergValue | undefined, upper: IcebergValue | undefined): boolean {
  const cmp = (a: IcebergValue, b: IcebergValue): number => compareValues(type, a, b);
  switch (op) {
    case '=': return !((lower !== undefined && cmp(v, lower) < 0) || (upper !== undefined && cmp(v, upper) > 0));
    case '<': return !(lower !== undefined && cmp(lower, v) >= 0);
    case '<=': return !(lower !== undefined && cmp(lower, v) > 0);
    case '>': return !(upper !== undefined && cmp(upper, v) <= 0);
    case '>=': return !(upper !== undefined && cmp(upper, v) < 0);
    case '<>': return !(lower !== undefined && upper !== undefined && cmp(lower, v) === 0 && cmp(upper, v) === 0);
  }
}

/** Judged by column metrics: false when no row of the file can satisfy the predicate. */
function metricsMayMatch(file: DataFile, p: ScanPredicate, type: PrimitiveType): boolean {
  const id = p.fieldId;
  const values = file.valueCounts?.get(id);
  const nulls = file.nullValueCounts?.get(id);
  const allNull = values !== undefined && nulls !== undefined && nulls >= values;
  if (p.kind === 'is-null') {
    if (!p.negated) return !(nulls !== undefined && nulls === 0);
    return !allNull;
  }
  // A comparison never matches NULL.
  if (allNull) return false;
  // DuckDB orders NaN above every number, and bounds leave NaN out: trust float bounds only without NaN.
  if ((type.kind === 'float' || type.kind === 'double') && file.nanValueCounts?.get(id) !== 0) return true;
  let lower: IcebergValue | undefined;
  let upper: IcebergValue | undefined;
  try {
    const lb = file.lowerBounds?.get(id);
    const ub = file.upperBounds?.get(id);
    lower = lb === undefined ? undefined : fromByteBuffer(type, lb);
    upper = ub === undefined ? undefined : fromByteBuffer(type, ub);
  } catch {
    return true;
  }
  if (p.kind === 'in') return p.values.some((v) => rangeMayMatch(type, '=', v, lower, upper));
  if (p.kind === 'starts-with') return prefixMayMatch(p.prefix, lower as string | undefined, upper as string | undefined);
  return rangeMayMatch(type, p.op, p.value, lower, upper);
}

/** UTF-8 byte order, as DuckDB compares strings. */
function compareBytes(a: string, b: string): number {
  return Buffer.compare(Buffer.from(a, 'utf8'), Buffer.from(b, 'utf8'));
}

/**
 * Whether some string in [lower, upper] starts with `prefix`. Strings with the prefix form one
 * interval starting at `prefix`; the range misses it when it ends below `prefix` or starts above
 * every string with the prefix (above `prefix` without starting with it).
 */
function prefixMayMatch(prefix: string, lower: string | undefined, upper: string | undefined): boolean {
  if (upper !== undefined && compareBytes(upper, prefix) < 0) return false;
  if (lower !== undefined && compareBytes(lower, prefix) > 0 && !lower.startsWith(prefix)) return false;
  return true;
}

/** Whether `t` preserves order (x ≤ y ⇒ t(x) ≤ t(y)), so range predicates project onto it. */
function isMonotone(t: Transform): boolean {
  return t.kind === 'identity' || t.kind === 'truncate' || t.kind === 'year' || t.kind === 'month' || t.kind === 'day' || t.kind === 'hour';
}

/** Judged by one partition field: false when no row with partition value `part` can satisfy the predicate. */
function partitionMayMatch(t: Transform, source: PrimitiveType, part: IcebergValue | null, p: ScanPredicate): boolean {
  if (t.kind === 'void' || t.kind === 'unknown') return true;
  // Every transform maps null to null and only null to null.
  if (p.kind === 'is-null') return p.negated ? part !== null : part === null;
  if (part === null) return false;
  let resultType: PrimitiveType;
  try {
    resultType = transformResultType(t, source);
  } catch {
    return true;
  }
  const project = (v: IcebergValue): IcebergValue | undefined => {
    try {
      return applyTransform(t, source, v) ?? undefined;
    } catch {
      return undefined;
    }
  };
  const cmp = (a: IcebergValue, b: IcebergValue): number => compareValues(resultType, a, b);
  const equalMayMatch = (v: IcebergValue): boolean => {
    const tv = project(v);
    return tv === undefined || cmp(part, tv) === 0;
  };
  if (p.kind === 'in') return p.values.some(equalMayMatch);
  if (p.kind === 'starts-with') {
    if (typeof part !== 'string') return true;
    if (t.kind === 'identity') return part.startsWith(p.prefix);
    if (t.kind !== 'truncate') return true;
    // truncate[W] keeps the first W code points: W within the prefix fixes the value, else it starts with the prefix.
    const codePoints = [...p.prefix];
    return codePoints.length >= t.width ? part === codePoints.slice(0, t.width).join('') : part.startsWith(p.prefix);
  }
  if (p.op === '=') return equalMayMatch(p.value);
  if (t.kind === 'identity') return rangeMayMatch(resultType, p.op, p.value, part, part);
  if (!isMonotone(t) || p.op === '<>') return true;
  const tv = project(p.value);
  if (tv === undefined) return true;
  // x < v ⇒ t(x) ≤ t(v); x > v ⇒ t(x) ≥ t(v): the strict bound weakens under the transform.
  if (p.op === '<' || p.op === '<=') return cmp(part, tv) <= 0;
  return cmp(part, tv) >= 0;
}

/** Whether a file may hold a row satisfying every predicate (false only when provably not). */
export function fileMayMatch(f: PrunableFile, predicates: readonly ScanPredicate[], ctx: PruneContext): boolean {
  if (f.file.recordCount === 0) return false;
  const spec = ctx.specs.get(f.specId);
  for (const p of predicates) {
    const type = columnType(ctx.schema, p.fieldId);
    if (type === undefined) continue;
    if (ctx.useMetrics !== false && !metricsMayMatch(f.file, p, type)) return false;
    if (spec === undefined) continue;
    for (let i = 0; i < spec.fields.length; i++) {
      const pf = spec.fields[i]!;
      if (pf.sourceId !== p.fieldId) continue;
      const part = f.file.partition[i];
      if (part === undefined) continue;
      if (!partitionMayMatch(pf.transform, type, part, p)) return false;
    }
  }
  return true;
}

/** The files of a scan that survive pruning, with the estimates history and classification use. */
export interface PrunedFiles {
  readonly tasks: readonly FileScanTask[];
  /** Files dropped by pruning. */
  readonly prunedFiles: number;
  /** Records of the kept files (before deletes). */
  readonly estimatedRows: number;
  /** Bytes of the kept data files. */
  readonly estimatedBytes: number;
}

/** Prunes a scan's files by its predicates. */
export function pruneFiles(tasks: readonly FileScanTask[], predicates: readonly ScanPredicate[], ctx: PruneContext): PrunedFiles {
  const kept = tasks.filter((t) => fileMayMatch(t, predicates, ctx));
  return {
    tasks: kept,
    prunedFiles: tasks.length - kept.length,
    estimatedRows: kept.reduce((n, t) => n + t.file.recordCount, 0),
    estimatedBytes: kept.reduce((n, t) => n + t.file.fileSizeInBytes, 0),
  };
}

/** Rows a snapshot holds by its summary (`total-records`), before any file is read; undefined when absent. */
export function summaryRecords(summary: ReadonlyMap<string, string> | undefined): number | undefined {
  const raw = summary?.get('total-records');
  if (raw === undefined) return undefined;
  const n = Number(raw);
  return Number.isFinite(n) && n >= 0 ? n : undefined;
}
