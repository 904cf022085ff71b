/**
 * The workload manager through the running engine, over HTTP on both store backends: each routing
 * field (tenant, user, source header and setting, resource pool, query type) lands the query in its
 * group and history records `/root/a/b`; a full queue rejects at once with 429 QUEUE_FULL and history
 * records it; `SET svc.workload_class` changes the class, priority and limits; each class's timeout
 * cancels with a message naming the limit and the worker serves the next query; a sort larger than
 * the memory cap spills and completes, and a query that cannot spill is cancelled with a memory
 * message; GET /api/qos/stats under concurrent load.
 */
import t, { type Test } from 'tap';
import { BOOTSTRAP_PRINCIPAL, createTenantWithAdmin } from '../engine/principals/bootstrap.js';
import type { MetaStore } from '../catalog/store/meta-store.js';
import { DEFAULT_ABORT_GRACE_MS } from '../engine/exec/index.js';
import type { FloeConfig } from '../server/config.js';
import { onEachBackend } from './helpers/stores.js';
import { startTestServer, type TestServer } from './helpers/server.js';

interface Answer {
  readonly status: number;
  readonly body: Record<string, unknown>;
}

interface HistoryRow {
  readonly status: string;
  readonly resourceGroup: string | null;
  readonly workloadClass: string | null;
  readonly priority: number | null;
  readonly errorMessage: string | null;
  readonly startedAt: string | null;
  readonly queryType: string;
}

interface QosStats {
  readonly resource_groups: { path: string; running: number; queued: number; hard_concurrency_limit: number; scheduling_policy: string }[];
  readonly mlfq: { running: number; max_concurrent: number; level_queue_depths: number[]; level_scheduled_ms: number[]; tracked_queries: number };
}

/** A long query of each class (automatic classification): no joins; one join; three joins. */
const LONG: Record<'interactive' | 'medium' | 'batch', string> = {
  interactive: 'SELECT sum(i) FROM range(100000000000) t(i)',
  medium: 'SELECT count(*) FROM range(30000) a(i) JOIN range(3000000) b(j) ON a.i % 7 = b.j % 7',
  batch: 'SELECT count(*) FROM range(1000) a(i), range(1000) b(j), range(1000) c(k), range(1000) d(l)',
};

const MiB = 1024 * 1024;

/** Runs until cancelled: what holds a slot for as long as a test needs it. */
const HOLD = 'SELECT sum(i) FROM range(100000000000) t(i)';

/**
 * A query sent over a real socket that holds its slot until `stop()`: the client goes away and the
 * server cancels it (tests/wlm-http-cancel.test.ts). A slot held this way stays held however slow
 * the machine is, where a timeout could run out before the test has looked.
 */
async function holder(server: TestServer, token: string, session: Record<string, string>): Promise<{ stop(): Promise<void> }> {
  const url = server.app.server.listening ? `http://127.0.0.1:${(server.app.server.address() as { port: number }).port}` : await server.app.listen({ host: '127.0.0.1', port: 0 });
  const gone = new AbortController();
  const done = fetch(`${url}/api/query`, {
    method: 'POST', signal: gone.signal, headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
    body: JSON.stringify({ sql: HOLD, session }),
  }).then(() => undefined, () => undefined);
  return { stop: async () => { gone.abort(); await done; } };
}

function client(server: TestServer, token: string) {
  const query = async (sql: string, opts: { session?: Record<string, string>; headers?: Record<string, string>; timeoutMs?: number } = {}): Promise<Answer> => {
    const r = await server.app.inject({
      method: 'POST', url: '/api/query', headers: { authorization: `Bearer ${token}`, ...(opts.headers ?? {}) },
      payload: { sql, ...(opts.session ? { session: opts.session } : {}), ...(opts.timeoutMs !== undefined ? { timeout_ms: opts.timeoutMs } : {}) },
    });
    return { status: r.statusCode, body: r.json() as Record<string, unknown> };
  };
  const history = async (id: unknown): Promise<HistoryRow> => {
    const r = await server.app.inject({ method: 'GET', url: `/api/query-history/${String(id)}`, headers: { authorization: `Bearer ${token}` } });
    if (r.statusCode !== 200) throw new Error(`history ${String(id)}: ${r.statusCode} ${r.body}`);
    return r.json() as HistoryRow;
  };
  const stats = async (): Promise<QosStats> => {
    const r = await server.app.inject({ method: 'GET', url: '/api/qos/stats', headers: { authorization: `Bearer ${token}` } });
    if (r.statusCode !== 200) throw new Error(`stats: ${r.statusCode} ${r.body}`);
    return r.json() as QosStats;
  };
  return { query, history, stats };
}

async function tokenOf(server: TestServer, clientId: string, clientSecret: string): Promise<string> {
  const form = new URLSearchParams({ grant_type: 'client_credentials', client_id: clientId, client_secret: clientSecret });
  const r = await server.app.inject({ method: 'POST', url: '/v1/oauth/tokens', headers: { 'content-type': 'application/x-www-form-urlencoded' }, payload: form.toString() });
  return (r.json() as { access_token: string }).access_token;
}

/** Polls until `check` holds (bounded generously: only a broken server reaches the bound). */
async function until(what: string, check: () => Promise<boolean>, ms = 60_000): Promise<void> {
  const end = Date.now() + ms;
  while (Date.now() < end) {
    if (await check()) return;
    await new Promise((r) => setTimeout(r, 20));
  }
  throw new Error(`timed out waiting for ${what}`);
}

const group = (s: QosStats, path: string) => s.resource_groups.find((g) => g.path === path)!;

function routingConfig(c: FloeConfig): FloeConfig {
  return {
    ...c,
    workload: {
      ...c.workload,
      resource_groups: {
        root: {
          subgroups: [
            { name: 'dash' },
            { name: 'etl', subgroups: [{ name: 'nightly' }] },
            { name: 'tenants', subgroups: [{ name: 'acme' }] },
            { name: 'writes' },
            { name: 'people' },
            { name: 'tiny', hard_concurrency_limit: 1, max_queued_queries: 1 },
            { name: 'busy', hard_concurrency_limit: 2 },
          ],
        },
      },
      routing_rules: [
        { match_source: 'grafana', target_group: 'root.dash' },
        { match_resource_pool: 'etl', target_group: 'root.etl.nightly' },
        { match_resource_pool: 'tiny', target_group: 'root.tiny' },
        { match_resource_pool: 'busy', target_group: 'root.busy' },
        { match_tenant: 'acme', target_group: 'root.tenants.acme' },
        { match_query_type: 'insert', target_group: 'root.writes' },
        { match_tenant: 'beta', match_user: BOOTSTRAP_PRINCIPAL, target_group: 'root.people' },
      ],
      classes: { batch: { memory_cap_bytes: 64 * MiB } },
    },
  };
}

function limitsConfig(c: FloeConfig): FloeConfig {
  return {
    ...c,
    query: { ...c.query, workers: 2 },
    workload: {
      ...c.workload,
      classes: {
        interactive: { timeout_ms: 1500 },
        medium: { timeout_ms: 1700 },
        batch: { timeout_ms: 1900 },
      },
      mlfq: { ...c.workload.mlfq, quantum_ms: 50 },
    },
  };
}

async function routingTests(t: Test, store: MetaStore): Promise<void> {
  const server = await startTestServer(store, { keepStore: true, config: routingConfig });
  t.teardown(() => server.close());
  const adminToken = await server.token();
  const admin = client(server, adminToken);
  const acme = await createTenantWithAdmin(store, 'acme');
  const beta = await createTenantWithAdmin(store, 'beta');
  const acmeClient = client(server, await tokenOf(server, acme.credentials.clientId, acme.credentials.clientSecret));
  const betaClient = client(server, await tokenOf(server, beta.credentials.clientId, beta.credentials.clientSecret));
  t.equal((await admin.query('CREATE SCHEMA wl')).status, 200);
  t.equal((await admin.query('CREATE TABLE wl.t (x bigint)')).status, 200);

  await t.test('each routing field lands in its group; history records /root/a/b', async (t) => {
    const cases: { what: string; run: () => Promise<Answer>; group: string; via: ReturnType<typeof client> }[] = [
      { what: 'source header', run: () => admin.query('SELECT 1', { headers: { 'x-floe-source': 'grafana' } }), group: '/root/dash', via: admin },
      { what: 'source setting', run: () => admin.query('SELECT 1', { session: { 'svc.query_source': 'grafana' } }), group: '/root/dash', via: admin },
      { what: 'resource pool', run: () => admin.query('SELECT 1', { session: { 'svc.resource_pool': 'etl' } }), group: '/root/etl/nightly', via: admin },
      { what: 'tenant', run: () => acmeClient.query('SELECT 1'), group: '/root/tenants/acme', via: acmeClient },
      { what: 'query type', run: () => admin.query('INSERT INTO wl.t VALUES (1)'), group: '/root/writes', via: admin },
      { what: 'user (with tenant)', run: () => betaClient.query('SELECT 1'), group: '/root/people', via: betaClient },
      { what: 'no rule matches', run: () => admin.query('SELECT 1'), group: '/root', via: admin },
      { what: 'the header wins over the pool (first rule)', run: () => admin.query('SELECT 1', { headers: { 'x-floe-source': 'grafana' }, session: { 'svc.resource_pool': 'etl' } }), group: '/root/dash', via: admin },
    ];
    for (const c of cases) {
      const a = await c.run();
      t.equal(a.status, 200, `${c.what}: ${JSON.stringify(a.body)}`);
      const h = await c.via.history(a.body.query_id);
      t.equal(h.resourceGroup, c.group, c.what);
      t.equal(h.status, 'completed', c.what);
    }
  });

  await t.test('a full queue rejects at once with 429 QUEUE_FULL, recorded in history', async (t) => {
    const pool = { 'svc.resource_pool': 'tiny' };
    const running = await holder(server, adminToken, pool);
    await until('the tiny group to run one query', async () => group(await admin.stats(), '/root/tiny').running === 1);
    let queuedAnswered = false;
    const queued = admin.query('SELECT 2', { session: pool }).then((a) => { queuedAnswered = true; return a; });
    await until('the tiny group to queue one query', async () => group(await admin.stats(), '/root/tiny').queued === 1);
    const t0 = performance.now();
    const rejected = await admin.query('SELECT 3', { session: pool });
    const ms = performance.now() - t0;
    t.equal(rejected.status, 429);
    t.match(rejected.body, { error: 'QUEUE_FULL', sql_state: '53300', message: 'resource group /root/tiny queue is full (max_queued_queries = 1)' });
    // "At once": the answer did not wait for the slot, which is still held, nor for the queue.
    t.match(group(await admin.stats(), '/root/tiny'), { running: 1, queued: 1 }, `rejected in ${Math.round(ms)} ms while the slot stayed held`);
    t.notOk(queuedAnswered, 'and while the queued query still waited');
    const h = await admin.history(rejected.body.query_id);
    t.match(h, { status: 'cancelled', resourceGroup: '/root/tiny', startedAt: null, errorMessage: /queue is full \(max_queued_queries = 1\)/ });
    await running.stop();
    const second = await queued;
    t.equal(second.status, 200, 'the queued query ran once the slot was free');
    t.same(second.body.rows, [[2]]);
  });

  await t.test('SET svc.workload_class changes the class, its priority and limits', async (t) => {
    const set = await admin.query("SET svc.workload_class = 'batch'");
    t.equal(set.status, 200);
    const settings = (set.body.session as { settings: Record<string, string> }).settings;
    t.equal(settings['svc.workload_class'], 'batch');
    const a = await admin.query('SELECT 1', { session: settings });
    t.equal(a.status, 200);
    t.match(await admin.history(a.body.query_id), { workloadClass: 'batch', priority: 1, resourceGroup: '/root' });
    const plain = await admin.query('SELECT 1');
    t.match(await admin.history(plain.body.query_id), { workloadClass: 'interactive', priority: 3 });
    const explain = await admin.query('EXPLAIN SELECT 1', { session: { 'svc.workload_class': 'medium' } });
    t.match(String((explain.body.rows as string[][])[0]![0]), /^workload class: medium \(session override/);
    const bad = await admin.query("SET svc.workload_class = 'urgent'");
    t.equal(bad.status, 400, JSON.stringify(bad.body));
  });

  await t.test('a sort larger than the memory cap spills and completes; a query that cannot spill is cancelled with a memory message', async (t) => {
    const batch = { 'svc.workload_class': 'batch' };
    const sort = await admin.query('SELECT count(*) AS n, sum(x) AS s FROM (SELECT (i * 7919) % 1000003 AS x, md5(i::VARCHAR) AS pad FROM range(2000000) t(i) ORDER BY x, pad)', { session: batch });
    t.equal(sort.status, 200, JSON.stringify(sort.body));
    t.same(sort.body.rows, [[2000000, '999999166287']]);
    const oom = await admin.query('SELECT length(list(md5(i::VARCHAR))) FROM range(4000000) t(i)', { session: batch });
    t.equal(oom.status, 409, JSON.stringify(oom.body));
    t.match(oom.body, { error: 'QUERY_CANCELLED', message: /exceeded batch class memory cap of 67108864 bytes \(64 MiB\); spilling to disk could not help/ });
    t.match(await admin.history(oom.body.query_id), { status: 'cancelled', errorMessage: /memory cap of 67108864 bytes/ });
    const next = await admin.query('SELECT 7 AS x');
    t.same(next.body.rows, [[7]], 'the worker serves the next query');
  });

  await t.test('GET /api/qos/stats under concurrent load', async (t) => {
    const before = await admin.stats();
    const cpuBefore = before.mlfq.level_scheduled_ms.reduce((a, b) => a + b, 0);
    const pool = { 'svc.resource_pool': 'busy' };
    // Two queries that run until their clients go away hold both slots, so that the four after
    // them are all queued at once however the machine's load spreads the six in time.
    const holders = [await holder(server, adminToken, pool), await holder(server, adminToken, pool)];
    await until('two running in /root/busy', async () => group(await admin.stats(), '/root/busy').running === 2);
    const queries = Array.from({ length: 4 }, (_, i) => admin.query(`SELECT sum(i + ${i}) FROM range(60000000) t(i)`, { session: pool }));
    // One snapshot, taken while all six are in the group (two running, four queued).
    let snapshot: QosStats | undefined;
    await until('two running and four queued in /root/busy', async () => {
      const s = await admin.stats();
      const g = group(s, '/root/busy');
      if (g.running === 2 && g.queued === 4) snapshot = s;
      return snapshot !== undefined;
    });
    const s = snapshot!;
    t.same(Object.keys(s).sort(), ['mlfq', 'resource_groups']);
    t.match(group(s, '/root/busy'), { path: '/root/busy', running: 2, queued: 4, hard_concurrency_limit: 2, scheduling_policy: 'fair' });
    t.match(group(s, '/root'), { running: 2, queued: 4 }, 'the root counts its subgroups');
    t.equal(s.mlfq.tracked_queries, 2, 'the MLFQ tracks the running queries');
    t.ok(s.mlfq.running <= s.mlfq.max_concurrent, `mlfq running ${s.mlfq.running} ≤ ${s.mlfq.max_concurrent}`);
    t.equal(s.mlfq.max_concurrent, server.state.config.query.workers, 'max_concurrent defaults to the worker count');
    t.equal(s.mlfq.level_queue_depths.length, 5);
    for (const h of holders) await h.stop();
    const answers = await Promise.all(queries);
    for (const [i, a] of answers.entries()) t.same(a.body.rows, [[String(1799999970000000 + 60000000 * i)]], `query ${i}`);
    // The holders' slots are given back when the server sees their clients gone, which may come a
    // moment after the four have run on the other slot.
    await until('/root/busy to be empty', async () => { const g = group(await admin.stats(), '/root/busy'); return g.running === 0 && g.queued === 0; });
    const after = await admin.stats();
    t.match(group(after, '/root/busy'), { running: 0, queued: 0 });
    t.equal(after.mlfq.tracked_queries, 0);
    t.equal(after.mlfq.running, 0);
    const cpuAfter = after.mlfq.level_scheduled_ms.reduce((a, b) => a + b, 0);
    t.ok(cpuAfter > cpuBefore + 100, `level_scheduled_ms grew by ${cpuAfter - cpuBefore} ms`);
    const rows = (await admin.query("SELECT cumulative_cpu_ms FROM system.resource_groups WHERE path = '/root/busy'")).body.rows as number[][];
    t.ok(rows[0]![0]! > 100, `the group was charged ${rows[0]![0]} ms`);
  });
}

async function limitTests(t: Test, store: MetaStore): Promise<void> {
  const server = await startTestServer(store, { keepStore: true, config: limitsConfig });
  t.teardown(() => server.close());
  const admin = client(server, await server.token());
  // Start both workers (instance creation must not count against a small timeout), with a query a
  // worker answers (the coordinator answers a constant `SELECT 1` itself): a try that a loaded
  // machine makes slower than the 1.5 s interactive timeout is tried again; the bound is only for
  // workers that never start.
  const warm = async (): Promise<void> => {
    for (const until = Date.now() + 60_000; Date.now() < until;) if ((await admin.query('SELECT 1 + 0')).status === 200) return;
    throw new Error('the workers did not start within a minute');
  };
  await Promise.all([warm(), warm()]);

  for (const [cls, limit] of [['interactive', 1500], ['medium', 1700], ['batch', 1900]] as const) {
    await t.test(`the ${cls} class timeout cancels the query, and the worker serves the next`, async (t) => {
      const t0 = performance.now();
      const a = await admin.query(LONG[cls]);
      const ms = performance.now() - t0;
      t.equal(a.status, 408, JSON.stringify(a.body));
      t.match(a.body, { error: 'QUERY_TIMEOUT', sql_state: '57014', message: `query cancelled: exceeded ${cls} class timeout of ${limit} ms` });
      // The query would run for far longer: the upper bound tells a timed-out query from one left to
      // run, it is no latency target (other test files may load the machine), and lies a minute past
      // the executor's grace for a worker that does not answer the interrupt.
      t.ok(ms >= limit - 50 && ms < limit + DEFAULT_ABORT_GRACE_MS + 60_000, `answered after ${Math.round(ms)} ms`);
      t.match(await admin.history(a.body.query_id), { status: 'cancelled', workloadClass: cls, errorMessage: `query cancelled: exceeded ${cls} class timeout of ${limit} ms` });
      // The worker serves the next query; one that a loaded machine makes slower than the class
      // timeout itself is tried again (bounded by a minute: only a worker that never serves fails).
      let next = await admin.query('SELECT 40 + 2 AS x');
      for (const until = Date.now() + 60_000; next.status === 408 && Date.now() < until;) next = await admin.query('SELECT 40 + 2 AS x');
      t.equal(next.status, 200, JSON.stringify(next.body));
      t.same(next.body.rows, [[42]]);
    });
  }

}

await onEachBackend(t, async (t, store) => {
  await t.test('routing, queueing, classes and stats', (t) => routingTests(t, store));
  await t.test('timeouts and memory caps', (t) => limitTests(t, store));
});
