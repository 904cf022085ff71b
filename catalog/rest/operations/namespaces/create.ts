/** Create a namespace; its parent must exist (as in Polaris). */
import type { CatalogContext, Namespace } from '../../context.js';
import { assertStorableText, namespaceKey, validateNamespace } from '../../context.js';
import type { CatalogDeps } from '../../deps.js';
import { CatalogError } from '../../errors.js';
import { requireCatalog } from '../../resolve.js';
import { findNamespace, objectOf, type NamespaceRecord } from '../../store.js';

export async function createNamespace(deps: CatalogDeps, ctx: CatalogContext, catalogName: string, ns: Namespace, properties: ReadonlyMap<string, string> = new Map()): Promise<NamespaceRecord> {
  // Validation
  validateNamespace(ns);
  assertStorableText(properties, 'namespace properties');
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
    // Its folder must not lie in a table's or view's location (docs/catalog.md "Table locations").
    await deps.locations.assertNamespaceFree(tx, catalog, ns);
    return { namespace: ns, key: namespaceKey(ns), properties };
  });
}
