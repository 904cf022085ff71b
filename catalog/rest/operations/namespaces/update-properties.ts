/** Set and remove namespace properties; a key both set and removed is 422. */
import type { CatalogContext, Namespace } from '../../context.js';
import { assertStorableText, validateNamespace } from '../../context.js';
import type { CatalogDeps } from '../../deps.js';
import { CatalogError } from '../../errors.js';
import { requireCatalog, requireNamespace } from '../../resolve.js';
import { objectOf } from '../../store.js';

export interface NamespacePropertiesChange {
  readonly updated: readonly string[];
  readonly removed: readonly string[];
  /** Removals that named keys the namespace did not have. */
  readonly missing: readonly string[];
}

/** Sets and removes properties; 422 when a key is both set and removed. */
export async function updateNamespaceProperties(
  deps: CatalogDeps, ctx: CatalogContext, catalogName: string, ns: Namespace, removals: readonly string[], updates: ReadonlyMap<string, string>,
): Promise<NamespacePropertiesChange> {
  // Validation
  validateNamespace(ns);
  assertStorableText(updates, 'namespace properties');
  const both = removals.filter((k) => updates.has(k));
  if (both.length > 0) throw new CatalogError('UnprocessableEntityException', `Cannot set and remove the same properties: ${both.join(', ')}`);
  const catalog = await requireCatalog(deps.store, ctx, catalogName);
  // Business logic
  return deps.store.transaction(async (tx) => {
    const current = await requireNamespace(tx, catalog, ns, 'FOR UPDATE');
    const props = new Map(current.properties);
    const removed: string[] = [];
    const missing: string[] = [];
    for (const k of removals) {
      if (props.delete(k)) removed.push(k);
      else missing.push(k);
    }
    for (const [k, v] of updates) props.set(k, v);
    await tx.query('UPDATE catalog_namespaces SET properties = $3::jsonb, updated_at = now() WHERE catalog_id = $1 AND namespace_key = $2', [catalog.id, current.key, JSON.stringify(objectOf(props))]);
    return { updated: [...updates.keys()], removed, missing };
  });
}
