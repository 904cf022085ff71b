/**
 * The operator's principal-management settings (the `principals` and `webhooks` sections of the
 * configuration file; server/config.ts validates them) and the request context every statement
 * runs in.
 */
import type { MetaStore } from '../../catalog/store/meta-store.js';
import type { PrincipalKind } from './principals.js';
import type { PasswordHasher } from './passwords.js';
import type { SecretBox } from './secret-box.js';

export interface PrincipalsConfig {
  /** base64 of 32 bytes; null: a key generated once and kept in the store. */
  readonly encryption_key: string | null;
  /** Where invitation links point; the token is appended as `#token=…` (never sent to servers). */
  readonly invitation_url_base: string;
  readonly invitation_ttl_hours: number;
  /** Failed sign-ins that lock a user, and for how long (LOCKED is derived, never stored). */
  readonly lockout_threshold: number;
  readonly lockout_seconds: number;
  /** SQL MFA statements need a sign-in this recent (spec: five minutes). */
  readonly mfa_recent_seconds: number;
  /** Longest PAT lifetime; PATs without TTL get this. */
  readonly pat_max_ttl_days: number;
  /** DEACTIVATED users older than this are tombstoned by the archive sweeper. */
  readonly archive_retention_days: number;
  /** Audit partitions older than this are dropped (spec: seven years). */
  readonly audit_retention_days: number;
  /** Issuer label shown by authenticator apps. */
  readonly totp_issuer: string;
  /** Run the webhook worker and the maintenance timers in this process. */
  readonly background_jobs: boolean;
  /** Where and how many Argon2id computations run (docs/principals.md, Passwords). */
  readonly password_hashing: PasswordHashingConfig;
}

export interface PasswordHashingConfig {
  /** `processes`: child processes at `niceness`, which yield the CPU to queries; `in_process`: libuv's pool. */
  readonly isolation: 'processes' | 'in_process';
  /** Computations at once (children); 0: one less than the cores (at least 1). */
  readonly workers: number;
  /** Nice value of the children: 19 (the lowest priority) runs them on CPU that queries leave idle. */
  readonly niceness: number;
  /** Also SCHED_IDLE (Linux): a waking query thread preempts hashing at once. */
  readonly idle_policy: boolean;
  /** Calls waiting beyond which a sign-in or password change is refused at once (503). */
  readonly max_queued: number;
}

export interface WebhooksConfig {
  readonly interval_seconds: number;
  readonly timeout_ms: number;
  /** Allow private, loopback and link-local targets (tests, on-premises receivers). */
  readonly allow_private_targets: boolean;
  readonly batch_size: number;
  /** Extra CA certificate (PEM file) trusted for receivers, e.g. an internal CA. */
  readonly ca_file: string | null;
}

export const DEFAULT_PRINCIPALS_CONFIG: PrincipalsConfig = {
  encryption_key: null,
  invitation_url_base: 'http://127.0.0.1:8181/invite',
  invitation_ttl_hours: 72,
  lockout_threshold: 5,
  lockout_seconds: 900,
  mfa_recent_seconds: 300,
  pat_max_ttl_days: 365,
  archive_retention_days: 30,
  audit_retention_days: 2557,
  totp_issuer: 'Floe',
  background_jobs: true,
  password_hashing: { isolation: 'processes', workers: 0, niceness: 19, idle_policy: true, max_queued: 256 },
};

export const DEFAULT_WEBHOOKS_CONFIG: WebhooksConfig = {
  interval_seconds: 10, timeout_ms: 10_000, allow_private_targets: false, batch_size: 100, ca_file: null,
};

export interface Clock {
  /** Milliseconds since the epoch. */
  now(): number;
}

/**
 * Restricted sign-in tokens: a scope word next to `sql` that the session checks. A user with
 * MUST_CHANGE_PASSWORD may only run ALTER USER SELF SET PASSWORD; an administrator without a
 * second factor may only enrol and verify one.
 */
export type TokenRestriction = 'change_password' | 'enroll_mfa';
export const RESTRICTION_SCOPE_PREFIX = 'restricted:';

/** The acting principal as its validated token describes it. */
export interface Actor {
  readonly id: string;
  readonly name: string;
  readonly kind: PrincipalKind;
  readonly roles: readonly string[];
  /** RFC 8176 method references of the sign-in (`pwd`, `otp`, …). */
  readonly amr: readonly string[];
  /** Seconds since the epoch of the sign-in. */
  readonly authTime: number;
  readonly authMethod: string;
  readonly restriction: TokenRestriction | undefined;
  /**
   * The token's scopes: a PAT a principal creates for itself cannot exceed them. Absent (callers
   * built before this field): no bound beyond the known scopes — pass them.
   */
  readonly scopes?: readonly string[] | undefined;
}

export interface PrincipalContext {
  readonly store: MetaStore;
  readonly clock: Clock;
  /** The tenant of the bearer token; undefined only for statements that need none (REDEEM INVITATION). */
  readonly tenantId: string | undefined;
  readonly actor: Actor | undefined;
  readonly config: PrincipalsConfig;
  readonly webhooks: WebhooksConfig;
  readonly secrets: SecretBox;
  /**
   * The process's Argon2id gate (state.principals.passwords). Absent: an ungated hasher per
   * statement (works, but bursts are not bounded across statements) — pass it.
   */
  readonly passwords?: PasswordHasher | undefined;
}

/** What a statement returns: the /api/query result shape. */
export interface PrincipalResult {
  readonly columns: readonly string[];
  readonly types: readonly string[];
  readonly rows: readonly (readonly unknown[])[];
}

/** The structural shape of a validated token (server/auth/tokens.ts `Authenticated`). */
export interface AuthenticatedLike {
  readonly principal: { readonly id: string; readonly name: string; readonly kind: PrincipalKind; readonly roles: readonly string[]; readonly tenantId: string };
  readonly claims: { readonly amr: readonly string[]; readonly auth_time: number; readonly auth_method: string; readonly scope: string };
}

export function tokenRestriction(scopeClaim: string): TokenRestriction | undefined {
  // Every statement asks; almost no token is restricted.
  if (!scopeClaim.includes(RESTRICTION_SCOPE_PREFIX)) return undefined;
  for (const word of scopeClaim.split(' ')) {
    if (word === `${RESTRICTION_SCOPE_PREFIX}change_password`) return 'change_password';
    if (word === `${RESTRICTION_SCOPE_PREFIX}enroll_mfa`) return 'enroll_mfa';
  }
  return undefined;
}

export function actorFromAuth(auth: AuthenticatedLike): Actor {
  const p = auth.principal;
  return {
    id: p.id, name: p.name, kind: p.kind, roles: p.roles,
    amr: auth.claims.amr, authTime: auth.claims.auth_time, authMethod: auth.claims.auth_method,
    restriction: tokenRestriction(auth.claims.scope),
    scopes: auth.claims.scope.split(' ').filter((w) => w.length > 0 && !w.startsWith(RESTRICTION_SCOPE_PREFIX)),
  };
}
