/**
 * Principals (users and service accounts) as the authentication path sees them: who they are,
 * whether they may sign in, their session epoch and roles. Principal management statements
 * (CREATE USER, …) build on the same rows.
 */
import { randomUUID } from 'node:crypto';
import type { SqlExecutor } from '../../catalog/store/meta-store.js';

export type PrincipalKind = 'user' | 'service_account';
export type PrincipalStatus = 'ACTIVE' | 'INVITED' | 'SUSPENDED' | 'DEACTIVATED' | 'PROVISIONED' | 'EXPUNGED';

/** The built-in administrator role of a tenant. */
export const TENANT_ADMIN_ROLE = 'tenant_admin';

/** What the token validator and the token endpoint need to know about a principal. */
export interface PrincipalAuthState {
  readonly id: string;
  readonly tenantId: string;
  readonly kind: PrincipalKind;
  readonly name: string;
  readonly status: PrincipalStatus;
  readonly sessionEpoch: number;
  readonly roles: readonly string[];
  readonly isBootstrap: boolean;
}

/**
 * ACTIVE principals authenticate, and PROVISIONED ones (pushed over SCIM) whose credential the
 * tenant allows: that is checked where the credential is used (password sign-in, PAT creation),
 * and withdrawing a method ends their sessions (provisioning-policy.ts). Everything else is
 * refused with one generic message.
 */
export function canAuthenticate(p: PrincipalAuthState): boolean {
  return p.status === 'ACTIVE' || p.status === 'PROVISIONED';
}

interface AuthRow {
  id: string;
  tenant_id: string;
  kind: PrincipalKind;
  name: string;
  status: PrincipalStatus;
  session_epoch: number;
  is_bootstrap_principal: boolean;
  roles: string | null;
}

const AUTH_STATE_SQL = `
  SELECT p.id, p.tenant_id, p.kind, p.name, p.status, p.session_epoch, p.is_bootstrap_principal,
         (SELECT string_agg(r.role, chr(31) ORDER BY r.role) FROM principal_roles r WHERE r.principal_id = p.id) AS roles
    FROM principals p`;

/**
 * Roles arrive as one text joined by the unit separator: on every authenticated request, and
 * PGlite decodes a text four times faster than an array (engine/principals measured it).
 */
export function splitRoles(joined: string | null): string[] {
  return joined === null || joined === '' ? [] : joined.split('\u001f');
}

function toAuthState(row: AuthRow): PrincipalAuthState {
  return {
    id: row.id,
    tenantId: row.tenant_id,
    kind: row.kind,
    name: row.name,
    status: row.status,
    sessionEpoch: Number(row.session_epoch),
    roles: splitRoles(row.roles),
    isBootstrap: row.is_bootstrap_principal,
  };
}

export async function loadPrincipalAuthState(db: SqlExecutor, tenantId: string, principalId: string): Promise<PrincipalAuthState | undefined> {
  if (!isUuid(principalId)) return undefined;
  const r = await db.query<AuthRow>(`${AUTH_STATE_SQL} WHERE p.id = $1 AND p.tenant_id = $2`, [principalId, tenantId]);
  return r.rows[0] && toAuthState(r.rows[0]);
}

export async function findPrincipalByName(db: SqlExecutor, tenantId: string, name: string): Promise<PrincipalAuthState | undefined> {
  const r = await db.query<AuthRow>(`${AUTH_STATE_SQL} WHERE p.tenant_id = $1 AND lower(p.name) = lower($2) AND p.status <> 'EXPUNGED'`, [tenantId, name]);
  return r.rows[0] && toAuthState(r.rows[0]);
}

export interface NewServiceAccount {
  readonly tenantId: string;
  readonly name: string;
  readonly roles?: readonly string[];
  readonly isBootstrap?: boolean;
  readonly comment?: string;
}

/** Creates an ACTIVE service account (no password, no e-mail) with the given roles. */
export async function createServiceAccount(db: SqlExecutor, a: NewServiceAccount): Promise<PrincipalAuthState> {
  const id = randomUUID();
  await db.query(
    `INSERT INTO principals (id, tenant_id, kind, name, status, is_bootstrap_principal, comment)
     VALUES ($1, $2, 'service_account', $3, 'ACTIVE', $4, $5)`,
    [id, a.tenantId, a.name, a.isBootstrap ?? false, a.comment ?? null],
  );
  for (const role of a.roles ?? []) {
    await db.query('INSERT INTO principal_roles (tenant_id, principal_id, role) VALUES ($1, $2, $3)', [a.tenantId, id, role]);
  }
  const created = await loadPrincipalAuthState(db, a.tenantId, id);
  if (!created) throw new Error('service account vanished after insert');
  return created;
}

export function isUuid(s: string): boolean {
  return /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i.test(s);
}
