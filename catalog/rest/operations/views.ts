/**
 * View operations: list, create, load, exists, replace (requirements + updates, the view's commit),
 * drop. Views share the table rows (`kind = 'view'`) and the commit discipline: lock the row,
 * check, write a new metadata file, compare-and-swap the pointer.
 */
import type { Schema } from '../../iceberg/schema.js';
import { metadataFileName, metadataFileVersion } from '../../iceberg/table-metadata.js';
import { applyViewUpdates, checkViewRequirements, newViewMetadata, type ViewMetadata, type ViewRequirement, type ViewUpdate, type ViewVersion } from '../../iceberg/view-metadata.js';
import type { CatalogContext, EntityIdent, Namespace } from '../context.js';
import { namespaceKey, qualifiedName, validateEntityName, validateNamespace } from '../context.js';
import type { CatalogDeps } from '../deps.js';
import { CatalogError, noSuchNamespace, noSuchView, toCatalogError } from '../errors.js';
import { readingMetadata, type LoadedView } from '../loaded.js';
import { keysetPage, type Page, type PageRequest } from '../paging.js';
import { defaultEntityLocation, requireCatalog, requireNamespace } from '../resolve.js';
import { deleteEntity, findEntity, insertEntity, listEntityRecords, swapMetadataLocation, type CatalogRecord, type EntityRecord } from '../store.js';
import { alreadyExists, NO_CONFIG, sqlState } from './tables.js';

export interface CreateViewRequest {
  readonly name: string;
  readonly location?: string;
  readonly schema: Schema;
  readonly viewVersion: ViewVersion;
  readonly properties?: ReadonlyMap<string, string>;
}

function viewMetadataLocation(m: ViewMetadata, previous: string | undefined, uuid: string): string {
  const prev = previous === undefined ? -1 : (metadataFileVersion(previous) ?? -1);
  return `${m.location.replace(/\/+$/, '')}/metadata/${metadataFileName(prev + 1, uuid)}`;
}

async function requireView(db: Parameters<typeof findEntity>[0], catalog: CatalogRecord, ident: EntityIdent, lock: '' | 'FOR UPDATE' = ''): Promise<EntityRecord> {
  const row = await findEntity(db, catalog.id, namespaceKey(ident.namespace), ident.name, lock);
  if (row === undefined || row.kind !== 'view') {
    if (row === undefined && (await db.query('SELECT 1 FROM catalog_namespaces WHERE catalog_id = $1 AND namespace_key = $2', [catalog.id, namespaceKey(ident.namespace)])).rows.length === 0) {
      throw noSuchNamespace(ident.namespace);
    }
    throw noSuchView(ident.namespace, ident.name);
  }
  return row;
}

export async function listViews(deps: CatalogDeps, ctx: CatalogContext, catalogName: string, ns: Namespace, page: PageRequest = {}): Promise<Page<EntityIdent>> {
  validateNamespace(ns);
  const catalog = await requireCatalog(deps.store, ctx, catalogName);
  await requireNamespace(deps.store, catalog, ns);
  const p = await keysetPage(page, (after, limit) => listEntityRecords(deps.store, catalog.id, namespaceKey(ns), 'view', after, limit), (e) => e.name);
  return { items: p.items.map((e) => ({ namespace: ns, name: e.name })), ...(p.nextPageToken !== undefined ? { nextPageToken: p.nextPageToken } : {}) };
}

export async function createView(deps: CatalogDeps, ctx: CatalogContext, catalogName: string, ns: Namespace, request: CreateViewRequest): Promise<LoadedView> {
  // Validation
  validateNamespace(ns);
  validateEntityName(request.name, 'view');
  const ident: EntityIdent = { namespace: ns, name: request.name };
  const catalog = await requireCatalog(deps.store, ctx, catalogName);
  await requireNamespace(deps.store, catalog, ns);
  const existing = await findEntity(deps.store, catalog.id, namespaceKey(ns), request.name);
  if (existing !== undefined) throw alreadyExists(ident, existing);
  // Business logic
  const viewUuid = deps.newUuid();
  const metadata = newViewMetadata({
    schema: request.schema,
    viewVersion: request.viewVersion,
    location: (request.location ?? defaultEntityLocation(catalog, ns, request.name, viewUuid)).replace(/\/+$/, ''),
    ...(request.properties !== undefined ? { properties: request.properties } : {}),
    viewUuid,
  });
  const location = viewMetadataLocation(metadata, undefined, deps.newUuid());
  await deps.files.writeView(catalog, location, metadata);
  let row: EntityRecord | undefined;
  try {
    row = await insertEntity(deps.store, { id: viewUuid, tenantId: ctx.tenantId, catalogId: catalog.id, namespaceKey: namespaceKey(ns), name: request.name, kind: 'view', metadataLocation: location });
  } catch (e) {
    await deps.files.discard(catalog, [location]);
    if (sqlState(e) === '23503') throw noSuchNamespace(ns);
    throw e;
  }
  if (row === undefined) {
    await deps.files.discard(catalog, [location]);
    throw new CatalogError('AlreadyExistsException', `View already exists: ${qualifiedName(ident)}`);
  }
  return { catalogId: catalog.id, ident, metadataLocation: location, metadata, config: NO_CONFIG };
}

export async function loadView(deps: CatalogDeps, ctx: CatalogContext, catalogName: string, ident: EntityIdent): Promise<LoadedView> {
  validateNamespace(ident.namespace);
  const catalog = await requireCatalog(deps.store, ctx, catalogName);
  const row = await requireView(deps.store, catalog, ident);
  const metadata = await readingMetadata(deps.files.readView(catalog, row.metadataLocation));
  return { catalogId: catalog.id, ident, metadataLocation: row.metadataLocation, metadata, config: NO_CONFIG };
}

export async function viewExists(deps: CatalogDeps, ctx: CatalogContext, catalogName: string, ident: EntityIdent): Promise<boolean> {
  validateNamespace(ident.namespace);
  const catalog = await requireCatalog(deps.store, ctx, catalogName);
  const row = await findEntity(deps.store, catalog.id, namespaceKey(ident.namespace), ident.name);
  return row !== undefined && row.kind === 'view';
}

/** Replaces a view (its commit): requirements are checked and updates applied under the row lock. */
export async function replaceView(
  deps: CatalogDeps, ctx: CatalogContext, catalogName: string, ident: EntityIdent, requirements: readonly ViewRequirement[], updates: readonly ViewUpdate[],
): Promise<LoadedView> {
  validateNamespace(ident.namespace);
  const catalog = await requireCatalog(deps.store, ctx, catalogName);
  const written: string[] = [];
  let commitSent = false;
  try {
    const result = await deps.store.transaction(async (tx) => {
      const row = await requireView(tx, catalog, ident, 'FOR UPDATE');
      const base = await readingMetadata(deps.files.readView(catalog, row.metadataLocation));
      const failure = checkViewRequirements(base, requirements)[0];
      if (failure !== undefined) throw new CatalogError('CommitFailedException', failure);
      const next = applyViewUpdates(base, updates);
      if (next === base) return { catalogId: catalog.id, ident, metadataLocation: row.metadataLocation, metadata: base, config: NO_CONFIG };
      const location = viewMetadataLocation(next, row.metadataLocation, deps.newUuid());
      written.push(location);
      await deps.files.writeView(catalog, location, next);
      if (!(await swapMetadataLocation(tx, row.id, row.metadataLocation, location))) throw new CatalogError('CommitFailedException', `Commit failed: view ${qualifiedName(ident)} changed concurrently`);
      commitSent = true;
      return { catalogId: catalog.id, ident, metadataLocation: location, metadata: next, config: NO_CONFIG };
    });
    return result;
  } catch (e) {
    const known = toCatalogError(e);
    if (commitSent && known === undefined) throw new CatalogError('CommitStateUnknownException', `Commit state unknown: ${(e as Error).message}`, { cause: e });
    if (written.length > 0) await deps.files.discard(catalog, written);
    throw known ?? e;
  }
}

export async function dropView(deps: CatalogDeps, ctx: CatalogContext, catalogName: string, ident: EntityIdent): Promise<void> {
  validateNamespace(ident.namespace);
  const catalog = await requireCatalog(deps.store, ctx, catalogName);
  await deps.store.transaction(async (tx) => {
    const row = await requireView(tx, catalog, ident, 'FOR UPDATE');
    await deleteEntity(tx, row.id);
  });
}
