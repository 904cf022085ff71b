/** List the caller's catalogs (one tenant's only). */
import type { CatalogContext } from '../../context.js';
import type { CatalogDeps } from '../../deps.js';
import { listCatalogRecords, type CatalogRecord } from '../../store.js';

export async function listCatalogs(deps: CatalogDeps, ctx: CatalogContext): Promise<readonly CatalogRecord[]> {
  return listCatalogRecords(deps.store, ctx.tenantId);
}
