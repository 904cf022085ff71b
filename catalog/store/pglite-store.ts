/**
 * MetaStore over embedded PostgreSQL (PGlite): the default, persisted under the data directory,
 * or in memory for tests. A fresh cluster is unpacked from a template made at build time when one
 * exists, because PGlite's initdb takes several seconds and `npm start` must serve within five.
 */
import { PGlite, types } from '@electric-sql/pglite';
import { existsSync, mkdirSync, readdirSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import type { MetaStore, QueryResult, SqlExecutor, StoreChannel, StoreListener, StoreNotifications } from './meta-store.js';
import { ChannelListeners, parseInt8, STORE_CHANNELS, withDeadline } from './meta-store.js';

export interface PgliteStoreOptions {
  /** Folder of the cluster; undefined keeps it in memory. */
  readonly dataDir?: string;
}

/** The template cluster written by scripts/postbuild.mjs (dist/catalog/store/pglite-template.tgz). */
export const PGLITE_TEMPLATE = fileURLToPath(new URL('./pglite-template.tgz', import.meta.url));

let templateBytes: Buffer | undefined;
function template(): Blob | undefined {
  if (!existsSync(PGLITE_TEMPLATE)) return undefined;
  templateBytes ??= readFileSync(PGLITE_TEMPLATE);
  return new Blob([templateBytes]);
}

function isEmptyDir(dir: string): boolean {
  return !existsSync(dir) || readdirSync(dir).length === 0;
}

function executor(db: Pick<PGlite, 'query'>): SqlExecutor {
  return {
    async query<R>(sql: string, params?: readonly unknown[]): Promise<QueryResult<R>> {
      const r = await db.query<R>(sql, params as unknown[] | undefined);
      return { rows: r.rows, rowCount: r.affectedRows ?? r.rows.length };
    },
  };
}

export class PgliteStore implements MetaStore {
  readonly backend = 'pglite' as const;
  readonly notifications: StoreNotifications;
  private readonly direct: SqlExecutor;
  readonly #listeners = new ChannelListeners();
  #open = true;

  private constructor(private readonly db: PGlite) {
    this.direct = executor(db);
    this.notifications = {
      listen: (channel: StoreChannel, listener: StoreListener) => this.#listeners.add(channel, listener),
      // One connection, owned by this process: every change is made here and heard here, before
      // the statement that made it resolves (PGlite delivers notifications with the result).
      delivering: () => this.#open,
    };
  }

  static async open(options: PgliteStoreOptions = {}): Promise<PgliteStore> {
    const fresh = options.dataDir === undefined || isEmptyDir(options.dataDir);
    if (options.dataDir !== undefined) mkdirSync(options.dataDir, { recursive: true });
    const loadDataDir = fresh ? template() : undefined;
    const parsers = { [types.INT8]: parseInt8 };
    const db = options.dataDir === undefined
      ? new PGlite({ parsers, ...(loadDataDir ? { loadDataDir } : {}) })
      : new PGlite(options.dataDir, { parsers, ...(loadDataDir ? { loadDataDir } : {}) });
    await db.waitReady;
    const store = new PgliteStore(db);
    for (const channel of STORE_CHANNELS) await db.listen(channel, (payload) => store.#listeners.deliver(channel, payload));
    return store;
  }

  query<R = Record<string, unknown>>(sql: string, params?: readonly unknown[]): Promise<QueryResult<R>> {
    return this.direct.query<R>(sql, params);
  }

  transaction<T>(fn: (tx: SqlExecutor) => Promise<T>): Promise<T> {
    return this.db.transaction((tx) => fn(executor(tx)));
  }

  async exec(script: string): Promise<void> {
    await this.db.exec(script);
  }

  async ping(timeoutMs: number): Promise<void> {
    await withDeadline(this.db.query('SELECT 1'), timeoutMs, 'PGlite');
  }

  #closing: Promise<void> | undefined;

  /** Idempotent: the second caller waits for the first close. */
  close(): Promise<void> {
    this.#open = false;
    this.#closing ??= this.db.close();
    return this.#closing;
  }
}
