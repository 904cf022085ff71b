/** The first start's catalog `default`. */
import type { CatalogDeps } from '../../deps.js';
import { insertCatalog } from '../../store.js';

/**
 * The first start's catalog `default` for a tenant, with its warehouse under the data directory.
 * Does nothing when the tenant already has a catalog of that name.
 */
export async function ensureDefaultCatalog(deps: CatalogDeps, tenantId: string, warehouseLocation: string): Promise<void> {
  await insertCatalog(deps.store, { id: deps.newUuid(), tenantId, name: 'default', warehouseLocation, properties: new Map(), locationMappings: [] });
}
