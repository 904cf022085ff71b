/**
 * `soft_memory_limit_bytes` on the running server: a query routed to a group with a small soft
 * memory limit reports its DuckDB memory while it runs (the workers sample their instance), so
 * `system.resource_groups` and the Prometheus gauge show the group's and its ancestors' memory above
 * zero; a second query routed to the group waits in its queue while the memory is above the limit
 * and runs once the first query has ended.
 */
import t, { type Test } from 'tap';
import type { MetaStore } from '../catalog/store/meta-store.js';
import type { FloeConfig } from '../server/config.js';
import { onEachBackend } from './helpers/stores.js';
import { startTestServer } from './helpers/server.js';

const MiB = 1024 * 1024;
const SOFT_LIMIT = 8 * MiB;
/**
 * A hash join whose build side (2 M rows with their md5, 100+ MB) stays in memory while the probe
 * side streams for hours: memory above the limit for as long as the test needs, until its client
 * goes away. (A bounded query could end, and its memory with it, before a loaded machine had let
 * the test queue the second query.)
 */
const MEMORY_HOLDER = 'SELECT count(*) FROM range(100000000000) a(i) JOIN (SELECT i AS j, md5(i::VARCHAR) AS pad FROM range(2000000) t(i)) b ON a.i % 2000000 = b.j';

function memoryConfig(c: FloeConfig): FloeConfig {
  return {
    ...c,
    query: { ...c.query, workers: 2 },
    workload: {
      ...c.workload,
      resource_groups: { root: { subgroups: [{ name: 'etl', subgroups: [{ name: 'small', soft_memory_limit_bytes: SOFT_LIMIT }] }] } },
      routing_rules: [{ match_resource_pool: 'small', target_group: 'root.etl.small' }],
    },
  };
}

interface GroupRow {
  readonly path: string;
  readonly running: number;
  readonly queued: number;
  readonly memory: number;
}

async function softMemoryLimit(t: Test, store: MetaStore): Promise<void> {
  const server = await startTestServer(store, { keepStore: true, config: memoryConfig });
  t.teardown(() => server.close());
  const token = await server.token();
  const query = async (sql: string, pool?: string): Promise<{ status: number; body: Record<string, unknown> }> => {
    const r = await server.app.inject({
      method: 'POST', url: '/api/query', headers: { authorization: `Bearer ${token}` },
      payload: { sql, ...(pool !== undefined ? { session: { 'svc.resource_pool': pool } } : {}) },
    });
    return { status: r.statusCode, body: r.json() as Record<string, unknown> };
  };
  const groups = async (): Promise<Map<string, GroupRow>> => {
    const a = await query('SELECT path, running, queued, memory_bytes FROM system.resource_groups');
    if (a.status !== 200) throw new Error(`system.resource_groups: ${JSON.stringify(a.body)}`);
    return new Map((a.body.rows as [string, number, number, number | string][]).map(([path, running, queued, memory]) => [path, { path, running, queued, memory: Number(memory) }]));
  };
  const history = async (id: unknown): Promise<Record<string, unknown>> => {
    const r = await server.app.inject({ method: 'GET', url: `/api/query-history/${String(id)}`, headers: { authorization: `Bearer ${token}` } });
    return r.json() as Record<string, unknown>;
  };
  const until = async (what: string, check: () => Promise<boolean>): Promise<void> => {
    const end = Date.now() + 60_000;
    while (Date.now() < end) {
      if (await check()) return;
      await new Promise((r) => setTimeout(r, 25));
    }
    throw new Error(`timed out waiting for ${what}`);
  };
  t.equal((await query('SELECT 1', 'small')).status, 200, 'under its limit, the group runs a query at once');

  // Over a real socket, so that the query ends when its client goes away (the server cancels it).
  const url = await server.app.listen({ host: '127.0.0.1', port: 0 });
  const gone = new AbortController();
  const big = fetch(`${url}/api/query`, {
    method: 'POST', signal: gone.signal, headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
    body: JSON.stringify({ sql: MEMORY_HOLDER, session: { 'svc.resource_pool': 'small' } }),
  }).then(() => 'answered', () => 'gone');
  let seen: Map<string, GroupRow> | undefined;
  await until('the group to report memory above its soft limit', async () => {
    const g = await groups();
    if ((g.get('/root/etl/small')?.memory ?? 0) > SOFT_LIMIT) seen = g;
    return seen !== undefined;
  });
  const during = seen!;
  t.match(during.get('/root/etl/small'), { running: 1 }, 'the join runs in the group');
  for (const path of ['/root/etl', '/root']) {
    t.ok(during.get(path)!.memory >= during.get('/root/etl/small')!.memory, `${path} is charged too (${during.get(path)!.memory} bytes)`);
  }
  const metrics = await server.app.inject({ method: 'GET', url: '/metrics', headers: { authorization: `Bearer ${token}` } });
  if (metrics.statusCode === 200) {
    const line = metrics.body.split('\n').find((l) => l.startsWith('floe_wlm_group_memory_bytes{group="/root/etl/small"}'));
    t.ok(line !== undefined && Number(line.split(' ').at(-1)) > 0, `Prometheus: ${line}`);
  }

  const second = query('SELECT 2 AS x', 'small');
  let settled = false;
  void second.then(() => { settled = true; });
  await until('the second query to queue', async () => (await groups()).get('/root/etl/small')!.queued === 1);
  t.notOk(settled, 'the second query waits while the group is over its soft memory limit');

  t.match((await groups()).get('/root/etl/small'), { running: 1, queued: 1 }, 'the first query still runs');

  gone.abort();
  t.equal(await big, 'gone');
  const next = await second;
  t.equal(next.status, 200, JSON.stringify(next.body));
  t.same(next.body.rows, [[2]], 'the second query ran once the first had ended');
  // Its memory fell to 0 when its fragment ended, a moment before the query itself was recorded ended.
  t.match(await history(next.body.query_id), { status: 'completed', resourceGroup: '/root/etl/small' });
  await until('the group to be empty', async () => (await groups()).get('/root/etl/small')!.running === 0);
  const after = await groups();
  for (const path of ['/root/etl/small', '/root/etl']) t.match(after.get(path), { running: 0, queued: 0, memory: 0 }, `${path} after`);
}

await onEachBackend(t, async (t, store) => {
  await t.test('a group over its soft memory limit queues new queries until its memory drops', (t) => softMemoryLimit(t, store));
});
