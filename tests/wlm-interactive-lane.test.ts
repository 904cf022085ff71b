/**
 * Interactive work under batch load, through the running engine:
 *
 * - a full queue answers before the query is planned: a statement naming a table that does not
 *   exist gets 429 QUEUE_FULL, not the catalog's "no such table" (no catalog read happened), for
 *   queries and writes alike, and history records it; EXPLAIN without ANALYZE is not admitted, so
 *   it is not refused (on both store backends);
 * - the slot reserved to interactive work: on a one-worker server whose batch quantum is longer
 *   than the test, an interactive query answers while a batch query runs; with no reserved slot it
 *   waits until the batch query is gone;
 * - worker lanes (Linux): batch fragments run on threads at the configured nice value, the server's
 *   own thread stays at its priority, and with `background_niceness: 0` no thread is lowered.
 */
import t, { type Test } from 'tap';
import { readFileSync, readdirSync } from 'node:fs';
import type { MetaStore } from '../catalog/store/meta-store.js';
import { openStore } from '../catalog/store/open-store.js';
import type { FloeConfig } from '../server/config.js';
import { onEachBackend } from './helpers/stores.js';
import { startTestServer, type TestServer } from './helpers/server.js';

interface Answer {
  readonly status: number;
  readonly body: Record<string, unknown>;
}

function client(server: TestServer, token: string) {
  const query = async (sql: string, opts: { session?: Record<string, string>; timeoutMs?: number } = {}): Promise<Answer> => {
    const r = await server.app.inject({
      method: 'POST', url: '/api/query', headers: { authorization: `Bearer ${token}` },
      payload: { sql, ...(opts.session ? { session: opts.session } : {}), ...(opts.timeoutMs !== undefined ? { timeout_ms: opts.timeoutMs } : {}) },
    });
    return { status: r.statusCode, body: r.json() as Record<string, unknown> };
  };
  const history = async (id: unknown): Promise<Record<string, unknown>> => {
    const r = await server.app.inject({ method: 'GET', url: `/api/query-history/${String(id)}`, headers: { authorization: `Bearer ${token}` } });
    return r.json() as Record<string, unknown>;
  };
  return { query, history };
}

async function until(what: string, check: () => boolean, ms = 60_000): Promise<void> {
  const end = Date.now() + ms;
  while (Date.now() < end) {
    if (check()) return;
    await new Promise((r) => setTimeout(r, 10));
  }
  throw new Error(`timed out waiting for ${what}`);
}

/** Runs until cancelled (or its timeout). */
const HOLD = 'SELECT sum(i) FROM range(100000000000) t(i)';

async function earlyRejection(t: Test, store: MetaStore): Promise<void> {
  const server = await startTestServer(store, {
    keepStore: true,
    config: (c: FloeConfig) => ({
      ...c,
      workload: { ...c.workload, resource_groups: { root: { subgroups: [{ name: 'tiny', hard_concurrency_limit: 1, max_queued_queries: 0 }] } }, routing_rules: [{ match_resource_pool: 'tiny', target_group: 'root.tiny' }] },
    }),
  });
  t.teardown(() => server.close());
  const admin = client(server, await server.token());
  const tiny = { 'svc.resource_pool': 'tiny' };

  const missing = await admin.query('SELECT * FROM nowhere.missing', { session: tiny });
  t.not(missing.status, 429, 'with room, the query gets as far as the catalog');
  t.not(missing.body.error, 'QUEUE_FULL');

  // The held query runs until the steps below are done, however long a loaded machine makes them
  // (they took up to a few seconds at a load average of 26; a 20 s timeout ended it too early under
  // more), and is then cancelled; its timeout (batch: the interactive class would cap it at 30 s)
  // only bounds a hang.
  const hold = admin.query(HOLD, { session: { ...tiny, 'svc.workload_class': 'batch' }, timeoutMs: 300_000 });
  const tinyGroup = () => server.state.wlm.resourceGroupRows().find((r) => r.path === '/root/tiny')!;
  await until('the tiny group to run its one query', () => tinyGroup().running === 1);

  const rejected = await admin.query('SELECT * FROM nowhere.missing', { session: tiny });
  t.equal(rejected.status, 429, JSON.stringify(rejected.body));
  t.match(rejected.body, { error: 'QUEUE_FULL', sql_state: '53300', message: 'resource group /root/tiny queue is full (max_queued_queries = 0)' });
  t.match(await admin.history(rejected.body.query_id), { status: 'cancelled', resourceGroup: '/root/tiny', startedAt: null, errorMessage: /queue is full/ });

  const write = await admin.query('INSERT INTO nowhere.missing VALUES (1)', { session: tiny });
  t.equal(write.status, 429, `writes too are refused before planning: ${JSON.stringify(write.body)}`);
  const analyze = await admin.query('EXPLAIN ANALYZE SELECT * FROM nowhere.missing', { session: tiny });
  t.equal(analyze.status, 429, 'EXPLAIN ANALYZE runs the query, so it is admitted, and refused');
  const explain = await admin.query('EXPLAIN SELECT 1', { session: tiny });
  t.equal(explain.status, 200, 'a plain EXPLAIN is not admitted, so a full queue does not refuse it');
  t.equal(tinyGroup().rejected, 3);
  t.equal(tinyGroup().running, 1, 'the rejections held nothing');

  t.equal(server.state.wlm.cancelAll(), 1, 'the held query is the one admitted');
  const held = await hold;
  t.equal(held.status, 503, `the held query ends cancelled: ${JSON.stringify(held.body)}`);
  t.equal(held.body.error, 'SERVER_SHUTDOWN');
}

/** Threads of this process with their nice values (Linux). */
function threadNiceness(): Map<string, number> {
  const out = new Map<string, number>();
  for (const tid of readdirSync('/proc/self/task')) {
    try {
      // Field 19 of stat; the command name (field 2) may hold spaces, so count after its ')'.
      const fields = readFileSync(`/proc/self/task/${tid}/stat`, 'utf8').split(') ')[1]!.split(' ');
      out.set(tid, Number(fields[16]));
    } catch {
      // The thread ended meanwhile.
    }
  }
  return out;
}

await onEachBackend(t, async (t, store) => {
  await t.test('a full queue answers 429 before the query is planned', (t) => earlyRejection(t, store));
});

/** A server on loopback whose queries can be cancelled by going away (fetch with a signal). */
async function listening(config: (c: FloeConfig) => FloeConfig) {
  const server = await startTestServer(await openStore({ kind: 'pglite-memory' }), { config });
  const token = await server.token();
  const url = await server.app.listen({ host: '127.0.0.1', port: 0 });
  const query = async (sql: string, opts: { session?: Record<string, string>; signal?: AbortSignal } = {}): Promise<Answer> => {
    const r = await fetch(`${url}/api/query`, {
      method: 'POST', headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      body: JSON.stringify({ sql, ...(opts.session ? { session: opts.session } : {}) }), ...(opts.signal ? { signal: opts.signal } : {}),
    });
    return { status: r.status, body: (await r.json()) as Record<string, unknown> };
  };
  /** Starts a batch query that runs until `stop()` (the client goes away, the server cancels it). */
  const batch = () => {
    const gone = new AbortController();
    const done = query(HOLD, { session: { 'svc.workload_class': 'batch' }, signal: gone.signal }).catch(() => undefined);
    return { stop: async () => { gone.abort(); await done; } };
  };
  return { server, query, batch };
}

t.test('the reserved interactive slot: an interactive query does not wait for a batch quantum', async (t) => {
  for (const slots of [1, 0]) {
    await t.test(`interactive_slots: ${slots}`, async (t) => {
      // One worker and a quantum far longer than the test: without the reserved slot, nothing else
      // can start on the worker while the batch fragment runs.
      const { server, query, batch } = await listening((c) => ({ ...c, query: { ...c.query, workers: 1 }, workload: { ...c.workload, mlfq: { ...c.workload.mlfq, quantum_ms: 60_000, interactive_slots: slots } } }));
      t.teardown(() => server.close());
      t.equal((await query('SELECT 1 + 0')).status, 200, 'workers started');
      const b = batch();
      await until('the batch quantum to run', () => server.state.wlm.mlfqStats().running === 1);
      let answered = false;
      // An expression, not a constant: the coordinator answers `SELECT 42` without a worker.
      const interactive = query('SELECT 41 + 1 AS x').then((a) => { answered = true; return a; });
      if (slots > 0) {
        t.same((await interactive).body.rows, [[42]], 'answered while the batch query runs');
        t.equal(server.state.wlm.mlfqStats().runningInteractive, 0);
        t.equal(server.state.wlm.resourceGroupRows()[0]!.running, 1, 'the batch query still runs');
        await b.stop();
      } else {
        await new Promise((r) => setTimeout(r, 1500));
        t.notOk(answered, 'without a reserved slot it waits for the batch quantum');
        await b.stop();
        t.same((await interactive).body.rows, [[42]], 'and runs once the worker is free');
      }
    });
  }
});

t.test('worker lanes: batch fragments run on threads at a lower OS priority', { skip: process.platform === 'linux' ? false : 'thread priorities are set on Linux only' }, async (t) => {
  // Threads lowered by this test's servers: any lowered thread that was not there before (the
  // process may hold others from earlier tests).
  const before = new Set([...threadNiceness()].filter(([, n]) => n > 0).map(([tid]) => tid));
  const fresh = () => [...threadNiceness()].filter(([tid, n]) => n > 0 && !before.has(tid)).map(([, n]) => n);
  for (const niceness of [7, 0]) {
    await t.test(`background_niceness: ${niceness}`, async (t) => {
      const { server, query } = await listening((c) => ({ ...c, workload: { ...c.workload, mlfq: { ...c.workload.mlfq, quantum_ms: 50, background_niceness: niceness } } }));
      t.equal((await query('SELECT sum(i) FROM range(1000000) t(i)')).status, 200);
      t.same(fresh(), [], 'an interactive query runs in the foreground lane');
      const b = await query('SELECT sum(hash(i) % 7) AS s FROM range(3000000) t(i)', { session: { 'svc.workload_class': 'batch' } });
      t.equal(b.status, 200, JSON.stringify(b.body));
      // The batch worker thread (and its DuckDB threads) stay in the pool, at their nice value.
      const lowered = fresh();
      if (niceness > 0) {
        t.ok(lowered.length >= 1, `${lowered.length} thread(s) lowered`);
        t.ok(lowered.every((n) => n === niceness), `at nice ${niceness}: ${lowered.join(',')}`);
      } else {
        t.same(lowered, [], 'one lane: no thread lowered');
      }
      t.equal(threadNiceness().get(String(process.pid)), 0, "the server's own thread keeps its priority");
      // Closing the server ends its workers, and with them the lowered threads.
      await server.close();
      await until('the lowered threads to end', () => fresh().length === 0);
    });
  }
});
