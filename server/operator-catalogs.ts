/**
 * Catalogs declared in the operator file (`catalogs:` in server/config.ts, docs/storage.md).
 *
 *   catalogs:
 *     - name: lake
 *       storage_profile:
 *         type: s3
 *         bucket: lakehouse
 *         key-prefix: warehouse
 *         region: us-east-1
 *         credentials:
 *           type: access-key
 *           access-key-id: { env: LAKE_ACCESS_KEY_ID }
 *           secret-access-key: { file: /run/secrets/lake-secret }
 *
 * The profile is the `storage-profile` object of `POST /v1/catalogs`, parsed by the same parser,
 * so both say the same things about a bad one. Secrets are references resolved at start: a file
 * that may be committed or shown never needs to hold a key (an inline secret is refused). At start
 * each declared catalog is created (with the creation's probe) when missing, or checked with the
 * same probe when present; a failure stops the start with a message naming the catalog and step.
 */
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import type { JsonObject, JsonValue } from '../catalog/iceberg/json.js';
import { toCatalogError } from '../catalog/rest/errors.js';
import type { CreateCatalogRequest, DeclaredCatalogOutcome } from '../catalog/rest/operations/catalogs/index.js';
import type { CatalogService } from '../catalog/rest/service.js';
import type { MetaStore } from '../catalog/store/meta-store.js';
import { parseStorageProfile } from '../catalog/rest/wire.js';
import { warehouseLocationOf } from '../storage-creds/storage-profile.js';
import { ConfigError, type OperatorCatalogConfig } from './config.js';
import { DEFAULT_TENANT } from '../engine/principals/bootstrap.js';

/** A declared catalog with its secrets read: what start-up creates or checks. */
export interface ResolvedOperatorCatalog {
  readonly tenant: string;
  readonly request: CreateCatalogRequest;
}

/**
 * Credential fields that hold a key: only by reference. `access-key-id` and an Entra ID
 * `tenant-id` / `client-id` may also be written inline.
 */
const SECRET_FIELDS = ['secret-access-key', 'session-token', 'service-account-key', 'account-key', 'client-secret'] as const;
const REFERENCE_FIELDS = ['access-key-id', 'tenant-id', 'client-id', ...SECRET_FIELDS] as const;

export interface SecretSources {
  readonly env: NodeJS.ProcessEnv;
  readonly readFile: (path: string) => string;
}

const SYSTEM_SOURCES: SecretSources = { env: process.env, readFile: (p) => readFileSync(resolve(p), 'utf8') };

function readReference(value: unknown, at: string, sources: SecretSources): string {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) throw new ConfigError(`${at} must be {env: NAME} or {file: PATH}`);
  const keys = Object.keys(value);
  const ref = value as Record<string, unknown>;
  if (keys.length === 1 && typeof ref.env === 'string' && ref.env !== '') {
    const v = sources.env[ref.env];
    if (v === undefined || v === '') throw new ConfigError(`${at}: environment variable ${ref.env} is not set`);
    return v;
  }
  if (keys.length === 1 && typeof ref.file === 'string' && ref.file !== '') {
    let text: string;
    try {
      text = sources.readFile(ref.file);
    } catch (e) {
      throw new ConfigError(`${at}: cannot read ${ref.file}: ${(e as NodeJS.ErrnoException).code ?? (e as Error).message}`);
    }
    // A secret file usually ends with a newline the key does not have.
    const v = text.replace(/\r?\n$/, '');
    if (v === '') throw new ConfigError(`${at}: ${ref.file} is empty`);
    return v;
  }
  throw new ConfigError(`${at} must be {env: NAME} or {file: PATH}`);
}

/** The profile with its secret references replaced by the secrets (messages never hold a value). */
function resolveProfile(profile: { readonly [key: string]: unknown }, at: string, sources: SecretSources): JsonObject {
  const credentials = profile.credentials;
  if (typeof credentials !== 'object' || credentials === null || Array.isArray(credentials)) return profile as JsonObject;
  const c: Record<string, unknown> = { ...(credentials as Record<string, unknown>) };
  for (const key of REFERENCE_FIELDS) {
    if (!(key in c)) continue;
    const value = c[key];
    if (typeof value === 'string') {
      if ((SECRET_FIELDS as readonly string[]).includes(key)) {
        throw new ConfigError(`${at}.credentials.${key} must be {env: NAME} or {file: PATH}: keys are not written in the configuration file`);
      }
      continue;
    }
    c[key] = readReference(value, `${at}.credentials.${key}`, sources);
  }
  return { ...(profile as JsonObject), credentials: c as JsonObject };
}

/** Checks and resolves the `catalogs` list; throws `ConfigError` naming the entry and the problem. */
export function resolveOperatorCatalogs(declared: readonly OperatorCatalogConfig[], sources: SecretSources = SYSTEM_SOURCES): readonly ResolvedOperatorCatalog[] {
  const seen = new Set<string>();
  return declared.map((d, i) => {
    const at = `catalogs[${i}]`;
    const tenant = d.tenant ?? DEFAULT_TENANT;
    const key = `${tenant}/${d.name}`;
    if (seen.has(key)) throw new ConfigError(`${at}: catalog ${d.name} of tenant ${tenant} is declared twice`);
    seen.add(key);
    let storage: CreateCatalogRequest['storage'];
    if (d.storage_profile !== undefined) {
      const resolved = resolveProfile(d.storage_profile, `${at}.storage_profile`, sources);
      try {
        storage = parseStorageProfile(resolved as JsonValue);
      } catch (e) {
        // The parsers throw the catalog's (or the table format's) 400s: here they stop the start.
        if (toCatalogError(e) !== undefined) throw new ConfigError(`${at}.storage_profile: ${(e as Error).message}`);
        throw e;
      }
    }
    const warehouseLocation = d.warehouse_location ?? (storage !== undefined ? warehouseLocationOf(storage.profile) : undefined);
    if (warehouseLocation === undefined) throw new ConfigError(`${at}: catalog ${d.name} needs warehouse_location or storage_profile`);
    return {
      tenant,
      request: {
        name: d.name, warehouseLocation, properties: new Map(), locationMappings: d.location_mappings ?? [],
        ...(storage !== undefined ? { storage } : {}),
      },
    };
  });
}

/**
 * Creates or checks each declared catalog. Runs before the first start's `default` catalog is
 * made, so a declared `default` is the one created.
 */
export async function applyOperatorCatalogs(catalog: CatalogService, store: MetaStore, declared: readonly ResolvedOperatorCatalog[]): Promise<ReadonlyMap<string, DeclaredCatalogOutcome>> {
  const outcomes = new Map<string, DeclaredCatalogOutcome>();
  for (const d of declared) {
    const tenant = await store.query('SELECT 1 FROM tenants WHERE id = $1', [d.tenant]);
    if (tenant.rows.length === 0) throw new ConfigError(`catalog ${d.request.name} in the configuration: tenant ${d.tenant} does not exist`);
    const ctx = { tenantId: d.tenant, principalId: 'operator-configuration', roles: ['tenant_admin'] };
    try {
      outcomes.set(`${d.tenant}/${d.request.name}`, await catalog.declareCatalog(ctx, d.request));
    } catch (e) {
      if (toCatalogError(e) !== undefined) throw new ConfigError(`catalog ${d.request.name} in the configuration: ${(e as Error).message}`);
      throw e;
    }
  }
  return outcomes;
}
