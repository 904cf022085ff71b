/**
 * The metadata store: one interface over PostgreSQL (`pg`) and embedded PostgreSQL (PGlite).
 * Everything Floe keeps (tenants, principals, clients, signing keys, catalogs, tables, history)
 * lives here; the same SQL runs on both backends.
 */

/** Rows of one statement. int8 columns arrive as `number` when safe, else `bigint`, on both backends. */
export interface QueryResult<R> {
  readonly rows: R[];
  readonly rowCount: number;
}

/** How a statement is run. */
export interface QueryOptions {
  /**
   * Keep the statement prepared (parsed and planned once per connection, a named prepared
   * statement on PostgreSQL): for a small lookup on a hot path, parsing and planning cost
   * PostgreSQL several times what running it does. Only for SQL whose text is a constant: each
   * distinct text stays prepared on every pooled connection for the connection's life. Name the
   * columns it returns (no `SELECT *` of a table): PostgreSQL re-plans a prepared statement after
   * a schema change, but refuses one whose result columns changed. PGlite ignores it.
   */
  readonly prepared?: boolean;
}

/** Something that runs parameterised SQL: the store itself or an open transaction. */
export interface SqlExecutor {
  query<R = Record<string, unknown>>(sql: string, params?: readonly unknown[], options?: QueryOptions): Promise<QueryResult<R>>;
}

export type StoreBackend = 'postgres' | 'pglite';

/**
 * The channels every store connection listens on. A change that other parts of the process (or
 * other Floe processes on the same PostgreSQL) cache is announced with `pg_notify` by a trigger,
 * so the same statement that changes a row also announces it, whoever runs the statement.
 */
export const STORE_CHANNELS = ['floe_auth'] as const;
export type StoreChannel = (typeof STORE_CHANNELS)[number];

/** What a subscriber to a store channel is told. */
export interface StoreListener {
  /** A notification's payload. */
  onMessage(payload: string): void;
  /**
   * Delivery was or may have been interrupted (the listening connection dropped): anything may
   * have changed meanwhile, and until `delivering()` is true again nothing may be assumed.
   */
  onReset(): void;
}

/**
 * Notifications of store changes. The guarantee callers build caches on: a change committed by
 * this process is delivered before the statement (or transaction) that made it resolves; a change
 * committed by another process is delivered as soon as the listening connection reads it, and
 * while `delivering()` is false there is no listening connection at all.
 */
export interface StoreNotifications {
  listen(channel: StoreChannel, listener: StoreListener): () => void;
  delivering(): boolean;
}

export interface MetaStore extends SqlExecutor {
  readonly backend: StoreBackend;
  readonly notifications: StoreNotifications;
  /**
   * Runs `fn` inside one transaction on one connection; commits when it resolves, rolls back when
   * it throws. Inside `fn` use only `tx`: on PGlite the store is single-connection, and a query on
   * the store itself would wait for the transaction to end.
   */
  transaction<T>(fn: (tx: SqlExecutor) => Promise<T>): Promise<T>;
  /** Runs a multi-statement script without parameters (migrations). */
  exec(script: string): Promise<void>;
  /** Resolves when the store answers `SELECT 1` within `timeoutMs`, rejects with the reason otherwise. */
  ping(timeoutMs: number): Promise<void>;
  close(): Promise<void>;
}

/** The SQLSTATE of a store error (unique violation `23505`, …), as both backends report it. */
export function sqlState(e: unknown): string | undefined {
  const code = (e as { code?: unknown } | null)?.code;
  return typeof code === 'string' ? code : undefined;
}

/** int8 text → number when it fits exactly, else bigint (snapshot ids and sequence numbers do not fit). */
export function parseInt8(text: string): number | bigint {
  const n = Number(text);
  return Number.isSafeInteger(n) ? n : BigInt(text);
}

/** Races a promise against a deadline; the loser keeps running but its result is ignored. */
export async function withDeadline<T>(p: Promise<T>, timeoutMs: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const deadline = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what} did not answer within ${timeoutMs} ms`)), timeoutMs);
  });
  try {
    return await Promise.race([p, deadline]);
  } finally {
    clearTimeout(timer);
  }
}

const UNAVAILABLE_CODES = new Set(['ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'EPIPE', 'EHOSTUNREACH', 'ENOTFOUND', '57P01', '57P02', '57P03', '08000', '08001', '08003', '08004', '08006']);
const UNAVAILABLE_MESSAGES = /Connection terminated|connection timeout|timeout exceeded when trying to connect|did not answer within|Client has encountered a connection error|PGlite is closed/i;

/**
 * Whether an error means the store could not be reached (an outage: 503), as opposed to a
 * statement that failed (a bug or a conflict).
 */
export function isStoreUnavailable(e: unknown): boolean {
  if (!(e instanceof Error)) return false;
  const code = (e as { code?: unknown }).code;
  if (typeof code === 'string' && UNAVAILABLE_CODES.has(code)) return true;
  if (e instanceof AggregateError && e.errors.some(isStoreUnavailable)) return true;
  return UNAVAILABLE_MESSAGES.test(e.message);
}

/** Thrown in place of a driver error when the store is unreachable. */
export class StoreUnavailableError extends Error {
  constructor(cause: unknown) {
    super(`metadata store unreachable: ${cause instanceof Error ? cause.message : String(cause)}`, { cause });
    this.name = 'StoreUnavailableError';
  }
}

/** Subscribers per channel; the part of the notification plumbing both backends share. */
export class ChannelListeners {
  readonly #listeners = new Map<string, Set<StoreListener>>();

  add(channel: StoreChannel, listener: StoreListener): () => void {
    let set = this.#listeners.get(channel);
    if (!set) this.#listeners.set(channel, set = new Set());
    set.add(listener);
    return () => {
      set.delete(listener);
    };
  }

  deliver(channel: string, payload: string): void {
    for (const l of this.#listeners.get(channel) ?? []) l.onMessage(payload);
  }

  reset(): void {
    for (const set of this.#listeners.values()) for (const l of set) l.onReset();
  }
}
