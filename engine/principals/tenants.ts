/** Tenants: the unit of isolation. Every other row carries a tenant_id. */
import type { SqlExecutor } from '../../catalog/store/meta-store.js';

export const TENANT_ID_PATTERN = /^[a-z][a-z0-9_-]{0,62}$/;

export interface Tenant {
  readonly id: string;
  readonly displayName: string;
  readonly createdAt: Date;
}

export class TenantError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'TenantError';
  }
}

export async function createTenant(db: SqlExecutor, id: string, displayName = id): Promise<Tenant> {
  if (!TENANT_ID_PATTERN.test(id)) throw new TenantError(`tenant id ${JSON.stringify(id)} must match ${TENANT_ID_PATTERN.source}`);
  const r = await db.query<{ id: string; display_name: string; created_at: Date }>(
    'INSERT INTO tenants (id, display_name) VALUES ($1, $2) ON CONFLICT (id) DO NOTHING RETURNING id, display_name, created_at',
    [id, displayName],
  );
  const row = r.rows[0];
  if (!row) throw new TenantError(`tenant ${id} already exists`);
  return { id: row.id, displayName: row.display_name, createdAt: row.created_at };
}

export async function findTenant(db: SqlExecutor, id: string): Promise<Tenant | undefined> {
  const r = await db.query<{ id: string; display_name: string; created_at: Date }>('SELECT id, display_name, created_at FROM tenants WHERE id = $1', [id]);
  const row = r.rows[0];
  return row && { id: row.id, displayName: row.display_name, createdAt: row.created_at };
}
