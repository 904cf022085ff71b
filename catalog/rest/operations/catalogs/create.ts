/**
 * Create a catalog (a warehouse): validation, authorization (role tenant_admin), the name and the
 * warehouse checked free (no catalog of any tenant may share or nest warehouses, docs/catalog.md
 * "Catalog locations"), the storage check of an object-store profile (a probe object written,
 * read, listed and deleted), then the insert, which checks both again under the lock.
 */
import { StorageError } from '../../../../storage-creds/file-io.js';
import { probeStorage, profileServes, StorageProbeError } from '../../../../storage-creds/storage-profile.js';
import { assertStorableText, type CatalogContext } from '../../context.js';
import { storageSecretPurpose, type CatalogDeps } from '../../deps.js';
import { badRequest, CatalogError } from '../../errors.js';
import { assertComparableWarehouse, insertExclusiveCatalog, precheckWarehouse } from '../../catalog-locations.js';
import { findCatalog, type CatalogRecord } from '../../store.js';
import { type CreateCatalogRequest, type ParsedStorageProfile, authorizeManagement, validateCatalogName, validateWarehouseLocation } from './common.js';

export async function createCatalog(deps: CatalogDeps, ctx: CatalogContext, request: CreateCatalogRequest): Promise<CatalogRecord> {
  // Validation
  validateCatalogName(request.name);
  assertStorableText([request.warehouseLocation, request.properties ?? new Map(), request.locationMappings ?? []], 'catalog');
  validateWarehouseLocation(request.warehouseLocation);
  assertComparableWarehouse(request.warehouseLocation);
  for (const m of request.locationMappings ?? []) {
    if (m.from === '' || m.to === '') throw badRequest('Invalid location mapping: from and to must not be empty');
  }
  const storage = request.storage;
  if (storage !== undefined && !profileServes(storage.profile, request.warehouseLocation)) {
    throw badRequest(`Invalid warehouse location ${JSON.stringify(request.warehouseLocation)}: it is not in the storage profile's bucket`);
  }
  if (storage?.secret != null && deps.secrets === undefined) throw badRequest('Storage profiles with keys need the server key, which this server does not have');
  // Authorization
  authorizeManagement(ctx);
  // Business logic
  const id = deps.newUuid();
  const warehouseLocation = request.warehouseLocation.replace(/\/+$/, '');
  // Before the probe: it would write into the other catalog's warehouse.
  if (await findCatalog(deps.store, ctx.tenantId, request.name) !== undefined) throw alreadyExists(request.name);
  await precheckWarehouse(deps.store, warehouseLocation);
  if (storage !== undefined) await checkStorage(deps, storage, warehouseLocation);
  const created = await insertExclusiveCatalog(deps.store, {
    id,
    tenantId: ctx.tenantId,
    name: request.name,
    warehouseLocation,
    properties: request.properties ?? new Map(),
    locationMappings: request.locationMappings ?? [],
    storageProfile: storage?.profile ?? null,
    storageSecretSealed: storage?.secret != null && deps.secrets !== undefined ? deps.secrets.seal(JSON.stringify(storage.secret), storageSecretPurpose(id)) : null,
  });
  if (created === undefined) throw alreadyExists(request.name);
  return created;
}

function alreadyExists(name: string): CatalogError {
  return new CatalogError('AlreadyExistsException', `Catalog already exists: ${name}`);
}

/** Refuses a profile that cannot write, read, list and delete under the warehouse, naming why. */
export async function checkStorage(deps: CatalogDeps, storage: ParsedStorageProfile, warehouseLocation: string): Promise<void> {
  let io;
  try {
    io = deps.profileIO(storage.profile, storage.secret);
  } catch (e) {
    if (e instanceof StorageError) throw badRequest(`Storage profile check failed: ${e.detail}`);
    throw e;
  }
  try {
    await probeStorage(io, warehouseLocation);
  } catch (e) {
    if (e instanceof StorageProbeError) throw badRequest(e.message);
    throw e;
  } finally {
    io.destroy();
  }
}
