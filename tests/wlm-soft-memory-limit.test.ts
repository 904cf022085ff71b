/**
 * `soft_memory_limit_bytes` on the running server: a large grouped aggregation routed to a group
 * with a small soft memory limit reports its DuckDB memory while it runs (the workers sample their
 * instance), so `system.resource_groups` and the Prometheus gauge show the group's and its
 * ancestors' memory above zero; a second query routed to the group waits in its queue while the
 * memory is above the limit and runs once the aggregation has ended.
 */
import t, { type Test } from 'tap';
import type { MetaStore } from '../catalog/store/meta-store.js';
import type { FloeConfig } from '../server/config.js';
import { onEachBackend } from './helpers/stores.js';
import { startTestServer } from './helpers/server.js';

const MiB = 1024 * 1024;
const SOFT_LIMIT = 8 * MiB;
/** Generated data, bounded: 20 M rows into 3 M groups, a hash table of 100+ MB for a second or more. */
const AGGREGATION = 'SELECT count(*) AS groups, sum(s) AS total FROM (SELECT i % 3000000 AS k, sum(i) AS s FROM range(20000000) t(i) GROUP BY 1)';

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
    const end = Date.now() + 20_000;
    while (Date.now() < end) {
      if (await check()) return;
      await new Promise((r) => setTimeout(r, 25));
    }
    throw new Error(`timed out waiting for ${what}`);
  };
  // Start both lanes' workers, so that instance creation is not part of what is measured.
  t.equal((await query('SELECT 1', 'small')).status, 200);

  const big = query(AGGREGATION, 'small');
  let seen: Map<string, GroupRow> | undefined;
  await until('the group to report memory above its soft limit', async () => {
    const g = await groups();
    if ((g.get('/root/etl/small')?.memory ?? 0) > SOFT_LIMIT) seen = g;
    return seen !== undefined;
  });
  const during = seen!;
  t.match(during.get('/root/etl/small'), { running: 1 }, 'the aggregation runs in the group');
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

  const first = await big;
  t.equal(first.status, 200, JSON.stringify(first.body));
  t.same(first.body.rows, [[3000000, '199999990000000']]);
  const next = await second;
  t.equal(next.status, 200, JSON.stringify(next.body));
  t.same(next.body.rows, [[2]], 'the second query ran once the aggregation had ended');
  // Its memory fell to 0 when its fragment ended, a moment before the query itself was recorded ended.
  t.match(await history(next.body.query_id), { status: 'completed', resourceGroup: '/root/etl/small' });
  const after = await groups();
  for (const path of ['/root/etl/small', '/root/etl']) t.match(after.get(path), { running: 0, queued: 0, memory: 0 }, `${path} after`);
}

await onEachBackend(t, async (t, store) => {
  await t.test('a group over its soft memory limit queues new queries until its memory drops', (t) => softMemoryLimit(t, store));
});
