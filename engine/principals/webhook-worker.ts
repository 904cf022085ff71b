/**
 * Webhook delivery: a worker claims due delivery rows (pending, or retrying whose backoff has
 * passed) with `FOR UPDATE SKIP LOCKED` and a lease, so several replicas never post the same row
 * at once and a crashed worker's rows come back when the lease runs out (at-least-once; every
 * attempt of an event carries the same X-Svc-Event-Id). The request body is the event payload
 * as stored; X-Svc-Signature is the hex HMAC-SHA256 of exactly those bytes under the
 * subscription secret. 2xx → delivered; anything else → retrying after 30 s, then 2 min; the
 * third failed attempt → failed (three attempts in all, as the spec says), until an operator
 * replays it.
 * Redirects are not followed, private targets are refused unless allowed, responses time out.
 */
import { createHmac } from 'node:crypto';
import { Agent, request } from 'undici';
import type { MetaStore } from '../../catalog/store/meta-store.js';
import type { SecretBox } from './secret-box.js';
import type { Clock, WebhooksConfig } from './settings.js';
import { guardedLookup, isPrivateAddressLiteral } from './webhook-targets.js';

/**
 * Waits after the 1st and 2nd failed attempt; the 3rd failure is final. The spec's "three
 * attempts" are attempts in all, so its third backoff (8 min) would precede a fourth attempt that
 * is never sent (docs/spec-differences.md).
 */
export const RETRY_BACKOFF_MS: readonly number[] = [30_000, 120_000];
/** Attempts in all, the first included. */
export const MAX_ATTEMPTS = RETRY_BACKOFF_MS.length + 1;

export type DeliveryState = 'pending' | 'retrying' | 'delivered' | 'failed';

/** Pure: the row's next state after an attempt numbered `attempt` (1-based) with this outcome. */
export function nextDeliveryState(attempt: number, success: boolean, nowMs: number): { state: DeliveryState; nextAttemptAt: number | undefined } {
  if (success) return { state: 'delivered', nextAttemptAt: undefined };
  if (attempt >= MAX_ATTEMPTS) return { state: 'failed', nextAttemptAt: undefined };
  return { state: 'retrying', nextAttemptAt: nowMs + RETRY_BACKOFF_MS[attempt - 1]! };
}

export function signBody(secret: string, body: string): string {
  return createHmac('sha256', secret).update(body, 'utf8').digest('hex');
}

export interface WebhookWorkerOptions {
  readonly store: MetaStore;
  readonly clock: Clock;
  readonly config: WebhooksConfig;
  readonly secrets: SecretBox;
  /** Extra trusted CA certificates (PEM) for receivers. */
  readonly ca?: string | undefined;
}

export interface DeliveryRound {
  readonly attempted: number;
  readonly delivered: number;
  readonly failed: number;
}

interface Claimed {
  id: string; attempts: number; lease_until: Date; url: string; secret_encrypted: string; subscription_id: string;
  event_id: string; event_type: string; payload: unknown;
}

export class WebhookWorker {
  private readonly agent: Agent;
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<DeliveryRound> | undefined;

  constructor(private readonly o: WebhookWorkerOptions) {
    this.agent = new Agent({
      connect: { lookup: guardedLookup(o.config.allow_private_targets), ...(o.ca ? { ca: o.ca } : {}), rejectUnauthorized: true, timeout: o.config.timeout_ms },
      headersTimeout: o.config.timeout_ms,
      bodyTimeout: o.config.timeout_ms,
      connections: 32,
    });
  }

  /** Posts every due row once (at most `batch_size` per claim, claims until none are due). */
  async runOnce(): Promise<DeliveryRound> {
    if (this.running) return this.running;
    this.running = this.round().finally(() => { this.running = undefined; });
    return this.running;
  }

  private async round(): Promise<DeliveryRound> {
    let attempted = 0;
    let delivered = 0;
    let failed = 0;
    for (;;) {
      const batch = await this.claim();
      if (batch.length === 0) break;
      const outcomes = await Promise.all(batch.map((row) => this.deliver(row)));
      attempted += batch.length;
      delivered += outcomes.filter((s) => s === 'delivered').length;
      failed += outcomes.filter((s) => s === 'failed').length;
      if (batch.length < this.o.config.batch_size) break;
    }
    return { attempted, delivered, failed };
  }

  private async claim(): Promise<Claimed[]> {
    const now = new Date(this.o.clock.now());
    const lease = new Date(now.getTime() + this.o.config.timeout_ms * 2 + 30_000);
    return this.o.store.transaction(async (tx) => {
      const ids = (await tx.query<{ id: string }>(
        `SELECT id FROM webhook_deliveries
          WHERE state IN ('pending', 'retrying') AND next_attempt_at <= $1 AND (lease_until IS NULL OR lease_until <= $1)
          ORDER BY next_attempt_at LIMIT $2 FOR UPDATE SKIP LOCKED`, [now, this.o.config.batch_size])).rows.map((r) => r.id);
      if (ids.length === 0) return [];
      await tx.query('UPDATE webhook_deliveries SET lease_until = $2, updated_at = $3 WHERE id = ANY($1::uuid[])', [ids, lease, now]);
      return (await tx.query<Claimed>(
        `SELECT d.id, d.attempts, d.lease_until, s.url, s.secret_encrypted, s.id AS subscription_id, e.id AS event_id, e.event_type, e.payload
           FROM webhook_deliveries d JOIN webhook_subscriptions s ON s.id = d.subscription_id JOIN audit_events e ON e.id = d.event_id
          WHERE d.id = ANY($1::uuid[]) ORDER BY d.next_attempt_at`, [ids])).rows;
    });
  }

  private async deliver(row: Claimed): Promise<DeliveryState> {
    const attempt = row.attempts + 1;
    const body = JSON.stringify(row.payload);
    let status: number | undefined;
    let error: string | undefined;
    try {
      const url = new URL(row.url);
      if (url.protocol !== 'https:') throw new Error('webhook URLs must be https');
      if (!this.o.config.allow_private_targets && isPrivateAddressLiteral(url.hostname)) throw new Error('private webhook targets are not allowed');
      const secret = this.o.secrets.open(row.secret_encrypted, `webhook:${row.subscription_id}`);
      const res = await request(url, {
        method: 'POST',
        dispatcher: this.agent,
        headers: {
          'content-type': 'application/json',
          'user-agent': 'floe-webhooks/1',
          'x-svc-event-type': row.event_type,
          'x-svc-event-id': row.event_id,
          'x-svc-signature': signBody(secret, body),
          'x-svc-delivery-attempt': String(attempt),
        },
        body,
        headersTimeout: this.o.config.timeout_ms,
        bodyTimeout: this.o.config.timeout_ms,
      });
      status = res.statusCode;
      await res.body.dump({ limit: 64 * 1024 }).catch(() => undefined);
    } catch (e) {
      error = e instanceof Error ? e.message.slice(0, 500) : 'delivery failed';
    }
    const success = status !== undefined && status >= 200 && status < 300;
    if (!success && error === undefined) error = `receiver answered ${status}`;
    const nowMs = this.o.clock.now();
    const next = nextDeliveryState(attempt, success, nowMs);
    await this.o.store.query(
      `UPDATE webhook_deliveries SET state = $2, attempts = $3, next_attempt_at = COALESCE($4, next_attempt_at), lease_until = NULL,
              last_status = $5, last_error = $6, delivered_at = $7, updated_at = $8
        WHERE id = $1 AND lease_until = $9`,
      [row.id, next.state, attempt, next.nextAttemptAt !== undefined ? new Date(next.nextAttemptAt) : null, status ?? null, success ? null : error ?? null,
        success ? new Date(nowMs) : null, new Date(nowMs), row.lease_until]);
    return next.state;
  }

  /** Runs a round every `interval_seconds` (the spec's 10 s) until stopped. */
  start(onError: (e: unknown) => void = () => undefined): void {
    if (this.timer) return;
    this.timer = setInterval(() => void this.runOnce().catch(onError), this.o.config.interval_seconds * 1000);
    this.timer.unref();
  }

  async stop(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
    await this.running?.catch(() => undefined);
    await this.agent.close();
  }
}

export interface ReplayFilter {
  readonly tenantId?: string;
  readonly deliveryId?: string;
  readonly eventId?: string;
}

/** The operator's replay: failed rows back to pending with a fresh attempt count. */
export async function replayFailedDeliveries(store: MetaStore, clock: Clock, filter: ReplayFilter = {}): Promise<number> {
  const params: unknown[] = [new Date(clock.now())];
  let where = "state = 'failed'";
  if (filter.tenantId) { params.push(filter.tenantId); where += ` AND tenant_id = $${params.length}`; }
  if (filter.deliveryId) { params.push(filter.deliveryId); where += ` AND id = $${params.length}::uuid`; }
  if (filter.eventId) { params.push(filter.eventId); where += ` AND event_id = $${params.length}::uuid`; }
  where += ' AND subscription_id IN (SELECT id FROM webhook_subscriptions WHERE dropped_at IS NULL)';
  const r = await store.query(`UPDATE webhook_deliveries SET state = 'pending', attempts = 0, next_attempt_at = $1, lease_until = NULL, updated_at = $1 WHERE ${where}`, params);
  return r.rowCount;
}
