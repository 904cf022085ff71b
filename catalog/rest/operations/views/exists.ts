/** Whether a view exists (HEAD). */
import type { CatalogContext, EntityIdent } from '../../context.js';
import { namespaceKey, validateNamespace } from '../../context.js';
import type { CatalogDeps } from '../../deps.js';
import { requireCatalog } from '../../resolve.js';
import { findEntity } from '../../store.js';

export async function viewExists(deps: CatalogDeps, ctx: CatalogContext, catalogName: string, ident: EntityIdent): Promise<boolean> {
  validateNamespace(ident.namespace);
  const catalog = await requireCatalog(deps.store, ctx, catalogName);
  const row = await findEntity(deps.store, catalog.id, namespaceKey(ident.namespace), ident.name);
  return row !== undefined && row.kind === 'view';
}
