/** Catalog management: the request shape, who may manage catalogs, and what a valid name and warehouse are. */
import type { LocationMapping } from '../../../../storage-creds/file-io.js';
import { schemeOf } from '../../../../storage-creds/file-io.js';
import type { StorageProfile, StorageSecret } from '../../../../storage-creds/storage-profile.js';
import type { CatalogContext } from '../../context.js';
import { badRequest, CatalogError } from '../../errors.js';

/** A storage profile as a creation request carries it: the profile and its keys, if any. */
export interface ParsedStorageProfile {
  readonly profile: StorageProfile;
  readonly secret: StorageSecret | null;
}

export interface CreateCatalogRequest {
  readonly name: string;
  readonly warehouseLocation: string;
  readonly properties?: ReadonlyMap<string, string>;
  readonly locationMappings?: readonly LocationMapping[];
  /** How to reach an object-store warehouse; checked with a probe object before the catalog exists. */
  readonly storage?: ParsedStorageProfile;
}

/** The role that may create and drop catalogs (catalog management is an administrator's job). */
export const CATALOG_ADMIN_ROLE = 'tenant_admin';

/** Storage schemes a warehouse may use: `file` is served now, the others are stored for later. */
export const WAREHOUSE_SCHEMES: ReadonlySet<string> = new Set(['file', 's3', 's3a', 'gs', 'abfss', 'abfs', 'wasbs']);

/**
 * Names that would collide with fixed `/v1/...` routes when used as a prefix (`namespaces`: the
 * unprefixed `/v1/namespaces/…` of clients without a warehouse means catalog `default`).
 */
export const RESERVED_NAMES: ReadonlySet<string> = new Set(['catalogs', 'config', 'oauth', 'transactions', 'stages', 'namespaces']);

export function authorizeManagement(ctx: CatalogContext): void {
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
