/**
 * Delegable MANAGE privileges (spec Authentication §11). tenant_admin holds all of them
 * implicitly; others hold what a tenant_admin granted. Holders cannot re-delegate. The same
 * check serves SQL statements and catalog requests (`principalMayManage`).
 */
import type { SqlExecutor } from '../../catalog/store/meta-store.js';
import type { ManagePrivilege } from '../../grammar/ir.js';
import { TENANT_ADMIN_ROLE } from './principals.js';

export type ManagePrivilegeName = 'MANAGE USERS' | 'MANAGE PATS' | 'MANAGE SERVICE ACCOUNTS';

export function privilegeName(p: ManagePrivilege): ManagePrivilegeName {
  return `MANAGE ${p}`;
}

export async function loadManagePrivileges(db: SqlExecutor, principalId: string): Promise<Set<ManagePrivilegeName>> {
  const r = await db.query<{ privilege: ManagePrivilegeName }>('SELECT privilege FROM principal_privileges WHERE principal_id = $1', [principalId]);
  return new Set(r.rows.map((row) => row.privilege));
}

export interface PrincipalRef {
  readonly tenantId: string;
  readonly principalId: string;
  /** Roles as the validated token's principal carries them (read from the store per request). */
  readonly roles: readonly string[];
}

export function isTenantAdmin(roles: readonly string[]): boolean {
  return roles.includes(TENANT_ADMIN_ROLE);
}

/**
 * Whether the principal may exercise `privilege` (tenant_admin or a grant). Catalog routes call
 * this with the request's principal, e.g. `principalMayManage(store, ref, 'SERVICE ACCOUNTS')`.
 */
export async function principalMayManage(db: SqlExecutor, who: PrincipalRef, privilege: ManagePrivilege): Promise<boolean> {
  if (isTenantAdmin(who.roles)) return true;
  const r = await db.query('SELECT 1 FROM principal_privileges WHERE tenant_id = $1 AND principal_id = $2 AND privilege = $3', [who.tenantId, who.principalId, privilegeName(privilege)]);
  return r.rows.length > 0;
}
