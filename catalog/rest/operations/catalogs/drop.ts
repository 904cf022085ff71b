/** Drop an empty catalog. */
import type { CatalogContext } from '../../context.js';
import type { CatalogDeps } from '../../deps.js';
import { CatalogError } from '../../errors.js';
import { requireCatalog } from '../../resolve.js';
import { authorizeManagement } from './common.js';

/** Drops an empty catalog (409 while it holds namespaces: dropping data by accident is worse). */
export async function dropCatalog(deps: CatalogDeps, ctx: CatalogContext, name: string): Promise<void> {
  authorizeManagement(ctx);
  const dropped = await deps.store.transaction(async (tx) => {
    const catalog = await requireCatalog(tx, ctx, name);
    await tx.query('SELECT id FROM catalogs WHERE id = $1 FOR UPDATE', [catalog.id]);
    const used = await tx.query('SELECT 1 FROM catalog_namespaces WHERE catalog_id = $1 LIMIT 1', [catalog.id]);
    if (used.rows.length > 0) throw new CatalogError('NamespaceNotEmptyException', `Catalog is not empty: ${name}`);
    await tx.query('DELETE FROM catalogs WHERE id = $1', [catalog.id]);
    return catalog.id;
  });
  deps.files.forgetCatalog(dropped);
}
