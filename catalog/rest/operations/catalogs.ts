/**
 * Catalog management (`/v1/catalogs`): list, create, load, drop. A catalog is a warehouse: a
 * storage location, properties, and location remappings for tables registered from elsewhere.
 * Its name is the REST `prefix`.
 */
import type { LocationMapping } from '../../../storage-creds/file-io.js';
import { schemeOf } from '../../../storage-creds/file-io.js';
import type { CatalogContext } from '../context.js';
import type { CatalogDeps } from '../deps.js';
import { badRequest, CatalogError } from '../errors.js';
import { requireCatalog } from '../resolve.js';
import { insertCatalog, listCatalogRecords, type CatalogRecord } from '../store.js';

export interface CreateCatalogRequest {
  readonly name: string;
  readonly warehouseLocation: string;
  readonly properties?: ReadonlyMap<string, string>;
  readonly locationMappings?: readonly LocationMapping[];
}

/** The role that may create and drop catalogs (catalog management is an administrator's job). */
export const CATALOG_ADMIN_ROLE = 'tenant_admin';

/** Storage schemes a warehouse may use: `file` is served now, the others are stored for later. */
export const WAREHOUSE_SCHEMES: ReadonlySet<string> = new Set(['file', 's3', 's3a', 'gs', 'abfss', 'abfs', 'wasbs']);

/** Names that would collide with fixed `/v1/...` routes when used as a prefix. */
const RESERVED_NAMES: ReadonlySet<string> = new Set(['catalogs', 'config', 'oauth', 'transactions', 'stages']);

function authorizeManagement(ctx: CatalogContext): void {
  if (!ctx.roles.includes(CATALOG_ADMIN_ROLE)) throw new CatalogError('ForbiddenException', `Catalog management requires role ${CATALOG_ADMIN_ROLE}`);
}

export function validateCatalogName(name: string): void {
  if (!/^[A-Za-z0-9][A-Za-z0-9_.-]{0,254}$/.test(name)) throw badRequest(`Invalid catalog name ${JSON.stringify(name)}: use letters, digits, '_', '.', '-' (at most 255)`);
  if (RESERVED_NAMES.has(name.toLowerCase())) throw badRequest(`Invalid catalog name ${JSON.stringify(name)}: reserved`);
}

export function validateWarehouseLocation(location: string): void {
  const scheme = schemeOf(location);
  if (scheme === undefined || !WAREHOUSE_SCHEMES.has(scheme)) throw badRequest(`Invalid warehouse location ${JSON.stringify(location)}: expected file://, s3://, gs:// or abfss://`);
  if (scheme === 'file' && !location.startsWith('file:///') && !location.startsWith('file://localhost/')) throw badRequest(`Invalid warehouse location ${JSON.stringify(location)}: file locations must be absolute (file:///path)`);
}

export async function listCatalogs(deps: CatalogDeps, ctx: CatalogContext): Promise<readonly CatalogRecord[]> {
  return listCatalogRecords(deps.store, ctx.tenantId);
}

export async function loadCatalog(deps: CatalogDeps, ctx: CatalogContext, name: string): Promise<CatalogRecord> {
  return requireCatalog(deps.store, ctx, name);
}

export async function createCatalog(deps: CatalogDeps, ctx: CatalogContext, request: CreateCatalogRequest): Promise<CatalogRecord> {
  // Validation
  validateCatalogName(request.name);
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

/** Drops an empty catalog (409 while it holds namespaces: dropping data by accident is worse). */
export async function dropCatalog(deps: CatalogDeps, ctx: CatalogContext, name: string): Promise<void> {
  authorizeManagement(ctx);
  await deps.store.transaction(async (tx) => {
    const catalog = await requireCatalog(tx, ctx, name);
    await tx.query('SELECT id FROM catalogs WHERE id = $1 FOR UPDATE', [catalog.id]);
    const used = await tx.query('SELECT 1 FROM catalog_namespaces WHERE catalog_id = $1 LIMIT 1', [catalog.id]);
    if (used.rows.length > 0) throw new CatalogError('NamespaceNotEmptyException', `Catalog is not empty: ${name}`);
    await tx.query('DELETE FROM catalogs WHERE id = $1', [catalog.id]);
  });
}

/**
 * The first start's catalog `default` for a tenant, with its warehouse under the data directory.
 * Does nothing when the tenant already has a catalog of that name.
 */
export async function ensureDefaultCatalog(deps: CatalogDeps, tenantId: string, warehouseLocation: string): Promise<void> {
  await insertCatalog(deps.store, { id: deps.newUuid(), tenantId, name: 'default', warehouseLocation, properties: new Map(), locationMappings: [] });
}
