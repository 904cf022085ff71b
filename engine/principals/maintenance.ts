/**
 * Background upkeep, each job under a transaction-scoped advisory lock so that one replica runs it
 * at a time (others skip that round): audit partitions 24 months ahead (hourly), audit retention
 * (daily, seven years by default; the catch-all partition is never dropped), the archive sweeper
 * (DEACTIVATED users past the retention window are tombstoned unless under legal hold or
 * bootstrap principals) and expired jwt-bearer jti and used-TOTP rows. Time comes from the injected clock.
 */
import type { MetaStore, SqlExecutor } from '../../catalog/store/meta-store.js';
import { recordAudit } from './audit.js';
import type { Clock, PrincipalsConfig } from './settings.js';
import { tombstonePrincipal } from './statements.js';

const PARTITIONS_LOCK = '7310581144502281';
const RETENTION_LOCK = '7310581144502282';
const SWEEPER_LOCK = '7310581144502283';
export const AUDIT_MONTHS_AHEAD = 24;
const HOUR_MS = 3600_000;

async function underLock<T>(store: MetaStore, key: string, fn: (tx: SqlExecutor) => Promise<T>): Promise<T | undefined> {
  return store.transaction(async (tx) => {
    const got = (await tx.query<{ locked: boolean }>('SELECT pg_try_advisory_xact_lock($1) AS locked', [key])).rows[0]?.locked;
    if (!got) return undefined;
    return fn(tx);
  });
}

export class PrincipalMaintenance {
  private timers: NodeJS.Timeout[] = [];

  constructor(private readonly store: MetaStore, private readonly clock: Clock, private readonly config: PrincipalsConfig) {}

  /** Creates the monthly audit partitions from this month to 24 months ahead; returns how many were new. */
  async ensureAuditPartitions(): Promise<number> {
    const r = await underLock(this.store, PARTITIONS_LOCK, (tx) =>
      tx.query<{ n: number }>('SELECT user_audit_log_ensure_future_partitions($1, $2) AS n', [AUDIT_MONTHS_AHEAD, new Date(this.clock.now())]));
    return r?.rows[0]?.n ?? 0;
  }

  /** Drops monthly partitions past the retention window; returns how many. */
  async dropOldAuditPartitions(): Promise<number> {
    const r = await underLock(this.store, RETENTION_LOCK, (tx) =>
      tx.query<{ n: number }>('SELECT user_audit_log_drop_old_partitions($1, $2) AS n', [this.config.audit_retention_days, new Date(this.clock.now())]));
    return r?.rows[0]?.n ?? 0;
  }

  /** Tombstones DEACTIVATED users older than the window; returns their ids. */
  async sweepArchive(): Promise<string[]> {
    const now = new Date(this.clock.now());
    const cutoff = new Date(now.getTime() - this.config.archive_retention_days * 24 * HOUR_MS);
    const r = await underLock(this.store, SWEEPER_LOCK, async (tx) => {
      const due = (await tx.query<{ id: string; tenant_id: string; name: string }>(
        `SELECT id, tenant_id, name FROM principals
          WHERE status = 'DEACTIVATED' AND deactivated_at <= $1 AND NOT legal_hold AND NOT is_bootstrap_principal
          ORDER BY deactivated_at LIMIT 500 FOR UPDATE`, [cutoff])).rows;
      for (const p of due) {
        const tombstone = await tombstonePrincipal(tx, p.id, now, 'archive sweeper: retention window passed');
        await recordAudit(tx, { tenantId: p.tenant_id, actor: undefined, target: { id: p.id, name: tombstone }, type: 'archive_user', details: { retention_days: this.config.archive_retention_days }, at: now });
      }
      await tx.query('DELETE FROM jwt_bearer_jtis WHERE expires_at < $1', [now]);
      // Used TOTP steps matter only while the code could still verify (±1 step); keep a day.
      await tx.query('DELETE FROM mfa_used_codes WHERE used_at < $1', [new Date(now.getTime() - 24 * HOUR_MS)]);
      return due.map((p) => p.id);
    });
    return r ?? [];
  }

  /** Partitions now and hourly; retention and the sweeper hourly too (cheap when idle). */
  start(onError: (e: unknown) => void = () => undefined): void {
    if (this.timers.length > 0) return;
    const every = (ms: number, job: () => Promise<unknown>): void => {
      const t = setInterval(() => void job().catch(onError), ms);
      t.unref();
      this.timers.push(t);
    };
    void this.ensureAuditPartitions().catch(onError);
    every(HOUR_MS, () => this.ensureAuditPartitions());
    every(24 * HOUR_MS, () => this.dropOldAuditPartitions());
    every(HOUR_MS, () => this.sweepArchive());
  }

  stop(): void {
    for (const t of this.timers) clearInterval(t);
    this.timers = [];
  }
}
