/**
 * First start: tenant `default`, a bootstrap administrator (a service account with role
 * tenant_admin, `is_bootstrap_principal`) and its client credentials, printed once. Replicas
 * starting together serialize on an advisory lock, so exactly one of them bootstraps.
 */
import type { MetaStore } from '../../catalog/store/meta-store.js';
import { createClient, type ClientCredentials } from './clients.js';
import { createServiceAccount, TENANT_ADMIN_ROLE } from './principals.js';
import { createTenant } from './tenants.js';

export const DEFAULT_TENANT = 'default';
export const BOOTSTRAP_PRINCIPAL = 'admin';
const BOOTSTRAP_LOCK_KEY = '7310581144502272';

export interface BootstrapOptions {
  readonly clientId?: string;
  readonly clientSecret?: string;
}

export type BootstrapOutcome =
  | { readonly kind: 'created'; readonly tenantId: string; readonly principalId: string; readonly credentials: ClientCredentials }
  | { readonly kind: 'already-bootstrapped' };

/** Creates the default tenant and its administrator when the store holds no tenant yet. */
export async function bootstrapIfEmpty(store: MetaStore, options: BootstrapOptions = {}): Promise<BootstrapOutcome> {
  return store.transaction(async (tx) => {
    await tx.query('SELECT pg_advisory_xact_lock($1)', [BOOTSTRAP_LOCK_KEY]);
    const existing = await tx.query('SELECT 1 FROM tenants LIMIT 1');
    if (existing.rows.length > 0) return { kind: 'already-bootstrapped' as const };
    const tenant = await createTenant(tx, DEFAULT_TENANT, 'Default tenant');
    const admin = await createServiceAccount(tx, {
      tenantId: tenant.id, name: BOOTSTRAP_PRINCIPAL, roles: [TENANT_ADMIN_ROLE], isBootstrap: true,
      comment: 'bootstrap administrator created on first start',
    });
    const credentials = await createClient(tx, {
      tenantId: tenant.id, principalId: admin.id,
      ...(options.clientId ? { clientId: options.clientId } : {}),
      ...(options.clientSecret ? { clientSecret: options.clientSecret } : {}),
    });
    return { kind: 'created' as const, tenantId: tenant.id, principalId: admin.id, credentials };
  });
}

/** Creates a further tenant with its own administrator and client (floe admin create-tenant). */
export async function createTenantWithAdmin(store: MetaStore, tenantId: string, displayName?: string): Promise<{ principalId: string; credentials: ClientCredentials }> {
  return store.transaction(async (tx) => {
    await createTenant(tx, tenantId, displayName ?? tenantId);
    const admin = await createServiceAccount(tx, { tenantId, name: BOOTSTRAP_PRINCIPAL, roles: [TENANT_ADMIN_ROLE], isBootstrap: true, comment: 'tenant administrator created with the tenant' });
    const credentials = await createClient(tx, { tenantId, principalId: admin.id });
    return { principalId: admin.id, credentials };
  });
}
