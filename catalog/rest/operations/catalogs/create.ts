/** Create a catalog (a warehouse): validation, authorization (role tenant_admin), then the insert. */
import { assertStorableText, type CatalogContext } from '../../context.js';
import type { CatalogDeps } from '../../deps.js';
import { badRequest, CatalogError } from '../../errors.js';
import { insertCatalog, type CatalogRecord } from '../../store.js';
import { type CreateCatalogRequest, authorizeManagement, validateCatalogName, validateWarehouseLocation } from './common.js';

export async function createCatalog(deps: CatalogDeps, ctx: CatalogContext, request: CreateCatalogRequest): Promise<CatalogRecord> {
  // Validation
  validateCatalogName(request.name);
  assertStorableText([request.warehouseLocation, request.properties ?? new Map(), request.locationMappings ?? []], 'catalog');
  validateWarehouseLocation(request.warehouseLocation);
  for (const m of request.locationMappings ?? []) {
    if (m.from === '' || m.to === '') throw badRequest('Invalid location mapping: from and to must not be empty');
  }
  // Authorization
  authorizeManagement(ctx);
  // Business logic
  const created = await insertCatalog(deps.store, {
    id: deps.newUuid(),
    tenantId: ctx.tenantId,
    name: request.name,
    warehouseLocation: request.warehouseLocation.replace(/\/+$/, ''),
    properties: request.properties ?? new Map(),
    locationMappings: request.locationMappings ?? [],
  });
  if (created === undefined) throw new CatalogError('AlreadyExistsException', `Catalog already exists: ${request.name}`);
  return created;
}
