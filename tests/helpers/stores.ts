/**
 * The store backends every store-backed test runs on: PGlite in memory and a real PostgreSQL
 * (127.0.0.1:5432, trust auth) in a database created for the run and dropped after it.
 * Without PostgreSQL the postgres variant is skipped locally and fails in CI (CI=true).
 */
import { randomBytes } from 'node:crypto';
import pg from 'pg';
import type { Test } from 'tap';
import type { MetaStore } from '../../catalog/store/meta-store.js';
import { openStore } from '../../catalog/store/open-store.js';

export const POSTGRES_ADMIN_URL = process.env.FLOE_TEST_POSTGRES_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';

export type BackendName = 'pglite' | 'postgres';

export interface TestDatabase {
  readonly url: string;
  drop(): Promise<void>;
}

/** Creates an empty PostgreSQL database for one test, or undefined when no server answers. */
export async function createPostgresDatabase(): Promise<TestDatabase | undefined> {
  // A server that is not there refuses the connection at once; the timeout is for one that hangs,
  // and must not take a PostgreSQL slow to fork a backend on a loaded machine for an absent one
  // (which fails the file in CI), as 3 s could.
  const admin = new pg.Client({ connectionString: POSTGRES_ADMIN_URL, connectionTimeoutMillis: 60_000 });
  try {
    await admin.connect();
  } catch {
    return undefined;
  }
  const name = `floe_test_${process.pid}_${randomBytes(4).toString('hex')}`;
  try {
    await admin.query(`CREATE DATABASE ${name}`);
  } finally {
    await admin.end();
  }
  const url = new URL(POSTGRES_ADMIN_URL);
  url.pathname = `/${name}`;
  return {
    url: url.toString(),
    async drop() {
      const c = new pg.Client({ connectionString: POSTGRES_ADMIN_URL });
      await c.connect();
      try {
        await c.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
      } finally {
        await c.end();
      }
    },
  };
}

/**
 * Runs `body` once per backend as a subtest, each with a fresh, migrated store; the store is
 * closed (and the PostgreSQL database dropped) after the subtest.
 */
export async function onEachBackend(t: Test, body: (t: Test, store: MetaStore, backend: BackendName) => Promise<void>): Promise<void> {
  await t.test('pglite', async (t) => {
    const store = await openStore({ kind: 'pglite-memory' });
    t.teardown(() => store.close());
    await body(t, store, 'pglite');
  });
  const db = await createPostgresDatabase();
  if (!db && process.env.CI === 'true') {
    t.fail(`PostgreSQL is not reachable at ${POSTGRES_ADMIN_URL} (required in CI)`);
    return;
  }
  const skip = db ? false : 'PostgreSQL is not reachable at 127.0.0.1:5432';
  await t.test('postgres', { skip }, async (t) => {
    if (!db) return;
    const store = await openStore({ kind: 'postgres', connectionString: db.url, poolSize: 8 });
    t.teardown(async () => {
      await store.close();
      await db.drop();
    });
    await body(t, store, 'postgres');
  });
}
