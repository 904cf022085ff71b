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
import { passkeyAuthenticationOptions, verifyPasskeyAssertion, type AuthenticationResponseJSON, type RelyingParty } from './passkeys.js';
import type { PublicKeyCredentialRequestOptionsJSON } from '@simplewebauthn/server';

export interface SignInRequest {
  readonly tenantId: string;
  readonly username: string;
  readonly password: string;
  readonly totp?: string | undefined;
  /** One of the user's one-time recovery codes, instead of a TOTP code (second-factors.ts). */
  readonly recoveryCode?: string | undefined;
  /** A WebAuthn assertion from one of the user's passkeys, answering the options MFA_REQUIRED gave. */
  readonly passkey?: AuthenticationResponseJSON | undefined;
  /** The console's origin, to which passkeys are bound; without it passkeys are not offered. */
  readonly relyingParty?: RelyingParty | undefined;
}

/** The second factors an account offers at sign-in. */
export type SecondFactorMethod = 'totp' | 'recovery_code' | 'passkey';

export type SignInOutcome =
  | { readonly kind: 'signed-in'; readonly principal: PrincipalAuthState; readonly amr: readonly string[]; readonly restriction: TokenRestriction | undefined }
  /** The password was right, the account has a second factor, and none was sent. */
  | { readonly kind: 'second-factor-required'; readonly methods: readonly SecondFactorMethod[]; readonly passkeyOptions?: PublicKeyCredentialRequestOptionsJSON | undefined }
  | { readonly kind: 'refused' };

interface Candidate {
  id: string; status: PrincipalStatus; login_failures: number; last_failed_login_at: Date | null; must_change_password: boolean;
  hash: string | null; mfa_secret: string | null; mfa_verified: Date | null; is_admin: boolean; has_passkey: boolean;
}

export async function signIn(store: MetaStore, clock: Clock, config: PrincipalsConfig, secrets: SecretBox, passwords: PasswordHasher, req: SignInRequest): Promise<SignInOutcome> {
  const now = clock.now();
  const c = (await store.query<Candidate>(
    `SELECT p.id, p.status, p.login_failures, p.last_failed_login_at, p.must_change_password, pw.hash,
            m.secret_encrypted AS mfa_secret, m.verified_at AS mfa_verified,
            EXISTS (SELECT 1 FROM principal_roles r WHERE r.principal_id = p.id AND r.role = $3) AS is_admin,
            EXISTS (SELECT 1 FROM principal_passkeys k WHERE k.principal_id = p.id) AS has_passkey
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
  const totpOn = c.mfa_verified !== null && c.mfa_secret !== null;
  const passkeyOn = c.has_passkey && req.relyingParty !== undefined;
  if (totpOn || c.has_passkey) {
    if (req.passkey !== undefined) {
      // Only this user's passkeys, over a challenge issued to this user, once (passkeys.ts).
      if (!passkeyOn || !await verifyPasskeyAssertion(store, req.relyingParty!, c.id, req.passkey, new Date(now))) return fail();
      return finish(c, ['pwd', 'hwk', 'mfa']);
    }
    if ((req.totp === undefined || req.totp === '') && req.recoveryCode) {
      // A recovery code is a one-time password (RFC 8176 `otp`) and stands in for the authenticator.
      if (!await consumeRecoveryCode(store, c.id, req.recoveryCode, new Date(now))) return fail();
      return finish(c, ['pwd', 'otp', 'mfa']);
    }
    if (req.totp === undefined || req.totp === '') {
      const methods: SecondFactorMethod[] = [];
      if (totpOn) methods.push('totp', 'recovery_code');
      const passkeyOptions = passkeyOn ? await passkeyAuthenticationOptions(store, req.relyingParty!, req.tenantId, c.id, new Date(now)) : undefined;
      if (passkeyOptions) methods.push('passkey');
      return { kind: 'second-factor-required', methods, passkeyOptions };
    }
    if (!totpOn) return fail();
    const step = matchTotp(secrets.open(c.mfa_secret!, `totp:${c.id}`), req.totp, Math.floor(now / 1000));
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
  else if (!c.mfa_verified && !c.has_passkey && (c.is_admin || (await loadPasswordPolicy(store, tenantId)).requireMfa)) restriction = 'enroll_mfa';
  return { kind: 'signed-in', principal, amr, restriction };
}
