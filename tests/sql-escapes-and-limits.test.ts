/**
 * What user SQL may not do, through the whole engine: read or write files, reach the network, load
 * extensions, change DuckDB settings, or see another tenant's tables and history — each refused
 * with 42501 (or "does not exist" for another tenant's names) and nothing read or written. Plus the
 * timeout contract (cancelled, not left to run, with the reason, and the worker
 * serves the next query) and schema evolution read across old and new files and snapshots.
 */
import t from 'tap';
import { existsSync, mkdtempSync, readdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Floe, isFloeError } from '../index.js';
import { DEFAULT_ABORT_GRACE_MS } from '../engine/exec/index.js';
import { createTenantWithAdmin } from '../engine/principals/bootstrap.js';
import { loadPrincipalAuthState } from '../engine/principals/principals.js';

const floe = await Floe.open();
t.teardown(() => floe.close());
const outside = mkdtempSync(join(tmpdir(), 'floe-escape-'));

t.test('escape attempts are refused with 42501 and leave nothing behind', async (t) => {
  await floe.sql('CREATE SCHEMA s');
  await floe.sql('CREATE TABLE s.t (id int)');
  const attempts = [
    "SELECT * FROM read_csv('/etc/passwd')",
    "SELECT * FROM read_text('/etc/hostname')",
    "SELECT * FROM read_blob('/etc/hostname')",
    "SELECT * FROM read_parquet('/tmp/x.parquet')",
    "SELECT * FROM read_json('/tmp/x.json')",
    "SELECT * FROM glob('/*')",
    "SELECT * FROM '/etc/passwd'",
    "SELECT * FROM parquet_scan('/tmp/x.parquet')",
    "SELECT getenv('HOME')",
    "SELECT current_setting('threads')",
    'SELECT * FROM duckdb_settings()',
    'SELECT * FROM duckdb_extensions()',
    `COPY s.t TO '${outside}/out.csv'`,
    `COPY (SELECT 1) TO '${outside}/out.parquet' (FORMAT parquet)`,
    `ATTACH '${outside}/x.db' AS x`,
    'INSTALL httpfs',
    'LOAD httpfs',
    "SET memory_limit = '100GB'",
    "SET enable_external_access = true",
    'PRAGMA database_list',
    "SELECT * FROM read_csv('https://example.com/x.csv')",
    `EXPORT DATABASE '${outside}/dump'`,
    "CALL pragma_version()",
    "SELECT * FROM query('SELECT 1')",
    "SELECT * FROM sniff_csv('/etc/passwd')",
  ];
  for (const sql of attempts) {
    const e = await floe.sql(sql).then(() => undefined, (x: unknown) => x);
    t.ok(isFloeError(e) && e.sqlState === '42501', `${sql} → ${isFloeError(e) ? `${e.code} ${e.sqlState}` : String(e)}`);
  }
  t.same(readdirSync(outside), [], 'nothing was written outside the warehouse');
  t.notOk(existsSync(`${outside}/dump`));
});

t.test('another tenant\'s tables and history are out of reach', async (t) => {
  await floe.sql('INSERT INTO s.t VALUES (42)');
  const other = await createTenantWithAdmin(floe.state.store, 'acme');
  const acme = await loadPrincipalAuthState(floe.state.store, 'acme', other.principalId);
  const principal = {
    tenantId: 'acme', principalId: acme!.id, name: acme!.name, roles: acme!.roles, isTenantAdmin: true, kind: acme!.kind,
    authMethod: 'client_credentials', scopeClaim: 'sql', amr: ['client_secret'], authTime: 0, defaultWarehouse: null,
  } as const;
  const asAcme = (sql: string) => floe.state.queries.execute(principal, { sql }).then(() => undefined, (e: unknown) => e);
  t.match(await asAcme('SELECT * FROM "default".s.t'), { sqlState: /^(42P01|3D000|42501)$/ }, 'the default tenant\'s table');
  t.match(await asAcme('SELECT * FROM s.t'), { sqlState: /^(42P01|3F000|3D000)$/ });
  const history = await floe.state.queries.execute(principal, { sql: 'SELECT count(*) FROM system.query_history WHERE tenant_id <> \'acme\'' });
  t.same(history.rows, [[0]], 'no other tenant\'s history rows');
  const tables = await floe.state.queries.execute(principal, { sql: 'SELECT count(*) FROM system.tables' });
  t.same(tables.rows, [[0]]);
});

t.test('a query past its timeout is cancelled with the reason, and the next one runs', async (t) => {
  const started = Date.now();
  const e = await floe.sql('SELECT count(*) FROM range(100000000000) a', { timeoutMs: 300 }).then(() => undefined, (x: unknown) => x);
  const took = Date.now() - started;
  t.ok(isFloeError(e) && e.sqlState === '57014', `cancelled: ${String(e)}`);
  t.match(String((e as Error).message), /timeout/i, 'the message names the timeout');
  // The statement would run for hours: the bound tells a cancelled statement from one left to run,
  // it is no latency target (other test files may load the machine; speed is measured in bench/),
  // and lies a minute past the executor's grace for a worker that does not answer the interrupt.
  t.ok(took >= 300 && took < DEFAULT_ABORT_GRACE_MS + 60_000, `cancelled ${took} ms after the start (deadline 300 ms)`);
  t.same((await floe.sql('SELECT 41 + 1')).rows, [[42]], 'the worker serves the next query');
  const h = await floe.state.history.list({ tenantId: 'default', principalId: 'x', isTenantAdmin: true }, { limit: 20, status: 'cancelled' });
  t.ok(h.some((r) => String(r.sql).includes('range(100000000000)') && /timeout/i.test(String(r.error_message))), 'history: cancelled with the reason');
});

t.test('schema evolution and time travel read old and new files', async (t) => {
  await floe.sql('CREATE TABLE s.evo (id int, name string, score float)');
  await floe.sql("INSERT INTO s.evo VALUES (1, 'a', 1.5)");
  await floe.sql('ALTER TABLE s.evo ADD COLUMN extra string');
  await floe.sql('ALTER TABLE s.evo RENAME COLUMN name TO label');
  await floe.sql('ALTER TABLE s.evo ALTER COLUMN id TYPE bigint');
  await floe.sql('ALTER TABLE s.evo ALTER COLUMN score TYPE double');
  await floe.sql("INSERT INTO s.evo VALUES (2, 'b', 2.5, 'x')");
  await floe.sql('ALTER TABLE s.evo DROP COLUMN extra');
  const now = await floe.sql('SELECT id, label, score FROM s.evo ORDER BY id');
  t.same(now.types, ['BIGINT', 'VARCHAR', 'DOUBLE']);
  t.same(now.rows, [[1, 'a', 1.5], [2, 'b', 2.5]], 'old and new files through the current schema');
  const m = (await floe.state.catalog.loadTable({ tenantId: 'default', principalId: 'x', roles: ['tenant_admin'] }, 'default', { namespace: ['s'], name: 'evo' })).metadata;
  const first = m.snapshots[0]!.snapshotId;
  const then = await floe.sql(`SELECT * FROM s.evo FOR VERSION AS OF ${first}`);
  t.same(then.columns, ['id', 'name', 'score'], 'the first snapshot reads with its own schema');
  t.same(then.rows, [[1, 'a', 1.5]]);
  const at = await floe.sql(`SELECT count(*) FROM s.evo FOR TIMESTAMP AS OF TIMESTAMP '${new Date(m.snapshots[0]!.timestampMs + 1).toISOString().replace('T', ' ').replace('Z', '')}'`);
  t.same(at.rows, [[1]], 'time travel by timestamp');
});
