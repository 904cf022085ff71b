/**
 * Query history: every statement the query interface receives, from `queued` to `completed`,
 * `failed` or `cancelled`, with the metrics of the service spec. The SQL is redacted by the caller
 * (grammar's `redact`) before it reaches this module; nothing here sees a secret.
 *
 * Writes go behind the request: each transition updates the record in memory and a flusher
 * upserts the latest state of every touched record in one statement, a few milliseconds later.
 * That keeps three lifecycle writes per query off the query's own latency and turns them into a
 * handful of store round trips per second at any load. Reads flush first, so a client that lists
 * its history right after a query sees it. A crash loses at most the last flush interval.
 */
import type { MetaStore } from '../../catalog/store/meta-store.js';
import type { SystemColumn, SystemPushdown, SystemRow, SystemTableProvider, SystemViewer } from '../system/provider.js';

export type QueryStatus = 'queued' | 'running' | 'completed' | 'failed' | 'cancelled';
export const QUERY_STATUSES: readonly QueryStatus[] = ['queued', 'running', 'completed', 'failed', 'cancelled'];

export interface Clock {
  now(): number;
}

/** One history row, as kept in memory and in `query_history`. */
export interface HistoryRecord {
  readonly queryId: string;
  readonly tenantId: string;
  /** The submitting principal's id. */
  readonly userId: string;
  readonly userName: string;
  status: QueryStatus;
  /** Redacted SQL text. */
  readonly sql: string;
  queryType: string;
  workloadClass: string | null;
  /** Path of the admitting resource group, `/root/a/b`. */
  resourceGroup: string | null;
  priority: number | null;
  warehouse: string | null;
  source: string | null;
  readonly queuedAt: number;
  startedAt: number | null;
  endedAt: number | null;
  durationMs: number | null;
  rowsProduced: number | null;
  bytesScanned: number | null;
  fragments: number | null;
  errorCode: string | null;
  sqlState: string | null;
  errorMessage: string | null;
  cuConsumed: number | null;
}

export interface NewQuery {
  readonly queryId: string;
  readonly tenantId: string;
  readonly userId: string;
  readonly userName: string;
  readonly sql: string;
  readonly queryType: string;
  readonly source?: string | null;
  readonly warehouse?: string | null;
}

export interface Admission {
  readonly workloadClass?: string | null;
  readonly resourceGroup?: string | null;
  readonly priority?: number | null;
}

export interface Completion {
  readonly rowsProduced: number;
  readonly bytesScanned?: number;
  readonly fragments?: number;
}

export interface Failure {
  readonly code: string;
  readonly sqlState: string;
  readonly message: string;
}

export interface HistoryFilter {
  readonly limit?: number;
  readonly offset?: number;
  readonly status?: QueryStatus;
  readonly userId?: string;
  readonly queryType?: string;
}

export const HISTORY_DEFAULT_LIMIT = 50;
export const HISTORY_MAX_LIMIT = 500;

export interface QueryHistoryOptions {
  /** Compute units per hour of each warehouse; `cu_consumed` = rate × execution time. */
  readonly cuPerHour: (warehouse: string | null) => number;
  /** How long a transition may wait before it is written (ms). */
  readonly flushIntervalMs?: number;
}

const COLUMNS: readonly SystemColumn[] = [
  { name: 'query_id', type: 'VARCHAR' },
  { name: 'status', type: 'VARCHAR' },
  { name: 'sql', type: 'VARCHAR' },
  { name: 'user_id', type: 'VARCHAR' },
  { name: 'user_name', type: 'VARCHAR' },
  { name: 'tenant_id', type: 'VARCHAR' },
  { name: 'query_type', type: 'VARCHAR' },
  { name: 'workload_class', type: 'VARCHAR' },
  { name: 'resource_group', type: 'VARCHAR' },
  { name: 'priority', type: 'INTEGER' },
  { name: 'warehouse', type: 'VARCHAR' },
  { name: 'source', type: 'VARCHAR' },
  { name: 'queued_at', type: 'TIMESTAMPTZ' },
  { name: 'started_at', type: 'TIMESTAMPTZ' },
  { name: 'ended_at', type: 'TIMESTAMPTZ' },
  { name: 'duration_ms', type: 'BIGINT' },
  { name: 'rows_produced', type: 'BIGINT' },
  { name: 'bytes_scanned', type: 'BIGINT' },
  { name: 'fragments', type: 'INTEGER' },
  { name: 'error_code', type: 'VARCHAR' },
  { name: 'sql_state', type: 'VARCHAR' },
  { name: 'error_message', type: 'VARCHAR' },
  { name: 'cu_consumed', type: 'DOUBLE' },
];

const WRITE_COLUMNS = COLUMNS.map((c) => c.name);

/** A statement's history from arrival to its terminal status. */
export class QueryLifecycle {
  constructor(private readonly history: QueryHistory, readonly record: HistoryRecord) {}

  get queryId(): string {
    return this.record.queryId;
  }

  /** Admitted and executing. */
  running(admission: Admission = {}): void {
    const r = this.record;
    if (r.status !== 'queued') return;
    r.status = 'running';
    r.startedAt = this.history.now();
    if (admission.workloadClass !== undefined) r.workloadClass = admission.workloadClass;
    if (admission.resourceGroup !== undefined) r.resourceGroup = admission.resourceGroup;
    if (admission.priority !== undefined) r.priority = admission.priority;
    this.history.touch(r);
  }

  /** Routing and classification known before admission (a queued query shows its group). */
  classified(admission: Admission): void {
    const r = this.record;
    if (admission.workloadClass !== undefined) r.workloadClass = admission.workloadClass;
    if (admission.resourceGroup !== undefined) r.resourceGroup = admission.resourceGroup;
    if (admission.priority !== undefined) r.priority = admission.priority;
    this.history.touch(r);
  }

  completed(c: Completion): void {
    this.end('completed');
    const r = this.record;
    r.rowsProduced = c.rowsProduced;
    r.bytesScanned = c.bytesScanned ?? 0;
    r.fragments = c.fragments ?? 0;
    this.history.touch(r);
  }

  failed(f: Failure): void {
    this.end('failed');
    this.setError(f);
  }

  /** Cancelled by the user, a timeout or the query killer; `f.message` states the reason. */
  cancelled(f: Failure): void {
    this.end('cancelled');
    this.setError(f);
  }

  get ended(): boolean {
    return this.record.endedAt !== null;
  }

  private setError(f: Failure): void {
    const r = this.record;
    r.errorCode = f.code;
    r.sqlState = f.sqlState;
    r.errorMessage = f.message;
    this.history.touch(r);
  }

  private end(status: 'completed' | 'failed' | 'cancelled'): void {
    const r = this.record;
    if (r.endedAt !== null) throw new Error(`query ${r.queryId} already ended as ${r.status}`);
    const now = this.history.now();
    r.status = status;
    r.endedAt = now;
    // duration_ms is execution time: from start to end (0 when it never started).
    r.durationMs = r.startedAt === null ? 0 : now - r.startedAt;
    r.cuConsumed = this.history.cuFor(r);
  }
}

export class QueryHistory implements SystemTableProvider {
  readonly name = 'query_history';
  readonly columns = COLUMNS;
  readonly #pending = new Map<string, HistoryRecord>();
  readonly #flushIntervalMs: number;
  #timer: NodeJS.Timeout | undefined;
  #flushing: Promise<void> = Promise.resolve();
  #closed = false;
  #lastError: unknown;

  constructor(private readonly store: MetaStore, private readonly clock: Clock, private readonly options: QueryHistoryOptions) {
    this.#flushIntervalMs = options.flushIntervalMs ?? 10;
  }

  now(): number {
    return this.clock.now();
  }

  cuFor(r: HistoryRecord): number {
    const rate = this.options.cuPerHour(r.warehouse);
    return ((r.durationMs ?? 0) / 3_600_000) * rate;
  }

  /** Records a statement as `queued` and returns the handle of its lifecycle. */
  begin(q: NewQuery): QueryLifecycle {
    const record: HistoryRecord = {
      queryId: q.queryId, tenantId: q.tenantId, userId: q.userId, userName: q.userName, status: 'queued',
      sql: q.sql, queryType: q.queryType, workloadClass: null, resourceGroup: null, priority: null,
      warehouse: q.warehouse ?? null, source: q.source ?? null, queuedAt: this.clock.now(), startedAt: null, endedAt: null,
      durationMs: null, rowsProduced: null, bytesScanned: null, fragments: null, errorCode: null, sqlState: null,
      errorMessage: null, cuConsumed: null,
    };
    this.touch(record);
    return new QueryLifecycle(this, record);
  }

  /** Queues a record's latest state for writing. */
  touch(r: HistoryRecord): void {
    if (this.#closed) return;
    this.#pending.set(r.queryId, r);
    if (this.#timer === undefined) {
      this.#timer = setTimeout(() => {
        this.#timer = undefined;
        void this.flush().catch(() => undefined);
      }, this.#flushIntervalMs);
      this.#timer.unref();
    }
  }

  /** Writes everything queued so far; resolves when it is in the store. */
  flush(): Promise<void> {
    const next = this.#flushing.then(() => this.writePending());
    this.#flushing = next.catch(() => undefined);
    return next;
  }

  /** The last error a background flush met (the store was away); cleared by a successful one. */
  get lastWriteError(): unknown {
    return this.#lastError;
  }

  private async writePending(): Promise<void> {
    if (this.#pending.size === 0) return;
    const batch = [...this.#pending.values()].map((r) => rowOf(r));
    this.#pending.clear();
    const params: unknown[] = [];
    const tuples = batch.map((row) => `(${WRITE_COLUMNS.map((c) => {
      params.push(row[c]);
      return `$${params.length}`;
    }).join(', ')})`);
    const updates = WRITE_COLUMNS.filter((c) => c !== 'query_id').map((c) => `${c} = EXCLUDED.${c}`).join(', ');
    try {
      await this.store.query(`INSERT INTO query_history (${WRITE_COLUMNS.join(', ')}) VALUES ${tuples.join(', ')}
        ON CONFLICT (query_id) DO UPDATE SET ${updates}`, params);
      this.#lastError = undefined;
    } catch (e) {
      // Put back what was not written unless a newer state arrived meanwhile; retry later.
      for (const row of batch) {
        const id = row.query_id as string;
        if (!this.#pending.has(id)) this.#pending.set(id, recordOf(row));
      }
      this.#lastError = e;
      if (!this.#closed && this.#timer === undefined) {
        this.#timer = setTimeout(() => {
          this.#timer = undefined;
          void this.flush().catch(() => undefined);
        }, 1000);
        this.#timer.unref();
      }
      throw e;
    }
  }

  /** Lists history rows visible to `viewer`, newest first. */
  async list(viewer: SystemViewer, filter: HistoryFilter = {}): Promise<readonly SystemRow[]> {
    await this.flush().catch(() => undefined);
    const where = ['tenant_id = $1'];
    const params: unknown[] = [viewer.tenantId];
    if (!viewer.isTenantAdmin) {
      params.push(viewer.principalId);
      where.push(`user_id = $${params.length}`);
    }
    if (filter.userId !== undefined) {
      params.push(filter.userId);
      where.push(`user_id = $${params.length}`);
    }
    if (filter.status !== undefined) {
      params.push(filter.status);
      where.push(`status = $${params.length}`);
    }
    if (filter.queryType !== undefined) {
      params.push(filter.queryType);
      where.push(`query_type = $${params.length}`);
    }
    const limit = Math.min(Math.max(0, Math.floor(filter.limit ?? HISTORY_DEFAULT_LIMIT)), HISTORY_MAX_LIMIT);
    const offset = Math.max(0, Math.floor(filter.offset ?? 0));
    params.push(limit, offset);
    const r = await this.store.query(
      `SELECT ${WRITE_COLUMNS.join(', ')} FROM query_history WHERE ${where.join(' AND ')}
        ORDER BY queued_at DESC, query_id DESC LIMIT $${params.length - 1} OFFSET $${params.length}`, params);
    return r.rows.map(normaliseRow);
  }

  /** One row by id, if `viewer` may see it. */
  async get(viewer: SystemViewer, queryId: string): Promise<SystemRow | undefined> {
    if (!/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i.test(queryId)) return undefined;
    await this.flush().catch(() => undefined);
    const r = await this.store.query(`SELECT ${WRITE_COLUMNS.join(', ')} FROM query_history WHERE query_id = $1 AND tenant_id = $2`, [queryId, viewer.tenantId]);
    const row = r.rows[0];
    if (!row) return undefined;
    if (!viewer.isTenantAdmin && row.user_id !== viewer.principalId) return undefined;
    return normaliseRow(row);
  }

  /** The system-table face: `system.query_history`. */
  rows(viewer: SystemViewer, pushdown: SystemPushdown = {}): Promise<readonly SystemRow[]> {
    const eq = pushdown.equals;
    const status = eq?.get('status');
    return this.list(viewer, {
      limit: pushdown.limit ?? HISTORY_MAX_LIMIT,
      ...(pushdown.offset !== undefined ? { offset: pushdown.offset } : {}),
      ...(status !== undefined && (QUERY_STATUSES as readonly string[]).includes(status) ? { status: status as QueryStatus } : {}),
      ...(eq?.get('user_id') !== undefined ? { userId: eq.get('user_id')! } : {}),
      ...(eq?.get('query_type') !== undefined ? { queryType: eq.get('query_type')! } : {}),
    });
  }

  /** Stops the timer and writes what is left. */
  async close(): Promise<void> {
    if (this.#timer) clearTimeout(this.#timer);
    this.#timer = undefined;
    await this.flush().catch(() => undefined);
    this.#closed = true;
  }
}

function rowOf(r: HistoryRecord): Record<string, unknown> {
  const ts = (ms: number | null) => (ms === null ? null : new Date(ms));
  return {
    query_id: r.queryId, status: r.status, sql: r.sql, user_id: r.userId, user_name: r.userName, tenant_id: r.tenantId,
    query_type: r.queryType, workload_class: r.workloadClass, resource_group: r.resourceGroup, priority: r.priority,
    warehouse: r.warehouse, source: r.source, queued_at: ts(r.queuedAt), started_at: ts(r.startedAt), ended_at: ts(r.endedAt),
    duration_ms: r.durationMs, rows_produced: r.rowsProduced, bytes_scanned: r.bytesScanned, fragments: r.fragments,
    error_code: r.errorCode, sql_state: r.sqlState, error_message: r.errorMessage, cu_consumed: r.cuConsumed,
  };
}

function recordOf(row: Record<string, unknown>): HistoryRecord {
  const ms = (d: unknown) => (d instanceof Date ? d.getTime() : null);
  return {
    queryId: row.query_id as string, tenantId: row.tenant_id as string, userId: row.user_id as string, userName: row.user_name as string,
    status: row.status as QueryStatus, sql: row.sql as string, queryType: row.query_type as string,
    workloadClass: row.workload_class as string | null, resourceGroup: row.resource_group as string | null,
    priority: row.priority as number | null, warehouse: row.warehouse as string | null, source: row.source as string | null,
    queuedAt: ms(row.queued_at)!, startedAt: ms(row.started_at), endedAt: ms(row.ended_at), durationMs: row.duration_ms as number | null,
    rowsProduced: row.rows_produced as number | null, bytesScanned: row.bytes_scanned as number | null, fragments: row.fragments as number | null,
    errorCode: row.error_code as string | null, sqlState: row.sql_state as string | null, errorMessage: row.error_message as string | null,
    cuConsumed: row.cu_consumed as number | null,
  };
}

/** int8 columns arrive as number or bigint; uuids as strings; keep the column order of COLUMNS. */
function normaliseRow(row: Record<string, unknown>): SystemRow {
  const out: Record<string, unknown> = {};
  for (const c of WRITE_COLUMNS) {
    const v = row[c];
    out[c] = typeof v === 'bigint' && Number.isSafeInteger(Number(v)) ? Number(v) : v ?? null;
  }
  return out;
}
