/**
 * The system providers through SQL and HTTP alike: system.tables / system.namespaces and
 * GET /api/tables plus the table metadata endpoint (name, schema.fields, partition_spec,
 * snapshot_count, record_count), SHOW RESOURCE GROUPS and system.resource_groups, and
 * GET /api/qos/stats in the spec's exact shape. One tenant never sees another's tables.
 */
import t from 'tap';
import { createTenantWithAdmin } from '../engine/principals/bootstrap.js';
import { onEachBackend } from './helpers/stores.js';
import { startTestServer } from './helpers/server.js';

await onEachBackend(t, async (t, store) => {
  const server = await startTestServer(store, { keepStore: true });
  t.teardown(() => server.close());
  const admin = await server.token();
  const sql = async (text: string, token = admin) => {
    const r = await server.app.inject({ method: 'POST', url: '/api/query', headers: { authorization: `Bearer ${token}` }, payload: { sql: text } });
    if (r.statusCode !== 200) throw new Error(`${text}: ${r.statusCode} ${r.body}`);
    return r.json() as { columns: string[]; types: string[]; rows: unknown[][] };
  };
  const get = (url: string, token = admin) => server.app.inject({ method: 'GET', url, headers: { authorization: `Bearer ${token}` } });

  await sql('CREATE SCHEMA sales');
  await sql('CREATE TABLE sales.orders (id bigint NOT NULL, placed timestamptz, customer int) PARTITIONED BY (day(placed), bucket(4, customer))');
  await sql("INSERT INTO sales.orders VALUES (1, TIMESTAMPTZ '2024-05-01 10:00:00+00', 7), (2, TIMESTAMPTZ '2024-05-02 10:00:00+00', 8)");

  await t.test('system.tables and system.namespaces in SQL', async (t) => {
    const r = await sql("SELECT catalog, schema, name, snapshot_count, record_count, partition_spec FROM system.tables WHERE name = 'orders'");
    t.same(r.rows, [['default', 'sales', 'orders', 1, 2, ['day(placed)', 'bucket(4, customer)']]]);
    const n = await sql('SELECT schema FROM system.namespaces ORDER BY schema');
    t.ok(n.rows.some((row) => row[0] === 'sales'));
  });

  await t.test('GET /api/tables and the table metadata endpoint', async (t) => {
    const list = await get('/api/tables');
    t.equal(list.statusCode, 200, list.body);
    t.same(list.json(), { tables: [{ catalog: 'default', schema: 'sales', name: 'orders' }] });
    const meta = await get('/api/catalogs/default/namespaces/sales/tables/orders');
    t.equal(meta.statusCode, 200, meta.body);
    t.same(meta.json(), {
      name: 'orders',
      schema: { fields: [{ name: 'id', type: 'bigint', nullable: false }, { name: 'placed', type: 'timestamptz', nullable: true }, { name: 'customer', type: 'int', nullable: true }] },
      partition_spec: ['day(placed)', 'bucket(4, customer)'],
      snapshot_count: 1,
      record_count: 2,
    });
    const missing = await get('/api/catalogs/default/namespaces/sales/tables/nope');
    t.equal(missing.statusCode, 404);
    t.match(missing.json(), { error: 'UNDEFINED_TABLE', sql_state: '42P01' });
  });

  await t.test('another tenant sees none of it', async (t) => {
    const other = await createTenantWithAdmin(store, 'acme');
    const form = new URLSearchParams({ grant_type: 'client_credentials', client_id: other.credentials.clientId, client_secret: other.credentials.clientSecret });
    const tok = (await server.app.inject({ method: 'POST', url: '/v1/oauth/tokens', headers: { 'content-type': 'application/x-www-form-urlencoded' }, payload: form.toString() })).json().access_token as string;
    t.equal((await get('/api/catalogs/default/namespaces/sales/tables/orders', tok)).statusCode, 404);
    const rows = await sql('SELECT count(*) FROM system.tables', tok);
    t.same(rows.rows, [[0]]);
    const denied = await server.app.inject({ method: 'POST', url: '/api/query', headers: { authorization: `Bearer ${tok}` }, payload: { sql: 'SELECT * FROM "default".sales.orders' } });
    t.equal(denied.statusCode, 404, 'another tenant\'s table does not exist for it');
  });

  await t.test('resource groups and QoS stats', async (t) => {
    const show = await sql('SHOW RESOURCE GROUPS');
    t.same(show.columns, ['path', 'running', 'queued', 'hard_concurrency_limit', 'soft_concurrency_limit', 'scheduling_policy', 'cumulative_cpu_ms']);
    t.equal(show.rows[0]![0], '/root');
    const sys = await sql("SELECT path, hard_concurrency_limit, admitted > 0 FROM system.resource_groups WHERE path = '/root'");
    t.same(sys.rows, [['/root', 100, true]]);
    const qos = await get('/api/qos/stats');
    t.equal(qos.statusCode, 200);
    const body = qos.json() as { resource_groups: unknown[]; mlfq: Record<string, unknown> };
    t.same(Object.keys(body).sort(), ['mlfq', 'resource_groups']);
    t.match(body.resource_groups[0], { path: '/root', running: Number, queued: Number, hard_concurrency_limit: 100, scheduling_policy: 'fair' });
    t.same(Object.keys(body.mlfq).sort(), ['level_queue_depths', 'level_scheduled_ms', 'max_concurrent', 'running', 'tracked_queries']);
    t.equal((body.mlfq.level_queue_depths as unknown[]).length, 5);
    t.equal((body.mlfq.level_scheduled_ms as unknown[]).length, 5);
  });
});
