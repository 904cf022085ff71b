/**
 * bench/scheduler, part 2b: real DuckDB, in process, no HTTP. One DuckDB executor thread (the main
 * thread drives DuckDB tasks with pending results, `runTask()`, so a fragment yields at a task
 * boundary once its quantum is used: the time slicing the real executor will do per worker).
 *
 * - interactive TPC-H Q6 (sf0.01) latency alone, then while batch TPC-H queries over a 20× lineitem
 *   saturate the executor, under the MLFQ (`WorkloadManager` + `MlfqDispatcher`) and under plain
 *   FIFO (each query runs to completion in arrival order);
 * - throughput of two weighted resource groups (weights 3 and 1) sharing the executor.
 *
 * Wall-clock numbers on a shared 2-core machine: noisy. The HTTP version comes with the engine.
 */
import { readFileSync } from 'node:fs';
import { DuckDBInstance, DuckDBPendingResultState, type DuckDBConnection, type DuckDBPendingResult } from '@duckdb/node-api';
import { PRIORITY, resolveWorkloadConfig, type WorkloadConfigSpec } from '../../engine/wlm/config.js';
import { systemClock } from '../../engine/wlm/clock.js';
import { WorkloadManager, type AdmissionRequest } from '../../engine/wlm/manager.js';
import type { FragmentQuantum, QuantumResult } from '../../engine/wlm/mlfq.js';
import { percentile } from '../report.js';

const DATA = new URL('../../../../shared/data/tpch/', import.meta.url).pathname;

const TABLES: Record<string, string> = {
  region: 'r_regionkey INT, r_name VARCHAR, r_comment VARCHAR',
  nation: 'n_nationkey INT, n_name VARCHAR, n_regionkey INT, n_comment VARCHAR',
  supplier: 's_suppkey BIGINT, s_name VARCHAR, s_address VARCHAR, s_nationkey INT, s_phone VARCHAR, s_acctbal DECIMAL(15,2), s_comment VARCHAR',
  customer: 'c_custkey BIGINT, c_name VARCHAR, c_address VARCHAR, c_nationkey INT, c_phone VARCHAR, c_acctbal DECIMAL(15,2), c_mktsegment VARCHAR, c_comment VARCHAR',
  part: 'p_partkey BIGINT, p_name VARCHAR, p_mfgr VARCHAR, p_brand VARCHAR, p_type VARCHAR, p_size INT, p_container VARCHAR, p_retailprice DECIMAL(15,2), p_comment VARCHAR',
  partsupp: 'ps_partkey BIGINT, ps_suppkey BIGINT, ps_availqty BIGINT, ps_supplycost DECIMAL(15,2), ps_comment VARCHAR',
  orders: 'o_orderkey BIGINT, o_custkey BIGINT, o_orderstatus VARCHAR, o_totalprice DECIMAL(15,2), o_orderdate DATE, o_orderpriority VARCHAR, o_clerk VARCHAR, o_shippriority INT, o_comment VARCHAR',
  lineitem: 'l_orderkey BIGINT, l_partkey BIGINT, l_suppkey BIGINT, l_linenumber INT, l_quantity DECIMAL(15,2), l_extendedprice DECIMAL(15,2), l_discount DECIMAL(15,2), l_tax DECIMAL(15,2), l_returnflag VARCHAR, l_linestatus VARCHAR, l_shipdate DATE, l_commitdate DATE, l_receiptdate DATE, l_shipinstruct VARCHAR, l_shipmode VARCHAR, l_comment VARCHAR',
};

const query = (n: string): string => readFileSync(`${DATA}queries/q${n}.sql`, 'utf8');
const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));
const turn = () => new Promise<void>((r) => setImmediate(r));

async function load(instance: DuckDBInstance): Promise<void> {
  const c = await instance.connect();
  for (const [name, columns] of Object.entries(TABLES)) {
    const cols = columns.split(', ').map((c) => c.split(' ')[0]!);
    const typed = columns.split(', ').map((c) => { const [n, ...t] = c.split(' '); return `'${n}': '${t.join(' ')}'`; }).join(', ');
    await c.run(`CREATE TABLE ${name} AS SELECT ${cols.join(', ')} FROM read_csv('${DATA}sf0.01/${name}.tbl.gz', delim = '|', header = false, columns = {${typed}, 'trailing': 'VARCHAR'})`);
  }
  await c.run('CREATE TABLE lineitem20 AS SELECT l.* FROM lineitem l, range(20)');
  c.closeSync();
}

/**
 * One query as a fragment the MLFQ can time-slice: the first quantum starts a pending result, each
 * quantum runs DuckDB tasks until `quantumMs` is used, then yields.
 */
/** The longest single DuckDB task seen: a quantum cannot end inside a task. */
const taskStats = { longestTaskMs: 0, quanta: 0, longestQuantumMs: 0 };

function slicedQuery(connection: DuckDBConnection, sql: string): (q: FragmentQuantum) => Promise<QuantumResult> {
  let pending: DuckDBPendingResult | null = null;
  return async (q) => {
    const started = performance.now();
    taskStats.quanta += 1;
    pending ??= await connection.start(sql);
    for (;;) {
      const taskStart = performance.now();
      const state = pending.runTask();
      const taskMs = performance.now() - taskStart;
      if (taskMs > taskStats.longestTaskMs) taskStats.longestTaskMs = taskMs;
      if (taskStart + taskMs - started > taskStats.longestQuantumMs) taskStats.longestQuantumMs = taskStart + taskMs - started;
      if (state === DuckDBPendingResultState.RESULT_READY) {
        await pending.readAll();
        const cpuMs = performance.now() - started;
        await turn(); // let arrivals be seen between quanta (one thread does everything here)
        return { cpuMs, finished: true };
      }
      if (state === DuckDBPendingResultState.NO_TASKS_AVAILABLE) await turn();
      if (performance.now() - started >= q.quantumMs) {
        const cpuMs = performance.now() - started;
        await turn();
        return { cpuMs, finished: false };
      }
    }
  };
}

/** Plain FIFO: one query at a time, in arrival order, each run to completion. */
class FifoExecutor {
  private readonly queue: (() => Promise<void>)[] = [];
  private busy = false;

  submit(run: (q: FragmentQuantum) => Promise<QuantumResult>): Promise<void> {
    return new Promise<void>((resolve, reject) => {
      this.queue.push(async () => {
        try {
          const signal = new AbortController().signal;
          while (!(await run({ quantumMs: Number.POSITIVE_INFINITY, level: 0, lane: 'foreground', signal })).finished) { /* to completion */ }
          resolve();
        } catch (e) {
          reject(e);
        }
      });
      void this.pump();
    });
  }

  private async pump(): Promise<void> {
    if (this.busy) return;
    this.busy = true;
    while (this.queue.length) await this.queue.shift()!();
    this.busy = false;
  }
}

interface Latencies { readonly count: number; readonly p50Ms: number; readonly p99Ms: number; readonly meanMs: number }
const summarize = (xs: number[]): Latencies => {
  const s = [...xs].sort((a, b) => a - b);
  return { count: s.length, p50Ms: r2(percentile(s, 50)), p99Ms: r2(percentile(s, 99)), meanMs: r2(s.reduce((a, b) => a + b, 0) / Math.max(1, s.length)) };
};
const r2 = (v: number) => Math.round(v * 100) / 100;

type Executor = 'mlfq' | 'fifo';

export interface InProcessLiveResult {
  readonly batchQueryMs: Record<string, number>;
  /** Quanta run, and the longest DuckDB task and quantum seen (a quantum ends only between tasks). */
  readonly slicing: { readonly quanta: number; readonly longestTaskMs: number; readonly longestQuantumMs: number };
  readonly interactiveAlone: Latencies;
  readonly interactiveUnderLoad: Record<Executor, Latencies>;
  readonly p99UnderLoadOverIdle: Record<Executor, number>;
  readonly weightedGroups: { readonly weights: readonly number[]; readonly completed: readonly number[]; readonly ratio: number; readonly targetRatio: number; readonly runningSamples: readonly string[] };
}

export async function inProcessLive(): Promise<InProcessLiveResult> {
  const instance = await DuckDBInstance.create(':memory:', { threads: '1' });
  await load(instance);
  const interactiveSql = query('06');
  const batchSql = ['01', '03', '09', '18'].map((n) => query(n).replaceAll(/\blineitem\b/g, 'lineitem20'));
  const connections: DuckDBConnection[] = [];
  for (let i = 0; i < 12; i++) connections.push(await instance.connect());
  const [interactiveConn, ...batchConns] = connections as [DuckDBConnection, ...DuckDBConnection[]];

  // how long each batch query takes alone (and warm-up)
  const batchQueryMs: Record<string, number> = {};
  for (const [i, sql] of batchSql.entries()) {
    const t0 = performance.now();
    await interactiveConn.runAndReadAll(sql);
    batchQueryMs[['q01', 'q03', 'q09', 'q18'][i]!] = r2(performance.now() - t0);
  }

  // One executor thread: no reserved interactive slot (it would be a second thread), the MLFQ alone.
  const config = (spec: WorkloadConfigSpec = {}) => resolveWorkloadConfig({ mlfq: { max_concurrent: 1, quantum_ms: 5, interactive_slots: 0 }, ...spec });
  let n = 0;
  const request = (over: Partial<AdmissionRequest>): AdmissionRequest => ({
    queryId: `q${n++}`, tenant: 't', user: 'u', source: null, resourcePool: null, queryType: 'select', workloadClass: 'interactive',
    priority: PRIORITY.high, timeoutMs: 600_000, memoryCapBytes: 1 << 30, ...over,
  });

  /** Runs interactive Q6 every `gapMs` for `durationMs`, optionally with `streams` batch clients, and returns Q6 latencies. */
  const scenario = async (executor: Executor, streams: number, durationMs: number, gapMs: number): Promise<number[]> => {
    const wlm = new WorkloadManager({ config: config(), clock: systemClock() });
    const fifo = new FifoExecutor();
    const run = async (over: Partial<AdmissionRequest>, connection: DuckDBConnection, sql: string): Promise<void> => {
      const ticket = wlm.admit(request(over));
      if (ticket.kind === 'rejected') throw ticket.error;
      const lease = await ticket.lease;
      try {
        const fragment = slicedQuery(connection, sql);
        if (executor === 'mlfq') await lease.runFragment(fragment);
        else await fifo.submit(fragment);
      } finally {
        lease.release();
      }
    };
    let stop = false;
    const batch = Array.from({ length: streams }, async (_, s) => {
      for (let k = 0; !stop; k++) await run({ workloadClass: 'batch', priority: PRIORITY.low }, batchConns[s]!, batchSql[(s + k) % batchSql.length]!);
    });
    await sleep(streams > 0 ? 200 : 0); // let the batch load build up
    const latencies: number[] = [];
    const end = performance.now() + durationMs;
    while (performance.now() < end) {
      const t0 = performance.now();
      await run({}, interactiveConn, interactiveSql);
      latencies.push(performance.now() - t0);
      await sleep(gapMs);
    }
    stop = true;
    await Promise.all(batch);
    return latencies;
  };

  const alone = summarize(await scenario('mlfq', 0, 1500, 5));
  const underLoad = {
    mlfq: summarize(await scenario('mlfq', 4, 3000, 5)),
    fifo: summarize(await scenario('fifo', 4, 3000, 5)),
  };

  // weighted groups: root runs 4 at once, group a (weight 3) and b (weight 1) each have 8 clients
  const weights = [3, 1];
  // four MLFQ slots for four admitted queries: the share is decided by the groups, not the queue
  const wlm = new WorkloadManager({
    config: config({
      mlfq: { max_concurrent: 4, quantum_ms: 5, interactive_slots: 0 },
      resource_groups: { root: { hard_concurrency_limit: 4, scheduling_policy: 'weighted', subgroups: [{ name: 'a', scheduling_weight: weights[0] }, { name: 'b', scheduling_weight: weights[1] }] } },
      routing_rules: [{ match_source: 'a', target_group: 'root.a' }, { match_source: 'b', target_group: 'root.b' }],
    }),
    clock: systemClock(),
  });
  const completed = [0, 0];
  let stop = false;
  const weightedSql = query('01');
  const clients = ['a', 'b'].flatMap((group, g) => Array.from({ length: 5 }, async (_, c) => {
    const connection = connections[1 + g * 5 + c] ?? interactiveConn;
    while (!stop) {
      const ticket = wlm.admit(request({ source: group, workloadClass: 'batch', priority: PRIORITY.low }));
      if (ticket.kind === 'rejected') { await sleep(1); continue; }
      const lease = await ticket.lease;
      try {
        await lease.runFragment(slicedQuery(connection, weightedSql));
        if (!stop) completed[g]! += 1;
      } finally {
        lease.release();
      }
    }
  }));
  const runningSamples: string[] = [];
  for (let i = 0; i < 6; i++) {
    await sleep(500);
    runningSamples.push(wlm.resourceGroupRows().map((r) => `${r.path} ${r.running} running ${r.queued} queued`).join(', '));
  }
  stop = true;
  await Promise.all(clients);
  for (const c of connections) c.closeSync();
  instance.closeSync();

  return {
    batchQueryMs,
    slicing: { quanta: taskStats.quanta, longestTaskMs: r2(taskStats.longestTaskMs), longestQuantumMs: r2(taskStats.longestQuantumMs) },
    interactiveAlone: alone,
    interactiveUnderLoad: underLoad,
    p99UnderLoadOverIdle: { mlfq: r2(underLoad.mlfq.p99Ms / alone.p99Ms), fifo: r2(underLoad.fifo.p99Ms / alone.p99Ms) },
    weightedGroups: { weights, completed, ratio: r2(completed[0]! / Math.max(1, completed[1]!)), targetRatio: weights[0]! / weights[1]!, runningSamples },
  };
}
