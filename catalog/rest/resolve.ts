/**
 * Lookups every operation starts with: the caller's catalog (only the caller's tenant is searched,
 * so another tenant's catalog is indistinguishable from a missing one) and existing namespaces.
 */
import type { SqlExecutor } from '../store/meta-store.js';
import type { CatalogContext, Namespace } from './context.js';
import { namespaceKey } from './context.js';
import { noSuchNamespace, noSuchWarehouse } from './errors.js';
import { findCatalog, findNamespace, type CatalogRecord, type NamespaceRecord } from './store.js';

export async function requireCatalog(db: SqlExecutor, ctx: CatalogContext, name: string): Promise<CatalogRecord> {
  const c = await findCatalog(db, ctx.tenantId, name);
  if (c === undefined) throw noSuchWarehouse(name);
  return c;
}

export async function requireNamespace(db: SqlExecutor, catalog: CatalogRecord, ns: Namespace, lock: '' | 'FOR UPDATE' | 'FOR SHARE' = ''): Promise<NamespaceRecord> {
  const n = await findNamespace(db, catalog.id, namespaceKey(ns), lock);
  if (n === undefined) throw noSuchNamespace(ns);
  return n;
}

/** A path segment for a location: the name with `/` and `%` escaped, so it is one directory. */
export function locationSegment(name: string): string {
  return name.replace(/[%/\\]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase().padStart(2, '0')}`);
}

/**
 * Default location of a new table or view: `<warehouse>/<ns levels>/<name>-<uuid>`. The uuid
 * suffix (as Trino does) keeps a re-created table of the same name from sharing a folder with the
 * dropped one, so purging one can never delete the other's files.
 */
export function defaultEntityLocation(catalog: CatalogRecord, ns: Namespace, name: string, uuid: string): string {
  return `${defaultNamespaceLocation(catalog, ns)}/${locationSegment(name)}-${uuid.replaceAll('-', '')}`;
}

/** A namespace's folder, where its tables and views go by default: `<warehouse>/<ns levels>`. */
export function defaultNamespaceLocation(catalog: CatalogRecord, ns: Namespace): string {
  return `${catalog.warehouseLocation.replace(/\/+$/, '')}/${ns.map(locationSegment).join('/')}`;
}
