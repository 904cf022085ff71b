/** MetaStore over a PostgreSQL server through a `pg` connection pool. */
import pg from 'pg';
import type { MetaStore, QueryResult, SqlExecutor } from './meta-store.js';
import { parseInt8, withDeadline } from './meta-store.js';

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

function executor(client: pg.Pool | pg.PoolClient): SqlExecutor {
  return {
    async query<R>(sql: string, params?: readonly unknown[]): Promise<QueryResult<R>> {
      const r = await client.query({ text: sql, values: params as unknown[] | undefined, types: typeParsers });
      return { rows: r.rows as R[], rowCount: r.rowCount ?? 0 };
    },
  };
}

export class PgStore implements MetaStore {
  readonly backend = 'postgres' as const;
  private readonly pool: pg.Pool;
  private readonly direct: SqlExecutor;

  constructor(options: PgStoreOptions) {
    this.pool = new pg.Pool({
      connectionString: options.connectionString,
      max: options.poolSize ?? 10,
      connectionTimeoutMillis: options.connectTimeoutMs ?? 5000,
      idleTimeoutMillis: 30_000,
    });
    // An idle client losing its server is reported here; without a listener it would crash the process.
    this.pool.on('error', () => undefined);
    this.direct = executor(this.pool);
  }

  query<R = Record<string, unknown>>(sql: string, params?: readonly unknown[]): Promise<QueryResult<R>> {
    return this.direct.query<R>(sql, params);
  }

  async transaction<T>(fn: (tx: SqlExecutor) => Promise<T>): Promise<T> {
    const client = await this.pool.connect();
    let broken = false;
    try {
      await client.query('BEGIN');
      const result = await fn(executor(client));
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
    this.#closing ??= this.pool.end();
    return this.#closing;
  }
}
