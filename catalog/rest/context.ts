/**
 * Who is asking and which names they use: the request context every catalog operation takes, and
 * the identifiers of namespaces, tables and views.
 */
import { badRequest } from './errors.js';

/** The caller of a catalog operation. Every store query is scoped to `tenantId`. */
export interface CatalogContext {
  readonly tenantId: string;
  readonly principalId: string;
  /** Tenant roles of the principal; catalog management needs `tenant_admin`. */
  readonly roles: readonly string[];
}

/** A namespace: its levels, outermost first (`['a', 'b']` is `a.b`, `a%1Fb` on the wire). */
export type Namespace = readonly string[];

/** A table or view inside a namespace. */
export interface EntityIdent {
  readonly namespace: Namespace;
  readonly name: string;
}

/** The separator between namespace levels in paths and in stored keys (unit separator, 0x1F). */
export const NAMESPACE_SEPARATOR = '\u001f';

/** The stored key of a namespace: its levels joined by 0x1F. */
export function namespaceKey(ns: Namespace): string {
  return ns.join(NAMESPACE_SEPARATOR);
}

/** The levels of a stored key. */
export function namespaceFromKey(key: string): Namespace {
  return key === '' ? [] : key.split(NAMESPACE_SEPARATOR);
}

/**
 * Checks a namespace from a request: at least one level, no empty level, no level containing the
 * separator (it could not be addressed) or a NUL (PostgreSQL text cannot hold it).
 */
export function validateNamespace(ns: Namespace): Namespace {
  if (ns.length === 0) throw badRequest('Invalid namespace: empty');
  for (const level of ns) {
    if (level === '') throw badRequest(`Invalid namespace: empty level in ${JSON.stringify(ns)}`);
    if (level.includes(NAMESPACE_SEPARATOR) || level.includes('\u0000')) throw badRequest(`Invalid namespace level: ${JSON.stringify(level)}`);
    if (level.length > 255) throw badRequest('Invalid namespace level: longer than 255 characters');
  }
  return ns;
}

/** Checks a table or view name from a request. */
export function validateEntityName(name: string, what: 'table' | 'view'): string {
  if (name === '') throw badRequest(`Invalid ${what} name: empty`);
  if (name.includes('\u0000')) throw badRequest(`Invalid ${what} name: contains NUL`);
  if (name.length > 255) throw badRequest(`Invalid ${what} name: longer than 255 characters`);
  return name;
}

export function qualifiedName(ident: EntityIdent): string {
  return [...ident.namespace, ident.name].join('.');
}

/**
 * PostgreSQL text and jsonb cannot hold U+0000; a request carrying one is refused with 400 before
 * anything is stored (instead of failing inside the store).
 */
export function assertStorableText(value: unknown, what: string): void {
  if (typeof value === 'string') {
    if (value.includes('\u0000')) throw badRequest(`Invalid ${what}: contains the NUL character`);
    return;
  }
  if (value instanceof Map) {
    for (const [k, v] of value) {
      assertStorableText(k, what);
      assertStorableText(v, what);
    }
    return;
  }
  if (Array.isArray(value)) {
    for (const v of value) assertStorableText(v, what);
    return;
  }
  if (typeof value === 'object' && value !== null) {
    for (const [k, v] of Object.entries(value)) {
      assertStorableText(k, what);
      assertStorableText(v, what);
    }
  }
}
