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

/** Something that runs parameterised SQL: the store itself or an open transaction. */
export interface SqlExecutor {
  query<R = Record<string, unknown>>(sql: string, params?: readonly unknown[]): Promise<QueryResult<R>>;
}

export type StoreBackend = 'postgres' | 'pglite';

export interface MetaStore extends SqlExecutor {
  readonly backend: StoreBackend;
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
