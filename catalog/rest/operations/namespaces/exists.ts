/** Whether a namespace exists (HEAD). */
import type { CatalogContext, Namespace } from '../../context.js';
import { namespaceKey, validateNamespace } from '../../context.js';
import type { CatalogDeps } from '../../deps.js';
import { requireCatalog } from '../../resolve.js';
import { findNamespace } from '../../store.js';

export async function namespaceExists(deps: CatalogDeps, ctx: CatalogContext, catalogName: string, ns: Namespace): Promise<boolean> {
  validateNamespace(ns);
  const catalog = await requireCatalog(deps.store, ctx, catalogName);
  return (await findNamespace(deps.store, catalog.id, namespaceKey(ns))) !== undefined;
}
