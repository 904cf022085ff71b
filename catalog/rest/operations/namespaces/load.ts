/** Load a namespace and its properties. */
import type { CatalogContext, Namespace } from '../../context.js';
import { validateNamespace } from '../../context.js';
import type { CatalogDeps } from '../../deps.js';
import { requireCatalog, requireNamespace } from '../../resolve.js';
import type { NamespaceRecord } from '../../store.js';

export async function loadNamespace(deps: CatalogDeps, ctx: CatalogContext, catalogName: string, ns: Namespace): Promise<NamespaceRecord> {
  validateNamespace(ns);
  const catalog = await requireCatalog(deps.store, ctx, catalogName);
  return requireNamespace(deps.store, catalog, ns);
}
