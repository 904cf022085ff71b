/** The first start's catalog `default`. */
import type { CatalogDeps } from '../../deps.js';
import { insertExclusiveCatalog } from '../../catalog-locations.js';
import { badRequest, CatalogError } from '../../errors.js';

/**
 * The first start's catalog `default` for a tenant, with its warehouse under the data directory.
 * Does nothing when the tenant already has a catalog of that name; refuses (400, which stops the
 * start) a warehouse another catalog (one the operator declared) shares or nests.
 */
export async function ensureDefaultCatalog(deps: CatalogDeps, tenantId: string, warehouseLocation: string): Promise<void> {
  await insertExclusiveCatalog(deps.store, { id: deps.newUuid(), tenantId, name: 'default', warehouseLocation, properties: new Map(), locationMappings: [] })
    .catch((e: unknown) => {
      throw e instanceof CatalogError ? badRequest(`the first start's catalog default cannot be created: ${e.message}`) : e;
    });
}
