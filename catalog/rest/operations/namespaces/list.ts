/** List the children of a namespace (or the top level), in keyset pages. */
import type { CatalogContext, Namespace } from '../../context.js';
import { namespaceKey, validateNamespace } from '../../context.js';
import type { CatalogDeps } from '../../deps.js';
import { keysetPage, type Page, type PageRequest } from '../../paging.js';
import { requireCatalog, requireNamespace } from '../../resolve.js';
import { listNamespaceRecords } from '../../store.js';

export async function listNamespaces(deps: CatalogDeps, ctx: CatalogContext, catalogName: string, parent: Namespace | undefined, page: PageRequest = {}): Promise<Page<Namespace>> {
  const catalog = await requireCatalog(deps.store, ctx, catalogName);
  const parentKey = parent === undefined || parent.length === 0 ? '' : namespaceKey(validateNamespace(parent));
  if (parentKey !== '') await requireNamespace(deps.store, catalog, parent as Namespace);
  const p = await keysetPage(page, (after, limit) => listNamespaceRecords(deps.store, catalog.id, parentKey, after, limit), (n) => n.key);
  return { items: p.items.map((n) => n.namespace), ...(p.nextPageToken !== undefined ? { nextPageToken: p.nextPageToken } : {}) };
}
