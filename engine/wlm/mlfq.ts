/**
 * The multi-level feedback queue in front of the workers, after Trino's `MultilevelSplitQueue`.
 *
 * A query's fragments are the quanta: a fragment runs for at most one quantum, then the executor
 * yields (at a DuckDB task boundary) and the fragment's continuation is offered again, at the level
 * its query's cumulative CPU now falls into. So a batch query's later quanta sink to lower-share
 * levels and cannot hold every worker; a new query enters at level 0.
 *
 * Two layers: `MultilevelQueue` is the synchronous policy (levels, shares, charging), used as is by
 * the deterministic simulation in `bench/scheduler.ts`; `MlfqDispatcher` wraps it with promises and
 * a concurrency limit for the executor.
 */
import type { ResolvedMlfqConfig } from './config.js';
import { IndexedHeap } from './heap.js';

/** Level entry thresholds, seconds of a query's cumulative scheduled CPU (the spec's Limits). */
export const LEVEL_THRESHOLD_SECONDS: readonly number[] = [0, 1, 10, 60, 300];
/** Each level is owed this many times the CPU time of the next: shares 16:8:4:2:1. */
export const LEVEL_TIME_MULTIPLIER = 2;
/** Most one quantum may add to its level's account, so a hung fragment cannot starve a level. */
export const LEVEL_CONTRIBUTION_CAP_NANOS = 30 * 1e9;
/** Default time slice a fragment runs before yielding. */
export const DEFAULT_QUANTUM_MS = 1_000;
/** "High or above" (see `PRIORITY` in config.ts) bypasses the levels. */
export const HIGH_PRIORITY = 3;

const NANOS_PER_SECOND = 1e9;
const NANOS_PER_MS = 1e6;

/**
 * The level of a query that has used `cpuNanos` of scheduled CPU: the last level whose threshold
 * it reached. Pure; thresholds in seconds, rising from 0.
 */
export function computeLevel(cpuNanos: number, thresholdsSeconds: readonly number[] = LEVEL_THRESHOLD_SECONDS): number {
  const seconds = cpuNanos / NANOS_PER_SECOND;
  for (let level = 0; level < thresholdsSeconds.length - 1; level++) {
    if (seconds < thresholdsSeconds[level + 1]!) return level;
  }
  return thresholdsSeconds.length - 1;
}

/**
 * The level a quantum of this query belongs to: High priority or above always at level 0, others
 * by their cumulative CPU.
 */
export function levelFor(priority: number, cpuNanos: number, thresholdsSeconds: readonly number[] = LEVEL_THRESHOLD_SECONDS): number {
  return priority >= HIGH_PRIORITY ? 0 : computeLevel(cpuNanos, thresholdsSeconds);
}

/** Per-query scheduling account. `levelPriority` orders quanta inside a level (lower first). */
export interface MlfqQueryAccount {
  readonly id: string;
  readonly priority: number;
  scheduledNanos: number;
  level: number;
  levelPriority: number;
}

interface Waiting<T> {
  readonly item: T;
  readonly account: MlfqQueryAccount;
  /** 1 for High priority or above (served first inside its level), else 0. */
  readonly urgent: number;
  readonly key: number;
  readonly seq: number;
  /** Position in its level's heap; -1 once taken or cancelled. */
  heapIndex: number;
}

export interface MultilevelQueueSettings {
  readonly levelThresholdsSeconds: readonly number[];
  readonly levelTimeMultiplier: number;
  readonly levelContributionCapNanos: number;
  /**
   * Quanta that run at once (the dispatcher's shared slots, the simulation's workers): a level with
   * fewer quanta than its share of the slots cannot use that share, and is owed only what it can use
   * (`levelShares`). Default 1.
   */
  readonly slots?: number;
}

export const DEFAULT_MULTILEVEL_SETTINGS: MultilevelQueueSettings = {
  levelThresholdsSeconds: LEVEL_THRESHOLD_SECONDS,
  levelTimeMultiplier: LEVEL_TIME_MULTIPLIER,
  levelContributionCapNanos: LEVEL_CONTRIBUTION_CAP_NANOS,
};

/** A handle to an offered quantum, for cancelling it while it waits. */
export interface WaitingHandle {
  cancel(): boolean;
}

/** A quantum `poll` or `pollUrgent` handed out; give it back with `complete` once it ran (or failed). */
export interface TakenQuantum<T> {
  readonly item: T;
  readonly account: MlfqQueryAccount;
  /** The level it was taken from: it counts as running there until `complete`. */
  readonly level: number;
}

/**
 * How many of `slots` each level is owed now, by water-filling: levels share the slots in the
 * ratio of their weights (`multiplier` to the power of the levels below them: 16:8:4:2:1), except
 * that a level cannot use more slots than it has quanta (waiting or running); what it cannot use
 * goes to the others in the same ratio. `demand[l]` is level l's quanta. Pure. The shares sum to
 * min(slots, total demand); a level without quanta is owed 0.
 */
export function levelShares(demand: readonly number[], slots: number, multiplier: number): number[] {
  const n = demand.length;
  const shares = new Array<number>(n).fill(0);
  const open = new Set<number>();
  for (let l = 0; l < n; l++) if (demand[l]! > 0) open.add(l);
  let left = slots;
  const weight = (l: number) => Math.pow(multiplier, n - 1 - l);
  while (open.size > 0 && left > 0) {
    let total = 0;
    for (const l of open) total += weight(l);
    // Levels whose demand is below their share of what is left take their demand, then the rest is divided again.
    const capped = [...open].filter((l) => demand[l]! <= (left * weight(l)) / total);
    if (capped.length === 0) {
      for (const l of open) shares[l] = (left * weight(l)) / total;
      return shares;
    }
    for (const l of capped) {
      shares[l] = demand[l]!;
      left -= demand[l]!;
      open.delete(l);
    }
  }
  return shares;
}

/**
 * The synchronous policy: five waiting lists, each level's scheduled time, and the choice of the
 * next quantum. No clock: callers report how long each quantum ran.
 */
export class MultilevelQueue<T> {
  private readonly waiting: IndexedHeap<Waiting<T>>[];
  /** Scheduled CPU charged to each level (ns): crossed levels get their part of a long quantum, capped. */
  readonly levelScheduledNanos: number[];
  /** CPU each level is owed (ns): every charge is divided among the levels with quanta by `levelShares`. */
  readonly levelEntitledNanos: number[];
  /** CPU actually run at each level (ns): what the stats report. */
  readonly levelRunNanos: number[];
  /** Quanta taken from each level and not yet completed. */
  private readonly running: number[];
  private readonly levelMinPriority: number[];
  /** Waiting quanta of High priority or above; they are all at level 0. */
  private waitingUrgent = 0;
  private seq = 0;
  private slots: number;

  constructor(readonly settings: MultilevelQueueSettings = DEFAULT_MULTILEVEL_SETTINGS) {
    const n = settings.levelThresholdsSeconds.length;
    this.waiting = Array.from({ length: n }, () => new IndexedHeap<Waiting<T>>((a, b) => a.urgent !== b.urgent ? a.urgent > b.urgent : a.key !== b.key ? a.key < b.key : a.seq < b.seq));
    this.levelScheduledNanos = new Array<number>(n).fill(0);
    this.levelEntitledNanos = new Array<number>(n).fill(0);
    this.levelRunNanos = new Array<number>(n).fill(0);
    this.running = new Array<number>(n).fill(0);
    this.levelMinPriority = new Array<number>(n).fill(-1);
    this.slots = Math.max(1, settings.slots ?? 1);
  }

  /** Changes how many quanta run at once (the dispatcher's shared slots, on reload). */
  setSlots(slots: number): void {
    this.slots = Math.max(1, slots);
  }

  /**
   * A fresh account for a query entering the scheduler at level 0. Inside a level, quanta go in
   * order of `levelPriority`: the time a query has run there, counted from the level's "now" when
   * it arrived (a virtual clock: the highest priority served or charged at that level), as Trino
   * does for queries moving down a level. Starting new queries at 0 instead (Trino) lets a steady
   * stream of new queries starve one that has already had a quantum; starting them at the level's
   * now keeps the level fair while a new query still goes before those that have run longer.
   */
  newAccount(id: string, priority: number): MlfqQueryAccount {
    return { id, priority, scheduledNanos: 0, level: 0, levelPriority: Math.max(0, this.levelMinPriority[0]!) };
  }

  get levels(): number {
    return this.waiting.length;
  }

  /** Waiting quanta per level. */
  depths(): number[] {
    return this.waiting.map((h) => h.size);
  }

  get size(): number {
    return this.waiting.reduce((n, h) => n + h.size, 0);
  }

  /**
   * Offers a quantum of `account`'s query. A level that was idle (nothing waiting, nothing running)
   * starts even: it was owed nothing while it had no work, so it does not take the workers to catch
   * up when it wakes, nor is it held back for having run ahead before. A level whose quanta are all
   * running is not idle: taking it for idle (as Trino's catch-up does when the level's queue is
   * empty) forgave it, on every round of a quantum, the CPU it was still owed, and on two shared
   * slots level 1 got 1.5× level 2's CPU instead of 2×.
   */
  offer(item: T, account: MlfqQueryAccount): WaitingHandle {
    const level = account.level;
    if (this.waiting[level]!.size === 0 && this.running[level] === 0) {
      this.levelEntitledNanos[level] = this.levelScheduledNanos[level]!;
    }
    const w: Waiting<T> = { item, account, urgent: account.priority >= HIGH_PRIORITY ? 1 : 0, key: account.levelPriority, seq: this.seq++, heapIndex: -1 };
    this.waiting[level]!.push(w);
    this.waitingUrgent += w.urgent;
    return {
      cancel: () => {
        if (!this.waiting[level]!.remove(w)) return false;
        this.waitingUrgent -= w.urgent;
        return true;
      },
    };
  }

  /** Whether a quantum of High priority or above is waiting. */
  get urgentWaiting(): boolean {
    return this.waitingUrgent > 0;
  }

  /**
   * The next quantum of High priority or above, or undefined when none waits: for a slot reserved
   * to interactive work (`MlfqDispatcher`), which no other quantum may take. Such quanta never
   * leave level 0 and go first there, so this is level 0's head whenever one waits.
   */
  pollUrgent(): TakenQuantum<T> | undefined {
    if (this.waitingUrgent === 0) return undefined;
    return this.take(0);
  }

  /**
   * The next quantum to run, or undefined. Each level is owed CPU in the ratio of the shares
   * (level 0 the most, each next level `1/multiplier` of the previous), among the levels that have
   * quanta and as far as they can use it (`levelShares`); the waiting level furthest below what it
   * is owed goes next (ties: the lower-numbered level), and inside it the quantum of the query with the least
   * time at that level; except that High priority quanta (which never leave level 0) go before
   * Normal and Low ones there, so a dashboard's query does not wait its turn behind every batch
   * query still in its first second of CPU. (Trino compares each level's scheduled time with a
   * target derived from the others' and catches a level up when its queue is empty; that is exact
   * only with many more splits than runner threads.)
   */
  poll(): TakenQuantum<T> | undefined {
    let selected = -1;
    let mostOwed = Number.NEGATIVE_INFINITY;
    for (let level = 0; level < this.waiting.length; level++) {
      if (this.waiting[level]!.size === 0) continue;
      const owed = this.levelEntitledNanos[level]! - this.levelScheduledNanos[level]!;
      if (owed > mostOwed) {
        mostOwed = owed;
        selected = level;
      }
    }
    if (selected === -1) return undefined;
    return this.take(selected);
  }

  /** Pops the head of a level that has waiting quanta; it runs there until `complete`. */
  private take(level: number): TakenQuantum<T> {
    const w = this.waiting[level]!.pop()!;
    this.waitingUrgent -= w.urgent;
    this.levelMinPriority[level] = Math.max(this.levelMinPriority[level]!, w.key);
    this.running[level]! += 1;
    return { item: w.item, account: w.account, level };
  }

  /**
   * Ends a quantum that `poll` or `pollUrgent` handed out: charges the CPU it used (`charge`), offers
   * the item again when it wants another quantum (at its query's level now), and only then stops
   * counting it as running at the level it came from, so a level whose one quantum goes round is
   * never idle in between. A quantum that failed completes with the CPU it used, or 0. Returns the
   * new waiting handle when offered again.
   */
  complete(taken: TakenQuantum<T>, quantaNanos: number, again: boolean): WaitingHandle | undefined {
    this.charge(taken.account, quantaNanos);
    const handle = again ? this.offer(taken.item, taken.account) : undefined;
    this.running[taken.level]! -= 1;
    return handle;
  }

  /**
   * Charges a finished quantum of `quantaNanos` to its query and to the levels, and moves the query
   * to the level of its new cumulative time (as Trino's `updatePriority`): when one long quantum
   * crosses several levels, each crossed level is charged as if the query had run there up to that
   * level's width; a level's charge is capped so a hung fragment cannot starve it. The same CPU is
   * divided among the levels with quanta (`levelShares`) as what each was owed meanwhile.
   */
  charge(account: MlfqQueryAccount, quantaNanos: number): void {
    const ns = Math.max(0, quantaNanos);
    const oldLevel = account.level;
    account.scheduledNanos += ns;
    const thresholds = this.settings.levelThresholdsSeconds;
    const newLevel = levelFor(account.priority, account.scheduledNanos, thresholds);
    const contribution = Math.min(ns, this.settings.levelContributionCapNanos);
    this.levelRunNanos[oldLevel]! += ns;
    this.entitle(contribution, oldLevel);
    if (newLevel === oldLevel) {
      this.levelScheduledNanos[oldLevel]! += contribution;
      account.levelPriority += ns;
      // The level's "now" advances with the service it gives, so queries arriving later queue
      // behind ones that have waited, instead of all starting at the same instant forever.
      this.levelMinPriority[oldLevel] = Math.max(this.levelMinPriority[oldLevel]!, account.levelPriority);
      return;
    }
    let remainingContribution = contribution;
    let remainingTask = ns;
    let usedBefore = account.scheduledNanos - ns;
    for (let l = oldLevel; l < newLevel; l++) {
      // What the query still had to use at level l before crossing into l + 1 (Trino charges the
      // level's whole width here; charging only the remainder keeps the level accounts exact).
      const room = Math.max(0, thresholds[l + 1]! * NANOS_PER_SECOND - usedBefore);
      usedBefore += room;
      const accrued = Math.min(room, remainingContribution);
      this.levelScheduledNanos[l]! += accrued;
      remainingContribution -= accrued;
      remainingTask -= accrued;
    }
    this.levelScheduledNanos[newLevel]! += remainingContribution;
    if (this.levelMinPriority[newLevel] === -1) this.levelMinPriority[newLevel] = account.scheduledNanos;
    account.level = newLevel;
    account.levelPriority = this.levelMinPriority[newLevel]! + Math.max(0, remainingTask);
  }

  /**
   * Divides `ns` of service among the levels that have quanta, in the ratio `levelShares` gives
   * them now. `ranAt` is the level the quantum ran at: it counts even when the caller charges
   * without having taken the quantum through `poll`.
   */
  private entitle(ns: number, ranAt: number): void {
    if (ns <= 0) return;
    const demand = this.waiting.map((h, l) => h.size + this.running[l]!);
    if (demand[ranAt] === 0) demand[ranAt] = 1;
    const shares = levelShares(demand, this.slots, this.settings.levelTimeMultiplier);
    const total = shares.reduce((a, b) => a + b, 0);
    for (let l = 0; l < shares.length; l++) if (shares[l]! > 0) this.levelEntitledNanos[l]! += (ns * shares[l]!) / total;
  }
}

/**
 * Where a fragment runs: `foreground` worker threads at the server's own OS priority for queries of
 * High priority or above (interactive by default), `background` threads at a lower OS priority
 * (`background_niceness`) for the rest. Decided by the first quantum: a fragment keeps its thread
 * (its DuckDB state lives there), and an unprivileged process cannot raise a thread's priority back.
 */
export type WorkerLane = 'foreground' | 'background';

/** The lane of a query's fragments: foreground for High priority or above. */
export function laneFor(priority: number): WorkerLane {
  return priority >= HIGH_PRIORITY ? 'foreground' : 'background';
}

/** What the executor gets for one quantum of a fragment. */
export interface FragmentQuantum {
  /** Yield after about this much CPU time (at a DuckDB task boundary) and report `finished: false`. */
  readonly quantumMs: number;
  /** The level this quantum was scheduled at (0 to 4). */
  readonly level: number;
  /** The worker lane (thread OS priority) the fragment runs in; the executor reads it on the first quantum. */
  readonly lane: WorkerLane;
  /** Aborted when the query is cancelled (timeout, memory, user): interrupt the DuckDB connection. */
  readonly signal: AbortSignal;
}

/** What the executor reports after a quantum. */
export interface QuantumResult {
  /** CPU time the quantum used (ms); charged to the query, its level and its resource group. */
  readonly cpuMs: number;
  /** false: the fragment yielded and wants another quantum. */
  readonly finished: boolean;
}

/** Runs one quantum of a fragment. Called again while it answers `finished: false`. */
export type FragmentRunner = (quantum: FragmentQuantum) => Promise<QuantumResult>;

/** The QoS statistics' `mlfq` object. */
export interface MlfqStats {
  readonly running: number;
  readonly maxConcurrent: number;
  /** Slots beyond `maxConcurrent` only High priority quanta may use. */
  readonly interactiveSlots: number;
  /** Running quanta of High priority or above (in reserved slots first, then shared ones). */
  readonly runningInteractive: number;
  readonly levelQueueDepths: readonly number[];
  readonly levelScheduledMs: readonly number[];
  readonly trackedQueries: number;
}

interface FragmentTask {
  readonly account: MlfqQueryAccount;
  readonly run: FragmentRunner;
  readonly signal: AbortSignal;
  readonly resolve: () => void;
  readonly reject: (e: unknown) => void;
  handle: WaitingHandle | null;
}

export interface MlfqHooks {
  /** Called after each quantum with the CPU it used, before the next is scheduled. */
  readonly onCpu?: (queryId: string, cpuMs: number, level: number) => void;
  /** Called when a quantum is selected, with the level it came from. */
  readonly onSelected?: (level: number) => void;
}

/**
 * Whether one more quantum may start, and which kind, given what runs. `maxConcurrent` slots are
 * shared by every quantum (the worker pool's size); `interactiveSlots` more are reserved to quanta
 * of High priority or above, which count against the reserved slots first. So batch work keeps
 * every shared slot busy (work-conserving) and an interactive quantum never waits for one of them
 * to free: it starts at once while a reserved slot is free. Pure; `MlfqDispatcher.pump` follows it.
 */
export function freeSlots(running: number, runningUrgent: number, maxConcurrent: number, interactiveSlots: number): { readonly shared: number; readonly reserved: number } {
  const inReserved = Math.min(runningUrgent, interactiveSlots);
  return { shared: Math.max(0, maxConcurrent - (running - inReserved)), reserved: interactiveSlots - inReserved };
}

/**
 * The dispatcher: at most `maxConcurrent` quanta run at once in the shared slots (the worker pool's
 * size), plus up to `interactiveSlots` quanta of High priority or above (`freeSlots`), chosen by the
 * `MultilevelQueue`. The executor calls `submitFragment` once per fragment and gets a promise that
 * settles when the fragment finished (or failed, or its query was cancelled).
 */
export class MlfqDispatcher {
  private readonly queue: MultilevelQueue<FragmentTask>;
  private readonly accounts = new Map<string, MlfqQueryAccount>();
  private running = 0;
  private runningUrgent = 0;
  private maxConcurrent: number;
  private interactiveSlots: number;
  private readonly quantumMs: number;

  constructor(settings: ResolvedMlfqConfig, private readonly hooks: MlfqHooks = {}) {
    this.queue = new MultilevelQueue<FragmentTask>({
      levelThresholdsSeconds: settings.levelThresholdsSeconds,
      levelTimeMultiplier: settings.levelTimeMultiplier,
      levelContributionCapNanos: settings.levelContributionCapMs * NANOS_PER_MS,
    });
    this.maxConcurrent = settings.maxConcurrent;
    this.interactiveSlots = settings.interactiveSlots;
    this.quantumMs = settings.quantumMs;
    this.queue.setSlots(settings.maxConcurrent);
  }

  /** Starts tracking a query (its cumulative CPU decides its level). Idempotent. */
  trackQuery(id: string, priority: number): void {
    if (!this.accounts.has(id)) this.accounts.set(id, this.queue.newAccount(id, priority));
  }

  /** Forgets a query (after it ended). Its waiting fragments should have been cancelled by their signal. */
  untrackQuery(id: string): void {
    this.accounts.delete(id);
  }

  /** The level the query's next quantum would run at, or null when untracked. */
  levelOf(id: string): number | null {
    return this.accounts.get(id)?.level ?? null;
  }

  /** Cumulative scheduled CPU of a query (ms), or null when untracked. */
  scheduledMsOf(id: string): number | null {
    const a = this.accounts.get(id);
    return a ? a.scheduledNanos / NANOS_PER_MS : null;
  }

  /** Changes the shared and reserved slot counts (configuration reload). */
  setSlots(maxConcurrent: number, interactiveSlots: number): void {
    this.maxConcurrent = Math.max(1, maxConcurrent);
    this.interactiveSlots = Math.max(0, interactiveSlots);
    this.queue.setSlots(this.maxConcurrent);
    this.pump();
  }

  /**
   * Queues a fragment of a tracked query. Resolves when `run` reports `finished`; rejects with
   * `run`'s error, or with `signal.reason` when the query is cancelled while a quantum waits.
   */
  submitFragment(queryId: string, run: FragmentRunner, signal: AbortSignal = new AbortController().signal): Promise<void> {
    const account = this.accounts.get(queryId);
    if (!account) return Promise.reject(new Error(`query ${queryId} is not tracked by the MLFQ`));
    if (signal.aborted) return Promise.reject(signal.reason);
    return new Promise<void>((resolve, reject) => {
      const onAbort = (): void => {
        if (task.handle?.cancel()) task.reject(signal.reason);
      };
      const settle = (): void => signal.removeEventListener('abort', onAbort);
      const task: FragmentTask = {
        account, run, signal, handle: null,
        resolve: () => { settle(); resolve(); },
        reject: (e) => { settle(); reject(e); },
      };
      signal.addEventListener('abort', onAbort, { once: true });
      this.offer(task);
    });
  }

  private offer(task: FragmentTask): void {
    task.handle = this.queue.offer(task, task.account);
    this.pump();
  }

  private pump(): void {
    for (;;) {
      const free = freeSlots(this.running, this.runningUrgent, this.maxConcurrent, this.interactiveSlots);
      const next = (free.reserved > 0 ? this.queue.pollUrgent() : undefined) ?? (free.shared > 0 ? this.queue.poll() : undefined);
      if (!next) return;
      next.item.handle = null;
      this.running += 1;
      if (next.account.priority >= HIGH_PRIORITY) this.runningUrgent += 1;
      this.hooks.onSelected?.(next.level);
      void this.runQuantum(next);
    }
  }

  private async runQuantum(taken: TakenQuantum<FragmentTask>): Promise<void> {
    const { item: task, level } = taken;
    let result: QuantumResult | undefined;
    let failure: unknown;
    const urgent = task.account.priority >= HIGH_PRIORITY;
    try {
      if (task.signal.aborted) throw task.signal.reason;
      result = await task.run({ quantumMs: this.quantumMs, level, lane: laneFor(task.account.priority), signal: task.signal });
    } catch (e) {
      failure = e ?? new Error('fragment failed');
    }
    this.running -= 1;
    if (urgent) this.runningUrgent -= 1;
    const cpuMs = result !== undefined && Number.isFinite(result.cpuMs) ? Math.max(0, result.cpuMs) : 0;
    const again = failure === undefined && !result!.finished && !task.signal.aborted;
    const handle = this.queue.complete(taken, cpuMs * NANOS_PER_MS, again);
    if (result) this.hooks.onCpu?.(task.account.id, cpuMs, level);
    if (failure !== undefined) task.reject(failure);
    else if (result!.finished) task.resolve();
    else if (task.signal.aborted) task.reject(task.signal.reason);
    else task.handle = handle!;
    this.pump();
  }

  stats(): MlfqStats {
    return {
      running: this.running,
      maxConcurrent: this.maxConcurrent,
      interactiveSlots: this.interactiveSlots,
      runningInteractive: this.runningUrgent,
      levelQueueDepths: this.queue.depths(),
      levelScheduledMs: this.queue.levelRunNanos.map((ns) => Math.round(ns / NANOS_PER_MS)),
      trackedQueries: this.accounts.size,
    };
  }
}
