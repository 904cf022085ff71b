/**
 * The binder of COPY with transformations: `COPY INTO t [(cols)] FROM (SELECT <items> FROM @stage …)`.
 * Pure: given the statement's items, one file's columns and the target fields, it answers the
 * `ColumnPlan` the COPY executor runs for that file (engine/stages/copy-into.ts), the same shape the
 * plain form uses, so checks, ON_ERROR, the write and the history are shared.
 *
 * - Each item is bound to the target field at its position (the column list, or all the table's
 *   columns); the counts must match.
 * - A column reference is `$n` (the file's n-th column), a name of the file's columns (CSV with
 *   PARSE_HEADER = TRUE, Parquet, JSON: exact first, then case-insensitive when that is unique),
 *   either qualified by the source's alias; `METADATA$FILENAME` is the file's `@stage/path`. Every
 *   reference is rewritten to the reader's own column name, so the unparsed expression reads one
 *   relation whatever the user wrote.
 * - Subqueries, aggregates and window functions are refused (one output row per file row). The
 *   function allowlist applies as everywhere (checkIsolation walks the items).
 * - CSV columns are read as text (the expressions see strings, as Snowflake's do), except a column
 *   used only as a whole item, for targets of one type: the reader parses it into that type, so its
 *   bad values are reported by the reader with their exact line and column, and DATE_FORMAT and
 *   TIMESTAMP_FORMAT apply.
 * - Every other item gets a row check: true when its value cannot be computed or cast to the
 *   target's type (`try(…)`), reported with the row's line and the target column.
 */
import { floeError, type FloeError } from '../../grammar/errors.js';
import { isExpr, make, type ColumnRef, type Expr, type Ident, type StageQuery } from '../../grammar/ir.js';
import { isAggregateCall } from '../../grammar/semantics.js';
import { unparseExpr } from '../../grammar/unparse.js';
import type { NestedField } from '../../catalog/iceberg/types.js';
import { duckdbType, sqlString } from '../iceberg-io/index.js';
import type { LoadFormat, ReaderColumn } from './load-format.js';

/** How one file's columns reach the target's (shared with the plain form). */
export interface ColumnPlan {
  readonly reader: readonly ReaderColumn[];
  /** Target field → SQL over the reader's row (absent: the field's write default). */
  readonly sources: ReadonlyMap<number, string>;
  /** Per checked source: SQL that is true when the row's value does not fit, with the target column's 1-based position and name and the reason reported. */
  readonly checks: readonly RowCheck[];
}

export interface RowCheck {
  readonly bad: string;
  readonly column: number;
  readonly name: string;
  readonly reason: string;
}

/** A column of the file as its reader sees it: its name in the file (CSV without a header: none) and DuckDB type. */
export interface FileColumn {
  readonly name: string | undefined;
  readonly duckdbType: string;
}

/** Refusals that hold for every file: the item count, subqueries, aggregates, window functions. */
export function checkTransform(q: StageQuery, fields: readonly NestedField[]): void {
  if (q.items.length !== fields.length) {
    throw floeError('INVALID_PARAMETER', { name: 'COPY INTO', detail: `the SELECT has ${q.items.length} expressions for ${fields.length} target columns (name the columns to load: COPY INTO t (a, b) FROM (SELECT …))` });
  }
  for (const item of q.items) {
    walk(item.expr, (e) => {
      switch (e.kind) {
        case 'ScalarSubquery': case 'Exists': case 'InSubquery': case 'Quantified':
          throw floeError('UNSUPPORTED_STATEMENT', { what: 'a subquery in COPY INTO … FROM (SELECT …): each loaded row is computed from one row of the file' });
        case 'FunctionCall':
          if (e.over !== undefined || isAggregateCall(e)) throw floeError('UNSUPPORTED_STATEMENT', { what: `${e.name.parts.map((p) => p.name).join('.')}(…) in COPY INTO … FROM (SELECT …): aggregates and window functions do not apply to a load` });
          return;
        default:
          return;
      }
    });
  }
}

/**
 * The plan of one file: `columns` are the file's columns in order; `file` is its display name (for
 * METADATA$FILENAME and errors). Throws a FloeError naming the file when an item cannot be bound.
 */
export function transformPlan(q: StageQuery, format: LoadFormat, columns: readonly FileColumn[], fields: readonly NestedField[], file: string): ColumnPlan {
  // The reader's name of file column i: `$i` for CSV (the reader names them), the file's own name otherwise.
  const readerName = (i: number): string => (format.type === 'CSV' ? `$${i + 1}` : columns[i]!.name!);
  const bound = q.items.map((item) => rewrite(item.expr, (ref) => bindRef(ref, q.alias, columns, file, readerName)));
  // CSV: a column used only as whole items of one target type is parsed as that type by the reader.
  const typed = new Map<number, string | null>();
  if (format.type === 'CSV') {
    q.items.forEach((item, i) => {
      for (const ref of columnRefs(item.expr)) {
        const col = refIndex(ref, columns);
        if (col === undefined) continue;
        const wanted = ref === item.expr ? duckdbType(fields[i]!.type) : null;
        const before = typed.get(col);
        typed.set(col, before === undefined ? wanted : before === wanted ? wanted : null);
      }
    });
  }
  const reader: ReaderColumn[] = format.type === 'CSV'
    ? columns.map((_, i) => ({ name: `$${i + 1}`, duckdbType: typed.get(i) ?? 'VARCHAR' }))
    : format.type === 'JSON' ? columns.map((c) => ({ name: c.name!, duckdbType: c.duckdbType })) : [];
  const sources = new Map<number, string>();
  const checks: RowCheck[] = [];
  bound.forEach((e, i) => {
    const f = fields[i]!;
    const sql = unparseExpr(e.expr);
    sources.set(f.id, sql);
    if (e.wholeColumn !== undefined && typed.get(e.wholeColumn) != null) return; // parsed (and checked) by the reader
    const type = duckdbType(f.type);
    checks.push({
      bad: `(try(CAST((${sql}) AS ${type}) IS NULL) IS NULL)`, column: i + 1, name: f.name,
      reason: `the expression for column ${f.name} fails on this row or its value does not convert to ${type}`,
    });
  });
  return { reader, sources, checks };
}

/** The file column a reference names, if it is one (not METADATA$…). */
function refIndex(ref: ColumnRef, columns: readonly FileColumn[]): number | undefined {
  const last = ref.parts[ref.parts.length - 1]!;
  const positional = positionOf(last);
  if (positional !== undefined) return positional - 1;
  return nameIndex(last, columns);
}

function positionOf(id: Ident): number | undefined {
  const m = /^\$([0-9]+)$/.exec(id.name);
  return m === null ? undefined : Number(m[1]);
}

function nameIndex(id: Ident, columns: readonly FileColumn[]): number | undefined {
  const exact = columns.findIndex((c) => c.name === id.name);
  if (exact >= 0) return exact;
  if (id.quoted) return undefined;
  const folded = columns.flatMap((c, i) => (c.name !== undefined && c.name.toLowerCase() === id.name.toLowerCase() ? [i] : []));
  return folded.length === 1 ? folded[0] : undefined;
}

function bindRef(ref: ColumnRef, alias: Ident | undefined, columns: readonly FileColumn[], file: string, readerName: (i: number) => string): Expr {
  const shown = ref.parts.map((p) => p.name).join('.');
  const refuse = (detail: string): FloeError => floeError('INVALID_PARAMETER', { name: `${shown} in COPY INTO … FROM (SELECT …)`, detail });
  if (ref.parts.length > 2) throw refuse('a column of the file is `$n`, a name, or either qualified by the source\'s alias');
  if (ref.parts.length === 2) {
    const q = ref.parts[0]!;
    const matches = alias !== undefined && (alias.quoted || q.quoted ? alias.name === q.name : alias.name.toLowerCase() === q.name.toLowerCase());
    if (!matches) throw refuse(alias === undefined ? 'the source has no alias (FROM @stage alias)' : `the source's alias is ${alias.name}`);
  }
  const last = ref.parts[ref.parts.length - 1]!;
  if (!last.quoted && last.name.toLowerCase() === 'metadata$filename') return make('StringLiteral', ref.span, { value: file });
  const positional = positionOf(last);
  if (positional !== undefined) {
    if (positional < 1 || positional > columns.length) throw floeError('LOAD_FILE_UNREADABLE', { file, reason: `the file has ${columns.length} column${columns.length === 1 ? '' : 's'}, so ${shown} does not exist` });
    return columnRef(ref, readerName(positional - 1));
  }
  if (columns.every((c) => c.name === undefined)) throw refuse('a CSV file\'s columns have names only with FILE_FORMAT = (PARSE_HEADER = TRUE); use $1, $2 …');
  const i = nameIndex(last, columns);
  if (i === undefined) throw floeError('LOAD_FILE_UNREADABLE', { file, reason: `no column ${last.name} in the file (it has ${columns.map((c) => c.name).join(', ')})` });
  return columnRef(ref, readerName(i));
}

function columnRef(ref: ColumnRef, name: string): ColumnRef {
  return make('ColumnRef', ref.span, { parts: [{ kind: 'Ident', span: ref.span, name, quoted: true }] });
}

/** The expression with every column reference replaced; `wholeColumn` when the item is one column. */
function rewrite(e: Expr, bind: (ref: ColumnRef) => Expr): { expr: Expr; wholeColumn: number | undefined } {
  if (e.kind === 'ColumnRef') {
    const out = bind(e);
    const m = out.kind === 'ColumnRef' ? /^\$([0-9]+)$/.exec(out.parts[0]!.name) : null;
    return { expr: out, wholeColumn: m === null ? undefined : Number(m[1]) - 1 };
  }
  return { expr: mapRefs(e, bind) as Expr, wholeColumn: undefined };
}

function mapRefs(v: unknown, bind: (ref: ColumnRef) => Expr): unknown {
  if (Array.isArray(v)) return v.map((x) => mapRefs(x, bind));
  if (v === null || typeof v !== 'object') return v;
  const node = v as { kind?: string };
  if (node.kind === 'ColumnRef') return bind(v as ColumnRef);
  // A function's name is a QualifiedName, never a column: copy it as it is.
  if (node.kind === 'QualifiedName') return v;
  const out: Record<string, unknown> = {};
  for (const [k, x] of Object.entries(v)) out[k] = k === 'span' ? x : mapRefs(x, bind);
  return out;
}

function columnRefs(e: Expr): ColumnRef[] {
  const out: ColumnRef[] = [];
  walk(e, (x) => {
    if (x.kind === 'ColumnRef') out.push(x);
  });
  return out;
}

/** Calls `visit` on every expression inside `e` (itself included). */
function walk(e: unknown, visit: (e: Expr) => void): void {
  if (Array.isArray(e)) {
    for (const x of e) walk(x, visit);
    return;
  }
  if (e === null || typeof e !== 'object') return;
  const node = e as { kind?: string };
  if (typeof node.kind === 'string' && isExpr(node as { kind: string })) visit(e as Expr);
  for (const [k, x] of Object.entries(e)) if (k !== 'span') walk(x, visit);
}

/** A CSV file's column names for binding (PARSE_HEADER) or none; the count always. */
export function csvColumns(names: readonly string[], parseHeader: boolean): FileColumn[] {
  return names.map((n) => ({ name: parseHeader ? n : undefined, duckdbType: 'VARCHAR' }));
}

/** `SELECT` text that evaluates to the first row check failing (0-based) or NULL. */
export function badCaseSql(checks: readonly RowCheck[]): string {
  return checks.length === 0 ? 'NULL::INTEGER' : `CASE ${checks.map((c, i) => `WHEN ${c.bad} THEN ${i}`).join(' ')} END`;
}

/** The checks' positions, names and reasons as DuckDB list literals, indexed by `badCaseSql`'s value + 1. */
export function checkListsSql(checks: readonly RowCheck[]): { columns: string; names: string; reasons: string } {
  return {
    columns: `[${checks.map((c) => c.column).join(', ')}]::BIGINT[]`,
    names: `[${checks.map((c) => sqlString(c.name)).join(', ')}]::VARCHAR[]`,
    reasons: `[${checks.map((c) => sqlString(c.reason)).join(', ')}]::VARCHAR[]`,
  };
}

