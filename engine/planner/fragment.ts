/**
 * Splitting a bound query into fragments (engine/fragments.ts is the contract with the executor).
 *
 * - A decomposable aggregate over one large scan (count, sum, min, max, avg as sum + count, with or
 *   without GROUP BY, WHERE, HAVING, ORDER BY, LIMIT): one partial aggregate per group of files,
 *   then one final fragment that combines the partials and applies HAVING, ORDER BY and LIMIT.
 * - A plain select over one large scan (projection, WHERE, ORDER BY on output columns, LIMIT): one
 *   fragment per group of files (each cut to its own top LIMIT + OFFSET rows when there is a LIMIT)
 *   and a final fragment that is their UNION ALL, sorted and limited.
 * - Everything else (joins, windows, DISTINCT, several scans, system tables, small scans): one
 *   fragment over the whole query.
 * "Large" means the scan has several files and at least `minRowsPerFragment` estimated rows per
 * fragment; at most `maxFragmentsPerScan` groups are made (the worker count is a good value).
 */
import type { Expr, FunctionCall, Ident, Relation, SelectItem, Span, TableRef } from '../../grammar/index.js';
import { ident, isAggregateCall, isExpr, make, unparseExpr, unparseQuery, withoutSpans } from '../../grammar/index.js';
import type { FileScanTask } from '../../catalog/iceberg/scan.js';
import type { Fragment, FragmentPlan, SystemScanInput, TableScanInput } from '../fragments.js';
import { fragmentRelation, scanRelation } from '../fragments.js';
import type { BoundQuery, BoundScan } from './bind.js';
import { formatTableName } from './names.js';
import { pruneFiles } from './prune.js';

/** A bound scan with the files it will read (after pruning). */
export interface PlannedScan {
  readonly scan: BoundScan;
  readonly tasks: readonly FileScanTask[];
  /** Files pruning dropped. */
  readonly prunedFiles: number;
  /** Records of the kept files (before deletes). */
  readonly estimatedRows: number;
  /** Bytes of the kept data files. */
  readonly estimatedBytes: number;
}

export interface FragmentOptions {
  /** Most fragments one scan is spread over (the worker count). */
  readonly maxFragmentsPerScan: number;
  /** Fewest estimated rows worth a fragment of their own. */
  readonly minRowsPerFragment: number;
}

export const DEFAULT_FRAGMENT_OPTIONS: FragmentOptions = { maxFragmentsPerScan: 4, minRowsPerFragment: 500_000 };

/**
 * Prunes each scan's files (`tasksByScan[i]` are the tasks of `query.scans[i]`'s Iceberg scan plan,
 * e.g. `planScan(metadata, io, scan.selector).tasks`) and totals the estimates.
 */
export function planScans(query: BoundQuery, tasksByScan: readonly (readonly FileScanTask[])[]): readonly PlannedScan[] {
  return query.scans.map((scan, i) => {
    const tasks = tasksByScan[i];
    if (tasks === undefined) throw new Error(`planScans: no tasks for scan ${i} (${formatTableName(scan.table)})`);
    const specs = new Map(scan.metadata.partitionSpecs.map((s) => [s.specId, s] as const));
    // Name-mapped tables: metrics wait until the worker knows which files carry field ids (see PruneContext).
    const nameMapped = scan.metadata.properties.has('schema.name-mapping.default');
    const pruned = pruneFiles(tasks, scan.predicates, { schema: scan.schema, specs, useMetrics: !nameMapped });
    return { scan, ...pruned };
  });
}

/** Rows the query is estimated to read, summed over its scans (classification's input). */
export function estimatedRows(scans: readonly PlannedScan[]): number {
  return scans.reduce((n, s) => n + s.estimatedRows, 0);
}

function scanInput(p: PlannedScan, relation: string, tasks: readonly FileScanTask[]): TableScanInput {
  const nameMapping = p.scan.metadata.properties.get('schema.name-mapping.default');
  return {
    relation,
    tableName: formatTableName(p.scan.table),
    catalog: p.scan.table.catalog,
    schema: p.scan.schema,
    columns: p.scan.columns,
    tasks,
    ...(nameMapping !== undefined ? { nameMapping, metricPredicates: p.scan.predicates } : {}),
    estimatedRows: tasks.reduce((n, t) => n + t.file.recordCount, 0),
    estimatedBytes: tasks.reduce((n, t) => n + t.file.fileSizeInBytes, 0),
    partitionSpecs: p.scan.metadata.partitionSpecs,
    ...(p.scan.locationMappings !== undefined ? { locationMappings: p.scan.locationMappings } : {}),
  };
}

/** The unparse hook that replaces placeholder scans by relation names (a missing one is a bug). */
function tableHook(relations: ReadonlyMap<string, string>): (ref: TableRef) => string | undefined {
  return (ref) => {
    if (ref.kind !== 'Scan') return undefined;
    const name = ref.table.parts.length === 1 ? ref.table.parts[0]!.name : undefined;
    const relation = name === undefined ? undefined : relations.get(name);
    if (relation === undefined) throw new Error(`fragment: unbound table reference ${ref.table.parts.map((p) => p.name).join('.')}`);
    return relation;
  };
}

/** Splits tasks into `n` groups of near-equal records (largest first into the lightest group). */
export function groupTasks(tasks: readonly FileScanTask[], n: number): readonly (readonly FileScanTask[])[] {
  const groups: FileScanTask[][] = Array.from({ length: n }, () => []);
  const load = new Array<number>(n).fill(0);
  const order = tasks.map((t, i) => ({ t, i })).sort((a, b) => b.t.file.recordCount - a.t.file.recordCount || a.i - b.i);
  for (const { t } of order) {
    let best = 0;
    for (let g = 1; g < n; g++) if (load[g]! < load[best]!) best = g;
    groups[best]!.push(t);
    load[best]! += t.file.recordCount;
  }
  return groups.filter((g) => g.length > 0);
}

/** Produces the fragment plan of a bound query whose scans have been planned. */
export function fragmentQuery(query: BoundQuery, scans: readonly PlannedScan[], options: FragmentOptions = DEFAULT_FRAGMENT_OPTIONS): FragmentPlan {
  if (scans.length !== query.scans.length) throw new Error('fragmentQuery: one planned scan per bound scan');
  if (scans.length === 1 && query.systemScans.length === 0) {
    const only = scans[0]!;
    const n = Math.min(options.maxFragmentsPerScan, only.tasks.length, Math.floor(only.estimatedRows / Math.max(1, options.minRowsPerFragment)));
    if (n >= 2) {
      const split = splitSingleScan(query.relation, only, groupTasks(only.tasks, n));
      if (split !== undefined) return split;
    }
  }
  return singleFragment(query, scans);
}

function singleFragment(query: BoundQuery, scans: readonly PlannedScan[]): FragmentPlan {
  const relations = new Map<string, string>();
  const inputs = scans.map((p, i) => {
    relations.set(p.scan.placeholder, scanRelation(i));
    return scanInput(p, scanRelation(i), p.tasks);
  });
  const systemScans: SystemScanInput[] = query.systemScans.map((s) => {
    relations.set(s.placeholder, s.placeholder);
    return { relation: s.placeholder, table: s.table, columns: s.columns };
  });
  const sql = unparseQuery(query.relation, { table: tableHook(relations) });
  const fragment: Fragment = { id: 0, sql, scans: inputs, inputs: [], ...(systemScans.length > 0 ? { systemScans } : {}) };
  return { fragments: [fragment] };
}

// ------------------------------------------------------------------ one scan, several fragments

interface Block {
  readonly limit: Extract<Relation, { kind: 'Limit' }> | undefined;
  readonly sort: Extract<Relation, { kind: 'Sort' }> | undefined;
  readonly project: Extract<Relation, { kind: 'Project' }>;
  readonly having: Extract<Relation, { kind: 'Filter' }> | undefined;
  readonly aggregate: Extract<Relation, { kind: 'Aggregate' }> | undefined;
  readonly where: Extract<Relation, { kind: 'Filter' }> | undefined;
  readonly scan: Extract<Relation, { kind: 'Scan' }>;
}

/** The query as one SELECT block straight over the scan, or undefined for any other shape. */
function peelBlock(rel: Relation): Block | undefined {
  let r = rel;
  let limit: Block['limit'];
  let sort: Block['sort'];
  let having: Block['having'];
  let aggregate: Block['aggregate'];
  let where: Block['where'];
  if (r.kind === 'Limit') {
    limit = r;
    r = r.input;
  }
  if (r.kind === 'Sort') {
    sort = r;
    r = r.input;
  }
  if (r.kind !== 'Project') return undefined;
  const project = r;
  r = r.input;
  if (r.kind === 'Filter' && r.clause === 'HAVING') {
    having = r;
    r = r.input;
  }
  if (r.kind === 'Aggregate') {
    aggregate = r;
    r = r.input;
  }
  if (r.kind === 'Filter' && r.clause === 'WHERE') {
    where = r;
    r = r.input;
  }
  if (r.kind !== 'Scan') return undefined;
  return { limit, sort, project, having, aggregate, where, scan: r };
}

function hasSubquery(node: unknown): boolean {
  if (Array.isArray(node)) return node.some(hasSubquery);
  if (node === null || typeof node !== 'object') return false;
  const k = (node as { kind?: string }).kind;
  if (k === 'InSubquery' || k === 'Exists' || k === 'ScalarSubquery' || k === 'Quantified') return true;
  return Object.entries(node).some(([key, v]) => key !== 'span' && hasSubquery(v));
}

function splitSingleScan(rel: Relation, planned: PlannedScan, groups: readonly (readonly FileScanTask[])[]): FragmentPlan | undefined {
  const block = peelBlock(rel);
  if (block === undefined || hasSubquery(rel)) return undefined;
  if (block.aggregate !== undefined) return splitAggregate(block, planned, groups);
  if (block.having !== undefined) return undefined;
  return splitUnion(block, planned, groups);
}

/**
 * ORDER BY keys of a plain select as keys over its output (for the final fragment): ordinals, or
 * names that denote exactly one output column. Undefined when a key needs an input column.
 */
function outputSortKeys(block: Block): string | undefined {
  if (block.sort === undefined) return '';
  const names = block.project.items.map((i) => (i.kind === 'Star' ? undefined : i.alias !== undefined ? i.alias.name.toLowerCase() : i.expr.kind === 'ColumnRef' ? i.expr.parts[i.expr.parts.length - 1]!.name.toLowerCase() : undefined));
  if (block.project.items.some((i) => i.kind === 'Star')) return undefined;
  const keys: string[] = [];
  for (const k of block.sort.keys) {
    let position: number;
    if (k.expr.kind === 'NumberLiteral' && /^\d+$/.test(k.expr.text)) position = Number(k.expr.text);
    else if (k.expr.kind === 'ColumnRef' && k.expr.parts.length === 1) {
      const name = k.expr.parts[0]!.name.toLowerCase();
      if (names.filter((n) => n === name).length !== 1) return undefined;
      position = names.indexOf(name) + 1;
    } else return undefined;
    if (position < 1 || position > names.length) return undefined;
    keys.push(`${position}${k.direction === undefined ? '' : ` ${k.direction}`}${k.nulls === undefined ? '' : ` NULLS ${k.nulls}`}`);
  }
  return ` ORDER BY ${keys.join(', ')}`;
}

/** Partial fragments over file groups; `body(relation)` is each one's SQL. */
function partialFragments(planned: PlannedScan, groups: readonly (readonly FileScanTask[])[], partial: Relation): Fragment[] {
  return groups.map((tasks, id) => {
    const relation = scanRelation(id);
    const sql = unparseQuery(partial, { table: tableHook(new Map([[planned.scan.placeholder, relation]])) });
    return { id, sql, scans: [scanInput(planned, relation, tasks)], inputs: [] };
  });
}

function integerLiteral(e: Expr | undefined): bigint | undefined {
  return e?.kind === 'NumberLiteral' && /^\d+$/.test(e.text) ? BigInt(e.text) : undefined;
}

function splitUnion(block: Block, planned: PlannedScan, groups: readonly (readonly FileScanTask[])[]): FragmentPlan | undefined {
  const order = outputSortKeys(block);
  if (order === undefined) return undefined;
  // Parts sort only to cut their LIMIT (top-N per part); the final fragment sorts the union.
  let partial: Relation = block.project;
  let tail = order;
  if (block.limit !== undefined) {
    const count = integerLiteral(block.limit.count);
    const offset = block.limit.offset === undefined ? 0n : integerLiteral(block.limit.offset);
    if ((block.limit.count !== undefined && count === undefined) || offset === undefined) return undefined;
    if (count !== undefined) {
      // Each part needs at most count + offset rows; the final fragment applies both.
      const sorted: Relation = block.sort === undefined ? block.project : { ...block.sort, input: block.project };
      partial = { ...block.limit, input: sorted, count: make('NumberLiteral', block.limit.span, { text: String(count + offset) }), offset: undefined };
      tail += ` LIMIT ${count}`;
    }
    if (offset > 0n) tail += ` OFFSET ${offset}`;
  }
  const parts = partialFragments(planned, groups, partial);
  const union = parts.map((p) => `SELECT * FROM ${fragmentRelation(p.id)}`).join(' UNION ALL ');
  const final: Fragment = { id: parts.length, sql: tail === '' ? union : `SELECT * FROM (${union}) AS __floe_union${tail}`, scans: [], inputs: parts.map((p) => p.id) };
  return { fragments: [...parts, final] };
}

// ------------------------------------------------------------------ partial + final aggregates

const PARTIALS = '__floe_partials';

function key(node: unknown): string {
  return JSON.stringify(withoutSpans(node));
}

function qname(name: string, span: Span): FunctionCall['name'] {
  return make('QualifiedName', span, { parts: [ident(name, span)] });
}

function call(name: string, args: readonly Expr[], span: Span, filter?: Expr): FunctionCall {
  return make('FunctionCall', span, { name: qname(name, span), args, star: false, distinct: false, orderBy: [], filter, over: undefined });
}

function col(name: string, span: Span): Expr {
  return make('ColumnRef', span, { parts: [ident(name, span)] });
}

function castTo(e: Expr, type: 'bigint' | 'double', span: Span): Expr {
  return make('Cast', span, { try: false, expr: e, type: make('PrimitiveType', span, { name: type }) });
}

interface Decomposed {
  /** Partial aggregate calls, each with its output column. */
  readonly partials: readonly { readonly call: FunctionCall; readonly column: string }[];
  /** The expression the final fragment computes instead of the original call. */
  readonly combine: Expr;
}

/** count, sum, min, max, avg (FILTER allowed; DISTINCT only for min/max) split into partial + combine. */
function decompose(c: FunctionCall, j: number): Decomposed | undefined {
  if (c.over !== undefined || c.orderBy.length > 0 || c.name.parts.length !== 1) return undefined;
  const name = c.name.parts[0]!.name.toLowerCase();
  const s = c.span;
  if (c.distinct && name !== 'min' && name !== 'max') return undefined;
  if (!c.star && c.args.length !== 1) return undefined;
  if (c.star && name !== 'count') return undefined;
  const a = `__a${j}`;
  switch (name) {
    case 'count':
      return { partials: [{ call: { ...c, distinct: false }, column: a }], combine: castTo(call('coalesce', [call('sum', [col(a, s)], s), make('NumberLiteral', s, { text: '0' })], s), 'bigint', s) };
    case 'sum':
    case 'min':
    case 'max':
      return { partials: [{ call: { ...c, distinct: false }, column: a }], combine: call(name, [col(a, s)], s) };
    case 'avg': {
      const arg = c.args[0]!;
      return {
        partials: [{ call: call('sum', [arg], s, c.filter), column: `${a}_sum` }, { call: call('count', [arg], s, c.filter), column: `${a}_count` }],
        combine: make('Binary', s, { op: '/', left: castTo(call('sum', [col(`${a}_sum`, s)], s), 'double', s), right: call('sum', [col(`${a}_count`, s)], s) }),
      };
    }
    default:
      return undefined;
  }
}

/** DuckDB's name for an unaliased select expression (so columns keep their names after rewriting). */
function outputName(e: Expr): Ident {
  if (e.kind === 'ColumnRef') return e.parts[e.parts.length - 1]!;
  if (e.kind === 'FunctionCall' && e.star && e.name.parts.length === 1 && e.name.parts[0]!.name.toLowerCase() === 'count' && e.filter === undefined) return ident('count_star()', e.span, true);
  return ident(unparseExpr(e), e.span, true);
}

function splitAggregate(block: Block, planned: PlannedScan, groups: readonly (readonly FileScanTask[])[]): FragmentPlan | undefined {
  const agg = block.aggregate!;
  const span = agg.span;
  const items = block.project.items;
  if (items.some((i) => i.kind === 'Star')) return undefined;
  const selectExprs = items.filter((i): i is Extract<SelectItem, { kind: 'SelectExpr' }> => i.kind === 'SelectExpr');
  const scanColumns = new Set(planned.scan.schema.fields.map((f) => f.name.toLowerCase()));
  // GROUP BY elements as expressions: ordinals and select aliases resolved to what they name.
  const groupExprs: Expr[] = [];
  for (const g of agg.groupBy) {
    if (!isExpr(g)) return undefined;
    let e: Expr = g;
    if (g.kind === 'NumberLiteral' && /^\d+$/.test(g.text)) {
      const item = selectExprs[Number(g.text) - 1];
      if (item === undefined || items.length !== selectExprs.length) return undefined;
      e = item.expr;
    } else if (g.kind === 'ColumnRef' && g.parts.length === 1 && !scanColumns.has(g.parts[0]!.name.toLowerCase())) {
      const item = selectExprs.find((i) => i.alias !== undefined && i.alias.name.toLowerCase() === g.parts[0]!.name.toLowerCase());
      if (item === undefined) return undefined;
      e = item.expr;
    }
    groupExprs.push(e);
  }
  const calls = agg.aggregates;
  const decomposed: Decomposed[] = [];
  for (let j = 0; j < calls.length; j++) {
    const d = decompose(calls[j]!, j);
    if (d === undefined) return undefined;
    decomposed.push(d);
  }
  // Partial fragments: group keys and partial aggregates per file group.
  const partialItems: SelectItem[] = [
    ...groupExprs.map((g, i) => make('SelectExpr', span, { expr: g, alias: ident(`__g${i}`, span) })),
    ...decomposed.flatMap((d) => d.partials.map((p) => make('SelectExpr', span, { expr: p.call, alias: ident(p.column, span) }))),
  ];
  let partialInput: Relation = block.scan;
  if (block.where !== undefined) partialInput = { ...block.where, input: partialInput };
  const partialAgg: Relation = make('Aggregate', span, { input: partialInput, groupBy: groupExprs, aggregates: decomposed.flatMap((d) => d.partials.map((p) => p.call)) });
  const partial: Relation = make('Project', block.project.span, { input: partialAgg, items: partialItems });

  // Final fragment: the original select list, HAVING and ORDER BY over the combined partials.
  const groupKeys = groupExprs.map(key);
  const callKeys = calls.map(key);
  const aliases = new Set(selectExprs.flatMap((i) => (i.alias === undefined ? [] : [i.alias.name.toLowerCase()])));
  let ok = true;
  const subst = (e: Expr, allowAliases: boolean): Expr => {
    const k = key(e);
    const ci = callKeys.indexOf(k);
    if (ci >= 0) return decomposed[ci]!.combine;
    const gi = groupKeys.indexOf(k);
    if (gi >= 0) return col(`__g${gi}`, e.span);
    if (e.kind === 'ColumnRef') {
      if (!(allowAliases && e.parts.length === 1 && aliases.has(e.parts[0]!.name.toLowerCase()))) ok = false;
      return e;
    }
    // An aggregate or window call the partials do not compute cannot be evaluated over them.
    if (e.kind === 'FunctionCall' && (e.over !== undefined || isAggregateCall(e))) ok = false;
    return mapExprs(e, (x) => subst(x, allowAliases));
  };
  const finalItems = items.map((i): SelectItem => {
    if (i.kind === 'Star') return i;
    const expr = subst(i.expr, false);
    const alias = i.alias ?? (key(expr) === key(i.expr) ? undefined : outputName(i.expr));
    return { ...i, expr, alias };
  });
  const source = make('Scan', span, { table: make('QualifiedName', span, { parts: [ident(PARTIALS, span)] }), alias: make('TableAlias', span, { name: ident('__partials', span), columns: [] }), timeTravel: undefined });
  let final: Relation = make('Aggregate', span, { input: source, groupBy: groupExprs.map((_, i) => col(`__g${i}`, span)), aggregates: [] });
  if (block.having !== undefined) final = { ...block.having, input: final, predicate: subst(block.having.predicate, true) };
  final = { ...block.project, input: final, items: finalItems };
  if (block.sort !== undefined) final = { ...block.sort, input: final, keys: block.sort.keys.map((k) => ({ ...k, expr: subst(k.expr, true) })) };
  if (block.limit !== undefined) final = { ...block.limit, input: final };
  if (!ok) return undefined;

  const parts = partialFragments(planned, groups, partial);
  const union = `(${parts.map((p) => `SELECT * FROM ${fragmentRelation(p.id)}`).join(' UNION ALL ')})`;
  const sql = unparseQuery(final, { table: tableHook(new Map([[PARTIALS, union]])) });
  return { fragments: [...parts, { id: parts.length, sql, scans: [], inputs: parts.map((p) => p.id) }] };
}

/** Copies an expression node, applying `f` to each direct sub-expression (subqueries excluded). */
function mapExprs(e: Expr, f: (x: Expr) => Expr): Expr {
  const map = (v: unknown): unknown => {
    if (Array.isArray(v)) return v.map(map);
    if (v === null || typeof v !== 'object') return v;
    const n = v as { kind?: string };
    if (n.kind === undefined) return v;
    if (isExpr(n as { kind: string })) return f(n as Expr);
    const out: Record<string, unknown> = {};
    for (const [k, x] of Object.entries(n)) out[k] = k === 'span' ? x : map(x);
    return out;
  };
  const out: Record<string, unknown> = {};
  for (const [k, x] of Object.entries(e)) out[k] = k === 'span' ? x : map(x);
  return out as unknown as Expr;
}
