/** Drop a view. */
import type { CatalogContext, EntityIdent } from '../../context.js';
import { validateNamespace } from '../../context.js';
import type { CatalogDeps } from '../../deps.js';
import { requireCatalog } from '../../resolve.js';
import { deleteEntity } from '../../store.js';
import { requireView } from './common.js';

export async function dropView(deps: CatalogDeps, ctx: CatalogContext, catalogName: string, ident: EntityIdent): Promise<void> {
  validateNamespace(ident.namespace);
  const catalog = await requireCatalog(deps.store, ctx, catalogName);
  await deps.store.transaction(async (tx) => {
    const row = await requireView(tx, catalog, ident, 'FOR UPDATE');
    await deleteEntity(tx, row.id);
  });
}
