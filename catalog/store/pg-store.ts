/** MetaStore over a PostgreSQL server through a `pg` connection pool. */
import { createHash } from 'node:crypto';
import pg from 'pg';
import type { MetaStore, QueryOptions, QueryResult, SqlExecutor, StoreChannel, StoreListener, StoreNotifications } from './meta-store.js';
import { ChannelListeners, parseInt8, STORE_CHANNELS, withDeadline } from './meta-store.js';

/** How long the listening connection waits before it reconnects after losing the server. */
const LISTENER_RETRY_MS = 1000;
/** How the listening connection shows in `pg_stat_activity`. */
export const LISTENER_APPLICATION_NAME = 'floe-listener';

const INT8_OID = 20;

export interface PgStoreOptions {
  readonly connectionString: string;
  readonly poolSize?: number;
  /** How long a new connection may take before the attempt fails (ms). */
  readonly connectTimeoutMs?: number;
}

/** Per-pool type parsers, so that no global `pg.types` state is changed. */
const typeParsers = {
  getTypeParser(oid: number, format?: 'text' | 'binary') {
    if (oid === INT8_OID && format !== 'binary') return parseInt8;
    return pg.types.getTypeParser(oid, format);
  },
} as unknown as pg.CustomTypesConfig;

/**
 * Names of prepared statements by their text. The name is a digest of the text, so two texts never
 * share a name (pg refuses a name reused for another text) and every process names a text alike.
 */
class StatementNames {
  readonly #names = new Map<string, string>();

  of(sql: string): string {
    let name = this.#names.get(sql);
    if (name === undefined) this.#names.set(sql, name = `floe_${createHash('sha256').update(sql).digest('hex').slice(0, 24)}`);
    return name;
  }
}

function executor(client: pg.Pool | pg.PoolClient, names: StatementNames): SqlExecutor {
  return {
    async query<R>(sql: string, params?: readonly unknown[], options?: QueryOptions): Promise<QueryResult<R>> {
      const r = await client.query({
        text: sql, values: params as unknown[] | undefined, types: typeParsers,
        ...(options?.prepared === true ? { name: names.of(sql) } : {}),
      });
      return { rows: r.rows as R[], rowCount: r.rowCount ?? 0 };
    },
  };
}

export class PgStore implements MetaStore {
  readonly backend = 'postgres' as const;
  readonly notifications: StoreNotifications;
  private readonly pool: pg.Pool;
  private readonly direct: SqlExecutor;
  readonly #statementNames = new StatementNames();
  readonly #listeners = new ChannelListeners();
  /** The dedicated listening connection: it hears other processes' changes whatever the pool does. */
  #listener: pg.Client | undefined;
  #listening = false;
  #retry: NodeJS.Timeout | undefined;
  #closed = false;

  constructor(private readonly options: PgStoreOptions) {
    this.pool = new pg.Pool({
      connectionString: options.connectionString,
      max: options.poolSize ?? 10,
      connectionTimeoutMillis: options.connectTimeoutMs ?? 5000,
      idleTimeoutMillis: 30_000,
      // Every pooled connection listens too: PostgreSQL delivers a session's own notifications
      // before the ReadyForQuery of the COMMIT, so this process's changes reach its caches before
      // the statement that made them resolves. The pool hands a new connection out only once its
      // `LISTEN` is done (a query issued while another runs is deprecated in pg 8, gone in pg 9).
      onConnect: async (client: pg.ClientBase) => {
        client.on('notification', (m) => this.#listeners.deliver(m.channel, m.payload ?? ''));
        await client.query(STORE_CHANNELS.map((c) => `LISTEN ${c}`).join('; ')).catch(() => undefined);
      },
    });
    // An idle client losing its server is reported here; without a listener it would crash the process.
    this.pool.on('error', () => undefined);
    this.direct = executor(this.pool, this.#statementNames);
    this.notifications = {
      listen: (channel: StoreChannel, listener: StoreListener) => {
        const remove = this.#listeners.add(channel, listener);
        if (this.#listener === undefined && this.#retry === undefined) this.startListener();
        return remove;
      },
      delivering: () => this.#listening,
    };
  }

  /** Connects the listening connection; on any loss, tells subscribers and retries. */
  private startListener(): void {
    if (this.#closed) return;
    this.#retry = undefined;
    const client = new pg.Client({ connectionString: this.options.connectionString, connectionTimeoutMillis: this.options.connectTimeoutMs ?? 5000, application_name: LISTENER_APPLICATION_NAME });
    this.#listener = client;
    const down = (): void => {
      if (this.#listener !== client) return;
      this.#listener = undefined;
      if (this.#listening) {
        this.#listening = false;
        this.#listeners.reset();
      }
      client.end().catch(() => undefined);
      if (!this.#closed) {
        this.#retry = setTimeout(() => this.startListener(), LISTENER_RETRY_MS);
        this.#retry.unref();
      }
    };
    client.on('error', down);
    client.on('end', down);
    client.on('notification', (m) => this.#listeners.deliver(m.channel, m.payload ?? ''));
    client.connect()
      .then(() => client.query(STORE_CHANNELS.map((c) => `LISTEN ${c}`).join('; ')))
      .then(() => {
        if (this.#listener !== client) return;
        this.#listening = true;
        // Whatever changed while nobody listened was not heard: subscribers start afresh.
        this.#listeners.reset();
      })
      .catch(down);
  }

  query<R = Record<string, unknown>>(sql: string, params?: readonly unknown[], options?: QueryOptions): Promise<QueryResult<R>> {
    return this.direct.query<R>(sql, params, options);
  }

  async transaction<T>(fn: (tx: SqlExecutor) => Promise<T>): Promise<T> {
    const client = await this.pool.connect();
    let broken = false;
    // The pool listens for errors on idle clients only. A connection lost while the transaction
    // holds it (PostgreSQL restarted, a network cut mid-COMMIT) is reported both to the query in
    // flight and as an 'error' event on the client: without a listener here that event is an
    // uncaught exception, which ends the process. The query's own error is what the caller sees.
    const lost = (): void => {
      broken = true;
    };
    client.on('error', lost);
    try {
      await client.query('BEGIN');
      const result = await fn(executor(client, this.#statementNames));
      await client.query('COMMIT');
      return result;
    } catch (e) {
      try {
        await client.query('ROLLBACK');
      } catch {
        broken = true;
      }
      throw e;
    } finally {
      client.off('error', lost);
      client.release(broken);
    }
  }

  async exec(script: string): Promise<void> {
    await this.pool.query(script);
  }

  async ping(timeoutMs: number): Promise<void> {
    await withDeadline(this.pool.query('SELECT 1'), timeoutMs, 'PostgreSQL');
  }

  #closing: Promise<void> | undefined;

  /** Idempotent: the second caller waits for the first close. */
  close(): Promise<void> {
    this.#closed = true;
    clearTimeout(this.#retry);
    const listener = this.#listener;
    this.#listener = undefined;
    this.#listening = false;
    this.#closing ??= Promise.all([this.pool.end(), listener?.end().catch(() => undefined)]).then(() => undefined);
    return this.#closing;
  }
}
