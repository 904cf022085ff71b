/**
 * Passwords: Argon2id hashing (t=3, m=64 MiB, p=1, as the spec fixes; argon2id.ts) behind one
 * gate per server, and the tenant password policy. Hashing runs in child processes of lowered
 * priority (argon2id-pool.ts) or, as a fallback, on libuv's thread pool; never on the event loop.
 * Hashes are stored as canonical PHC strings (`$argon2id$v=19$m=65536,t=3,p=1$…`).
 */
import { availableParallelism } from 'node:os';
import type { SqlExecutor } from '../../catalog/store/meta-store.js';
import { floeError } from '../../grammar/errors.js';
import { runArgon2idJob, type Argon2idJob } from './argon2id.js';
import { Argon2idProcessPool, type Argon2idPoolMode } from './argon2id-pool.js';
import { COMMON_PASSWORDS } from './common-passwords.js';

export { ARGON2_PARAMETERS, canonicalPhc, hashPassword, verifyPassword } from './argon2id.js';

/** Where Argon2id runs: child processes at `niceness` (the default), or this process's libuv pool. */
export type PasswordHashIsolation = 'processes' | 'in_process';

export interface PasswordHasherOptions {
  /** Hashes at once (children, with `processes`); 0: one less than the cores (at least 1). */
  readonly workers?: number;
  /** Default `in_process`, so a hasher built ad hoc leaves no process behind; the server asks for `processes`. */
  readonly isolation?: PasswordHashIsolation;
  /** Nice value of the children (0-19). */
  readonly niceness?: number;
  /** Children also under SCHED_IDLE (Linux). */
  readonly idlePolicy?: boolean;
  /** Calls waiting for a slot beyond which a call fails at once with SERVICE_UNAVAILABLE (503). */
  readonly maxQueued?: number;
  /** Tests: the child module to fork. */
  readonly childModule?: URL;
}

/** Default of `maxQueued`: at ~0.2 s a hash, a few hundred waiting is already tens of seconds. */
export const DEFAULT_MAX_QUEUED_HASHES = 256;

/**
 * The server's Argon2id gate: at most `maxConcurrent` computations at once (each ~0.1-0.3 s of a
 * core and 64 MiB), at most `maxQueued` calls waiting in FIFO order, the rest refused at once. A
 * sign-in burst queues here; with `processes` the work itself yields the CPU to query execution.
 */
export class PasswordHasher {
  private active = 0;
  private readonly waiting: { resolve(): void; reject(e: Error): void }[] = [];
  private readonly pool: Argon2idProcessPool | undefined;
  private closed = false;
  readonly maxConcurrent: number;
  readonly maxQueued: number;

  constructor(options: PasswordHasherOptions = {}) {
    const isolation = options.isolation ?? 'in_process';
    const workers = options.workers ?? 0;
    // One core stays free even for children that yield: a query thread that wakes finds an idle
    // core instead of preempting one (measured: with every core hashing, p90-p95 rose ~15-20 %).
    this.maxConcurrent = workers > 0 ? workers : Math.max(1, availableParallelism() - 1);
    this.maxQueued = options.maxQueued ?? DEFAULT_MAX_QUEUED_HASHES;
    this.pool = isolation === 'processes'
      ? new Argon2idProcessPool({ size: this.maxConcurrent, niceness: options.niceness ?? 19, idlePolicy: options.idlePolicy ?? false, ...(options.childModule ? { childModule: options.childModule } : {}) })
      : undefined;
  }

  /** Where hashing runs now: `processes` can turn into `in-process` when children cannot start. */
  get mode(): Argon2idPoolMode {
    return this.pool?.mode ?? { kind: 'in-process', reason: 'configured' };
  }

  /** Computations running now (≤ maxConcurrent). */
  get inFlight(): number {
    return this.active;
  }

  /** Calls waiting for a slot (≤ maxQueued). */
  get queued(): number {
    return this.waiting.length;
  }

  /** The live hashing children (empty in process). */
  get pids(): readonly number[] {
    return this.pool?.pids ?? [];
  }

  hash(password: string): Promise<string> {
    return this.gate({ kind: 'hash', password }) as Promise<string>;
  }

  verify(hash: string, password: string): Promise<boolean> {
    return this.gate({ kind: 'verify', hash, password }) as Promise<boolean>;
  }

  /** Refuses queued and later calls and ends the children (waits for their exit). */
  async close(): Promise<void> {
    this.closed = true;
    for (const w of this.waiting.splice(0)) w.reject(shuttingDown());
    await this.pool?.close();
  }

  private async gate(job: Argon2idJob): Promise<string | boolean> {
    await this.acquire();
    try {
      return await (this.pool ? this.pool.run(job) : runArgon2idJob(job));
    } finally {
      this.release();
    }
  }

  private async acquire(): Promise<void> {
    if (this.closed) throw shuttingDown();
    if (this.active < this.maxConcurrent) {
      this.active++;
      return;
    }
    if (this.waiting.length >= this.maxQueued) {
      throw floeError('SERVICE_UNAVAILABLE', { detail: `too many password checks are waiting (max_queued = ${this.maxQueued}); retry shortly` });
    }
    // Resolved by release() with the slot handed over (`active` unchanged), so no newcomer slips in between.
    await new Promise<void>((resolve, reject) => this.waiting.push({ resolve, reject }));
  }

  private release(): void {
    const next = this.waiting.shift();
    if (next) next.resolve();
    else this.active--;
  }
}

function shuttingDown(): Error {
  return floeError('SERVICE_UNAVAILABLE', { detail: 'the server is shutting down' });
}

/**
 * Verified for unknown users so that a miss costs as much as a wrong password (no timing oracle).
 * The hash of a random string nobody knows; it matches no password.
 */
export const DUMMY_PASSWORD_HASH = '$argon2id$v=19$m=65536,t=3,p=1$VNnEj0gxLiwXhDQWKteo0Q$xUT7kocgbU53jGmQ4wTzugXV0sf7vYZ3OM9AQzqs+YQ';

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
