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

/** `catalog.namespace.table` for messages and history (parts quoted when needed). */
export function formatTableName(n: TableName): string {
  return [n.catalog, ...n.namespace, n.name].map(partSql).join('.');
}

/**
 * Resolves a reference: `t` → current catalog and schema; `s.t` → current catalog; `c.s.t`;
 * `c.a.b.t` names a nested namespace `a.b`. A missing default is UNDEFINED_SCHEMA / UNDEFINED_CATALOG.
 */
export function resolveTableName(ref: QualifiedName, defaults: NameDefaults): TableName {
  const parts = ref.parts.map(identName);
  const name = parts[parts.length - 1]!;
  if (parts.length === 1) {
    if (defaults.catalog === undefined) throw floeError('UNDEFINED_CATALOG', { name: '(no current catalog; run USE <catalog>.<schema>)' });
    if (defaults.namespace === undefined || defaults.namespace.length === 0) throw floeError('UNDEFINED_SCHEMA', { name: '(no current schema; run USE <catalog>.<schema>)' });
    return { catalog: defaults.catalog, namespace: defaults.namespace, name };
  }
  if (parts.length === 2) {
    if (defaults.catalog === undefined) throw floeError('UNDEFINED_CATALOG', { name: '(no current catalog; run USE <catalog>.<schema>)' });
    return { catalog: defaults.catalog, namespace: [parts[0]!], name };
  }
  return { catalog: parts[0]!, namespace: parts.slice(1, -1), name };
}

/** Whether a resolved name is one of Floe's system tables (`system.x` or `<catalog>.system.x`). */
export function isSystemTableName(n: TableName): boolean {
  return n.namespace.length === 1 && n.namespace[0] === SYSTEM_SCHEMA;
}
