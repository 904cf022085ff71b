/** List the views of a namespace, in keyset pages. */
import type { CatalogContext, EntityIdent, Namespace } from '../../context.js';
import { namespaceKey, validateNamespace } from '../../context.js';
import type { CatalogDeps } from '../../deps.js';
import { keysetPage, type Page, type PageRequest } from '../../paging.js';
import { requireCatalog, requireNamespace } from '../../resolve.js';
import { listEntityRecords } from '../../store.js';

export async function listViews(deps: CatalogDeps, ctx: CatalogContext, catalogName: string, ns: Namespace, page: PageRequest = {}): Promise<Page<EntityIdent>> {
  validateNamespace(ns);
  const catalog = await requireCatalog(deps.store, ctx, catalogName);
  await requireNamespace(deps.store, catalog, ns);
  const p = await keysetPage(page, (after, limit) => listEntityRecords(deps.store, catalog.id, namespaceKey(ns), 'view', after, limit), (e) => e.name);
  return { items: p.items.map((e) => ({ namespace: ns, name: e.name })), ...(p.nextPageToken !== undefined ? { nextPageToken: p.nextPageToken } : {}) };
}
