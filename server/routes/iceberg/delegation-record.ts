/**
 * What every credential vend and every remote signature leaves behind (docs/vending.md,
 * "Observability"): a Prometheus count by catalog and outcome, and a `user_audit_log` row naming
 * the principal, the table, the mode and the expiry. Never a key, token, session token or
 * signature: the details are built here from names and numbers only, not from the responses.
 *
 * Signing runs once per object request a client makes (thousands a second), so the audit rows are
 * written behind: queued in memory and inserted in batches (one multi-row INSERT per flush) a few
 * times a second, and flushed when the server closes. Vend and sign rows are not audit *events*
 * (those are for mutations and fan out to webhooks); they are log rows, readable in
 * `system.audit_log` like the others.
 */
import { randomUUID } from 'node:crypto';
import { Counter, type Registry } from 'prom-client';
import type { MetaStore } from '../../../catalog/store/meta-store.js';

/** What happened to a request: served, refused (any 4xx), or failed (5xx, a store or STS failure). */
export type DelegationOutcome = 'issued' | 'denied' | 'error';

/** The audit `event_type` of each kind of record. */
export type DelegationEventType = 'vend_credentials' | 'sign_request';

export interface DelegationRecord {
  readonly type: DelegationEventType;
  readonly outcome: DelegationOutcome;
  readonly tenantId: string;
  readonly principal: { readonly id: string; readonly name: string } | undefined;
  readonly catalog: string;
  readonly namespace: readonly string[];
  readonly table: string;
  /** The table's UUID when the table was found. */
  readonly tableUuid: string | undefined;
  readonly mode: 'read' | 'read-write';
  /** Epoch ms the credential or signature stops working (issued only). */
  readonly expiresAtMs: number | undefined;
  /** Names and reasons only: which request (load, credentials, batch; the signed method and path), why refused. */
  readonly details: Readonly<Record<string, string | number | boolean | readonly string[]>>;
  readonly at: number;
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** Rows per INSERT. */
const BATCH_ROWS = 500;
/** Rows kept while the store is slow or away; beyond it rows are dropped and counted. */
const MAX_QUEUED = 100_000;
const FLUSH_INTERVAL_MS = 100;

/**
 * One `user_audit_log` row as the JSON text of an array in the INSERT's column order: id,
 * tenant_id, actor_id, actor_name, target_id, target_name, event_type, details (an object),
 * created_at (ISO 8601).
 */
type AuditRow = string;

/**
 * One statement whatever the batch size (the batch is one JSON array of rows), so it is prepared
 * once per connection: PostgreSQL neither parses nor plans a 500-row VALUES list on every flush.
 * One JSON text rather than an array parameter per column: the rows are encoded by the native
 * `JSON.stringify` when recorded, not escaped element by element by the driver at each flush.
 */
const INSERT_ROWS = `INSERT INTO user_audit_log (id, tenant_id, actor_id, actor_name, target_id, target_name, event_type, details, created_at)
  SELECT (r->>0)::uuid, r->>1, (r->>2)::uuid, r->>3, (r->>4)::uuid, r->>5, r->>6, (r->7)::jsonb, (r->>8)::timestamptz
    FROM json_array_elements($1::json) AS r`;

/**
 * The row of a record, made when it is recorded: the cost of each row (its id, its JSON) falls on
 * the request that made it rather than on one flush that stalls every request in flight.
 */
function rowOf(r: DelegationRecord): AuditRow {
  const details = {
    outcome: r.outcome, catalog: r.catalog, namespace: r.namespace, table: r.table, mode: r.mode,
    ...(r.expiresAtMs !== undefined ? { expires_at: new Date(r.expiresAtMs).toISOString() } : {}),
    ...r.details,
  };
  return JSON.stringify([
    randomUUID(), r.tenantId, r.principal !== undefined && UUID.test(r.principal.id) ? r.principal.id : null, r.principal?.name ?? null,
    r.tableUuid !== undefined && UUID.test(r.tableUuid) ? r.tableUuid : null, [r.catalog, ...r.namespace, r.table].join('.'),
    r.type, details, new Date(r.at).toISOString(),
  ]);
}

export class DelegationRecorder {
  readonly vends: Counter<'catalog' | 'outcome'>;
  readonly signs: Counter<'catalog' | 'outcome'>;
  private readonly dropped: Counter;
  private queue: AuditRow[] = [];
  private flushing: Promise<void> | undefined;
  private timer: NodeJS.Timeout | undefined;
  private closed = false;

  constructor(
    private readonly store: MetaStore,
    registry: Registry,
    private readonly onWriteError: (e: unknown) => void,
  ) {
    this.vends = new Counter({
      name: 'floe_credential_vends_total',
      help: 'Storage credential requests (table loads asking for vended credentials, the credentials endpoints) by catalog and outcome (issued, denied, error)',
      labelNames: ['catalog', 'outcome'],
      registers: [registry],
    });
    this.signs = new Counter({
      name: 'floe_remote_signs_total',
      help: 'Remote signing requests by catalog and outcome (issued, denied, error)',
      labelNames: ['catalog', 'outcome'],
      registers: [registry],
    });
    this.dropped = new Counter({
      name: 'floe_delegation_audit_dropped_total',
      help: 'Vend and sign audit rows dropped because the store could not take them',
      registers: [registry],
    });
  }

  record(r: DelegationRecord): void {
    (r.type === 'vend_credentials' ? this.vends : this.signs).inc({ catalog: r.catalog, outcome: r.outcome });
    if (this.queue.length >= MAX_QUEUED) {
      this.dropped.inc();
      return;
    }
    this.queue.push(rowOf(r));
    if (this.queue.length >= BATCH_ROWS) void this.flush();
    else if (this.timer === undefined && !this.closed) {
      this.timer = setTimeout(() => {
        this.timer = undefined;
        void this.flush();
      }, FLUSH_INTERVAL_MS);
      this.timer.unref();
    }
  }

  /** Writes everything queued so far; resolves when it is in the store (or was dropped). */
  async flush(): Promise<void> {
    while (this.flushing !== undefined) await this.flushing;
    if (this.queue.length === 0) return;
    const rows = this.queue.splice(0, BATCH_ROWS);
    this.flushing = this.write(rows).finally(() => {
      this.flushing = undefined;
    });
    await this.flushing;
    if (this.queue.length > 0) await this.flush();
  }

  private async write(rows: readonly AuditRow[]): Promise<void> {
    try {
      await this.store.query(INSERT_ROWS, [`[${rows.join(',')}]`], { prepared: true });
    } catch (e) {
      this.dropped.inc(rows.length);
      this.onWriteError(e);
    }
  }

  /** Flushes what is queued and stops the timer (the server is closing). */
  async close(): Promise<void> {
    this.closed = true;
    if (this.timer !== undefined) clearTimeout(this.timer);
    this.timer = undefined;
    await this.flush();
  }
}

/** The outcome of a failed request by its HTTP status: a refusal (4xx) or a failure. */
export function outcomeOfStatus(status: number | undefined): DelegationOutcome {
  return status !== undefined && status >= 400 && status < 500 ? 'denied' : 'error';
}
