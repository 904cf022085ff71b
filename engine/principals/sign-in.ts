/**
 * Password sign-in (POST /api/auth/sign-in): username, password and, when an authenticator is
 * on, a TOTP code. Every refusal looks the same to the caller (unknown user, wrong password,
 * SUSPENDED, INVITED, DEACTIVATED, LOCKED), and an unknown user costs one Argon2id verification
 * like a known one. Wrong passwords and codes count `login_failures`; at the threshold the user
 * is LOCKED for `lockout_seconds` (derived, never stored); a success resets the count.
 */
import type { MetaStore } from '../../catalog/store/meta-store.js';
import { loadPasswordPolicy, DUMMY_PASSWORD_HASH, type PasswordHasher } from './passwords.js';
import { loadPrincipalAuthState, TENANT_ADMIN_ROLE, type PrincipalAuthState, type PrincipalStatus } from './principals.js';
import type { Clock, PrincipalsConfig, TokenRestriction } from './settings.js';
import { matchTotp } from './totp.js';
import { loadProvisioningPolicy } from './provisioning-policy.js';
import type { SecretBox } from './secret-box.js';
import { consumeRecoveryCode } from './second-factors.js';

export interface SignInRequest {
  readonly tenantId: string;
  readonly username: string;
  readonly password: string;
  readonly totp?: string | undefined;
  /** One of the user's one-time recovery codes, instead of a TOTP code (second-factors.ts). */
  readonly recoveryCode?: string | undefined;
}

export type SignInOutcome =
  | { readonly kind: 'signed-in'; readonly principal: PrincipalAuthState; readonly amr: readonly string[]; readonly restriction: TokenRestriction | undefined }
  /** The password was right, the account has an authenticator, and no code was sent. */
  | { readonly kind: 'totp-required' }
  | { readonly kind: 'refused' };

interface Candidate {
  id: string; status: PrincipalStatus; login_failures: number; last_failed_login_at: Date | null; must_change_password: boolean;
  hash: string | null; mfa_secret: string | null; mfa_verified: Date | null; is_admin: boolean;
}

export async function signIn(store: MetaStore, clock: Clock, config: PrincipalsConfig, secrets: SecretBox, passwords: PasswordHasher, req: SignInRequest): Promise<SignInOutcome> {
  const now = clock.now();
  const c = (await store.query<Candidate>(
    `SELECT p.id, p.status, p.login_failures, p.last_failed_login_at, p.must_change_password, pw.hash,
            m.secret_encrypted AS mfa_secret, m.verified_at AS mfa_verified,
            EXISTS (SELECT 1 FROM principal_roles r WHERE r.principal_id = p.id AND r.role = $3) AS is_admin
       FROM principals p LEFT JOIN principal_passwords pw ON pw.principal_id = p.id LEFT JOIN principal_mfa m ON m.principal_id = p.id
      WHERE p.tenant_id = $1 AND lower(p.name) = lower($2) AND p.kind = 'user' AND p.status <> 'EXPUNGED'`,
    [req.tenantId, req.username, TENANT_ADMIN_ROLE])).rows[0];
  const passwordOk = await passwords.verify(c?.hash ?? DUMMY_PASSWORD_HASH, req.password);
  if (!c || c.hash === null) return { kind: 'refused' };
  const locked = c.login_failures >= config.lockout_threshold && c.last_failed_login_at !== null && c.last_failed_login_at.getTime() + config.lockout_seconds * 1000 > now;
  if (locked) return { kind: 'refused' };
  const fail = async (): Promise<SignInOutcome> => {
    await store.query('UPDATE principals SET login_failures = login_failures + 1, last_failed_login_at = $2 WHERE id = $1', [c.id, new Date(now)]);
    return { kind: 'refused' };
  };
  if (!passwordOk) return fail();
  // A provisioned user signs in with a password only where the tenant allows it (provisioning-policy.ts).
  if (c.status !== 'ACTIVE' && !(c.status === 'PROVISIONED' && (await loadProvisioningPolicy(store, req.tenantId)).has('password'))) return { kind: 'refused' };
  const amr = ['pwd'];
  const finish = (cand: Candidate, how: readonly string[]) => completeSignIn(store, now, req.tenantId, cand, how);
  if (c.mfa_verified && c.mfa_secret) {
    if ((req.totp === undefined || req.totp === '') && req.recoveryCode) {
      // A recovery code is a one-time password (RFC 8176 `otp`) and stands in for the authenticator.
      if (!await consumeRecoveryCode(store, c.id, req.recoveryCode, new Date(now))) return fail();
      return finish(c, ['pwd', 'otp', 'mfa']);
    }
    if (req.totp === undefined || req.totp === '') return { kind: 'totp-required' };
    const step = matchTotp(secrets.open(c.mfa_secret, `totp:${c.id}`), req.totp, Math.floor(now / 1000));
    if (step === undefined) return fail();
    const used = await store.query('INSERT INTO mfa_used_codes (principal_id, time_step, used_at) VALUES ($1, $2, $3) ON CONFLICT DO NOTHING', [c.id, step, new Date(now)]);
    if (used.rowCount !== 1) return fail();
    amr.push('otp', 'mfa');
  }
  return finish(c, amr);
}

/** After every check passed: reset the failure count, record the sign-in, say what the token may do. */
async function completeSignIn(store: MetaStore, now: number, tenantId: string, c: Candidate, amr: readonly string[]): Promise<SignInOutcome> {
  await store.query('UPDATE principals SET login_failures = 0, last_failed_login_at = NULL, last_login_at = $2 WHERE id = $1', [c.id, new Date(now)]);
  const principal = await loadPrincipalAuthState(store, tenantId, c.id);
  if (!principal) return { kind: 'refused' };
  let restriction: TokenRestriction | undefined;
  if (c.must_change_password) restriction = 'change_password';
  else if (!c.mfa_verified && (c.is_admin || (await loadPasswordPolicy(store, tenantId)).requireMfa)) restriction = 'enroll_mfa';
  return { kind: 'signed-in', principal, amr, restriction };
}
