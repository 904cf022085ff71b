/**
 * Namespace operations: list (children of a parent, keyset pages), create (the parent must exist,
 * as in Polaris), load, exists, drop (only when empty), update properties.
 */
import type { CatalogContext, Namespace } from '../context.js';
import { namespaceKey, validateNamespace } from '../context.js';
import type { CatalogDeps } from '../deps.js';
import { CatalogError } from '../errors.js';
import { keysetPage, type Page, type PageRequest } from '../paging.js';
import { requireCatalog, requireNamespace } from '../resolve.js';
import { findNamespace, listNamespaceRecords, objectOf, type NamespaceRecord } from '../store.js';

export async function listNamespaces(deps: CatalogDeps, ctx: CatalogContext, catalogName: string, parent: Namespace | undefined, page: PageRequest = {}): Promise<Page<Namespace>> {
  const catalog = await requireCatalog(deps.store, ctx, catalogName);
  const parentKey = parent === undefined || parent.length === 0 ? '' : namespaceKey(validateNamespace(parent));
  if (parentKey !== '') await requireNamespace(deps.store, catalog, parent as Namespace);
  const p = await keysetPage(page, (after, limit) => listNamespaceRecords(deps.store, catalog.id, parentKey, after, limit), (n) => n.key);
  return { items: p.items.map((n) => n.namespace), ...(p.nextPageToken !== undefined ? { nextPageToken: p.nextPageToken } : {}) };
}

export async function createNamespace(deps: CatalogDeps, ctx: CatalogContext, catalogName: string, ns: Namespace, properties: ReadonlyMap<string, string> = new Map()): Promise<NamespaceRecord> {
  // Validation
  validateNamespace(ns);
  const catalog = await requireCatalog(deps.store, ctx, catalogName);
  // Business logic: the parent is share-locked so a concurrent drop of it waits for us.
  return deps.store.transaction(async (tx) => {
    const parent = ns.slice(0, -1);
    if (parent.length > 0 && (await findNamespace(tx, catalog.id, namespaceKey(parent), 'FOR SHARE')) === undefined) {
      // The spec documents no 404 for this route: a missing parent is the request's fault (400).
      throw new CatalogError('BadRequestException', `Cannot create namespace ${ns.join('.')}: parent namespace ${parent.join('.')} does not exist`);
    }
    const r = await tx.query(
      `INSERT INTO catalog_namespaces (tenant_id, catalog_id, namespace_key, levels, parent_key, properties)
       VALUES ($1, $2, $3, $4, $5, $6::jsonb) ON CONFLICT (catalog_id, namespace_key) DO NOTHING RETURNING namespace_key`,
      [ctx.tenantId, catalog.id, namespaceKey(ns), [...ns], namespaceKey(parent), JSON.stringify(objectOf(properties))],
    );
    if (r.rows.length === 0) throw new CatalogError('AlreadyExistsException', `Namespace already exists: ${ns.join('.')}`);
    return { namespace: ns, key: namespaceKey(ns), properties };
  });
}

export async function loadNamespace(deps: CatalogDeps, ctx: CatalogContext, catalogName: string, ns: Namespace): Promise<NamespaceRecord> {
  validateNamespace(ns);
  const catalog = await requireCatalog(deps.store, ctx, catalogName);
  return requireNamespace(deps.store, catalog, ns);
}

export async function namespaceExists(deps: CatalogDeps, ctx: CatalogContext, catalogName: string, ns: Namespace): Promise<boolean> {
  validateNamespace(ns);
  const catalog = await requireCatalog(deps.store, ctx, catalogName);
  return (await findNamespace(deps.store, catalog.id, namespaceKey(ns))) !== undefined;
}

/** Drops an empty namespace; 409 `NamespaceNotEmptyException` while it holds tables, views or children. */
export async function dropNamespace(deps: CatalogDeps, ctx: CatalogContext, catalogName: string, ns: Namespace): Promise<void> {
  validateNamespace(ns);
  const catalog = await requireCatalog(deps.store, ctx, catalogName);
  await deps.store.transaction(async (tx) => {
    await requireNamespace(tx, catalog, ns, 'FOR UPDATE');
    const key = namespaceKey(ns);
    const busy = await tx.query(
      `SELECT 1 FROM catalog_entities WHERE catalog_id = $1 AND namespace_key = $2
       UNION ALL SELECT 1 FROM catalog_namespaces WHERE catalog_id = $1 AND parent_key = $2 LIMIT 1`,
      [catalog.id, key],
    );
    if (busy.rows.length > 0) throw new CatalogError('NamespaceNotEmptyException', `Namespace ${ns.join('.')} is not empty`);
    await tx.query('DELETE FROM catalog_namespaces WHERE catalog_id = $1 AND namespace_key = $2', [catalog.id, key]);
  });
}

export interface NamespacePropertiesChange {
  readonly updated: readonly string[];
  readonly removed: readonly string[];
  /** Removals that named keys the namespace did not have. */
  readonly missing: readonly string[];
}

/** Sets and removes properties; 422 when a key is both set and removed. */
export async function updateNamespaceProperties(
  deps: CatalogDeps, ctx: CatalogContext, catalogName: string, ns: Namespace, removals: readonly string[], updates: ReadonlyMap<string, string>,
): Promise<NamespacePropertiesChange> {
  // Validation
  validateNamespace(ns);
  const both = removals.filter((k) => updates.has(k));
  if (both.length > 0) throw new CatalogError('UnprocessableEntityException', `Cannot set and remove the same properties: ${both.join(', ')}`);
  const catalog = await requireCatalog(deps.store, ctx, catalogName);
  // Business logic
  return deps.store.transaction(async (tx) => {
    const current = await requireNamespace(tx, catalog, ns, 'FOR UPDATE');
    const props = new Map(current.properties);
    const removed: string[] = [];
    const missing: string[] = [];
    for (const k of removals) {
      if (props.delete(k)) removed.push(k);
      else missing.push(k);
    }
    for (const [k, v] of updates) props.set(k, v);
    await tx.query('UPDATE catalog_namespaces SET properties = $3::jsonb, updated_at = now() WHERE catalog_id = $1 AND namespace_key = $2', [catalog.id, current.key, JSON.stringify(objectOf(props))]);
    return { updated: [...updates.keys()], removed, missing };
  });
}

