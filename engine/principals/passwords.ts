/**
 * Passwords: Argon2id hashing (t=3, m=64 MiB, p=1, as the spec fixes) and the tenant password
 * policy. Hashing runs on libuv's thread pool (the argon2 binding is asynchronous), never on the
 * event loop. Hashes are stored as canonical PHC strings (`$argon2id$v=19$m=65536,t=3,p=1$…`).
 */
import argon2 from 'argon2';
import { availableParallelism } from 'node:os';
import type { SqlExecutor } from '../../catalog/store/meta-store.js';
import { COMMON_PASSWORDS } from './common-passwords.js';

export const ARGON2_PARAMETERS = { type: argon2.argon2id, timeCost: 3, memoryCost: 65536, parallelism: 1 } as const;

/** Hashes a password; the PHC parameters are written in the reference order m, t, p. */
export async function hashPassword(password: string): Promise<string> {
  return canonicalPhc(await argon2.hash(password, ARGON2_PARAMETERS));
}

/** Verifies in constant time (inside argon2); a malformed hash verifies nothing. */
export async function verifyPassword(hash: string, password: string): Promise<boolean> {
  try {
    return await argon2.verify(hash, password);
  } catch {
    return false;
  }
}

/**
 * Bounds how many Argon2id computations run at once (each takes a libuv thread and 64 MiB for
 * ~0.1-0.3 s): a burst of sign-ins queues here instead of taking every core from query execution.
 * 0 picks one less than the available cores (at least one).
 */
export class PasswordHasher {
  private active = 0;
  private readonly waiting: (() => void)[] = [];
  readonly maxConcurrent: number;

  constructor(maxConcurrent = 0) {
    this.maxConcurrent = maxConcurrent > 0 ? maxConcurrent : Math.max(1, availableParallelism() - 1);
  }

  hash(password: string): Promise<string> {
    return this.gate(() => hashPassword(password));
  }

  verify(hash: string, password: string): Promise<boolean> {
    return this.gate(() => verifyPassword(hash, password));
  }

  private async gate<T>(fn: () => Promise<T>): Promise<T> {
    if (this.active >= this.maxConcurrent) await new Promise<void>((resolve) => this.waiting.push(resolve));
    this.active++;
    try {
      return await fn();
    } finally {
      this.active--;
      this.waiting.shift()?.();
    }
  }
}

/**
 * Verified for unknown users so that a miss costs as much as a wrong password (no timing oracle).
 * The hash of a random string nobody knows; it matches no password.
 */
export const DUMMY_PASSWORD_HASH = '$argon2id$v=19$m=65536,t=3,p=1$VNnEj0gxLiwXhDQWKteo0Q$xUT7kocgbU53jGmQ4wTzugXV0sf7vYZ3OM9AQzqs+YQ';

/** Rewrites `m=…,p=…,t=…` (the binding's order) as `m=…,t=…,p=…` (the reference order). */
export function canonicalPhc(hash: string): string {
  const parts = hash.split('$');
  if (parts.length < 5) return hash;
  const params = new Map(parts[3]!.split(',').map((kv) => kv.split('=') as [string, string]));
  const order = ['m', 't', 'p'];
  if (!order.every((k) => params.has(k)) || params.size !== 3) return hash;
  parts[3] = order.map((k) => `${k}=${params.get(k)}`).join(',');
  return parts.join('$');
}

/** The tenant password policy; set by the operator per tenant. */
export interface PasswordPolicy {
  readonly minLength: number;
  /** How many of the four classes (lower, upper, digit, other) a password must use. */
  readonly minClasses: number;
  readonly disallowUsername: boolean;
  /** No reuse of the current and the last N passwords. */
  readonly historyCount: number;
  readonly refuseCommon: boolean;
  /** Every user of the tenant must have a second factor (administrators always must). */
  readonly requireMfa: boolean;
}

/** Defaults: NIST SP 800-63B-minded length first, some variety, and the last 5 not reused. */
export const DEFAULT_PASSWORD_POLICY: PasswordPolicy = {
  minLength: 12, minClasses: 3, disallowUsername: true, historyCount: 5, refuseCommon: true, requireMfa: false,
};

/** The reasons a password breaks the policy (empty: it passes). History is checked separately. */
export function policyViolations(policy: PasswordPolicy, password: string, username: string): string[] {
  const out: string[] = [];
  if ([...password].length < policy.minLength) out.push(`at least ${policy.minLength} characters are required`);
  const classes = [/[a-z]/, /[A-Z]/, /[0-9]/, /[^A-Za-z0-9]/].filter((re) => re.test(password)).length;
  if (classes < policy.minClasses) out.push(`at least ${policy.minClasses} of lower-case, upper-case, digits and symbols are required`);
  if (policy.disallowUsername && username.length >= 3 && password.toLowerCase().includes(username.toLowerCase())) out.push('it must not contain the username');
  if (policy.refuseCommon && isCommonPassword(password)) out.push('it is a commonly used password');
  return out;
}

function isCommonPassword(password: string): boolean {
  const lower = password.toLowerCase();
  if (COMMON_PASSWORDS.has(lower)) return true;
  // "Password123!" and friends: a common word with digits or symbols appended.
  const stem = lower.replace(/[^a-z]+$/, '').replace(/^[^a-z]+/, '');
  return stem.length >= 4 && COMMON_PASSWORDS.has(stem);
}

interface PolicyRow {
  min_length: number; min_classes: number; disallow_username: boolean; history_count: number; refuse_common: boolean; require_mfa: boolean;
}

export async function loadPasswordPolicy(db: SqlExecutor, tenantId: string): Promise<PasswordPolicy> {
  const row = (await db.query<PolicyRow>('SELECT min_length, min_classes, disallow_username, history_count, refuse_common, require_mfa FROM tenant_password_policies WHERE tenant_id = $1', [tenantId])).rows[0];
  if (!row) return DEFAULT_PASSWORD_POLICY;
  return { minLength: row.min_length, minClasses: row.min_classes, disallowUsername: row.disallow_username, historyCount: row.history_count, refuseCommon: row.refuse_common, requireMfa: row.require_mfa };
}

/** The operator's command (floe admin set-password-policy): replaces the tenant's policy. */
export async function setPasswordPolicy(db: SqlExecutor, tenantId: string, policy: PasswordPolicy): Promise<void> {
  await db.query(
    `INSERT INTO tenant_password_policies (tenant_id, min_length, min_classes, disallow_username, history_count, refuse_common, require_mfa)
     VALUES ($1, $2, $3, $4, $5, $6, $7)
     ON CONFLICT (tenant_id) DO UPDATE SET min_length = $2, min_classes = $3, disallow_username = $4, history_count = $5, refuse_common = $6, require_mfa = $7, updated_at = now()`,
    [tenantId, policy.minLength, policy.minClasses, policy.disallowUsername, policy.historyCount, policy.refuseCommon, policy.requireMfa],
  );
}
