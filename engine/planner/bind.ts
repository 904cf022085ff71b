/**
 * The binder: resolves every table reference of a query against catalog facts the caller supplies,
 * expands views, checks column names, chooses each scan's snapshot and schema, works out which
 * columns each scan reads and which predicates can prune its files. Pure and synchronous: when a
 * reference names a table the caller has not described yet, the result is `{kind: 'needs'}` with
 * every such name, and the caller comes back with the answers (views may need more rounds).
 *
 * The bound query is the same IR with each base-table reference replaced by a `Scan` of a synthetic
 * name (`__floe_scan_<n>`, `__floe_system_<n>`) whose alias keeps the name the query uses, views
 * replaced by derived tables, and column references qualified by `schema.table` rewritten to the
 * alias (the unparsed SQL no longer has schemas).
 */
import type {
  ColumnRef, CteDef, Expr, Ident, QualifiedName, Relation, Scan, SelectItem, Statement, TableAlias, TimeTravel,
} from '../../grammar/index.js';
import { FloeError, floeError, ident, isExpr, make, planFeatures, unreachable } from '../../grammar/index.js';
import type { PlanFeatures } from '../../grammar/index.js';
import { IcebergError } from '../../catalog/iceberg/errors.js';
import { resolveSnapshot } from '../../catalog/iceberg/scan.js';
import type { SnapshotSelector } from '../../catalog/iceberg/scan.js';
import type { Schema } from '../../catalog/iceberg/schema.js';
import type { Snapshot } from '../../catalog/iceberg/snapshot.js';
import { currentSchema, schemaById } from '../../catalog/iceberg/table-metadata.js';
import type { TableMetadata } from '../../catalog/iceberg/table-metadata.js';
import { isPrimitive } from '../../catalog/iceberg/types.js';
import type { NestedField } from '../../catalog/iceberg/types.js';
import type { LocationMapping } from '../../storage-creds/file-io.js';
import { caseCollidingFieldIds, scanColumnName } from '../fragments.js';
import { checkIsolation, checkNode } from './isolation.js';
import { formatTableName, isSystemTableName, namespaceKey, resolveTableRef, tableKey } from './names.js';
import type { NameDefaults, NamespaceFacts, NamespaceRef, TableName } from './names.js';
import { conjuncts, flipComparison, likePrefix, literalForType, timestampMicros } from './predicates.js';
import type { ScanPredicate } from './predicates.js';

// ------------------------------------------------------------------ what the caller supplies

/** An Iceberg table: its metadata (the binder picks the snapshot and schema). */
export interface TableFacts {
  readonly kind: 'table';
  readonly metadata: TableMetadata;
  /** The table's catalog's location remapping (tables registered from elsewhere), passed to the executor. */
  readonly locationMappings?: readonly LocationMapping[];
}
/** A view: its SQL (Floe dialect) and the defaults its unqualified names resolve with. */
export interface ViewFacts {
  readonly kind: 'view';
  readonly sql: string;
  /** The view's `default-catalog`; the view's own catalog when absent. */
  readonly defaultCatalog?: string;
  /** The view's `default-namespace`; the view's own namespace when absent. */
  readonly defaultNamespace?: readonly string[];
  /** Column names of the view's schema, when it renames the query's columns. */
  readonly columnNames?: readonly string[];
}
/** The name does not exist (or the principal may not learn that it does: the same answer, 42P01). */
export interface MissingFacts {
  readonly kind: 'missing';
}
/** The name is outside what the principal may read (another tenant's catalog, a revoked grant): 42501. */
export interface ForbiddenFacts {
  readonly kind: 'forbidden';
}
export type RelationFacts = TableFacts | ViewFacts | MissingFacts | ForbiddenFacts;

/** A system table the caller's provider serves, with its column names. */
export interface SystemTableFacts {
  readonly columns: readonly string[];
}

export interface BindRequest {
  /** The session's current catalog and schema. */
  readonly defaults: NameDefaults;
  /** What the caller knows so far, by `tableKey(name)`. */
  readonly facts: ReadonlyMap<string, RelationFacts>;
  /** Floe's system tables by name (`query_history`, `tables`, …). */
  readonly systemTables: ReadonlyMap<string, SystemTableFacts>;
  /** Parses a view's SQL (the session's `Parser.parse`). */
  readonly parse: (sql: string) => Statement;
  /** Deepest view nesting accepted (cycles are caught before). Default 32. */
  readonly maxViewDepth?: number;
  /**
   * Which namespaces exist, for names of three or more parts (`resolveNamespacePath`). Without it,
   * such names are `catalog.namespace….table` and `needs` never lists namespaces.
   */
  readonly namespaces?: NamespaceFacts;
}

// ------------------------------------------------------------------ what the binder returns

/** One Iceberg table read of the bound query. */
export interface BoundScan {
  /** Position in `BoundQuery.scans`. */
  readonly index: number;
  /** The synthetic name the bound IR uses for this scan (`__floe_scan_<index>`). */
  readonly placeholder: string;
  readonly table: TableName;
  readonly metadata: TableMetadata;
  readonly selector: SnapshotSelector;
  /** The snapshot read; undefined for a table without snapshots (it reads as empty). */
  readonly snapshot: Snapshot | undefined;
  /** The schema to read with: the snapshot's for time travel (branches excepted), else the current one. */
  readonly schema: Schema;
  /** Field ids of the top-level columns read, in schema order, or 'all'. Never empty. */
  readonly columns: readonly number[] | 'all';
  /** Conjuncts usable for file pruning. */
  readonly predicates: readonly ScanPredicate[];
  /** From the table's facts, for the executor. */
  readonly locationMappings?: readonly LocationMapping[];
}

/** One system-table read of the bound query. */
export interface BoundSystemScan {
  readonly index: number;
  /** The synthetic name the bound IR uses (`__floe_system_<index>`). */
  readonly placeholder: string;
  /** The system table (`query_history`, …). */
  readonly table: string;
  readonly columns: readonly string[];
}

/** A query with every name resolved. */
export interface BoundQuery {
  /** The rewritten query (see the module comment). */
  readonly relation: Relation;
  readonly scans: readonly BoundScan[];
  readonly systemScans: readonly BoundSystemScan[];
  /** Plan-shape features of the expanded query (views included), for classification. */
  readonly features: PlanFeatures;
}

export type BindResult =
  | { readonly kind: 'needs'; readonly tables: readonly TableName[]; readonly namespaces: readonly NamespaceRef[] }
  | { readonly kind: 'bound'; readonly query: BoundQuery };

/** Synthetic relation name of the n-th table scan in bound IR. */
export function scanPlaceholder(n: number): string {
  return `__floe_scan_${n}`;
}
/** Synthetic relation name of the n-th system-table scan in bound IR. */
export function systemPlaceholder(n: number): string {
  return `__floe_system_${n}`;
}

// ------------------------------------------------------------------ scopes

/** Names a column reference may use without a FROM entry (DuckDB's niladic time functions). */
const PSEUDO_COLUMNS: ReadonlySet<string> = new Set(['current_date', 'current_time', 'current_timestamp', 'localtime', 'localtimestamp']);

interface ScanState {
  readonly index: number;
  readonly fields: readonly NestedField[];
  readonly used: Set<number>;
  all: boolean;
  readonly predicates: ScanPredicate[];
}

/** A relation visible in FROM: its name for qualified references and its columns (lower-case). */
interface FromEntry {
  readonly alias: string | undefined;
  /** The alias as the unparsed SQL spells it (for rewriting `schema.table.col`). */
  readonly aliasIdent: Ident | undefined;
  /** Full table name when the entry has no explicit alias (so `schema.table.col` matches). */
  readonly tableName: TableName | undefined;
  readonly columns: readonly string[];
  readonly complete: boolean;
  /** For base-table scans: which field each visible column is. */
  readonly scan: ScanState | undefined;
  /** Field id of each visible column (undefined for computed columns of a pass-through entry). */
  readonly fieldIds: readonly (number | undefined)[];
  /**
   * A derived table or view that only renames and filters one scan's columns: predicates on its
   * columns prune that scan's files, but `*` over it does not make the scan read every column.
   */
  readonly passThrough?: boolean;
  /**
   * A scan of a table whose columns differ only in case (`user_id`, `uSeR_Id`): lower-case name →
   * exact Iceberg name → the scan's internal column (lower case, see `scanColumnName`). A quoted
   * exact name resolves to its column; an unquoted one is ambiguous (42702), never a guess.
   */
  readonly exact?: ReadonlyMap<string, ReadonlyMap<string, string>>;
  /** The exact Iceberg name of each visible column, when `exact` is set (what `*` outputs). */
  readonly display?: readonly string[];
}

/** The internal column a case-colliding reference names, or undefined when `part` is not one of them. */
function caseResolved(e: FromEntry, part: Ident): string | undefined {
  const group = e.exact?.get(lower(part.name));
  if (group === undefined) return undefined;
  if (!part.quoted) throw floeError('AMBIGUOUS_COLUMN', { name: part.name, candidates: [...group.keys()].map((n) => `"${n}"`).join(', ') });
  const internal = group.get(part.name);
  if (internal === undefined) throw floeError('UNDEFINED_COLUMN', { name: `"${part.name}"` });
  return internal;
}

/** The names visible to the expressions of one SELECT block. */
interface ExprScope {
  readonly entries: readonly FromEntry[];
  /** Select-list aliases (DuckDB lets WHERE, GROUP BY, HAVING, ORDER BY use them). */
  readonly aliasNames: ReadonlySet<string>;
}

interface ColumnSet {
  readonly names: readonly string[];
  readonly complete: boolean;
}

interface Env {
  readonly defaults: NameDefaults;
  readonly outer: readonly ExprScope[];
  readonly ctes: ReadonlyMap<string, ColumnSet>;
  readonly aliasNames: ReadonlySet<string>;
  readonly viewStack: readonly string[];
}

interface Bound {
  readonly rel: Relation;
  readonly out: ColumnSet;
  readonly entries: readonly FromEntry[];
  /** Entries whose rows a WHERE above may filter before joining (not null-extended by an outer join). */
  readonly inner: readonly FromEntry[];
}

const NO_NAMES: ReadonlySet<string> = new Set();

function lower(s: string): string {
  return s.toLowerCase();
}

function columnText(ref: ColumnRef): string {
  return ref.parts.map((p) => p.name).join('.');
}

// ------------------------------------------------------------------ the binder

class Binder {
  readonly needs = new Map<string, TableName>();
  readonly needsNamespaces = new Map<string, NamespaceRef>();
  readonly scans: { state: ScanState; table: TableName; metadata: TableMetadata; selector: SnapshotSelector; snapshot: Snapshot | undefined; schema: Schema; locationMappings: readonly LocationMapping[] | undefined }[] = [];
  readonly systemScans: BoundSystemScan[] = [];
  readonly #views = new Map<string, Statement>();

  constructor(readonly request: BindRequest) {}

  // ---------------------------------------------------------------- relations

  relation(rel: Relation, env: Env): Bound {
    switch (rel.kind) {
      case 'Scan':
        return this.scan(rel, env);
      case 'TableFunction': {
        const args = rel.args.map((a) => this.expr(a, [...env.outer], env));
        const names = rel.alias?.columns.map((c) => lower(c.name)) ?? [];
        const entry = plainEntry(rel.alias?.name ?? rel.name.parts[rel.name.parts.length - 1]!, { names, complete: false });
        return { rel: { ...rel, args }, out: { names, complete: false }, entries: [entry], inner: [] };
      }
      case 'CteRef': {
        const cte = env.ctes.get(lower(rel.name.name)) ?? { names: [], complete: false };
        const out = renamed(cte, rel.alias);
        return { rel, out, entries: [plainEntry(rel.alias?.name ?? rel.name, out)], inner: [] };
      }
      case 'Derived': {
        const inner = this.relation(rel.query, { ...env, aliasNames: NO_NAMES });
        const out = renamed(inner.out, rel.alias);
        const entry = withPassThrough(plainEntry(rel.alias?.name, out), inner);
        return { rel: { ...rel, query: inner.rel }, out, entries: [entry], inner: entry.passThrough === true ? [entry] : [] };
      }
      case 'Values': {
        const width = rel.rows[0]?.length ?? 0;
        const rows = rel.rows.map((r) => r.map((e) => this.expr(e, [...env.outer], env)));
        const out = { names: Array.from({ length: width }, (_, i) => `col${i}`), complete: true };
        return { rel: { ...rel, rows }, out, entries: [plainEntry(undefined, out)], inner: [] };
      }
      case 'OneRow':
        return { rel, out: { names: [], complete: true }, entries: [], inner: [] };
      case 'Join': {
        const left = this.relation(rel.left, { ...env, aliasNames: NO_NAMES });
        // DuckDB makes subqueries and table functions on the right lateral when they refer to the left.
        const lateral = rel.right.kind === 'Derived' || rel.right.kind === 'TableFunction';
        const rightEnv: Env = lateral ? { ...env, aliasNames: NO_NAMES, outer: [...env.outer, { entries: left.entries, aliasNames: NO_NAMES }] } : { ...env, aliasNames: NO_NAMES };
        const right = this.relation(rel.right, rightEnv);
        const entries = [...left.entries, ...right.entries];
        const scope: ExprScope = { entries, aliasNames: NO_NAMES };
        let condition = rel.condition;
        if (condition?.kind === 'On') {
          const expr = this.expr(condition.expr, [...env.outer, scope], env);
          condition = { ...condition, expr };
          const pushTo = rel.joinType === 'INNER' ? [...left.inner, ...right.inner] : rel.joinType === 'LEFT' ? right.inner : rel.joinType === 'RIGHT' ? left.inner : [];
          this.pushPredicates(expr, pushTo, entries);
        } else if (condition?.kind === 'Using') {
          for (const c of condition.columns) {
            const name = lower(c.name);
            for (const side of [left.entries, right.entries]) {
              const owners = side.filter((e) => e.columns.includes(name));
              if (owners.length === 0 && side.every((e) => e.complete)) throw floeError('UNDEFINED_COLUMN', { name: c.name });
              for (const o of owners) markColumn(o, name);
            }
          }
        }
        if (rel.natural) for (const e of entries) markAll(e);
        const inner = rel.joinType === 'INNER' || rel.joinType === 'CROSS' ? [...left.inner, ...right.inner] : rel.joinType === 'LEFT' ? left.inner : rel.joinType === 'RIGHT' ? right.inner : [];
        const out = { names: [...left.out.names, ...right.out.names], complete: left.out.complete && right.out.complete };
        return { rel: { ...rel, left: left.rel, right: right.rel, condition }, out, entries, inner };
      }
      case 'Filter': {
        const input = this.relation(rel.input, env);
        const predicate = this.expr(rel.predicate, [...env.outer, { entries: input.entries, aliasNames: env.aliasNames }], env);
        if (rel.clause === 'WHERE') this.pushPredicates(predicate, input.inner, input.entries);
        return { ...input, rel: { ...rel, input: input.rel, predicate } };
      }
      case 'Aggregate': {
        const input = this.relation(rel.input, env);
        const scopes = [...env.outer, { entries: input.entries, aliasNames: env.aliasNames }];
        const groupBy = rel.groupBy.map((g) => (isExpr(g) ? this.expr(g, scopes, env) : this.generic(g, scopes, env)));
        const aggregates = rel.aggregates.map((a) => this.expr(a, scopes, env) as typeof a);
        return { ...input, rel: { ...rel, input: input.rel, groupBy, aggregates } };
      }
      case 'Window': {
        const input = this.relation(rel.input, env);
        const scopes = [...env.outer, { entries: input.entries, aliasNames: env.aliasNames }];
        const functions = rel.functions.map((f) => this.expr(f, scopes, env) as typeof f);
        const windows = rel.windows.map((w) => this.generic(w, scopes, env));
        return { ...input, rel: { ...rel, input: input.rel, functions, windows } };
      }
      case 'Project': {
        const aliasNames = new Set(rel.items.flatMap((i) => (i.kind === 'SelectExpr' && i.alias !== undefined ? [lower(i.alias.name)] : [])));
        const input = this.relation(rel.input, { ...env, aliasNames });
        const scopes = [...env.outer, { entries: input.entries, aliasNames }];
        const items = rel.items.flatMap((i): readonly SelectItem[] => {
          if (i.kind === 'Star') {
            const expanded = expandStar(i, input.entries);
            return expanded === undefined ? [i] : expanded.map((x) => (x.kind === 'SelectExpr' ? { ...x, expr: this.expr(x.expr, scopes, env) } : x));
          }
          const expr = this.expr(i.expr, scopes, env);
          // A case-colliding column selected bare keeps its exact name as the output name.
          const renamedRef = i.alias === undefined && i.expr.kind === 'ColumnRef' && expr.kind === 'ColumnRef' && expr.parts.length === i.expr.parts.length
            && expr.parts[expr.parts.length - 1]!.name !== i.expr.parts[i.expr.parts.length - 1]!.name;
          return [{ ...i, expr, ...(renamedRef ? { alias: i.expr.parts[i.expr.parts.length - 1]! } : {}) }];
        });
        const out = this.projectOutput(items, input.entries);
        return { rel: { ...rel, input: input.rel, items }, out, entries: input.entries, inner: input.inner };
      }
      case 'Distinct': {
        const input = this.relation(rel.input, env);
        const scopes = [...env.outer, { entries: input.entries, aliasNames: new Set(input.out.names) }];
        const on = rel.on?.map((e) => this.expr(e, scopes, env));
        return { ...input, rel: { ...rel, input: input.rel, on } };
      }
      case 'Sort': {
        const input = this.relation(rel.input, env);
        const scopes = [...env.outer, { entries: input.entries, aliasNames: new Set(input.out.names) }];
        const keys = rel.keys.map((k) => ({ ...k, expr: this.expr(k.expr, scopes, env) }));
        return { ...input, rel: { ...rel, input: input.rel, keys } };
      }
      case 'Limit': {
        const input = this.relation(rel.input, env);
        const scopes = [...env.outer];
        const count = rel.count === undefined ? undefined : this.expr(rel.count, scopes, env);
        const offset = rel.offset === undefined ? undefined : this.expr(rel.offset, scopes, env);
        return { ...input, rel: { ...rel, input: input.rel, count, offset } };
      }
      case 'SetOp': {
        const left = this.relation(rel.left, { ...env, aliasNames: NO_NAMES });
        const right = this.relation(rel.right, { ...env, aliasNames: NO_NAMES });
        return { rel: { ...rel, left: left.rel, right: right.rel }, out: left.out, entries: [plainEntry(undefined, left.out)], inner: [] };
      }
      case 'With': {
        const ctes = new Map(env.ctes);
        const defs: CteDef[] = [];
        for (const c of rel.ctes) {
          const key = lower(c.name.name);
          if (rel.recursive) ctes.set(key, { names: c.columns.map((x) => lower(x.name)), complete: false });
          const bound = this.relation(c.query, { ...env, ctes, aliasNames: NO_NAMES });
          const out = c.columns.length > 0 ? { names: c.columns.map((x) => lower(x.name)), complete: true } : bound.out;
          ctes.set(key, out);
          defs.push({ ...c, query: bound.rel });
        }
        const body = this.relation(rel.body, { ...env, ctes });
        return { ...body, rel: { ...rel, ctes: defs, body: body.rel } };
      }
      default:
        return unreachable(rel);
    }
  }

  projectOutput(items: readonly SelectItem[], entries: readonly FromEntry[]): ColumnSet {
    const names: string[] = [];
    let complete = true;
    for (const item of items) {
      if (item.kind === 'Star') {
        const exclude = new Set(item.exclude.map((x) => lower(x.name)));
        let from = entries;
        if (item.qualifier.length > 0) {
          const q = item.qualifier.map((x) => lower(x.name));
          from = entries.filter((e) => matchesQualifier(e, q));
          if (from.length === 0 && entries.every((e) => e.complete)) throw floeError('UNDEFINED_TABLE', { name: item.qualifier.map((x) => x.name).join('.') });
        }
        for (const e of from) {
          markAll(e);
          names.push(...e.columns.filter((c) => !exclude.has(c)));
          if (!e.complete) complete = false;
        }
      } else if (item.alias !== undefined) {
        names.push(lower(item.alias.name));
      } else if (item.expr.kind === 'ColumnRef') {
        names.push(lower(item.expr.parts[item.expr.parts.length - 1]!.name));
      } else {
        complete = false;
      }
    }
    return { names, complete };
  }

  // ---------------------------------------------------------------- table references

  scan(rel: Scan, env: Env): Bound {
    const last = rel.table.parts[rel.table.parts.length - 1]!;
    // DuckDB would read a file named like this (a replacement scan); Floe never does.
    if (looksLikeFilePath(last.name)) throw floeError('PERMISSION_DENIED', { detail: `"${last.name}" looks like a file path; only catalog tables can be read` });
    const alias: TableAlias = rel.alias ?? make('TableAlias', last.span, { name: last, columns: [] });
    const resolution = resolveTableRef(rel.table, env.defaults, this.request.namespaces);
    if (resolution.kind === 'needs') {
      // Which namespace the name is in depends on what exists: ask, and bind it next round.
      this.needsNamespaces.set(namespaceKey(resolution.namespace), resolution.namespace);
      const out = { names: [], complete: false };
      return { rel, out, entries: [scanEntry(alias, undefined, out, undefined, [])], inner: [] };
    }
    const name = resolution.name;
    if (isSystemTableName(name)) {
      const system = this.request.systemTables.get(name.name);
      if (system === undefined) throw floeError('UNDEFINED_TABLE', { name: formatTableName(name) });
      if (rel.timeTravel !== undefined) throw floeError('INVALID_PARAMETER', { name: 'time travel', detail: `system table ${formatTableName(name)} has no snapshots` });
      const index = this.systemScans.length;
      const placeholder = systemPlaceholder(index);
      this.systemScans.push({ index, placeholder, table: name.name, columns: system.columns });
      const out = renamed({ names: system.columns.map(lower), complete: true }, rel.alias);
      const entry = scanEntry(alias, rel.alias === undefined ? name : undefined, out, undefined, []);
      return { rel: placeholderScan(rel, placeholder, alias), out, entries: [entry], inner: [entry] };
    }
    const key = tableKey(name);
    const facts = this.request.facts.get(key);
    if (facts === undefined) {
      this.needs.set(key, name);
      const out = { names: [], complete: false };
      return { rel, out, entries: [scanEntry(alias, rel.alias === undefined ? name : undefined, out, undefined, [])], inner: [] };
    }
    switch (facts.kind) {
      case 'missing':
        throw floeError('UNDEFINED_TABLE', { name: formatTableName(name) });
      case 'forbidden':
        throw floeError('PERMISSION_DENIED', { detail: `table ${formatTableName(name)} is not readable by this principal` });
      case 'view':
        return this.view(rel, name, key, facts, alias, env);
      case 'table':
        return this.table(rel, name, facts.metadata, alias, facts.locationMappings);
      default:
        return unreachable(facts);
    }
  }

  table(rel: Scan, name: TableName, metadata: TableMetadata, alias: TableAlias, locationMappings: readonly LocationMapping[] | undefined): Bound {
    const { selector, snapshot, schema } = chooseSnapshot(metadata, rel.timeTravel, name);
    const index = this.scans.length;
    const state: ScanState = { index, fields: schema.fields, used: new Set(), all: false, predicates: [] };
    this.scans.push({ state, table: name, metadata, selector, snapshot, schema, locationMappings });
    const out = renamed({ names: schema.fields.map((f) => lower(scanColumnName(schema, f))), complete: true }, rel.alias);
    let entry = scanEntry(alias, rel.alias === undefined ? name : undefined, out, state, schema.fields.map((f) => f.id));
    const colliding = caseCollidingFieldIds(schema);
    if (colliding.size > 0 && (rel.alias === undefined || rel.alias.columns.length === 0)) {
      const exact = new Map<string, Map<string, string>>();
      for (const f of schema.fields) {
        if (!colliding.has(f.id)) continue;
        const group = exact.get(lower(f.name)) ?? new Map<string, string>();
        group.set(f.name, lower(scanColumnName(schema, f)));
        exact.set(lower(f.name), group);
      }
      entry = { ...entry, exact, display: schema.fields.map((f) => f.name) };
    }
    return { rel: placeholderScan(rel, scanPlaceholder(index), alias), out, entries: [entry], inner: [entry] };
  }

  view(rel: Scan, name: TableName, key: string, facts: ViewFacts, alias: TableAlias, env: Env): Bound {
    if (rel.timeTravel !== undefined) throw floeError('INVALID_PARAMETER', { name: 'time travel', detail: `${formatTableName(name)} is a view` });
    if (env.viewStack.includes(key)) throw floeError('INVALID_STATE', { detail: `view ${formatTableName(name)} refers to itself` });
    if (env.viewStack.length >= (this.request.maxViewDepth ?? 32)) throw floeError('INVALID_STATE', { detail: `views nested deeper than ${this.request.maxViewDepth ?? 32} levels at ${formatTableName(name)}` });
    let statement = this.#views.get(key);
    if (statement === undefined) {
      try {
        statement = this.request.parse(facts.sql);
      } catch (e) {
        // The position in a syntax error would point into the view's text, not the user's query.
        if (e instanceof FloeError) throw floeError('INVALID_STATE', { detail: `view ${formatTableName(name)} cannot be parsed: ${e.message}` });
        throw e;
      }
      this.#views.set(key, statement);
    }
    if (statement.kind !== 'Query') throw floeError('INVALID_STATE', { detail: `view ${formatTableName(name)} does not hold a query` });
    // The view's SQL is user SQL too: the same isolation rules apply to it.
    checkIsolation(statement);
    const viewEnv: Env = {
      defaults: { catalog: facts.defaultCatalog ?? name.catalog, namespace: facts.defaultNamespace ?? name.namespace },
      outer: [],
      ctes: new Map(),
      aliasNames: NO_NAMES,
      viewStack: [...env.viewStack, key],
    };
    const body = this.relation(statement.body, viewEnv);
    const columns = rel.alias !== undefined && rel.alias.columns.length > 0 ? rel.alias.columns : (facts.columnNames ?? []).map((c) => ident(c, alias.span, true));
    const viewAlias: TableAlias = { ...alias, columns };
    const out = renamed(body.out, viewAlias);
    const entry = withPassThrough({ ...plainEntry(alias.name, out), tableName: rel.alias === undefined ? name : undefined }, body);
    const derived = make('Derived', rel.span, { query: body.rel, alias: viewAlias, lateral: false });
    return { rel: derived, out, entries: [entry], inner: entry.passThrough === true ? [entry] : [] };
  }

  // ---------------------------------------------------------------- expressions

  /** Binds an expression: checks column references, binds subqueries (correlated: they see `scopes`). */
  expr(e: Expr, scopes: readonly ExprScope[], env: Env): Expr {
    switch (e.kind) {
      case 'ColumnRef':
        return this.column(e, scopes);
      case 'InSubquery':
        return { ...e, expr: this.expr(e.expr, scopes, env), query: this.subquery(e.query, scopes, env) };
      case 'Quantified':
        return { ...e, left: this.expr(e.left, scopes, env), query: this.subquery(e.query, scopes, env) };
      case 'Exists':
        return { ...e, query: this.subquery(existsBody(e.query), scopes, env) };
      case 'ScalarSubquery':
        return { ...e, query: this.subquery(e.query, scopes, env) };
      default:
        return this.generic(e, scopes, env);
    }
  }

  subquery(rel: Relation, scopes: readonly ExprScope[], env: Env): Relation {
    return this.relation(rel, { ...env, outer: scopes, aliasNames: NO_NAMES }).rel;
  }

  /** Copies a node, binding every expression inside it. */
  generic<T>(node: T, scopes: readonly ExprScope[], env: Env): T {
    const map = (v: unknown): unknown => {
      if (Array.isArray(v)) return v.map(map);
      if (v === null || typeof v !== 'object') return v;
      const n = v as { kind?: string };
      if (n.kind === undefined) return v;
      if (isExpr(n as { kind: string })) return this.expr(n as Expr, scopes, env);
      return this.generic(n, scopes, env);
    };
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(node as object)) out[k] = k === 'span' ? v : map(v);
    return out as T;
  }

  /** Checks a column reference against the scopes (innermost last); marks the columns scans read. */
  column(ref: ColumnRef, scopes: readonly ExprScope[]): Expr {
    const parts = ref.parts.map((p) => lower(p.name));
    let uncertain = false;
    if (parts.length >= 2) {
      for (let s = scopes.length - 1; s >= 0; s--) {
        const scope = scopes[s]!;
        for (let k = Math.min(parts.length - 1, 4); k >= 1; k--) {
          const entry = scope.entries.find((e) => matchesQualifier(e, parts.slice(0, k)));
          if (entry === undefined) continue;
          const internal = caseResolved(entry, ref.parts[k]!);
          if (internal !== undefined) {
            markColumn(entry, internal);
            const head = k === 1 || entry.aliasIdent === undefined ? ref.parts.slice(0, k) : [entry.aliasIdent];
            return { ...ref, parts: [...head, ident(internal, ref.parts[k]!.span, true), ...ref.parts.slice(k + 1)] };
          }
          const col = parts[k]!;
          if (entry.complete && !entry.columns.includes(col)) throw floeError('UNDEFINED_COLUMN', { name: columnText(ref) });
          markColumn(entry, col);
          if (k === 1 || entry.aliasIdent === undefined) return ref;
          return { ...ref, parts: [entry.aliasIdent, ...ref.parts.slice(k)] };
        }
        const owners = scope.entries.filter((e) => e.columns.includes(parts[0]!) || e.exact?.has(parts[0]!) === true);
        if (owners.length > 0) return ownedRef(ref, owners);
        if (scope.entries.some((e) => !e.complete)) uncertain = true;
      }
      if (!uncertain) throw floeError('UNDEFINED_COLUMN', { name: columnText(ref) });
      return ref;
    }
    const name = parts[0]!;
    for (let s = scopes.length - 1; s >= 0; s--) {
      const scope = scopes[s]!;
      const owners = scope.entries.filter((e) => e.columns.includes(name) || e.exact?.has(name) === true);
      if (owners.length > 0) return ownedRef(ref, owners);
      if (scope.entries.some((e) => !e.complete)) uncertain = true;
      if (scope.aliasNames.has(name)) return ref;
    }
    if (uncertain || PSEUDO_COLUMNS.has(name)) return ref;
    throw floeError('UNDEFINED_COLUMN', { name: columnText(ref) });
  }

  // ---------------------------------------------------------------- predicate push-down

  /** Records the conjuncts of `predicate` that constrain one column of one scan in `targets`. */
  pushPredicates(predicate: Expr, targets: readonly FromEntry[], visible: readonly FromEntry[]): void {
    if (targets.every((t) => t.scan === undefined)) return;
    const locate = (e: Expr): { scan: ScanState; field: NestedField } | undefined => {
      if (e.kind !== 'ColumnRef' || e.parts.length > 2) return undefined;
      const parts = e.parts.map((p) => lower(p.name));
      const col = parts[parts.length - 1]!;
      const candidates = parts.length === 2 ? visible.filter((v) => v.alias === parts[0]) : visible.filter((v) => v.columns.includes(col) || !v.complete);
      if (candidates.length !== 1) return undefined;
      const entry = candidates[0]!;
      if (!targets.includes(entry) || entry.scan === undefined) return undefined;
      const i = entry.columns.indexOf(col);
      const id = entry.fieldIds[i];
      const field = entry.scan.fields.find((f) => f.id === id);
      return field === undefined || !isPrimitive(field.type) ? undefined : { scan: entry.scan, field };
    };
    for (const c of conjuncts(predicate)) {
      switch (c.kind) {
        case 'Binary': {
          if (!['=', '<>', '<', '<=', '>', '>='].includes(c.op)) break;
          const op = c.op as '=' | '<>' | '<' | '<=' | '>' | '>=';
          const l = locate(c.left);
          const r = l === undefined ? locate(c.right) : undefined;
          const target = l ?? r;
          if (target === undefined || !isPrimitive(target.field.type)) break;
          const value = literalForType(l !== undefined ? c.right : c.left, target.field.type);
          if (value === undefined) break;
          target.scan.predicates.push({ kind: 'compare', fieldId: target.field.id, op: l !== undefined ? op : flipComparison(op), value });
          break;
        }
        case 'Between': {
          if (c.not || c.symmetric) break;
          const target = locate(c.expr);
          if (target === undefined || !isPrimitive(target.field.type)) break;
          const low = literalForType(c.low, target.field.type);
          const high = literalForType(c.high, target.field.type);
          if (low !== undefined) target.scan.predicates.push({ kind: 'compare', fieldId: target.field.id, op: '>=', value: low });
          if (high !== undefined) target.scan.predicates.push({ kind: 'compare', fieldId: target.field.id, op: '<=', value: high });
          break;
        }
        case 'InList': {
          if (c.not) break;
          const target = locate(c.expr);
          if (target === undefined || !isPrimitive(target.field.type)) break;
          const type = target.field.type;
          const values = c.list.map((x) => literalForType(x, type));
          if (values.every((v) => v !== undefined)) target.scan.predicates.push({ kind: 'in', fieldId: target.field.id, values: values as NonNullable<(typeof values)[number]>[] });
          break;
        }
        case 'Like': {
          if (c.not || c.caseInsensitive || c.escape !== undefined || c.pattern.kind !== 'StringLiteral') break;
          const prefix = likePrefix(c.pattern.value);
          const target = locate(c.expr);
          if (prefix === undefined || target === undefined || target.field.type.kind !== 'string') break;
          target.scan.predicates.push({ kind: 'starts-with', fieldId: target.field.id, prefix });
          break;
        }
        case 'Is': {
          if (c.value !== 'NULL') break;
          const target = locate(c.expr);
          if (target !== undefined) target.scan.predicates.push({ kind: 'is-null', fieldId: target.field.id, negated: c.not });
          break;
        }
        default:
          break;
      }
    }
  }
}

// ------------------------------------------------------------------ helpers

/** A table name that reads as a file path or URL (`"data.csv"`, `"/etc/passwd"`, `"s3://b/k"`). */
export function looksLikeFilePath(name: string): boolean {
  return /[/\\]|^[a-z][a-z0-9+.-]*:/i.test(name) || /\.(csv|tsv|tbl|parquet|json|jsonl|ndjson|txt|gz|zst|bz2|xz|db|duckdb|sqlite3?|arrow|ipc|feather|avro|orc|xlsx?)$/i.test(name);
}

/**
 * `EXISTS (SELECT * FROM t …)` only asks whether a row exists: select `1` instead of `*` so the
 * scan reads no columns it does not filter on (TPC-H q4, q21, q22).
 */
function existsBody(rel: Relation): Relation {
  if (rel.kind !== 'Project' || rel.items.length === 0 || !rel.items.every((i) => i.kind === 'Star')) return rel;
  const one = make('SelectExpr', rel.span, { expr: make('NumberLiteral', rel.span, { text: '1' }), alias: undefined });
  return { ...rel, items: [one] };
}

/**
 * Makes a derived table (or view) entry pass predicates through to its scan when its query is
 * `SELECT <columns or *> FROM scan [WHERE …]`: no aggregate, window, DISTINCT, ORDER BY or LIMIT,
 * so filtering its output by a column equals filtering the scan's rows by that column (and pruning
 * a file that holds no such row changes nothing).
 */
function withPassThrough(entry: FromEntry, inner: Bound): FromEntry {
  const project = inner.rel;
  if (project.kind !== 'Project') return entry;
  let below = project.input;
  if (below.kind === 'Filter' && below.clause === 'WHERE') below = below.input;
  const source = inner.inner.length === 1 ? inner.inner[0] : undefined;
  if (below.kind !== 'Scan' || source?.scan === undefined || source.passThrough === true) return entry;
  const fieldIds: (number | undefined)[] = [];
  for (const item of project.items) {
    if (item.kind === 'Star') {
      if (item.exclude.length > 0 || item.qualifier.length > 1) return entry;
      fieldIds.push(...source.fieldIds);
      continue;
    }
    const e = item.expr;
    const direct = e.kind === 'ColumnRef' && (e.parts.length === 1 || (e.parts.length === 2 && lower(e.parts[0]!.name) === source.alias));
    const i = direct ? source.columns.indexOf(lower(e.parts[e.parts.length - 1]!.name)) : -1;
    fieldIds.push(i >= 0 ? source.fieldIds[i] : undefined);
  }
  if (fieldIds.length !== entry.columns.length) return entry;
  return { ...entry, scan: source.scan, fieldIds, passThrough: true };
}

/**
 * An unqualified reference whose first part `owners` have: marks the column read, and maps a quoted
 * exact name of a case-colliding column onto its internal column.
 */
function ownedRef(ref: ColumnRef, owners: readonly FromEntry[]): ColumnRef {
  const first = ref.parts[0]!;
  const colliding = owners.filter((o) => o.exact?.has(lower(first.name)) === true);
  if (colliding.length === 0) {
    for (const o of owners) markColumn(o, lower(first.name));
    return ref;
  }
  if (owners.length > 1) throw floeError('AMBIGUOUS_COLUMN', { name: first.name, candidates: 'in more than one table of FROM' });
  const internal = caseResolved(colliding[0]!, first)!;
  markColumn(colliding[0]!, internal);
  return { ...ref, parts: [ident(internal, first.span, true), ...ref.parts.slice(1)] };
}

/**
 * `*` over entries with case-colliding columns, spelled out: each column by its internal name, output
 * under its exact Iceberg name (DuckDB would see the internal names otherwise).
 */
function expandStar(item: SelectItem & { kind: 'Star' }, entries: readonly FromEntry[]): readonly SelectItem[] | undefined {
  let from = entries;
  if (item.qualifier.length > 0) {
    const q = item.qualifier.map((x) => lower(x.name));
    from = entries.filter((e) => matchesQualifier(e, q));
  }
  if (!from.some((e) => e.exact !== undefined) || from.some((e) => !e.complete)) return undefined;
  const exclude = new Set(item.exclude.map((x) => lower(x.name)));
  const out: SelectItem[] = [];
  for (const e of from) {
    e.columns.forEach((c, i) => {
      const name = e.display?.[i] ?? c;
      if (exclude.has(lower(name)) || exclude.has(c)) return;
      const parts = e.aliasIdent === undefined ? [ident(c, item.span, true)] : [e.aliasIdent, ident(c, item.span, true)];
      out.push(make('SelectExpr', item.span, { expr: make('ColumnRef', item.span, { parts }), alias: ident(name, item.span, true) }));
    });
  }
  return out;
}

function plainEntry(alias: Ident | undefined, out: ColumnSet): FromEntry {
  return { alias: alias === undefined ? undefined : lower(alias.name), aliasIdent: alias, tableName: undefined, columns: out.names, complete: out.complete, scan: undefined, fieldIds: [] };
}

function scanEntry(alias: TableAlias, tableName: TableName | undefined, out: ColumnSet, scan: ScanState | undefined, fieldIds: readonly (number | undefined)[]): FromEntry {
  return { alias: lower(alias.name.name), aliasIdent: alias.name, tableName, columns: out.names, complete: out.complete, scan, fieldIds };
}

function placeholderScan(rel: Scan, placeholder: string, alias: TableAlias): Scan {
  const table: QualifiedName = make('QualifiedName', rel.table.span, { parts: [ident(placeholder, rel.table.span)] });
  return { ...rel, table, alias, timeTravel: undefined };
}

/** Applies `AS t(a, b)` column renames to an output column set. */
function renamed(out: ColumnSet, alias: TableAlias | undefined): ColumnSet {
  if (alias === undefined || alias.columns.length === 0) return out;
  const names = [...out.names];
  alias.columns.forEach((c, i) => {
    names[i] = lower(c.name);
  });
  return { names, complete: out.complete || alias.columns.length >= out.names.length };
}

/** Whether a qualifier (`t`, `s.t`, `c.s.t`) names the entry. */
function matchesQualifier(e: FromEntry, qualifier: readonly string[]): boolean {
  if (qualifier.length === 1) return e.alias !== undefined && e.alias === qualifier[0];
  if (e.tableName === undefined) return false;
  const full = [e.tableName.catalog, ...e.tableName.namespace, e.tableName.name].map(lower);
  if (qualifier.length > full.length) return false;
  const tail = full.slice(full.length - qualifier.length);
  return tail.every((p, i) => p === qualifier[i]);
}

function markColumn(e: FromEntry, col: string): void {
  if (e.scan === undefined) return;
  const i = e.columns.indexOf(col);
  const id = e.fieldIds[i];
  if (id !== undefined) e.scan.used.add(id);
}

function markAll(e: FromEntry): void {
  // `*` over a pass-through derived table reads only what its own select list reads.
  if (e.scan !== undefined && e.passThrough !== true) e.scan.all = true;
}

/** The snapshot selector a time-travel clause denotes. */
export function snapshotSelector(tt: TimeTravel | undefined, metadata: TableMetadata): SnapshotSelector {
  if (tt === undefined) return { kind: 'current' };
  if (tt.kind === 'AsOfVersion') {
    const v = tt.version;
    if (v.kind === 'NumberLiteral' && /^\d+$/.test(v.text)) return { kind: 'snapshot-id', snapshotId: BigInt(v.text) };
    if (v.kind === 'StringLiteral') {
      if (!metadata.refs.has(v.value) && /^\d+$/.test(v.value)) return { kind: 'snapshot-id', snapshotId: BigInt(v.value) };
      return { kind: 'ref', name: v.value };
    }
    throw floeError('INVALID_PARAMETER', { name: 'FOR VERSION AS OF', detail: 'expected a snapshot id or a branch or tag name' });
  }
  const t = tt.timestamp;
  let text: string | undefined;
  if (t.kind === 'StringLiteral') text = t.value;
  else if (t.kind === 'TypedLiteral' && (t.type === 'timestamp' || t.type === 'timestamptz' || t.type === 'date')) text = t.value;
  else if (t.kind === 'Cast' && t.expr.kind === 'StringLiteral') text = t.expr.value;
  if (text !== undefined) {
    try {
      const { micros } = timestampMicros(text);
      return { kind: 'timestamp', timestampMs: Number(micros / 1000n) };
    } catch {
      // fall through to the error below
    }
  }
  throw floeError('INVALID_PARAMETER', { name: 'FOR TIMESTAMP AS OF', detail: "expected a timestamp literal such as TIMESTAMP '2024-05-01 12:00:00' (UTC unless an offset is given)" });
}

/**
 * The snapshot and read schema of a scan. Reading a snapshot id, a tag or a time uses the schema the
 * snapshot was written with; the current state and branches use the table's current schema (as
 * Iceberg's Java readers do).
 */
function chooseSnapshot(metadata: TableMetadata, tt: TimeTravel | undefined, name: TableName): { selector: SnapshotSelector; snapshot: Snapshot | undefined; schema: Schema } {
  const selector = snapshotSelector(tt, metadata);
  let snapshot: Snapshot | undefined;
  try {
    snapshot = resolveSnapshot(metadata, selector);
  } catch (e) {
    if (e instanceof IcebergError) throw floeError('NOT_FOUND', { what: `${e.message} in table ${formatTableName(name)}` });
    throw e;
  }
  const isBranch = selector.kind === 'ref' && metadata.refs.get(selector.name)?.type === 'branch';
  const useSnapshotSchema = selector.kind !== 'current' && !isBranch && snapshot?.schemaId !== undefined;
  const schema = useSnapshotSchema ? (schemaById(metadata, snapshot!.schemaId!) ?? currentSchema(metadata)) : currentSchema(metadata);
  return { selector, snapshot, schema };
}

/**
 * Binds a query (the body of a `Query` statement, or the query part of INSERT … SELECT and
 * CREATE TABLE AS). Checks isolation first (42501), then names (42P01, 42703). Returns the table
 * names still unknown, or the bound query.
 */
export function bindQuery(query: Relation, request: BindRequest): BindResult {
  checkNode(query);
  const binder = new Binder(request);
  const bound = binder.relation(query, { defaults: request.defaults, outer: [], ctes: new Map(), aliasNames: NO_NAMES, viewStack: [] });
  if (binder.needs.size > 0 || binder.needsNamespaces.size > 0) return { kind: 'needs', tables: [...binder.needs.values()], namespaces: [...binder.needsNamespaces.values()] };
  const scans = binder.scans.map(({ state, table, metadata, selector, snapshot, schema, locationMappings }): BoundScan => {
    let columns: readonly number[] | 'all';
    if (state.all) columns = 'all';
    else {
      const used = schema.fields.filter((f) => state.used.has(f.id)).map((f) => f.id);
      // A scan must yield at least one column (count(*) reads none): take the first.
      columns = used.length > 0 ? used : schema.fields.length > 0 ? [schema.fields[0]!.id] : 'all';
    }
    return { index: state.index, placeholder: scanPlaceholder(state.index), table, metadata, selector, snapshot, schema, columns, predicates: state.predicates, ...(locationMappings !== undefined ? { locationMappings } : {}) };
  });
  const features = planFeatures(make('Query', bound.rel.span, { body: bound.rel }));
  return { kind: 'bound', query: { relation: bound.rel, scans, systemScans: binder.systemScans, features } };
}

/** The query a statement reads, when it has one: its body, an EXPLAIN's query, INSERT … SELECT's source, CTAS's and CREATE VIEW's query. */
export function statementQuery(statement: Statement): Relation | undefined {
  switch (statement.kind) {
    case 'Query': return statement.body;
    case 'Explain': return statementQuery(statement.statement);
    case 'Insert': return statement.source;
    case 'CreateTableAs': case 'CreateView': return statement.query;
    default: return undefined;
  }
}

/**
 * Checks a statement's isolation and binds the query it reads (see `statementQuery`): a SELECT, an
 * EXPLAIN of one, the source of INSERT … SELECT, the query of CREATE TABLE AS and of CREATE VIEW (so
 * a view naming a missing table or column is refused when it is created). Other statements are
 * UNSUPPORTED_STATEMENT here; the write path resolves its own targets.
 */
export function bindStatement(statement: Statement, request: BindRequest): BindResult {
  checkIsolation(statement);
  const query = statementQuery(statement);
  if (query === undefined) throw floeError('UNSUPPORTED_STATEMENT', { what: `binding ${statement.kind} as a query` });
  return bindQuery(query, request);
}
