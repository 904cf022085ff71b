/**
 * Non-interactive credentials exchanged at the token endpoint: personal access tokens
 * (`grant_type=pat`) and keypair-signed JWT assertions (RFC 7523 jwt-bearer). Both answer with
 * the principal or a reason; the endpoint turns a refusal into `invalid_grant` without detail
 * beyond what the caller already knows.
 */
import { createPublicKey } from 'node:crypto';
import { decodeJwt, decodeProtectedHeader, jwtVerify } from 'jose';
import type { SqlExecutor } from '../../catalog/store/meta-store.js';
import { canAuthenticate, loadPrincipalAuthState, type PrincipalAuthState } from './principals.js';
import { isScope, type Scope } from './scopes.js';
import { sha256 } from './secrets.js';
import { isWellFormedPat } from './token-format.js';

export type CredentialCheck<T> = { readonly ok: true; readonly value: T } | { readonly ok: false; readonly reason: string };

export interface PatGrant {
  readonly principal: PrincipalAuthState;
  /** The PAT's scope: the most a token exchanged for it may carry. */
  readonly scopes: readonly Scope[];
}

/** `last_used_at` is written at most this often per PAT (a hot PAT would otherwise write per exchange). */
const LAST_USED_RESOLUTION_MS = 60_000;

/** A live (not revoked) PAT as authentication reads it; its owner is read on its own. */
export interface PatRecord {
  readonly patId: string;
  readonly tenantId: string;
  readonly principalId: string;
  readonly scopes: readonly Scope[];
  readonly expiresAtMs: number | null;
  readonly lastUsedAtMs: number | null;
}

/** Where a PAT exchange reads the token and its owner: the store, or the auth-state cache over it. */
export interface PatStates {
  principal(tenantId: string, principalId: string): Promise<PrincipalAuthState | undefined>;
  /** The live PAT with this SHA-256 (hex), if any. */
  pat(tokenSha256Hex: string): Promise<PatRecord | undefined>;
  /** `last_used_at` was written: a cache keeps the time, so that the next write waits its turn. */
  patUsed(tokenSha256Hex: string, atMs: number): void;
}

export async function loadPat(db: SqlExecutor, tokenSha256Hex: string): Promise<PatRecord | undefined> {
  const row = (await db.query<{ id: string; tenant_id: string; principal_id: string; scope: string[]; expires_at: Date | null; last_used_at: Date | null }>(
    `SELECT id, tenant_id, principal_id, scope, expires_at, last_used_at FROM personal_access_tokens
      WHERE token_sha256 = $1 AND revoked_at IS NULL`, [Buffer.from(tokenSha256Hex, 'hex')])).rows[0];
  if (!row) return undefined;
  return {
    patId: row.id, tenantId: row.tenant_id, principalId: row.principal_id, scopes: row.scope.filter(isScope),
    expiresAtMs: row.expires_at?.getTime() ?? null, lastUsedAtMs: row.last_used_at?.getTime() ?? null,
  };
}

/**
 * Checks a presented PAT: well formed (prefix and checksum, before any read), live, not expired,
 * its owner allowed to sign in. Records the use, at most once per LAST_USED_RESOLUTION_MS.
 */
export async function authenticatePat(db: SqlExecutor, states: PatStates, token: string, nowMs: number): Promise<CredentialCheck<PatGrant>> {
  if (!isWellFormedPat(token)) return { ok: false, reason: 'not a personal access token' };
  const hash = sha256(token).toString('hex');
  const pat = await states.pat(hash);
  if (!pat) return { ok: false, reason: 'unknown or revoked personal access token' };
  if (pat.expiresAtMs !== null && pat.expiresAtMs <= nowMs) return { ok: false, reason: 'personal access token expired' };
  const principal = await states.principal(pat.tenantId, pat.principalId);
  if (!principal || !canAuthenticate(principal)) return { ok: false, reason: 'the owner may not sign in' };
  if (pat.lastUsedAtMs === null || nowMs - pat.lastUsedAtMs >= LAST_USED_RESOLUTION_MS) {
    // Noted first, so that exchanges arriving while the write runs do not write again.
    states.patUsed(hash, nowMs);
    await db.query('UPDATE personal_access_tokens SET last_used_at = $2 WHERE id = $1', [pat.patId, new Date(nowMs)]);
  }
  return { ok: true, value: { principal, scopes: pat.scopes } };
}

export interface AssertionOptions {
  /** Accepted `aud` values (the issuer, the token endpoint URL). */
  readonly audiences: readonly string[];
  readonly nowMs: number;
  /** Longest accepted assertion lifetime (exp − iat and exp − now): one hour. */
  readonly maxLifetimeSeconds?: number;
  readonly defaultTenant: string;
}

const CLOCK_SKEW_SECONDS = 60;

/**
 * Verifies a jwt-bearer assertion: `kid` names an active keypair of the service account in `sub`
 * (tenant in `tid`, else the default tenant), the signature and algorithm match it, `aud` is ours,
 * the lifetime is at most an hour, and `jti` has never been seen (recorded until expiry).
 */
export async function verifyKeypairAssertion(db: SqlExecutor, assertion: string, o: AssertionOptions): Promise<CredentialCheck<PrincipalAuthState>> {
  let header: ReturnType<typeof decodeProtectedHeader>;
  let claims: ReturnType<typeof decodeJwt>;
  try {
    header = decodeProtectedHeader(assertion);
    claims = decodeJwt(assertion);
  } catch {
    return { ok: false, reason: 'assertion is not a JWT' };
  }
  if (typeof header.kid !== 'string' || typeof header.alg !== 'string') return { ok: false, reason: 'assertion header needs kid and alg' };
  if (typeof claims.sub !== 'string') return { ok: false, reason: 'assertion needs sub (the service account name)' };
  const tenantId = typeof claims.tid === 'string' ? claims.tid : o.defaultTenant;
  const key = (await db.query<{ principal_id: string; algorithm: string; public_key: string }>(
    `SELECT k.principal_id, k.algorithm, k.public_key FROM principal_keypairs k JOIN principals p ON p.id = k.principal_id
      WHERE p.tenant_id = $1 AND lower(p.name) = lower($2) AND p.kind = 'service_account' AND p.status <> 'EXPUNGED'
        AND k.key_id = $3 AND k.revoked_at IS NULL`, [tenantId, claims.sub, header.kid])).rows[0];
  if (!key) return { ok: false, reason: 'no active keypair with this kid for this service account' };
  if (header.alg !== key.algorithm) return { ok: false, reason: `the keypair is registered for ${key.algorithm}` };
  let verified: Awaited<ReturnType<typeof jwtVerify>>['payload'];
  try {
    ({ payload: verified } = await jwtVerify(assertion, createPublicKey(key.public_key), {
      algorithms: [key.algorithm], currentDate: new Date(o.nowMs), clockTolerance: CLOCK_SKEW_SECONDS, requiredClaims: ['exp', 'iat', 'jti', 'sub', 'aud'],
    }));
  } catch {
    return { ok: false, reason: 'assertion signature or claims are not valid' };
  }
  const auds = Array.isArray(verified.aud) ? verified.aud : [verified.aud];
  if (!auds.some((a) => typeof a === 'string' && o.audiences.includes(a))) return { ok: false, reason: 'assertion aud is not this service' };
  const max = o.maxLifetimeSeconds ?? 3600;
  const now = Math.floor(o.nowMs / 1000);
  const exp = verified.exp!;
  const iat = verified.iat!;
  if (exp - iat > max || exp - now > max + CLOCK_SKEW_SECONDS || iat > now + CLOCK_SKEW_SECONDS) return { ok: false, reason: `assertions may live at most ${max} s` };
  if (typeof verified.jti !== 'string' || verified.jti.length === 0 || verified.jti.length > 256) return { ok: false, reason: 'assertion needs a jti' };
  const fresh = await db.query('INSERT INTO jwt_bearer_jtis (principal_id, jti, expires_at) VALUES ($1, $2, $3) ON CONFLICT DO NOTHING',
    [key.principal_id, verified.jti, new Date((exp + CLOCK_SKEW_SECONDS) * 1000)]);
  if (fresh.rowCount !== 1) return { ok: false, reason: 'assertion jti was already used' };
  const principal = await loadPrincipalAuthState(db, tenantId, key.principal_id);
  if (!principal || !canAuthenticate(principal)) return { ok: false, reason: 'the service account may not sign in' };
  return { ok: true, value: principal };
}
