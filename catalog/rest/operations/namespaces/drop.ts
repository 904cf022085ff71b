/** Drop a namespace, only when it holds no tables, views or child namespaces. */
import type { CatalogContext, Namespace } from '../../context.js';
import { namespaceKey, validateNamespace } from '../../context.js';
import type { CatalogDeps } from '../../deps.js';
import { CatalogError } from '../../errors.js';
import { requireCatalog, requireNamespace } from '../../resolve.js';

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
