/**
 * The workload manager: the one object the session talks to. It routes a classified query to a
 * resource group, admits, queues or rejects it, hands the admitted query a lease (its fragments go
 * through the MLFQ; its CPU and memory are charged through it), and kills it when a limit says so.
 *
 * The session's side, in order:
 *   const early = wlm.rejectEarly(routing);   // before planning: a full queue answers 429 at once
 *   const ticket = wlm.admit(request, { cancellation, onCancel });    // never throws for limits
 *   if (ticket.kind === 'rejected') → history cancelled, answer ticket.error (429 QUEUE_FULL)
 *   history queued with ticket.groupPath ('/root/a/b')
 *   const lease = await ticket.lease;   // rejects with QUERY_TIMEOUT / QUERY_CANCELLED if killed while queued
 *   try { for each fragment: await lease.runFragment(quantum => executor.run(fragment, quantum)) }
 *   catch (e) { if (isOutOfMemoryError(e)) throw lease.reportOutOfMemory(detail); throw lease.signal.reason ?? e }
 *   finally { lease.release() }
 *
 * All decisions are the pure functions of resource-groups.ts and mlfq.ts; this file adds time
 * (an injected clock), promises, timers and metrics. `admit` is on every query's path, so it does
 * the decision and the bookkeeping that must be exact at once, and nothing more: O(depth) routing
 * and admission, O(log n) queue and deadline heaps (one clock timer for all timeouts), no metric
 * update but the queue-wait histogram (the tree's counts are scraped), and the lease's
 * AbortController made when first read.
 */
import type { Cancellation } from './cancellation.js';
import type { FloeError } from '../../grammar/errors.js';
import type { WlmClock, TimerHandle } from './clock.js';
import { displayPath, type ClassLimits, type ResolvedWorkloadConfig, type WorkloadClass } from './config.js';
import { IndexedHeap, type HeapSlot } from './heap.js';
import { memoryCapError, queueFullError, shutdownError, timeoutError, userCancelError, type KillReason } from './killer.js';
import { MlfqDispatcher, type FragmentRunner, type MlfqStats } from './mlfq.js';
import type { WorkloadMetrics } from './metrics.js';
import {
  chargeCpu, createTree, drainCpuQuota, finishQuery, rejectIfFull, reloadTree, resourceGroupRows, setQueryMemory, submitQuery,
  type ResourceGroupRow, type ResourceGroupTree,
} from './resource-groups.js';
import { route, type RoutingRequest } from './routing.js';

/** One query as the session submits it, after classification. */
export interface AdmissionRequest {
  readonly queryId: string;
  readonly tenant: string;
  readonly user: string;
  /** `X-Floe-Source` header, else the `svc.query_source` setting; null when neither. */
  readonly source: string | null;
  /** `SET svc.resource_pool`; null when unset. */
  readonly resourcePool: string | null;
  /** select, insert, update, delete, … */
  readonly queryType: string;
  readonly workloadClass: WorkloadClass;
  /** Integer priority (`PRIORITY` in config.ts); High or above always runs at MLFQ level 0. */
  readonly priority: number;
  /** The class timeout (operator's setting for the class), ms. */
  readonly timeoutMs: number;
  /** The class memory cap, bytes: the DuckDB `memory_limit` the executor sets for the query. */
  readonly memoryCapBytes: number;
  /** The request's own `timeout_ms`, when given; the smaller of the two applies. */
  readonly requestTimeoutMs?: number | null;
}

export interface AdmitOptions {
  /** Cancels the query (client gone, user cancel): queued → removed; running → killed. */
  readonly cancellation?: Cancellation;
  /** Called when a *running* query is killed (timeout, memory, user), with the error to record. */
  readonly onCancel?: (error: FloeError) => void;
}

export type AdmissionTicket =
  | { readonly kind: 'rejected'; readonly groupPath: string; readonly error: FloeError<'QUEUE_FULL'> }
  | { readonly kind: 'accepted'; readonly groupPath: string; readonly queued: boolean; readonly lease: Promise<QueryLease> };

/** An admitted, running query's handle. Release it exactly once, whatever happens (idempotent). */
export interface QueryLease {
  readonly queryId: string;
  /** `/root/a/b`, for history. */
  readonly groupPath: string;
  /** Aborted with the killer's error (a FloeError) when the query must stop: interrupt DuckDB. */
  readonly signal: AbortSignal;
  /** The killer's error once the query was stopped, else null (read without making a signal). */
  readonly killedWith: FloeError | null;
  /** DuckDB `memory_limit` for the query's fragments (its class cap): it spills before it fails. */
  readonly memoryLimitBytes: number;
  /** Milliseconds spent queued before the start. */
  readonly queuedMs: number;
  /** Runs one fragment through the MLFQ, quantum by quantum; CPU is charged as it goes. */
  runFragment(run: FragmentRunner): Promise<void>;
  /** Charges CPU measured outside `runFragment` (ms). */
  chargeCpu(cpuMs: number): void;
  /** Reports the query's current memory (bytes), for the group's soft memory limit. */
  reportMemory(bytes: number): void;
  /** DuckDB failed for memory after spilling: cancels the query and returns the error to record. */
  reportOutOfMemory(detail?: string): FloeError;
  /** Cancels the query (user request). */
  cancel(reason?: string): void;
  /** Frees the query's slot; queued queries may start. */
  release(): void;
}

/** A running query as `WorkloadManager.runningQueries` shows it. */
export interface RunningQuery {
  readonly queryId: string;
  /** `/root/a/b`. */
  readonly groupPath: string;
  readonly source: string | null;
  readonly workloadClass: WorkloadClass;
  readonly priority: number;
  /** MLFQ level of its next quantum. */
  readonly level: number;
  /** CPU its quanta used so far (ms), what its level follows from. */
  readonly scheduledCpuMs: number;
}

/** Releases whatever `admit` attached to the caller's cancellation. */
type Detach = () => void;

/** A query's timeout, in the manager's deadline heap. */
interface Deadline extends HeapSlot {
  readonly at: number;
  readonly seq: number;
  readonly query: AdmittedQuery;
  readonly limitMs: number;
  readonly fromRequest: boolean;
}

/** What a lease asks of its manager (bound once per manager, shared by every lease). */
interface LeaseOps {
  runFragment(q: AdmittedQuery, run: FragmentRunner): Promise<void>;
  chargeCpu(q: AdmittedQuery, cpuMs: number): void;
  reportMemory(q: AdmittedQuery, bytes: number): void;
  kill(q: AdmittedQuery, error: FloeError, reason: KillReason): void;
  end(q: AdmittedQuery): void;
}

/**
 * One admitted query: the manager's record while it is queued or running, and, once it runs, its
 * lease (the same object, so starting a query allocates nothing more). Methods on the prototype.
 */
class AdmittedQuery implements QueryLease {
  readonly queryId: string;
  readonly memoryLimitBytes: number;
  state: 'queued' | 'running' | 'ended' = 'queued';
  queuedMs = 0;
  controller: AbortController | null = null;
  deadline: Deadline | null = null;
  killedWith: FloeError | null = null;
  detach: Detach | null = null;
  /** Settles the lease promise of a query that had to queue. */
  settle: { resolve(lease: QueryLease): void; reject(error: unknown): void } | null = null;

  constructor(
    private readonly ops: LeaseOps,
    readonly request: AdmissionRequest,
    readonly groupPath: string,
    readonly submittedAt: number,
    readonly onCancel: ((error: FloeError) => void) | undefined,
  ) {
    this.queryId = request.queryId;
    this.memoryLimitBytes = request.memoryCapBytes;
  }

  /** Made when first read: a query that never runs a fragment never pays for one. */
  get signal(): AbortSignal {
    return (this.controller ??= new AbortController()).signal;
  }

  runFragment(run: FragmentRunner): Promise<void> {
    return this.ops.runFragment(this, run);
  }

  chargeCpu(cpuMs: number): void {
    this.ops.chargeCpu(this, cpuMs);
  }

  reportMemory(bytes: number): void {
    this.ops.reportMemory(this, bytes);
  }

  reportOutOfMemory(detail?: string): FloeError {
    const error = memoryCapError(this.request.workloadClass, this.request.memoryCapBytes, detail);
    this.ops.kill(this, error, 'memory');
    return this.killedWith ?? error;
  }

  cancel(reason?: string): void {
    this.ops.kill(this, userCancelError(reason), 'user');
  }

  release(): void {
    this.ops.end(this);
  }
}

export interface WorkloadManagerOptions {
  readonly config: ResolvedWorkloadConfig;
  readonly clock: WlmClock;
  readonly metrics?: WorkloadMetrics;
}

/** How often queued queries are re-checked while CPU quota regenerates (at most). */
const QUOTA_TICK_MS = 1_000;

/** A group's queue-wait histogram child, resolved once. (Admitted and rejected counts are the tree's, read at scrape time.) */
interface GroupMetrics {
  readonly queueWait: { observe(seconds: number): void };
}

export class WorkloadManager {
  private config: ResolvedWorkloadConfig;
  private tree: ResourceGroupTree;
  private readonly clock: WlmClock;
  private readonly metrics: WorkloadMetrics | undefined;
  private readonly mlfq: MlfqDispatcher;
  private readonly active = new Map<string, AdmittedQuery>();
  private queued = 0;
  private lastDrainAt: number;
  private tick: TimerHandle | null = null;
  private readonly deadlines = new IndexedHeap<Deadline>((a, b) => (a.at !== b.at ? a.at < b.at : a.seq < b.seq));
  private deadlineSeq = 0;
  private deadlineTimer: TimerHandle | null = null;
  private deadlineTimerAt = Number.POSITIVE_INFINITY;
  private readonly displayPaths = new Map<string, string>();
  private readonly groupMetrics = new Map<string, GroupMetrics>();
  private readonly ops: LeaseOps;

  constructor(options: WorkloadManagerOptions) {
    this.config = options.config;
    this.clock = options.clock;
    this.metrics = options.metrics;
    this.tree = createTree(options.config.root);
    this.lastDrainAt = this.clock.now();
    const levelCpu = (level: number) => this.metrics?.levelCpu.labels({ level: String(level) });
    const levelSelected = (level: number) => this.metrics?.levelSelected.labels({ level: String(level) });
    const levels = options.config.mlfq.levelThresholdsSeconds.map((_, l) => ({ cpu: levelCpu(l), selected: levelSelected(l) }));
    this.mlfq = new MlfqDispatcher(options.config.mlfq, {
      onCpu: (queryId, cpuMs, level) => {
        this.refresh();
        chargeCpu(this.tree, queryId, cpuMs);
        (levels[level]?.cpu ?? levelCpu(level))?.inc(cpuMs / 1000);
      },
      onSelected: (level) => (levels[level]?.selected ?? levelSelected(level))?.inc(),
    });
    this.ops = {
      runFragment: (q, run) => (q.state === 'running' ? this.mlfq.submitFragment(q.queryId, run, q.signal) : Promise.reject(q.killedWith ?? new Error(`query ${q.queryId} was released`))),
      chargeCpu: (q, cpuMs) => {
        this.refresh();
        chargeCpu(this.tree, q.queryId, cpuMs);
      },
      reportMemory: (q, bytes) => {
        if (q.state === 'running') this.startAll(setQueryMemory(this.tree, q.queryId, bytes));
      },
      kill: (q, error, reason) => this.kill(q, error, reason),
      end: (q) => this.end(q),
    };
    this.metrics?.attach(this);
  }

  /** The operator's limits of a class (for a session whose classifier did not fill them in). */
  classLimits(workloadClass: WorkloadClass): ClassLimits {
    return this.config.classes[workloadClass];
  }

  /**
   * Whether a query routed by `request` would be rejected now (a full queue on its path and no room
   * to run): then the rejection is counted and returned, else null. The session asks before it
   * plans a query (catalog loads, manifest reads), so a full queue answers at once; `admit` decides
   * again afterwards, since the queue may have filled meanwhile.
   */
  rejectEarly(request: RoutingRequest): { readonly kind: 'rejected'; readonly groupPath: string; readonly error: FloeError<'QUEUE_FULL'> } | null {
    this.refresh();
    const dotted = route(this.config.routingRules, request);
    const full = rejectIfFull(this.tree, dotted);
    if (full === null) return null;
    return { kind: 'rejected', groupPath: this.display(dotted), error: queueFullError(this.display(full.group), full.maxQueued) };
  }

  /**
   * Routes and admits a query. Returns at once: rejected (queue full), or accepted with a lease
   * promise that settles when the query starts (at once when it can run), or rejects if it is
   * killed (timeout, user) while queued. The timeout counts from here, queued time included: a
   * caller's `timeout_ms` bounds the whole wait for an answer.
   */
  admit(request: AdmissionRequest, options: AdmitOptions = {}): AdmissionTicket {
    if (this.active.has(request.queryId)) throw new Error(`query ${request.queryId} is already admitted`);
    this.refresh();
    const dotted = route(this.config.routingRules, request);
    const groupPath = this.display(dotted);
    const cancellation = options.cancellation;
    if (cancellation?.aborted) {
      return { kind: 'accepted', groupPath, queued: true, lease: handled(Promise.reject(userCancelError())) };
    }
    const decision = submitQuery(this.tree, { id: request.queryId, groupPath: dotted, priority: request.priority });
    if (decision.kind === 'rejected') {
      return { kind: 'rejected', groupPath, error: queueFullError(this.display(decision.group), decision.maxQueued) };
    }

    const now = this.clock.now();
    const q = new AdmittedQuery(this.ops, request, groupPath, now, options.onCancel);
    this.active.set(request.queryId, q);
    this.addDeadline(q, now);
    if (cancellation) q.detach = cancellation.onAbort(() => this.kill(q, userCancelError(), 'user'));

    if (decision.kind === 'running') {
      this.start(q, now);
      return { kind: 'accepted', groupPath, queued: false, lease: Promise.resolve(q) };
    }
    this.queued += 1;
    const lease = handled(new Promise<QueryLease>((resolve, reject) => { q.settle = { resolve, reject }; }));
    this.ensureTick();
    return { kind: 'accepted', groupPath, queued: true, lease };
  }

  /** Replaces the configuration: the tree is rebuilt without dropping a queued or running query. */
  reload(config: ResolvedWorkloadConfig): void {
    this.refresh();
    const { tree, started } = reloadTree(this.tree, config.root);
    this.tree = tree;
    this.config = config;
    this.mlfq.setSlots(config.mlfq.maxConcurrent, config.mlfq.interactiveSlots);
    this.startAll(started);
    this.ensureTick();
  }

  /** One row per resource group (the provider of SHOW RESOURCE GROUPS, system.resource_groups, stats). */
  resourceGroupRows(): ResourceGroupRow[] {
    this.refresh();
    return resourceGroupRows(this.tree);
  }

  mlfqStats(): MlfqStats {
    return this.mlfq.stats();
  }

  /**
   * The running queries with their MLFQ accounts: the level their next quantum runs at and the CPU
   * charged to them so far (ms, the workers' thread CPU per quantum). For diagnostics and
   * `bench/mlfq`, which measures the levels' shares from it.
   */
  runningQueries(): RunningQuery[] {
    const rows: RunningQuery[] = [];
    for (const q of this.active.values()) {
      if (q.state !== 'running') continue;
      rows.push({
        queryId: q.queryId, groupPath: q.groupPath, source: q.request.source, workloadClass: q.request.workloadClass, priority: q.request.priority,
        level: this.mlfq.levelOf(q.queryId) ?? 0, scheduledCpuMs: this.mlfq.scheduledMsOf(q.queryId) ?? 0,
      });
    }
    return rows;
  }

  /** Queries admitted and not yet released (queued or running). */
  get activeQueries(): number {
    return this.active.size;
  }

  /** `root.a` → `/root/a`, memoized (paths come from the configuration: a bounded set). */
  private display(dotted: string): string {
    let p = this.displayPaths.get(dotted);
    if (p === undefined) this.displayPaths.set(dotted, p = displayPath(dotted));
    return p;
  }

  private metricsOf(groupPath: string): GroupMetrics | undefined {
    const m = this.metrics;
    if (!m) return undefined;
    let g = this.groupMetrics.get(groupPath);
    if (!g) {
      const labels = { group: groupPath };
      this.groupMetrics.set(groupPath, g = { queueWait: m.queueWait.series(labels) });
    }
    return g;
  }

  /** Drains CPU quota for the time since the last call and starts what that allows. */
  private refresh(): void {
    const now = this.clock.now();
    const elapsed = now - this.lastDrainAt;
    if (elapsed <= 0) return;
    this.lastDrainAt = now;
    this.startAll(drainCpuQuota(this.tree, elapsed, this.config.cpuQuotaPeriodMs));
  }

  /**
   * While queries wait behind a CPU limit, re-check periodically: quota regenerates with time, not
   * with events. Without CPU limits nothing changes with time alone, so no timer runs.
   */
  private ensureTick(): void {
    if (this.tick !== null || this.queued === 0 || this.tree.cpuLimited.length === 0) return;
    const period = Math.max(1, Math.min(QUOTA_TICK_MS, Math.floor(this.config.cpuQuotaPeriodMs / 10)));
    this.tick = this.clock.setTimer(period, () => {
      this.tick = null;
      this.refresh();
      this.ensureTick();
    });
  }

  /** The query's timeout (class, or the request's when smaller), from submission. */
  private addDeadline(q: AdmittedQuery, now: number): void {
    const classTimeout = q.request.timeoutMs;
    const requestTimeout = q.request.requestTimeoutMs ?? null;
    const fromRequest = requestTimeout !== null && requestTimeout > 0 && requestTimeout < classTimeout;
    const limitMs = fromRequest ? requestTimeout : classTimeout;
    q.deadline = { at: now + limitMs, seq: this.deadlineSeq++, query: q, limitMs, fromRequest, heapIndex: -1 };
    this.deadlines.push(q.deadline);
    if (q.deadline.at < this.deadlineTimerAt) this.armDeadlineTimer();
  }

  /**
   * One clock timer serves every timeout: armed for the earliest deadline. A query that ends
   * leaves the heap; the timer may then fire early, finds nothing due, and re-arms (cheaper than
   * re-arming on every release). It is cleared when no deadline is left.
   */
  private armDeadlineTimer(): void {
    const next = this.deadlines.peek();
    if (this.deadlineTimer !== null) {
      if (next !== undefined && this.deadlineTimerAt <= next.at) return;
      this.clock.clearTimer(this.deadlineTimer);
      this.deadlineTimer = null;
      this.deadlineTimerAt = Number.POSITIVE_INFINITY;
    }
    if (next === undefined) return;
    this.deadlineTimerAt = next.at;
    this.deadlineTimer = this.clock.setTimer(next.at - this.clock.now(), () => {
      this.deadlineTimer = null;
      this.deadlineTimerAt = Number.POSITIVE_INFINITY;
      const now = this.clock.now();
      for (let d = this.deadlines.peek(); d !== undefined && d.at <= now; d = this.deadlines.peek()) {
        this.deadlines.pop();
        d.query.deadline = null;
        const q = d.query;
        this.kill(q, timeoutError(d.limitMs, d.fromRequest ? { kind: 'request' } : { kind: 'class', workloadClass: q.request.workloadClass }), 'timeout');
      }
      this.armDeadlineTimer();
    });
  }

  private startAll(ids: readonly string[]): void {
    if (ids.length === 0) return;
    const now = this.clock.now();
    for (const id of ids) {
      const q = this.active.get(id);
      if (q && q.state === 'queued') {
        this.queued -= 1;
        this.start(q, now);
        const settle = q.settle;
        q.settle = null;
        settle?.resolve(q);
      }
    }
  }

  private start(q: AdmittedQuery, now: number): void {
    q.state = 'running';
    q.queuedMs = now - q.submittedAt;
    this.mlfq.trackQuery(q.queryId, q.request.priority);
    this.metricsOf(q.groupPath)?.queueWait.observe(q.queuedMs / 1000);
  }

  /**
   * Cancels every admitted query, queued or running, because the server is stopping (after its
   * shutdown grace period, or at a second signal). Returns how many were cancelled.
   */
  cancelAll(): number {
    let n = 0;
    for (const q of [...this.active.values()]) {
      if (q.state === 'ended' || q.killedWith !== null) continue;
      this.kill(q, shutdownError(), 'shutdown');
      n++;
    }
    return n;
  }

  /**
   * Stops a query for `reason`. Queued: it leaves the queue and its lease promise rejects with the
   * error. Running: its lease signal aborts with the error (the executor interrupts DuckDB) and
   * `onCancel` is told; its slot stays taken until the session releases the lease.
   */
  private kill(q: AdmittedQuery, error: FloeError, reason: KillReason): void {
    if (q.state === 'ended' || q.killedWith !== null) return;
    q.killedWith = error;
    this.metrics?.killed.inc({ reason });
    if (q.state === 'queued') {
      const settle = q.settle;
      q.settle = null;
      this.end(q);
      settle?.reject(error);
      return;
    }
    (q.controller ??= new AbortController()).abort(error);
    q.onCancel?.(error);
  }

  private end(q: AdmittedQuery): void {
    if (q.state === 'ended') return;
    if (q.state === 'queued') this.queued -= 1;
    q.state = 'ended';
    if (q.deadline !== null) {
      this.deadlines.remove(q.deadline);
      q.deadline = null;
      if (this.deadlines.size === 0) this.armDeadlineTimer();
    }
    q.detach?.();
    q.detach = null;
    const id = q.queryId;
    this.active.delete(id);
    this.mlfq.untrackQuery(id);
    this.refresh();
    this.startAll(finishQuery(this.tree, id));
  }
}

/** Marks a promise handled (its rejection is for the awaiting caller, not an unhandled-rejection crash). */
function handled<T>(p: Promise<T>): Promise<T> {
  p.catch(() => {});
  return p;
}
