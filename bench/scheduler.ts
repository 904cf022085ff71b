/**
 * bench/scheduler: the workload manager under load.
 *
 * Part 1, a deterministic simulation in virtual time (same seed, same numbers, any machine):
 * - "starvation": an overloaded 8-worker machine, long batch queries with skewed fragments that
 *   would starve short queries; the MLFQ (`MultilevelQueue`, the very class the dispatcher uses)
 *   against plain FIFO (a fragment queue in arrival order, each fragment run to completion, which is
 *   what a bare worker pool does) and, for reference, round-robin time slicing.
 *   Target: mean slowdown of short queries at least 5× lower than FIFO.
 * - "levels": every level kept busy (long queries already past 300 s of CPU when a steady mix of
 *   short, medium and long work arrives); CPU time per level measured while all five levels have
 *   waiting quanta. Target: each level's share within ±5% (relative) of 16:8:4:2:1.
 * Part 2, in-process: the admission decision (`WorkloadManager.admit` with routing over a
 * realistic tree and rule list, queues non-empty) timed call by call. Target p99 ≤ 1 ms.
 * Part 2b, in-process with real DuckDB (scheduler/inprocess.ts): interactive TPC-H Q6 latency
 * alone and under batch TPC-H load, MLFQ against FIFO; two weighted groups' throughput (target:
 * within ±10% of the weight ratio). Wall clock, shared machine: noisy.
 * Part 3, live over HTTP (`--live`, scheduler/live.ts): interactive TPC-H Q6 p50/p99 alone and while
 * batch TPC-H saturates the workers, MLFQ against FIFO (target p99 under load ≤ 1.5× idle); two
 * weighted groups' throughput (±10% of 3:1); admission decision p99 ≤ 1 ms inside the server;
 * queue-full rejection ≤ 5 ms end to end.
 */
import { performance } from 'node:perf_hooks';
import { loadavg } from 'node:os';
import { atLeast, atMost, percentile, writeBenchResult, type Target } from './report.js';
import { PRIORITY, resolveWorkloadConfig } from '../engine/wlm/config.js';
import { DEFAULT_MULTILEVEL_SETTINGS, MultilevelQueue, type MlfqQueryAccount, type TakenQuantum } from '../engine/wlm/mlfq.js';
import { WorkloadManager, type AdmissionRequest } from '../engine/wlm/manager.js';
import { systemClock } from '../engine/wlm/clock.js';
import { IndexedHeap, type HeapSlot } from '../engine/wlm/heap.js';
import { inProcessLive } from './scheduler/inprocess.js';
import { httpLive, type HttpLiveResult } from './scheduler/live.js';

const NS = 1e9;

/** Mulberry32: a small deterministic PRNG, so the simulation is the same on every run. */
function rng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}
const exponential = (r: () => number, mean: number): number => -Math.log(1 - r()) * mean;
const pareto = (r: () => number, min: number, alpha: number): number => min / Math.pow(1 - r(), 1 / alpha);

interface SimQuery {
  readonly id: number;
  readonly kind: 'short' | 'long' | 'medium';
  readonly arrival: number;
  readonly priority: number;
  /** CPU seconds of each fragment; fragments of a query may run in parallel. */
  readonly fragments: readonly number[];
  /** Open-loop query: count its response; closed-loop filler: replaced when done. */
  readonly measured: boolean;
}

interface Fragment {
  readonly query: SimQuery;
  remaining: number;
}

type Policy = 'mlfq' | 'fifo' | 'round_robin';

interface SimResult {
  readonly completions: Map<number, number>;
  /** CPU seconds run at each level while all levels had waiting quanta (MLFQ only). */
  readonly busyLevelCpu: number[];
  readonly busySeconds: number;
  /** Seconds each level had no waiting quanta (after `measureFrom`, MLFQ only). */
  readonly emptySeconds: number[];
  readonly quanta: number;
}

/**
 * Runs `queries` on `workers` in virtual time. MLFQ and round-robin slice fragments into `quantum`
 * seconds; FIFO runs each fragment to completion. `refill` (closed loop) is asked for a replacement
 * whenever a filler query completes.
 */
function simulate(policy: Policy, workers: number, quantum: number, queries: readonly SimQuery[], horizon: number, refill?: (done: SimQuery, now: number) => SimQuery | null, measureFrom = 0): SimResult {
  const completions = new Map<number, number>();
  const left = new Map<number, number>();
  const mlfq = new MultilevelQueue<Fragment>({ ...DEFAULT_MULTILEVEL_SETTINGS, slots: workers });
  const accounts = new Map<number, MlfqQueryAccount>();
  const fifo: Fragment[] = [];
  let fifoHead = 0;
  const busyLevelCpu = [0, 0, 0, 0, 0];
  let busySeconds = 0;
  const emptySeconds = [0, 0, 0, 0, 0];
  let quanta = 0;

  type Event = HeapSlot & ({ at: number; seq: number; kind: 'arrive'; query: SimQuery } | { at: number; seq: number; kind: 'done'; fragment: Fragment; ran: number; taken: TakenQuantum<Fragment> | null });
  const events = new IndexedHeap<Event>((a, b) => a.at !== b.at ? a.at < b.at : a.seq < b.seq);
  let seq = 0;
  for (const q of queries) events.push({ at: q.arrival, seq: seq++, kind: 'arrive', query: q, heapIndex: -1 });
  let idle = workers;
  let now = 0;

  const offer = (f: Fragment): void => {
    if (policy === 'mlfq') {
      let a = accounts.get(f.query.id);
      if (!a) { a = mlfq.newAccount(String(f.query.id), f.query.priority); accounts.set(f.query.id, a); }
      mlfq.offer(f, a);
    } else {
      fifo.push(f);
    }
  };
  const dispatch = (): void => {
    while (idle > 0) {
      let f: Fragment | undefined;
      let taken: TakenQuantum<Fragment> | null = null;
      let ran: number;
      if (policy === 'mlfq') {
        const depths = mlfq.depths();
        const allBusy = depths.every((d) => d > 0);
        const next = mlfq.poll();
        if (!next) return;
        f = next.item;
        taken = next;
        ran = Math.min(quantum, f.remaining);
        if (allBusy && now >= measureFrom) busyLevelCpu[next.level]! += ran;
      } else {
        if (fifoHead >= fifo.length) return;
        f = fifo[fifoHead++]!;
        ran = policy === 'fifo' ? f.remaining : Math.min(quantum, f.remaining);
      }
      idle--;
      quanta++;
      events.push({ at: now + ran, seq: seq++, kind: 'done', fragment: f, ran, taken, heapIndex: -1 });
    }
  };

  let lastAllBusyCheck = 0;
  while (events.size > 0) {
    const e = events.pop()!;
    if (policy === 'mlfq' && e.at > measureFrom) {
      const depths = mlfq.depths();
      const span = e.at - Math.max(measureFrom, lastAllBusyCheck);
      if (depths.every((d) => d > 0)) busySeconds += span;
      depths.forEach((d, l) => { if (d === 0) emptySeconds[l]! += span; });
    }
    lastAllBusyCheck = e.at;
    now = e.at;
    if (now > horizon) break;
    if (e.kind === 'arrive') {
      left.set(e.query.id, e.query.fragments.length);
      for (const size of e.query.fragments) offer({ query: e.query, remaining: size });
    } else {
      idle++;
      const f = e.fragment;
      f.remaining -= e.ran;
      const again = f.remaining > 1e-9;
      if (e.taken) mlfq.complete(e.taken, e.ran * NS, again);
      else if (again) offer(f);
      if (!again) {
        const n = left.get(f.query.id)! - 1;
        left.set(f.query.id, n);
        if (n === 0) {
          completions.set(f.query.id, now);
          accounts.delete(f.query.id);
          const next = refill?.(f.query, now);
          if (next) events.push({ at: now, seq: seq++, kind: 'arrive', query: next, heapIndex: -1 });
        }
      }
    }
    dispatch();
  }
  return { completions, busyLevelCpu, busySeconds, emptySeconds, quanta };
}

/** Response time on an empty machine (enough workers for its fragments): its longest fragment. */
const ideal = (q: SimQuery): number => Math.max(...q.fragments);

function starvationWorkload(seed: number, workers: number, horizon: number): SimQuery[] {
  const r = rng(seed);
  const out: SimQuery[] = [];
  let id = 0;
  // Long batch queries: 8 skewed fragments (Pareto, α 1.5, from 15 s, capped at 600 s), about 0.85 of the machine.
  const longFragments = 8;
  const meanFragment = 40; // empirical mean of the capped Pareto above
  const longRate = (0.85 * workers) / (longFragments * meanFragment);
  for (let t = exponential(r, 1 / longRate); t < horizon; t += exponential(r, 1 / longRate)) {
    out.push({ id: id++, kind: 'long', arrival: t, priority: PRIORITY.low, fragments: Array.from({ length: longFragments }, () => Math.min(600, pareto(r, 15, 1.5))), measured: true });
  }
  // Short dashboard queries: 1 or 2 fragments of about 0.2 s, about 0.25 of the machine: overloaded (≈1.1).
  const shortRate = (0.25 * workers) / 0.3;
  for (let t = exponential(r, 1 / shortRate); t < horizon; t += exponential(r, 1 / shortRate)) {
    const n = r() < 0.5 ? 1 : 2;
    // Normal priority: this measures the levels themselves, not the High-priority bypass.
    out.push({ id: id++, kind: 'short', arrival: t, priority: PRIORITY.normal, fragments: Array.from({ length: n }, () => 0.02 + exponential(r, 0.18)), measured: true });
  }
  return out.sort((a, b) => a.arrival - b.arrival);
}

interface Summary {
  readonly count: number;
  readonly meanSlowdown: number;
  readonly p50ResponseS: number;
  readonly p99ResponseS: number;
  readonly unfinished: number;
}

function summarize(queries: readonly SimQuery[], kind: SimQuery['kind'], completions: ReadonlyMap<number, number>): Summary {
  const mine = queries.filter((q) => q.kind === kind);
  const slowdowns: number[] = [];
  const responses: number[] = [];
  let unfinished = 0;
  for (const q of mine) {
    const done = completions.get(q.id);
    if (done === undefined) { unfinished++; continue; }
    responses.push(done - q.arrival);
    slowdowns.push((done - q.arrival) / ideal(q));
  }
  responses.sort((a, b) => a - b);
  return {
    count: mine.length,
    meanSlowdown: round(slowdowns.reduce((a, b) => a + b, 0) / Math.max(1, slowdowns.length)),
    p50ResponseS: round(percentile(responses, 50)),
    p99ResponseS: round(percentile(responses, 99)),
    unfinished,
  };
}

/**
 * All five levels busy. Sixteen long queries run alone from t = 0 and pass 300 s of CPU (level 4)
 * by 600 s; sixteen more start at 620 s and reach level 3 (60 s) before, at 760 s, a closed loop of short
 * (0.5 s), medium (6 s), large (40 s) and very large (200 s) queries starts, each finished one
 * replaced at once, so levels 0 to 2 never run dry. CPU per level is counted from `measureFrom`,
 * while all five levels have waiting quanta.
 */
function levelsScenario(workers: number, horizon: number, measureFrom: number): { result: SimResult; horizon: number; measuredFrom: number } {
  const queries: SimQuery[] = [];
  let id = 0;
  const forever = 1e7;
  for (let i = 0; i < 2 * workers; i++) queries.push({ id: id++, kind: 'long', arrival: 0, priority: PRIORITY.low, fragments: [forever], measured: false });
  for (let i = 0; i < 2 * workers; i++) queries.push({ id: id++, kind: 'long', arrival: 620, priority: PRIORITY.low, fragments: [forever], measured: false });
  const start = 760;
  const sizes = [0.5, 6, 40, 200];
  const population = [24, 48, 96, 24];
  sizes.forEach((size, k) => {
    for (let i = 0; i < population[k]!; i++) queries.push({ id: id++, kind: 'medium', arrival: start + i * 0.01, priority: PRIORITY.normal, fragments: [size], measured: false });
  });
  const result = simulate('mlfq', workers, 1, queries, horizon, (done, now) =>
    done.arrival >= start ? { id: id++, kind: 'medium', arrival: now, priority: done.priority, fragments: done.fragments, measured: false } : null, measureFrom);
  return { result, horizon, measuredFrom: measureFrom };
}

/** Times `WorkloadManager.admit` (routing + admission) call by call over a realistic tree. */
async function admissionLatency(): Promise<{ p50Ms: number; p99Ms: number; maxMs: number; calls: number; started: number; queued: number; rejected: number }> {
  const teams = Array.from({ length: 8 }, (_, i) => ({
    name: `team${i}`, hard_concurrency_limit: 8, max_queued_queries: 50, scheduling_policy: 'weighted' as const, scheduling_weight: 1 + (i % 3),
    subgroups: [{ name: 'adhoc', hard_concurrency_limit: 4, max_queued_queries: 20 }, { name: 'etl', hard_concurrency_limit: 2, soft_cpu_limit_ms: 60_000 }],
  }));
  const config = resolveWorkloadConfig({
    resource_groups: { root: { hard_concurrency_limit: 48, max_queued_queries: 400, scheduling_policy: 'weighted', subgroups: teams } },
    routing_rules: teams.flatMap((t, i) => [
      { match_tenant: `tenant${i}`, match_source: 'airflow', target_group: `root.${t.name}.etl` },
      { match_tenant: `tenant${i}`, target_group: `root.${t.name}.adhoc` },
    ]),
  });
  const wlm = new WorkloadManager({ config, clock: systemClock() });
  const r = rng(7);
  const live: { release: () => void }[] = [];
  const samples: number[] = [];
  let rejected = 0, queued = 0, started = 0;
  let n = 0;
  const calls = 20_000;
  for (let i = 0; i < calls + 2000; i++) {
    const request: AdmissionRequest = {
      queryId: `q${n++}`, tenant: `tenant${Math.floor(r() * 9)}`, user: `u${Math.floor(r() * 50)}`, source: r() < 0.3 ? 'airflow' : 'grafana',
      resourcePool: null, queryType: 'select', workloadClass: 'interactive', priority: PRIORITY.high, timeoutMs: 30_000, memoryCapBytes: 1 << 30,
    };
    const t0 = performance.now();
    const ticket = wlm.admit(request);
    const dt = performance.now() - t0;
    if (i >= 2000) samples.push(dt); // the first calls warm the JIT
    if (i >= 2000) {
      if (ticket.kind === 'rejected') rejected++;
      else if (ticket.queued) queued++;
      else started++;
    }
    if (ticket.kind === 'accepted') void ticket.lease.then((l) => live.push(l), () => {});
    // keep the machine full and the queues non-empty: release a little less than arrives
    if (live.length > 0 && r() < 0.97) live.splice(Math.floor(r() * live.length), 1)[0]!.release();
    // let lease promises settle (outside the timed calls) so the live set follows the admissions
    if (i % 16 === 0) await new Promise<void>((res) => setImmediate(res));
  }
  for (const l of live) l.release();
  samples.sort((a, b) => a - b);
  return { p50Ms: round(percentile(samples, 50), 5), p99Ms: round(percentile(samples, 99), 5), maxMs: round(samples[samples.length - 1]!, 5), calls, started, queued, rejected };
}

function round(v: number, digits = 3): number {
  const f = 10 ** digits;
  return Math.round(v * f) / f;
}

/**
 * Part 3, live over HTTP (`npm run bench -- scheduler --live`): a real server on loopback with TPC-H
 * loaded through SQL; see scheduler/live.ts.
 */
async function runLivePart(): Promise<HttpLiveResult & { load_average_at_start: number[] }> {
  const atStart = loadavg().map((v) => round(v, 2));
  const at = process.argv.indexOf('--backend');
  const backend = at > 0 ? process.argv[at + 1] : 'auto';
  if (backend !== 'auto' && backend !== 'pglite' && backend !== 'postgres') throw new Error('--backend is pglite or postgres');
  return { ...(await httpLive({ backend })), load_average_at_start: atStart };
}

async function main(): Promise<void> {
  const workers = 8;
  const quantum = 1;
  const horizon = 1800;
  const queries = starvationWorkload(42, workers, horizon);
  const drainHorizon = 1e9;
  const started = performance.now();
  const byPolicy = new Map<Policy, SimResult>();
  for (const policy of ['mlfq', 'fifo', 'round_robin'] as const) byPolicy.set(policy, simulate(policy, workers, quantum, queries, drainHorizon));
  const starvation = Object.fromEntries([...byPolicy].map(([policy, res]) => [policy, {
    short: summarize(queries, 'short', res.completions),
    long: summarize(queries, 'long', res.completions),
    quanta: res.quanta,
  }]));
  const totalCpu = queries.reduce((a, q) => a + q.fragments.reduce((x, y) => x + y, 0), 0);
  const offeredLoad = round(totalCpu / (horizon * workers));
  const mlfqShort = starvation.mlfq!.short.meanSlowdown;
  const fifoShort = starvation.fifo!.short.meanSlowdown;
  const slowdownRatio = round(fifoShort / mlfqShort, 2);

  const levels = levelsScenario(workers, 6_000, 1_500);
  const busyTotal = levels.result.busyLevelCpu.reduce((a, b) => a + b, 0);
  const shares = levels.result.busyLevelCpu.map((c) => c / busyTotal);
  const want = [16, 8, 4, 2, 1].map((w) => w / 31);
  const deviations = shares.map((s, l) => Math.abs(s - want[l]!) / want[l]!);
  const worstDeviation = round(Math.max(...deviations), 4);
  const simMs = round(performance.now() - started, 1);

  const admission = await admissionLatency();
  const duckdb = await inProcessLive();
  const weightedError = round(Math.abs(duckdb.weightedGroups.ratio - duckdb.weightedGroups.targetRatio) / duckdb.weightedGroups.targetRatio, 3);
  const live: (HttpLiveResult & { load_average_at_start: number[] }) | { status: string } = process.argv.includes('--live') ? await runLivePart() : { status: 'not run (pass --live: a real server over loopback HTTP, about 5 minutes)' };

  const targets: Record<string, Target> = {
    short_query_slowdown_fifo_over_mlfq: atLeast(slowdownRatio, 5),
    level_share_worst_relative_deviation: atMost(worstDeviation, 0.05),
    admission_decision_p99_ms: atMost(admission.p99Ms, 1),
    weighted_groups_ratio_relative_error: atMost(weightedError, 0.1),
    ...('interactiveUnderLoad' in live ? {
      live_interactive_p99_under_load_over_idle: atMost(live.p99UnderLoadOverIdle.mlfq, 1.5),
      live_weighted_groups_ratio_relative_error: atMost(round(Math.abs(live.weightedGroups.ratio - live.weightedGroups.targetRatio) / live.weightedGroups.targetRatio, 3), 0.1),
      live_admission_decision_p99_ms: atMost(live.admission.p99BoundMs, 1),
      live_queue_full_rejection_p99_ms: atMost(live.queueFullRejection.p99Ms, 5),
    } : {}),
  };
  writeBenchResult('scheduler', {
    simulation: {
      note: 'deterministic, virtual time (seeded PRNG): identical on every machine',
      starvation: {
        workers, quantum_s: quantum, arrival_horizon_s: horizon, offered_load: offeredLoad,
        short_queries: queries.filter((q) => q.kind === 'short').length, long_queries: queries.filter((q) => q.kind === 'long').length,
        short_priority: 'normal (no High bypass: the levels alone)',
        ...starvation,
      },
      levels: {
        workers,
        busy_seconds: round(levels.result.busySeconds, 1),
        empty_seconds_per_level: levels.result.emptySeconds.map((c) => round(c, 1)),
        cpu_s_per_level_while_all_busy: levels.result.busyLevelCpu.map((c) => round(c, 1)),
        shares: shares.map((s) => round(s, 4)),
        target_shares: want.map((s) => round(s, 4)),
        relative_deviation: deviations.map((d) => round(d, 4)),
      },
      wall_ms: simMs,
    },
    admission: { ...admission, note: 'WorkloadManager.admit (routing over 16 rules, 25-group weighted tree, queues non-empty), in-process, shared 2-core machine' },
    inprocess_duckdb: {
      ...duckdb,
      load_average_at_end: loadavg().map((v) => round(v, 2)),
      note: 'one DuckDB executor thread driven by runTask() in 5 ms quanta (no reserved interactive slot: there is no second thread), TPC-H sf0.01 (batch over a 20x lineitem), no HTTP; the issue target p99 under load <= 1.5x idle applies to the HTTP live run (part 3): reported here, not judged',
    },
    live: 'interactiveUnderLoad' in live ? {
      ...live,
      load_average_at_end: loadavg().map((v) => round(v, 2)),
      note: `real server on 127.0.0.1 (${live.backend === 'postgres' ? 'PostgreSQL' : 'PGlite'} store, 2 DuckDB workers, one reserved interactive slot, batch on background-lane threads at nice 19), client in the same process: an undici pool with keep-alive; idle and loaded segments alternate; FIFO = same server without time slicing, one level, no High precedence, no reserved slot, one lane; admission timed inside the server around WorkloadManager.admit and rejectEarly (judged on the sum of their p99s); queue-full rejection of TPC-H Q6 end to end; wall clock on a shared 2-core machine (load averages at start and end beside): noisy`,
    } : live,
  }, targets, `short-query mean slowdown MLFQ ${mlfqShort} vs FIFO ${fifoShort} (${slowdownRatio}x); level shares ${shares.map((s) => (100 * s).toFixed(1)).join('/')}% (worst ±${(100 * worstDeviation).toFixed(1)}%); admit p99 ${admission.p99Ms} ms; DuckDB interactive p99 idle ${duckdb.interactiveAlone.p99Ms} ms, under load MLFQ ${duckdb.interactiveUnderLoad.mlfq.p99Ms} ms vs FIFO ${duckdb.interactiveUnderLoad.fifo.p99Ms} ms; weighted 3:1 → ${duckdb.weightedGroups.ratio}${'interactiveUnderLoad' in live ? `; HTTP: Q6 p99 idle ${live.interactiveAlone.mlfq.p99Ms} ms, under load MLFQ ${live.interactiveUnderLoad.mlfq.p99Ms} ms vs FIFO ${live.interactiveUnderLoad.fifo.p99Ms} ms; weighted → ${live.weightedGroups.ratio}; admit p99 ${live.admission.admit.p99Ms} ms + rejectEarly p99 ${live.admission.rejectEarly.p99Ms} ms; 429 p99 ${live.queueFullRejection.p99Ms} ms` : ''}`);
}

await main();
