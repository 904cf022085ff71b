/**
 * How PROVISIONED users (pushed by an identity provider over SCIM) may sign in, per tenant: the
 * identity provider owns who they are, the tenant decides which of Floe's own credentials they may
 * hold. Methods: `password` (a password the identity provider pushes, e.g. Okta's password sync,
 * or one an administrator sets; used at POST /api/auth/sign-in) and `pat` (personal access
 * tokens). A tenant without a row allows neither: its provisioned users exist for grants,
 * ownership and history, and sign in through nothing Floe issues. Operators set it with
 * `floe admin scim sign-in --tenant T --methods password,pat|none`.
 */
import type { MetaStore, SqlExecutor } from '../../catalog/store/meta-store.js';

export const PROVISIONED_SIGN_IN_METHODS = ['password', 'pat'] as const;
export type ProvisionedSignIn = (typeof PROVISIONED_SIGN_IN_METHODS)[number];

export function isProvisionedSignIn(s: string): s is ProvisionedSignIn {
  return (PROVISIONED_SIGN_IN_METHODS as readonly string[]).includes(s);
}

export async function loadProvisioningPolicy(db: SqlExecutor, tenantId: string): Promise<ReadonlySet<ProvisionedSignIn>> {
  const row = (await db.query<{ sign_in_methods: string[] }>('SELECT sign_in_methods FROM tenant_provisioning_policies WHERE tenant_id = $1', [tenantId])).rows[0];
  return new Set((row?.sign_in_methods ?? []).filter(isProvisionedSignIn));
}

/** What narrowing the policy ended: sessions of provisioned users, and their PATs. */
export interface ProvisioningPolicyChange {
  readonly methods: readonly ProvisionedSignIn[];
  /** Provisioned users whose session epoch was bumped (every token they held stops working). */
  readonly sessionsEnded: number;
  readonly patsRevoked: number;
}

/**
 * Replaces the tenant's methods. Taking a method away takes effect at once: provisioned users'
 * sessions end (their session epoch is bumped, so tokens got by the withdrawn method die with the
 * rest) and, when `pat` goes, their PATs are revoked. Passwords are kept (a later policy may allow
 * them again); sign-in refuses them meanwhile.
 */
export function setProvisioningPolicy(store: MetaStore, tenantId: string, methods: readonly ProvisionedSignIn[], now: Date): Promise<ProvisioningPolicyChange> {
  const next = [...new Set(methods)].sort();
  return store.transaction(async (tx) => {
    const before = await loadProvisioningPolicy(tx, tenantId);
    await tx.query(
      `INSERT INTO tenant_provisioning_policies (tenant_id, sign_in_methods, updated_at) VALUES ($1, $2, $3)
       ON CONFLICT (tenant_id) DO UPDATE SET sign_in_methods = $2, updated_at = $3`, [tenantId, next, now]);
    const withdrawn = [...before].filter((m) => !next.includes(m));
    let sessionsEnded = 0;
    let patsRevoked = 0;
    if (withdrawn.length > 0) {
      sessionsEnded = (await tx.query(
        `UPDATE principals SET session_epoch = session_epoch + 1, updated_at = $2 WHERE tenant_id = $1 AND status = 'PROVISIONED'`, [tenantId, now])).rowCount ?? 0;
    }
    if (withdrawn.includes('pat')) {
      patsRevoked = (await tx.query(
        `UPDATE personal_access_tokens t SET revoked_at = $2 FROM principals p
          WHERE t.principal_id = p.id AND p.tenant_id = $1 AND p.identity_source = 'SCIM' AND t.revoked_at IS NULL`, [tenantId, now])).rowCount ?? 0;
    }
    return { methods: next, sessionsEnded, patsRevoked };
  });
}
