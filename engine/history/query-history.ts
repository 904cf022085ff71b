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
 *
 * A flush sends the records as one JSON parameter (`json_to_recordset`), in statements of at most
 * `WRITE_CHUNK_ROWS` rows. One parameter whatever the batch: PostgreSQL takes at most 65,535, which
 * a parameter per value exceeded at 2,850 records, so after a store outage at a few thousand
 * statements per second the retry could never succeed. A record the store refuses as data (a
 * tenant deleted meanwhile) is dropped alone instead of blocking every record behind it, and text
 * is made storable first (PostgreSQL text cannot hold U+0000, which a request can carry). What the
 * store has not taken yet is bounded: past `maxPending` records a new statement is refused (503)
 * until the backlog drains, rather than growing the heap until the process dies.
 */
import { floeError } from '../../grammar/errors.js';
import { sqlState } from '../../catalog/store/meta-store.js';
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
  /** Records not yet in the store past which new statements are refused (default 100,000). */
  readonly maxPending?: number;
}

/** Rows per INSERT of a flush (a flush of more sends several, in order). */
export const WRITE_CHUNK_ROWS = 5_000;
const DEFAULT_MAX_PENDING = 100_000;

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

/**
 * The upsert of a chunk: the records as JSON (`HistoryRecord` objects as they are, camelCase keys),
 * times as epoch milliseconds (cheaper to send than formatted dates, and exact).
 */
const SQL_TYPES: Readonly<Partial<Record<SystemColumn['type'], string>>> = { VARCHAR: 'text', INTEGER: 'integer', BIGINT: 'bigint', DOUBLE: 'float8', TIMESTAMPTZ: 'float8' };
const WRITE_SQL = (() => {
  const field = (column: string) => `"${column.replace(/_([a-z])/g, (_, c: string) => c.toUpperCase())}"`;
  const fields = COLUMNS.map((c) => {
    const type = c.name === 'query_id' ? 'uuid' : SQL_TYPES[c.type];
    if (type === undefined) throw new Error(`Bug: query_history column ${c.name} has no SQL type for ${c.type}`);
    return `${field(c.name)} ${type}`;
  });
  const select = COLUMNS.map((c) => (c.type === 'TIMESTAMPTZ' ? `to_timestamp(${field(c.name)} / 1000.0)` : field(c.name)));
  const updates = WRITE_COLUMNS.filter((c) => c !== 'query_id').map((c) => `${c} = EXCLUDED.${c}`).join(', ');
  return `INSERT INTO query_history (${WRITE_COLUMNS.join(', ')})
    SELECT ${select.join(', ')} FROM json_to_recordset($1::json) AS t(${fields.join(', ')})
    ON CONFLICT (query_id) DO UPDATE SET ${updates}`;
})();

const SURROGATE = /[\ud800-\udfff]/;
const LONE_SURROGATE = /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/g;

/**
 * Text as PostgreSQL can hold it: U+0000 and lone surrogates (a JSON request may carry either;
 * neither is a character, and the JSON of a flush would be refused) become U+FFFD, the
 * replacement character, as a UTF-8 encoder writes a lone surrogate.
 */
function storable(text: string): string;
function storable(text: string | null): string | null;
function storable(text: string | null): string | null {
  if (text === null) return null;
  let t = text.includes('\0') ? text.replaceAll('\0', '\uFFFD') : text;
  if (SURROGATE.test(t)) t = t.replace(LONE_SURROGATE, '\uFFFD');
  return t;
}

/** A refusal of the data itself (SQLSTATE classes 22 and 23): retrying the same row cannot succeed. */
function isDataRefusal(e: unknown): boolean {
  const code = sqlState(e);
  return code !== undefined && (code.startsWith('22') || code.startsWith('23'));
}

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
    r.errorMessage = storable(f.message);
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
  #dropped = 0;
  #lastDropError: unknown;

  readonly #maxPending: number;

  constructor(private readonly store: MetaStore, private readonly clock: Clock, private readonly options: QueryHistoryOptions) {
    this.#flushIntervalMs = options.flushIntervalMs ?? 10;
    this.#maxPending = options.maxPending ?? DEFAULT_MAX_PENDING;
  }

  /** Records waiting for the store. */
  get pendingCount(): number {
    return this.#pending.size;
  }

  /**
   * Refuses a new statement while the store is `maxPending` records behind (it is away, or slower
   * than the statements): SERVICE_UNAVAILABLE, which a client retries. Statements already begun are
   * still recorded.
   */
  refuseIfBacklogged(): void {
    if (this.#pending.size >= this.#maxPending) {
      throw floeError('SERVICE_UNAVAILABLE', { detail: `query history is ${this.#pending.size} statements behind its store; retry shortly` });
    }
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
      queryId: q.queryId, tenantId: q.tenantId, userId: q.userId, userName: storable(q.userName), status: 'queued',
      sql: storable(q.sql), queryType: q.queryType, workloadClass: null, resourceGroup: null, priority: null,
      warehouse: q.warehouse ?? null, source: storable(q.source ?? null), queuedAt: this.clock.now(), startedAt: null, endedAt: null,
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
    const batch = [...this.#pending.values()];
    this.#pending.clear();
    let written = 0;
    try {
      while (written < batch.length) {
        const chunk = batch.slice(written, written + WRITE_CHUNK_ROWS);
        await this.writeChunk(chunk);
        written += chunk.length;
      }
      this.#lastError = undefined;
    } catch (e) {
      // Put back what was not written, unless a newer state is already pending; retry later.
      for (const r of batch.slice(written)) {
        if (!this.#pending.has(r.queryId)) this.#pending.set(r.queryId, r);
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

  /**
   * One upsert. When the store refuses the data (not the connection), the chunk is written row by
   * row and a row refused alone is dropped and counted (`droppedCount`), so one bad record never
   * holds back the others for good.
   */
  private async writeChunk(chunk: readonly HistoryRecord[]): Promise<void> {
    try {
      await this.store.query(WRITE_SQL, [JSON.stringify(chunk)]);
    } catch (e) {
      if (!isDataRefusal(e)) throw e;
      if (chunk.length > 1) {
        for (const r of chunk) await this.writeChunk([r]);
        return;
      }
      this.#dropped += 1;
      this.#lastDropError = e;
    }
  }

  /** Records the store refused as data and that were dropped (see `writeChunk`). */
  get droppedCount(): number {
    return this.#dropped;
  }

  /** Why the last record was dropped. */
  get lastDropError(): unknown {
    return this.#lastDropError;
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

/** int8 columns arrive as number or bigint; uuids as strings; keep the column order of COLUMNS. */
function normaliseRow(row: Record<string, unknown>): SystemRow {
  const out: Record<string, unknown> = {};
  for (const c of WRITE_COLUMNS) {
    const v = row[c];
    out[c] = typeof v === 'bigint' && Number.isSafeInteger(Number(v)) ? Number(v) : v ?? null;
  }
  return out;
}
