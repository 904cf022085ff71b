/**
 * The audit trail: every mutation writes one `user_audit_log` row, one audit event and one
 * delivery row per matching webhook subscription, all in the caller's transaction, so an event
 * exists exactly when its mutation committed (the outbox pattern: delivery is at-least-once).
 */
import { randomUUID } from 'node:crypto';
import type { SqlExecutor } from '../../catalog/store/meta-store.js';
import { floeError } from '../../grammar/errors.js';
import { eventAlias, subscriptionMatches, type AuditEventType } from './events.js';
import { TENANT_ADMIN_ROLE } from './principals.js';

export interface AuditEntry {
  readonly tenantId: string;
  readonly actor: { readonly id: string; readonly name: string } | undefined;
  readonly target: { readonly id: string; readonly name: string } | undefined;
  readonly type: AuditEventType;
  /** Never secrets: names, reasons, flags, scopes. */
  readonly details: Readonly<Record<string, unknown>>;
  readonly at: Date;
}

/** The JSON body every webhook delivery of this event posts (the same bytes on every attempt). */
export interface AuditEventPayload {
  readonly id: string;
  readonly type: AuditEventType;
  readonly alias: string;
  readonly tenant: string;
  readonly occurred_at: string;
  readonly actor: { readonly id: string; readonly name: string } | null;
  readonly target: { readonly id: string; readonly name: string } | null;
  readonly details: Readonly<Record<string, unknown>>;
}

export async function recordAudit(tx: SqlExecutor, e: AuditEntry): Promise<string> {
  const auditId = randomUUID();
  await tx.query(
    `INSERT INTO user_audit_log (id, tenant_id, actor_id, actor_name, target_id, target_name, event_type, details, created_at)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)`,
    [auditId, e.tenantId, e.actor?.id ?? null, e.actor?.name ?? null, e.target?.id ?? null, e.target?.name ?? null, e.type, JSON.stringify(e.details), e.at],
  );
  const eventId = randomUUID();
  const payload: AuditEventPayload = {
    id: eventId, type: e.type, alias: eventAlias(e.type), tenant: e.tenantId, occurred_at: e.at.toISOString(),
    actor: e.actor ?? null, target: e.target ?? null, details: e.details,
  };
  await tx.query('INSERT INTO audit_events (id, tenant_id, event_type, payload, created_at) VALUES ($1, $2, $3, $4, $5)',
    [eventId, e.tenantId, e.type, JSON.stringify(payload), e.at]);
  const subs = await tx.query<{ id: string; events: string[] | null }>(
    'SELECT id, events FROM webhook_subscriptions WHERE tenant_id = $1 AND dropped_at IS NULL', [e.tenantId]);
  for (const sub of subs.rows) {
    if (!subscriptionMatches(sub.events, e.type)) continue;
    await tx.query(
      `INSERT INTO webhook_deliveries (id, tenant_id, event_id, subscription_id, state, attempts, next_attempt_at, created_at, updated_at)
       VALUES ($1, $2, $3, $4, 'pending', 0, $5, $5, $5)`,
      [randomUUID(), e.tenantId, eventId, sub.id, e.at],
    );
  }
  return eventId;
}

/** The columns of `system.audit_log` (the spec's audit row plus the actor's name). */
export const AUDIT_LOG_COLUMNS: readonly (readonly [string, string])[] = [
  ['tenant_id', 'VARCHAR'], ['actor_id', 'UUID'], ['actor_name', 'VARCHAR'], ['target_id', 'UUID'], ['target_name', 'VARCHAR'],
  ['event_type', 'VARCHAR'], ['details', 'JSON'], ['created_at', 'TIMESTAMP WITH TIME ZONE'],
];

/**
 * Rows of `system.audit_log` for the query service: the caller's tenant only, newest first, and
 * only for tenant_admin (PERMISSION_DENIED otherwise).
 */
export async function readAuditLog(db: SqlExecutor, who: { readonly tenantId: string; readonly roles: readonly string[] }, o: { readonly limit?: number; readonly since?: Date } = {}): Promise<{ columns: string[]; types: string[]; rows: unknown[][] }> {
  if (!who.roles.includes(TENANT_ADMIN_ROLE)) throw floeError('PERMISSION_DENIED', { detail: `system.audit_log is readable by ${TENANT_ADMIN_ROLE} only` });
  const limit = Math.max(1, Math.min(o.limit ?? 1000, 100_000));
  const r = await db.query<{ tenant_id: string; actor_id: string | null; actor_name: string | null; target_id: string | null; target_name: string | null; event_type: string; details: unknown; created_at: Date }>(
    `SELECT tenant_id, actor_id, actor_name, target_id, target_name, event_type, details, created_at FROM user_audit_log
      WHERE tenant_id = $1 AND created_at >= $2 ORDER BY created_at DESC, id LIMIT $3`, [who.tenantId, o.since ?? new Date(0), limit]);
  return {
    columns: AUDIT_LOG_COLUMNS.map((c) => c[0]), types: AUDIT_LOG_COLUMNS.map((c) => c[1]),
    rows: r.rows.map((x) => [x.tenant_id, x.actor_id, x.actor_name, x.target_id, x.target_name, x.event_type, JSON.stringify(x.details), x.created_at.toISOString()]),
  };
}
