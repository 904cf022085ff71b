/**
 * The workload manager: the one object the session talks to. It routes a classified query to a
 * resource group, admits, queues or rejects it, hands the admitted query a lease (its fragments go
 * through the MLFQ; its CPU and memory are charged through it), and kills it when a limit says so.
 *
 * The session's side, in order:
 *   const ticket = wlm.admit(request, { signal, onCancel });          // never throws for limits
 *   if (ticket.kind === 'rejected') → history cancelled, answer ticket.error (429 QUEUE_FULL)
 *   history queued with ticket.groupPath ('/root/a/b')
 *   const lease = await ticket.lease;   // rejects with QUERY_TIMEOUT / QUERY_CANCELLED if killed while queued
 *   try { for each fragment: await lease.runFragment(quantum => executor.run(fragment, quantum)) }
 *   catch (e) { if (isOutOfMemoryError(e)) throw lease.reportOutOfMemory(detail); throw lease.signal.reason ?? e }
 *   finally { lease.release() }
 *
 * All decisions are the pure functions of resource-groups.ts and mlfq.ts; this file adds time
 * (an injected clock), promises, timers and metrics.
 */
import type { FloeError } from '../../grammar/errors.js';
import type { WlmClock, TimerHandle } from './clock.js';
import { displayPath, type ClassLimits, type ResolvedWorkloadConfig, type WorkloadClass } from './config.js';
import { memoryCapError, queueFullError, timeoutError, userCancelError, type KillReason } from './killer.js';
import { MlfqDispatcher, type FragmentRunner, type MlfqStats } from './mlfq.js';
import type { WorkloadMetrics } from './metrics.js';
import {
  chargeCpu, createTree, drainCpuQuota, finishQuery, reloadTree, resourceGroupRows, setQueryMemory, submitQuery,
  type ResourceGroupRow, type ResourceGroupTree,
} from './resource-groups.js';
import { route } from './routing.js';

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
  /** Aborts the query (client gone, user cancel): queued → removed; running → killed. */
  readonly signal?: AbortSignal;
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

interface ActiveQuery {
  readonly request: AdmissionRequest;
  readonly groupPath: string;
  readonly submittedAt: number;
  state: 'queued' | 'running' | 'ended';
  startedAt: number | null;
  readonly controller: AbortController;
  timer: TimerHandle | null;
  killedWith: FloeError | null;
  detachSignal: () => void;
  readonly onCancel: ((error: FloeError) => void) | undefined;
  resolve: (lease: QueryLease) => void;
  reject: (error: unknown) => void;
}

export interface WorkloadManagerOptions {
  readonly config: ResolvedWorkloadConfig;
  readonly clock: WlmClock;
  readonly metrics?: WorkloadMetrics;
}

/** How often queued queries are re-checked while CPU quota regenerates (at most). */
const QUOTA_TICK_MS = 1_000;

export class WorkloadManager {
  private config: ResolvedWorkloadConfig;
  private tree: ResourceGroupTree;
  private readonly clock: WlmClock;
  private readonly metrics: WorkloadMetrics | undefined;
  private readonly mlfq: MlfqDispatcher;
  private readonly active = new Map<string, ActiveQuery>();
  private lastDrainAt: number;
  private tick: TimerHandle | null = null;

  constructor(options: WorkloadManagerOptions) {
    this.config = options.config;
    this.clock = options.clock;
    this.metrics = options.metrics;
    this.tree = createTree(options.config.root);
    this.lastDrainAt = this.clock.now();
    this.mlfq = new MlfqDispatcher(options.config.mlfq, {
      onCpu: (queryId, cpuMs, level) => {
        this.refresh();
        chargeCpu(this.tree, queryId, cpuMs);
        this.metrics?.levelCpu.inc({ level: String(level) }, cpuMs / 1000);
      },
      onSelected: (level) => this.metrics?.levelSelected.inc({ level: String(level) }),
    });
    this.metrics?.attach(this);
  }

  /** The operator's limits of a class (for a session whose classifier did not fill them in). */
  classLimits(workloadClass: WorkloadClass): ClassLimits {
    return this.config.classes[workloadClass];
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
    const dotted = route(this.config.routingRules, {
      tenant: request.tenant, user: request.user, source: request.source, resourcePool: request.resourcePool, queryType: request.queryType,
    });
    const groupPath = displayPath(dotted);
    if (options.signal?.aborted) {
      return { kind: 'accepted', groupPath, queued: true, lease: handled(Promise.reject(userCancelError())) };
    }
    const decision = submitQuery(this.tree, { id: request.queryId, groupPath: dotted, priority: request.priority });
    if (decision.kind === 'rejected') {
      this.metrics?.rejected.inc({ group: groupPath });
      return { kind: 'rejected', groupPath, error: queueFullError(displayPath(decision.group), decision.maxQueued) };
    }

    let resolve!: (lease: QueryLease) => void;
    let reject!: (error: unknown) => void;
    const lease = handled(new Promise<QueryLease>((res, rej) => { resolve = res; reject = rej; }));
    const q: ActiveQuery = {
      request, groupPath, submittedAt: this.clock.now(), state: 'queued', startedAt: null, controller: new AbortController(),
      timer: null, killedWith: null, detachSignal: () => {}, onCancel: options.onCancel, resolve, reject,
    };
    this.active.set(request.queryId, q);

    const classTimeout = request.timeoutMs;
    const requestTimeout = request.requestTimeoutMs ?? null;
    const useRequest = requestTimeout !== null && requestTimeout > 0 && requestTimeout < classTimeout;
    const limitMs = useRequest ? requestTimeout : classTimeout;
    q.timer = this.clock.setTimer(limitMs, () => {
      q.timer = null;
      this.kill(q, timeoutError(limitMs, useRequest ? { kind: 'request' } : { kind: 'class', workloadClass: request.workloadClass }), 'timeout');
    });
    const signal = options.signal;
    if (signal) {
      const onAbort = (): void => this.kill(q, userCancelError(), 'user');
      signal.addEventListener('abort', onAbort, { once: true });
      q.detachSignal = () => signal.removeEventListener('abort', onAbort);
    }

    if (decision.kind === 'running') this.start(q);
    else this.ensureTick();
    return { kind: 'accepted', groupPath, queued: decision.kind === 'queued', lease };
  }

  /** Replaces the configuration: the tree is rebuilt without dropping a queued or running query. */
  reload(config: ResolvedWorkloadConfig): void {
    this.refresh();
    const { tree, started } = reloadTree(this.tree, config.root);
    this.tree = tree;
    this.config = config;
    this.mlfq.setMaxConcurrent(config.mlfq.maxConcurrent);
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

  /** Queries admitted and not yet released (queued or running). */
  get activeQueries(): number {
    return this.active.size;
  }

  /** Drains CPU quota for the time since the last call and starts what that allows. */
  private refresh(): void {
    const now = this.clock.now();
    const elapsed = now - this.lastDrainAt;
    if (elapsed <= 0) return;
    this.lastDrainAt = now;
    this.startAll(drainCpuQuota(this.tree, elapsed, this.config.cpuQuotaPeriodMs));
  }

  /** While queries wait, re-check periodically: CPU quota regenerates with time, not with events. */
  private ensureTick(): void {
    if (this.tick !== null) return;
    const anyQueued = [...this.active.values()].some((q) => q.state === 'queued');
    if (!anyQueued) return;
    const period = Math.max(1, Math.min(QUOTA_TICK_MS, Math.floor(this.config.cpuQuotaPeriodMs / 10)));
    this.tick = this.clock.setTimer(period, () => {
      this.tick = null;
      this.refresh();
      this.ensureTick();
    });
  }

  private startAll(ids: readonly string[]): void {
    for (const id of ids) {
      const q = this.active.get(id);
      if (q && q.state === 'queued') this.start(q);
    }
  }

  private start(q: ActiveQuery): void {
    const now = this.clock.now();
    q.state = 'running';
    q.startedAt = now;
    const id = q.request.queryId;
    this.mlfq.trackQuery(id, q.request.priority);
    this.metrics?.admitted.inc({ group: q.groupPath });
    this.metrics?.queueWait.observe({ group: q.groupPath }, (now - q.submittedAt) / 1000);
    const signal = q.controller.signal;
    const lease: QueryLease = {
      queryId: id,
      groupPath: q.groupPath,
      signal,
      memoryLimitBytes: q.request.memoryCapBytes,
      queuedMs: now - q.submittedAt,
      runFragment: (run) => q.state === 'running' ? this.mlfq.submitFragment(id, run, signal) : Promise.reject(q.killedWith ?? new Error(`query ${id} was released`)),
      chargeCpu: (cpuMs) => {
        this.refresh();
        chargeCpu(this.tree, id, cpuMs);
      },
      reportMemory: (bytes) => {
        if (q.state === 'running') this.startAll(setQueryMemory(this.tree, id, bytes));
      },
      reportOutOfMemory: (detail) => {
        const error = memoryCapError(q.request.workloadClass, q.request.memoryCapBytes, detail);
        this.kill(q, error, 'memory');
        return q.killedWith ?? error;
      },
      cancel: (reason) => this.kill(q, userCancelError(reason), 'user'),
      release: () => this.end(q),
    };
    q.resolve(lease);
  }

  /**
   * Stops a query for `reason`. Queued: it leaves the queue and its lease promise rejects with the
   * error. Running: its lease signal aborts with the error (the executor interrupts DuckDB) and
   * `onCancel` is told; its slot stays taken until the session releases the lease.
   */
  private kill(q: ActiveQuery, error: FloeError, reason: KillReason): void {
    if (q.state === 'ended' || q.killedWith !== null) return;
    q.killedWith = error;
    this.metrics?.killed.inc({ reason });
    if (q.state === 'queued') {
      this.end(q);
      q.reject(error);
      return;
    }
    q.controller.abort(error);
    q.onCancel?.(error);
  }

  private end(q: ActiveQuery): void {
    if (q.state === 'ended') return;
    q.state = 'ended';
    if (q.timer) this.clock.clearTimer(q.timer);
    q.timer = null;
    q.detachSignal();
    const id = q.request.queryId;
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
