/**
 * Migrations and the first-start bootstrap, on both store backends: migrations apply once (also
 * when replicas start together), the bootstrap happens once, and the client secret is stored only
 * as its SHA-256.
 */
import t from 'tap';
import { createHash } from 'node:crypto';
import { loadMigrations, migrate, splitStatements } from '../catalog/store/migrate.js';
import { PgStore } from '../catalog/store/pg-store.js';
import { bootstrapIfEmpty } from '../engine/principals/bootstrap.js';
import { createPostgresDatabase, onEachBackend } from './helpers/stores.js';

t.test('splitStatements keeps quoted, commented and dollar-quoted semicolons', async (t) => {
  t.same(splitStatements("CREATE TABLE a (x text DEFAULT ';'); -- a; comment\nSELECT 1;\n/* ; */ SELECT $$ a;b $$;"), [
    "CREATE TABLE a (x text DEFAULT ';')",
    '-- a; comment\nSELECT 1',
    '/* ; */ SELECT $$ a;b $$',
  ]);
  t.same(splitStatements('-- only a comment\n'), []);
});

await onEachBackend(t, async (t, store) => {
  await t.test('every migration is recorded, and a second run applies nothing', async (t) => {
    const versions = (await store.query<{ version: number }>('SELECT version FROM schema_migrations ORDER BY version')).rows.map((r) => r.version);
    t.same(versions, loadMigrations().map((m) => m.version));
    const again = await migrate(store);
    t.same(again.applied, []);
    t.equal(again.current, Math.max(...versions), 'current is the highest version (numbers reserved by features in flight leave gaps)');
    const tables = (await store.query<{ table_name: string }>("SELECT table_name FROM information_schema.tables WHERE table_schema = 'public'")).rows.map((r) => r.table_name);
    for (const name of ['tenants', 'principals', 'principal_roles', 'oauth_clients', 'signing_keys', 'refresh_tokens']) t.ok(tables.includes(name), name);
  });

  await t.test('a failing migration leaves nothing behind', async (t) => {
    const bad = [...loadMigrations(), { version: Math.max(...loadMigrations().map((m) => m.version)) + 1, name: 'broken', sql: 'CREATE TABLE half_done (a int);\nSELECT no_such_function();' }];
    await t.rejects(migrate(store, bad));
    const exists = await store.query("SELECT 1 FROM information_schema.tables WHERE table_name = 'half_done'");
    t.equal(exists.rows.length, 0);
  });

  await t.test('bootstrap happens once; the secret is stored only as SHA-256', async (t) => {
    const secret = 'fcs_bootstrap-secret-for-the-test-0001';
    const first = await bootstrapIfEmpty(store, { clientId: 'floe_bootstrap_test', clientSecret: secret });
    t.equal(first.kind, 'created');
    const second = await bootstrapIfEmpty(store, {});
    t.equal(second.kind, 'already-bootstrapped');
    const principal = (await store.query<{ name: string; is_bootstrap_principal: boolean; status: string }>('SELECT name, is_bootstrap_principal, status FROM principals')).rows;
    t.same(principal, [{ name: 'admin', is_bootstrap_principal: true, status: 'ACTIVE' }]);
    const roles = (await store.query<{ role: string }>('SELECT role FROM principal_roles')).rows;
    t.same(roles, [{ role: 'tenant_admin' }]);
    const client = (await store.query<{ secret_sha256: Uint8Array }>('SELECT secret_sha256 FROM oauth_clients')).rows[0]!;
    t.equal(Buffer.from(client.secret_sha256).toString('hex'), createHash('sha256').update(secret).digest('hex'));
    const dump = JSON.stringify((await store.query("SELECT * FROM oauth_clients")).rows, (_k, v) => typeof v === 'bigint' ? v.toString() : v);
    t.notMatch(dump, secret, 'no plaintext secret anywhere in the row');
  });
});

t.test('replicas starting together apply each migration once (PostgreSQL)', async (t) => {
  const db = await createPostgresDatabase();
  if (!db) {
    if (process.env.CI === 'true') t.fail('PostgreSQL is required in CI');
    return;
  }
  const replicas = [0, 1, 2].map(() => new PgStore({ connectionString: db.url, poolSize: 2 }));
  try {
    const reports = await Promise.all(replicas.map((s) => migrate(s)));
    const appliedCounts = reports.map((r) => r.applied.length).sort();
    t.same(appliedCounts, [0, 0, loadMigrations().length], 'one replica applied everything, the others nothing');
    const outcomes = await Promise.all(replicas.map((s) => bootstrapIfEmpty(s)));
    t.equal(outcomes.filter((o) => o.kind === 'created').length, 1, 'exactly one bootstrap');
  } finally {
    await Promise.all(replicas.map((s) => s.close()));
    await db.drop();
  }
});
