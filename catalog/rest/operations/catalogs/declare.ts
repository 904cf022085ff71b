/**
 * A catalog the operator declares in the configuration file (server/operator-catalogs.ts): created
 * as `POST /v1/catalogs` would create it when the tenant has none of that name; otherwise its
 * warehouse must be the declared one, and a declared storage profile is checked with the same
 * probe and, when it changed (rotated keys, another endpoint), stored in place of the old one.
 */
import { isDeepStrictEqual } from 'node:util';
import { storageSecretPurpose, type CatalogDeps } from '../../deps.js';
import { badRequest, CatalogError } from '../../errors.js';
import type { CatalogContext } from '../../context.js';
import { findCatalog, updateCatalogStorage } from '../../store.js';
import type { CreateCatalogRequest } from './common.js';
import { checkStorage, createCatalog } from './create.js';

export type DeclaredCatalogOutcome = 'created' | 'unchanged' | 'storage-updated';

export async function declareCatalog(deps: CatalogDeps, ctx: CatalogContext, request: CreateCatalogRequest): Promise<DeclaredCatalogOutcome> {
  const existing = await findCatalog(deps.store, ctx.tenantId, request.name);
  if (existing === undefined) {
    try {
      await createCatalog(deps, ctx, request);
      return 'created';
    } catch (e) {
      // Another replica starting at the same time created it first: check theirs instead.
      if (!(e instanceof CatalogError && e.type === 'AlreadyExistsException') || await findCatalog(deps.store, ctx.tenantId, request.name) === undefined) throw e;
      return declareCatalog(deps, ctx, request);
    }
  }
  const declared = request.warehouseLocation.replace(/\/+$/, '');
  if (existing.warehouseLocation !== declared) {
    throw badRequest(`catalog ${request.name} exists with warehouse ${existing.warehouseLocation}, not ${declared}; a warehouse cannot be moved`);
  }
  const storage = request.storage;
  if (storage === undefined) {
    if (existing.storageProfile !== null) throw badRequest(`catalog ${request.name} exists with a storage profile the configuration does not declare`);
    return 'unchanged';
  }
  // The same check as at creation: keys that stopped working stop the start, not the first query.
  await checkStorage(deps, storage, declared);
  const storedSecret = existing.storageSecretSealed === null || deps.secrets === undefined ? null
    : JSON.parse(deps.secrets.open(existing.storageSecretSealed, storageSecretPurpose(existing.id))) as unknown;
  if (isDeepStrictEqual(existing.storageProfile, storage.profile) && isDeepStrictEqual(storedSecret, storage.secret)) return 'unchanged';
  if (storage.secret !== null && deps.secrets === undefined) throw badRequest('Storage profiles with keys need the server key, which this server does not have');
  const sealed = storage.secret !== null && deps.secrets !== undefined ? deps.secrets.seal(JSON.stringify(storage.secret), storageSecretPurpose(existing.id)) : null;
  await updateCatalogStorage(deps.store, existing.id, storage.profile, sealed);
  deps.files.forgetCatalog(existing.id);
  return 'storage-updated';
}
