/**
 * Table names as the binder resolves them: `catalog.namespace….table`, with the session's current
 * catalog and schema filling the parts a reference leaves out. Unquoted identifiers are folded to
 * lower case (as Trino and PostgreSQL do); quoted ones keep their case.
 */
import type { Ident, QualifiedName } from '../../grammar/index.js';
import { floeError } from '../../grammar/index.js';

/** A fully resolved table (or view, or system table) name. */
export interface TableName {
  readonly catalog: string;
  /** One or more levels (`sales` or `sales.emea`). */
  readonly namespace: readonly string[];
  readonly name: string;
}

/** The schema every catalog reserves for Floe's system tables (`system.query_history`). */
export const SYSTEM_SCHEMA = 'system';

/** Where unqualified names resolve: the session's current catalog and schema. */
export interface NameDefaults {
  readonly catalog: string | undefined;
  readonly namespace: readonly string[] | undefined;
}

/** An identifier's name after case folding. */
export function identName(id: Ident): string {
  return id.quoted ? id.name : id.name.toLowerCase();
}

/** A stable key for maps of catalog facts (unambiguous even when names contain dots). */
export function tableKey(n: TableName): string {
  return JSON.stringify([n.catalog, ...n.namespace, n.name]);
}

function partSql(s: string): string {
  return /^[a-z_][a-z0-9_$]*$/.test(s) ? s : `"${s.replaceAll('"', '""')}"`;
}

/**
 * A namespace as `system.tables`, `GET /api/tables` and SHOW SCHEMAS show it: its levels joined by
 * dots, a level quoted only when it holds a dot or a double quote (so `a.b` is two levels and
 * `"a.b"` one, as SQL reads them; other names appear as stored).
 */
export function formatNamespacePath(levels: readonly string[]): string {
  return levels.map((l) => (/[."]/.test(l) || l === '' ? `"${l.replaceAll('"', '""')}"` : l)).join('.');
}

/** `catalog.namespace.table` for messages and history (parts quoted when needed). */
export function formatTableName(n: TableName): string {
  return [n.catalog, ...n.namespace, n.name].map(partSql).join('.');
}

/**
 * What the caller has found out about the namespace tree: whether a namespace exists, by
 * `namespaceKey(ref)`. Absent means not asked yet. Names of three or more parts need it (below).
 */
export type NamespaceFacts = ReadonlyMap<string, boolean>;

/** A namespace of a catalog. */
export interface NamespaceRef {
  readonly catalog: string;
  readonly namespace: readonly string[];
}

/** A stable key for `NamespaceFacts` (unambiguous even when levels contain dots). */
export function namespaceKey(n: NamespaceRef): string {
  return JSON.stringify([n.catalog, ...n.namespace]);
}

/** A name's catalog and namespace, or the one namespace whose existence decides it. */
export type PathResolution =
  | { readonly kind: 'resolved'; readonly catalog: string; readonly namespace: readonly string[] }
  | { readonly kind: 'needs'; readonly namespace: NamespaceRef };

/**
 * Resolves a namespace path `p0.p1…` (a schema name, or a table name without its last part).
 * Each part is one level, so a level containing a dot is written quoted (`"a.b"`).
 *
 * - One part is a namespace of the current catalog (`s.t`).
 * - Two or more parts read two ways: catalog `p0` with namespace `p1…` (the long-standing
 *   `catalog.schema.table`), or namespace `p0.p1…` of the current catalog (a nested namespace, as
 *   Spark and PyIceberg create). Whichever names an existing namespace wins; when both do, the
 *   name is ambiguous (AMBIGUOUS_NAME) rather than guessed; when neither does, it is the catalog
 *   reading, whose errors say what is missing. Without `facts` (or a current catalog), always the
 *   catalog reading.
 */
export function resolveNamespacePath(parts: readonly string[], currentCatalog: string | undefined, facts: NamespaceFacts | undefined, table?: string): PathResolution {
  if (parts.length === 1) {
    if (currentCatalog === undefined) throw floeError('UNDEFINED_CATALOG', { name: '(no current catalog; run USE <catalog>.<schema>)' });
    return { kind: 'resolved', catalog: currentCatalog, namespace: parts };
  }
  const inCatalog: NamespaceRef = { catalog: parts[0]!, namespace: parts.slice(1) };
  const resolved = (n: NamespaceRef): PathResolution => ({ kind: 'resolved', catalog: n.catalog, namespace: n.namespace });
  if (facts === undefined || currentCatalog === undefined) return resolved(inCatalog);
  const nested: NamespaceRef = { catalog: currentCatalog, namespace: parts };
  const nestedExists = facts.get(namespaceKey(nested));
  if (nestedExists === undefined) return { kind: 'needs', namespace: nested };
  if (!nestedExists) return resolved(inCatalog);
  const inCatalogExists = facts.get(namespaceKey(inCatalog));
  if (inCatalogExists === undefined) return { kind: 'needs', namespace: inCatalog };
  if (!inCatalogExists) return resolved(nested);
  const path = (levels: readonly string[]) => levels.map(partSql).join('.');
  const written = (levels: readonly string[]) => path(table === undefined ? levels : [...levels, table]);
  throw floeError('AMBIGUOUS_NAME', {
    name: written(parts),
    readings: `namespace ${path(inCatalog.namespace)} of catalog ${partSql(inCatalog.catalog)}, and as namespace ${path(parts)} of the current catalog ${partSql(currentCatalog)}`,
    remedy: `write ${written([currentCatalog, ...parts])} for the second, or make ${partSql(inCatalog.catalog)} the current catalog for the first`,
  });
}

/** A table reference resolved, or the namespace whose existence decides it. */
export type TableResolution =
  | { readonly kind: 'resolved'; readonly name: TableName }
  | { readonly kind: 'needs'; readonly namespace: NamespaceRef };

/**
 * Resolves a reference: `t` → current catalog and schema; `s.t` → current catalog; longer names
 * through `resolveNamespacePath` (`c.s.t`, `c.a.b.t`, or `a.b.t` for a nested namespace `a.b` of
 * the current catalog). A missing default is UNDEFINED_SCHEMA / UNDEFINED_CATALOG.
 */
export function resolveTableRef(ref: QualifiedName, defaults: NameDefaults, facts?: NamespaceFacts): TableResolution {
  const parts = ref.parts.map(identName);
  const name = parts[parts.length - 1]!;
  if (parts.length === 1) {
    if (defaults.catalog === undefined) throw floeError('UNDEFINED_CATALOG', { name: '(no current catalog; run USE <catalog>.<schema>)' });
    if (defaults.namespace === undefined || defaults.namespace.length === 0) throw floeError('UNDEFINED_SCHEMA', { name: '(no current schema; run USE <catalog>.<schema>)' });
    return { kind: 'resolved', name: { catalog: defaults.catalog, namespace: defaults.namespace, name } };
  }
  const path = resolveNamespacePath(parts.slice(0, -1), defaults.catalog, facts, name);
  if (path.kind === 'needs') return path;
  return { kind: 'resolved', name: { catalog: path.catalog, namespace: path.namespace, name } };
}

/** `resolveTableRef` without namespace facts: names of three or more parts are `catalog.namespace….table`. */
export function resolveTableName(ref: QualifiedName, defaults: NameDefaults): TableName {
  const r = resolveTableRef(ref, defaults);
  if (r.kind === 'needs') throw new Error('unreachable: no namespace facts, nothing to ask');
  return r.name;
}

/** Whether a resolved name is one of Floe's system tables (`system.x` or `<catalog>.system.x`). */
export function isSystemTableName(n: TableName): boolean {
  return n.namespace.length === 1 && n.namespace[0] === SYSTEM_SCHEMA;
}
