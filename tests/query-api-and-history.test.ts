/**
 * The query interface's own statements and query history, over HTTP on both store backends:
 * every statement lands in history with its status and type, syntax errors carry SQLSTATE 42601
 * with a position, secrets never reach history, the history endpoints filter and page, users see
 * their own history, tenant administrators their tenant's, and no tenant sees another's.
 */
import t from 'tap';
import { createTenantWithAdmin } from '../engine/principals/bootstrap.js';
import { createClient } from '../engine/principals/clients.js';
import { createServiceAccount } from '../engine/principals/principals.js';
import { onEachBackend } from './helpers/stores.js';
import { startTestServer, type TestServer } from './helpers/server.js';

async function tokenFor(server: TestServer, clientId: string, clientSecret: string): Promise<string> {
  const r = await server.app.inject({
    method: 'POST', url: '/v1/oauth/tokens', headers: { 'content-type': 'application/x-www-form-urlencoded' },
    payload: new URLSearchParams({ grant_type: 'client_credentials', client_id: clientId, client_secret: clientSecret }).toString(),
  });
  return (r.json() as { access_token: string }).access_token;
}

await onEachBackend(t, async (t, store) => {
  const server = await startTestServer(store, { keepStore: true });
  t.teardown(() => server.close());
  const admin = await server.token();
  const query = (token: string, body: unknown, headers: Record<string, string> = {}) =>
    server.app.inject({ method: 'POST', url: '/api/query', headers: { authorization: `Bearer ${token}`, ...headers }, payload: body as object });

  // A plain user of the default tenant (no tenant_admin role) and the admin of another tenant.
  const sa = await createServiceAccount(store, { tenantId: 'default', name: 'analyst' });
  const analystCreds = await createClient(store, { tenantId: 'default', principalId: sa.id });
  const analyst = await tokenFor(server, analystCreds.clientId, analystCreds.clientSecret);
  const other = await createTenantWithAdmin(store, 'acme');
  const otherAdmin = await tokenFor(server, other.credentials.clientId, other.credentials.clientSecret);

  await t.test('session statements answer and return the session to carry', async (t) => {
    const use = await query(admin, { sql: 'USE sales.reporting' });
    t.equal(use.statusCode, 200, use.body);
    t.match(use.json(), { columns: ['status'], rows: [['OK']], row_count: 1, session: { catalog: 'sales', schema: 'reporting' } });
    const set = await query(admin, { sql: "SET svc.workload_class = 'batch'", session: { 'svc.resource_pool': 'etl' } });
    t.match(set.json(), { session: { settings: { 'svc.workload_class': 'batch', 'svc.resource_pool': 'etl' } } });
    const reset = await query(admin, { sql: 'RESET svc.workload_class', session: { 'svc.workload_class': 'batch' } });
    t.same(reset.json().session.settings, {});
    const bad = await query(admin, { sql: "SET memory_limit = '100GB'" });
    t.equal(bad.statusCode, 403);
    t.match(bad.json(), { error: 'PERMISSION_DENIED', sql_state: '42501' });
    const badSession = await query(admin, { sql: 'USE x', session: { 'svc.workload_class': 'huge' } });
    t.match(badSession.json(), { error: 'INVALID_PARAMETER', sql_state: '22023' });
  });

  await t.test('a syntax error is 42601 with line and column, and history keeps it redacted', async (t) => {
    const r = await query(admin, { sql: "CREATE USER bob EMAIL 'b@x.io' PASSWORD 'Tr0ub4dor&3' FROBNICATE" });
    t.equal(r.statusCode, 400);
    const body = r.json();
    t.match(body, { error: 'SYNTAX_ERROR', sql_state: '42601', message: /line 1, column \d+/ });
    t.notMatch(r.body, /Tr0ub4dor/, 'the error does not echo the password');
    const row = await server.app.inject({ method: 'GET', url: `/api/query-history/${body.query_id}`, headers: { authorization: `Bearer ${admin}` } });
    t.equal(row.statusCode, 200);
    t.match(row.json(), { queryId: body.query_id, status: 'failed', errorMessage: /syntax error/, sql: /PASSWORD/ });
    t.notMatch(row.body, /Tr0ub4dor/, 'history never holds the password');
  });

  await t.test('bad requests are 400 in the interface format', async (t) => {
    for (const payload of [{}, { sql: '' }, { sql: 'SELECT 1', timeout_ms: 'soon' }, { sql: 'SELECT 1', extra: 1 }, { sql: 'SELECT 1', session: { a: 1 } }]) {
      const r = await query(admin, payload);
      t.equal(r.statusCode, 400, JSON.stringify(payload));
      t.match(r.json(), { error: 'INVALID_REQUEST', sql_state: '22023' });
    }
    const notJson = await server.app.inject({ method: 'POST', url: '/api/query', headers: { authorization: `Bearer ${admin}`, 'content-type': 'application/json' }, payload: '{"sql": ' });
    t.equal(notJson.statusCode, 400);
    t.match(notJson.json(), { sql_state: /^[0-9A-Z]{5}$/ });
    const timeout = await query(admin, { sql: 'USE a', timeout_ms: 0 });
    t.match(timeout.json(), { error: 'INVALID_PARAMETER' });
  });

  await t.test('SHOW QUERY HISTORY and the history endpoints', async (t) => {
    await query(analyst, { sql: 'USE mine' });
    await query(analyst, { sql: 'SELEC oops' });
    const shown = await query(analyst, { sql: 'SHOW QUERY HISTORY LIMIT 5' });
    t.equal(shown.statusCode, 200, shown.body);
    const s = shown.json();
    t.ok(s.columns.includes('query_id') && s.columns.includes('cu_consumed'), 'snake_case columns');
    const sqlAt = s.columns.indexOf('sql');
    t.same(s.rows.map((r: unknown[]) => r[sqlAt]), ['SHOW QUERY HISTORY LIMIT 5', 'SELEC oops', 'USE mine'], 'only the analyst\'s own statements, newest first, itself included');
    const statusAt = s.columns.indexOf('status');
    t.same(s.rows.map((r: unknown[]) => r[statusAt]), ['running', 'failed', 'completed']);

    const mine = await server.app.inject({ method: 'GET', url: '/api/query-history?limit=10', headers: { authorization: `Bearer ${analyst}` } });
    const mineRows = mine.json() as Record<string, unknown>[];
    t.ok(mineRows.length >= 3, 'the SHOW itself is recorded too');
    t.ok(mineRows.every((r) => r.userId === sa.id), 'a user sees only their own');
    t.match(mineRows.find((r) => r.sql === 'USE mine'), {
      status: 'completed', queryType: 'set', tenantId: 'default', userId: sa.id, queuedAt: /Z$/, startedAt: /Z$/, endedAt: /Z$/,
      durationMs: Number, rowsProduced: 1, bytesScanned: 0, fragments: 0, errorMessage: null, cuConsumed: Number,
    });

    const all = await server.app.inject({ method: 'GET', url: '/api/query-history?limit=500', headers: { authorization: `Bearer ${admin}` } });
    const allRows = all.json() as Record<string, unknown>[];
    t.ok(allRows.some((r) => r.userId === sa.id) && allRows.some((r) => r.userId !== sa.id), 'tenant_admin sees the tenant');
    const failed = await server.app.inject({ method: 'GET', url: '/api/query-history?status=failed&query_type=unknown', headers: { authorization: `Bearer ${admin}` } });
    t.ok((failed.json() as Record<string, unknown>[]).every((r) => r.status === 'failed' && r.queryType === 'unknown'));
    const byUser = await server.app.inject({ method: 'GET', url: `/api/query-history?user_id=${sa.id}`, headers: { authorization: `Bearer ${admin}` } });
    t.ok((byUser.json() as Record<string, unknown>[]).every((r) => r.userId === sa.id));
    const page1 = (await server.app.inject({ method: 'GET', url: '/api/query-history?limit=2', headers: { authorization: `Bearer ${admin}` } })).json() as Record<string, unknown>[];
    const page2 = (await server.app.inject({ method: 'GET', url: '/api/query-history?limit=2&offset=2', headers: { authorization: `Bearer ${admin}` } })).json() as Record<string, unknown>[];
    t.equal(page1.length, 2);
    t.notOk(page2.some((r) => page1.some((p) => p.queryId === r.queryId)), 'pages do not overlap');

    for (const q of ['limit=501', 'limit=-1', 'status=done', 'offset=x']) {
      const r = await server.app.inject({ method: 'GET', url: `/api/query-history?${q}`, headers: { authorization: `Bearer ${admin}` } });
      t.equal(r.statusCode, 400, q);
      t.match(r.json(), { error: 'INVALID_PARAMETER' });
    }

    // Another tenant sees none of it, not even by id.
    const theirs = (await server.app.inject({ method: 'GET', url: '/api/query-history?limit=500', headers: { authorization: `Bearer ${otherAdmin}` } })).json() as Record<string, unknown>[];
    t.same(theirs, [], 'a new tenant has an empty history');
    const byId = await server.app.inject({ method: 'GET', url: `/api/query-history/${mineRows[0]!.queryId}`, headers: { authorization: `Bearer ${otherAdmin}` } });
    t.equal(byId.statusCode, 404);
    const analystReadsAdmin = await server.app.inject({ method: 'GET', url: `/api/query-history/${allRows.find((r) => r.userId !== sa.id)!.queryId}`, headers: { authorization: `Bearer ${analyst}` } });
    t.equal(analystReadsAdmin.statusCode, 404, 'a user cannot read another user\'s row');
  });

  await t.test('the sql scope is needed', async (t) => {
    const catalogOnly = await server.token('catalog');
    const r = await query(catalogOnly, { sql: 'USE a' });
    t.equal(r.statusCode, 403);
  });
});
