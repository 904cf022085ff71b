/** Load one of the caller's catalogs; another tenant's is indistinguishable from a missing one. */
import type { CatalogContext } from '../../context.js';
import type { CatalogDeps } from '../../deps.js';
import { requireCatalog } from '../../resolve.js';
import type { CatalogRecord } from '../../store.js';

export async function loadCatalog(deps: CatalogDeps, ctx: CatalogContext, name: string): Promise<CatalogRecord> {
  return requireCatalog(deps.store, ctx, name);
}
