/**
 * The executor: a piscina pool of DuckDB workers that runs `FragmentPlan`s and writes.
 *
 * A fragment starts as soon as the fragments it reads have finished, so independent fragments (the
 * partial aggregates of a split scan) run on different workers at once. A fragment read by others
 * writes its result into a DuckDB database file in the query's spill folder (`<spill>/<queryId>/`):
 * that keeps every DuckDB type exact (HUGEINT partial sums, DECIMAL(38,x), nested types), which
 * Parquet would not; the folder is removed when the query ends. The last fragment returns rows.
 *
 * Cancellation and timeouts set a shared interrupt cell; the worker running the fragment sees it
 * between DuckDB tasks and calls `connection.interrupt()` on its own connection, so the worker and its
 * instance stay up for the next query. If a worker does not answer within a grace period after the
 * deadline, its task is aborted (piscina replaces the thread).
 */
import { randomUUID } from 'node:crypto';
import { MessageChannel, type MessagePort } from 'node:worker_threads';
import { mkdirSync, rmSync } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { Piscina } from 'piscina';
import { FloeError, floeError } from '../../grammar/errors.js';
import type { ErrorCode } from '../../grammar/errors.js';
import { fragmentRelation } from '../fragments.js';
import type { FragmentPlan } from '../fragments.js';
import { toArrowIpc } from './arrow.js';
import { INTERRUPT_CANCEL, INTERRUPT_NONE, INTERRUPT_TIMEOUT } from './protocol.js';
import type { FragmentMetrics, FragmentTask, MemorySample, SliceCommand, SliceYield, WireError, WorkerConfig, WorkerReply, WorkerTask, WriteTask, WrittenFile } from './protocol.js';
import type { WireValue } from './values.js';

export interface ExecutorOptions {
  /** Worker threads (each one DuckDB instance). Default: 2. */
  readonly workers?: number;
  /** DuckDB `threads` per worker. Default 1: the pool, not DuckDB, spreads work over cores. */
  readonly threadsPerWorker?: number;
  /** Default per-worker `memory_limit` in bytes (a query may set its own). Default 1 GiB. */
  readonly memoryLimitBytes?: number;
  /** Spill root: each worker gets `<root>/worker-<n>-<uuid>` as `temp_directory`; queries get `<root>/<queryId>`. */
  readonly spillDirectory: string;
  /** Folders workers may read and write (the warehouse folder(s)). The spill root is added. */
  readonly dataDirectories: readonly string[];
  /** Spill space per worker in bytes. Default 16 GiB. */
  readonly maxTempDirectoryBytes?: number;
  /** Grace after an interrupt before a silent worker's task is aborted (ms). Default `DEFAULT_ABORT_GRACE_MS`. */
  readonly abortGraceMs?: number;
  /**
   * Time-sliced fragments that may be parked (between quanta, holding their thread and pending
   * result) at once. The pool gets this many threads beyond `workers`, so a granted quantum always
   * finds a thread; a fragment finding no free place runs on (holding its slot). Default: 4 × workers
   * (a query has up to `workers` fragments per scan, and several queries interleave).
   */
  readonly maxParkedFragments?: number;
  /**
   * OS nice value (Linux, 1–19) of a second set of worker threads, the background lane, which runs
   * the fragments a scheduler hands over with `lane: 'background'` (the workload manager: queries
   * below High priority). The kernel then gives the CPU to foreground fragments and to the server's
   * own thread first. 0 (default): one lane, every worker at the server's priority.
   */
  readonly backgroundNiceness?: number;
  /**
   * Foreground fragments that may run beyond `workers` at once (the scheduler's slots reserved to
   * interactive work): the foreground lane gets that many more threads. Default 0.
   */
  readonly interactiveSlots?: number;
}

/** The worker lane of a fragment (structurally the workload manager's `WorkerLane`). */
export type ExecutorLane = 'foreground' | 'background';

/** One quantum as a scheduler grants it (structurally the workload manager's `FragmentQuantum`). */
export interface ExecutorQuantum {
  /** Yield after about this much CPU (ms), at a DuckDB task boundary. */
  readonly quantumMs: number;
  /** The lane whose threads run the fragment; read on its first quantum. Default foreground. */
  readonly lane?: ExecutorLane;
}

/** What a quantum used, and whether the fragment is done (structurally the WLM's `QuantumResult`). */
export interface ExecutorQuantumResult {
  readonly cpuMs: number;
  readonly finished: boolean;
}

/**
 * Runs one fragment through a scheduler: `schedule` calls `run` once per granted quantum until it
 * answers `finished: true` (the workload manager's `lease.runFragment`). Rejecting (the query was
 * cancelled while its fragment waited) stops the fragment.
 */
export type FragmentScheduler = (run: (quantum: ExecutorQuantum) => Promise<ExecutorQuantumResult>) => Promise<void>;

/** What a statement may do with a catalog's object storage (its FileIO, as the statement's principal). */
export interface StatementStorage {
  read(location: string): Promise<Uint8Array>;
  /** The bytes and the object's version tag (S3 ETag), where the store has them (the file cache's key). */
  readVersioned?(location: string): Promise<{ readonly bytes: Uint8Array; readonly version: string | undefined }>;
  /** The object's current version tag (S3 HeadObject), to check a cached copy against. */
  version?(location: string): Promise<string | undefined>;
  /** A byte range with the version tag and the object's size (the cache fetches large files in ranges). */
  readRangeVersioned?(location: string, offset: number, length: number): Promise<{ readonly bytes: Uint8Array; readonly version: string | undefined; readonly objectSize: number | undefined }>;
  /** Create-if-absent: a data file name is new on every write. */
  write(location: string, bytes: Uint8Array): Promise<void>;
  delete(location: string): Promise<void>;
}

export interface ExecuteOptions {
  /**
   * How this statement reaches object-store files, by catalog name (the catalog's FileIO). Needed
   * when a scan's files are not on local disk (`localizing-executor.ts` fetches them first).
   */
  readonly storage?: (catalog: string) => Promise<StatementStorage>;
  /** The query's timeout; past it the running fragment is interrupted (57014). */
  readonly timeoutMs?: number;
  /** Memory limit for each fragment of the query (bytes); default the pool's. */
  readonly memoryLimitBytes?: number;
  /** Aborting cancels the query (57014). */
  readonly signal?: AbortSignal;
  /** Result-size limit in rows: more rows is RESULT_TOO_LARGE (54000), never a truncated result. */
  readonly maxRows?: number;
  /** Also return the result as an Arrow IPC stream. */
  readonly arrow?: boolean;
  /** Called as each fragment finishes (the workload manager charges its CPU time to the query). */
  readonly onFragment?: (metrics: FragmentMetrics) => void;
  /**
   * Time slicing: each fragment, once its inputs are ready, is handed to this scheduler and runs
   * quantum by quantum (parked on its worker in between). Without it a fragment runs to its end.
   */
  readonly schedule?: FragmentScheduler;
  /**
   * The query's memory (bytes) as it changes: the latest sample of each of its fragments still
   * running or parked, summed (a worker samples its DuckDB instance every `MEMORY_SAMPLE_MS`; a
   * finished fragment counts 0). The workload manager charges it to the query's resource groups.
   */
  readonly onMemory?: (bytes: number) => void;
}

export interface QueryMetrics {
  readonly rows: number;
  /** Bytes of data files the plan reads (from the plan's scans). */
  readonly bytesScanned: number;
  readonly fragments: number;
  /** Per fragment: rows produced, CPU and wall time (ms). */
  readonly perFragment: readonly FragmentMetrics[];
  readonly cpuMs: number;
  readonly wallMs: number;
}

export interface QueryResult {
  readonly columns: readonly string[];
  /** DuckDB SQL type names (`BIGINT`, `DECIMAL(15,2)`, `TIMESTAMP WITH TIME ZONE`, …). */
  readonly types: readonly string[];
  /** Rows in wire form (see `values.ts`: exact integers, DECIMAL strings, ISO 8601 times). */
  readonly rows: readonly (readonly WireValue[])[];
  readonly metrics: QueryMetrics;
  /** Arrow IPC stream bytes, when `arrow` was asked for. */
  readonly arrow?: Uint8Array;
}

/** A write request for `Executor.write` (see `engine/iceberg-io/write.ts` for building one). */
export type WriteRequest = Omit<WriteTask, 'kind' | 'queryId' | 'interrupt' | 'deadlineMs' | 'timeoutMs' | 'memoryLimitBytes' | 'inputs'>;

export interface WriteResult {
  readonly files: readonly WrittenFile[];
  readonly metrics: FragmentMetrics;
}

export interface Executor {
  execute(plan: FragmentPlan, options?: ExecuteOptions): Promise<QueryResult>;
  /** Runs a write in a worker: rows of `request.sql` into Parquet files with field ids. */
  write(request: WriteRequest, options?: Omit<ExecuteOptions, 'maxRows' | 'arrow'>): Promise<WriteResult>;
  /**
   * A write whose rows come from a plan: the fragments run as in `execute`, and the last one's rows
   * are written (its SQL and scans replace `request`'s). For INSERT … SELECT and CREATE TABLE AS.
   */
  writePlan(plan: FragmentPlan, request: Omit<WriteRequest, 'sql' | 'scans'>, options?: Omit<ExecuteOptions, 'maxRows' | 'arrow'>): Promise<WriteResult & { readonly query: QueryMetrics }>;
  /**
   * A folder workers may read (under the spill root) where the operator's files are placed for
   * `floe admin import`; the caller removes what it puts there.
   */
  readonly stagingDirectory: string;
  /** Worker threads currently alive (for health and tests). */
  readonly threads: number;
  close(): Promise<void>;
}

function fromWireError(e: WireError): FloeError {
  return new FloeError(e.code as ErrorCode, e.params as never);
}

/** A query's interrupt cell: shared with its workers, set once by a cancel, a failure or the deadline. */
interface InterruptCell {
  readonly cell: Int32Array;
  readonly deadlineMs: number | undefined;
  /** Sets the cell (the first reason wins) and wakes a worker waiting on it. */
  interrupt(reason: number): void;
  /** Calls `listener` once when the cell is set (at once if it is); returns a remover. */
  onInterrupt(listener: () => void): () => void;
  dispose(): void;
  reason(): number;
}

/** Wires an abort signal and a timeout to an interrupt cell. */
function interruptCell(options: { readonly timeoutMs?: number; readonly signal?: AbortSignal }): InterruptCell {
  const cell = new Int32Array(new SharedArrayBuffer(4));
  const listeners = new Set<() => void>();
  const interrupt = (v: number): void => {
    if (Atomics.compareExchange(cell, 0, INTERRUPT_NONE, v) !== INTERRUPT_NONE) return;
    Atomics.notify(cell, 0);
    for (const l of listeners) l();
    listeners.clear();
  };
  const deadlineMs = options.timeoutMs === undefined ? undefined : Date.now() + options.timeoutMs;
  const timer = options.timeoutMs === undefined ? undefined : setTimeout(() => interrupt(INTERRUPT_TIMEOUT), options.timeoutMs);
  const onAbort = (): void => interrupt(INTERRUPT_CANCEL);
  if (options.signal?.aborted === true) interrupt(INTERRUPT_CANCEL);
  options.signal?.addEventListener('abort', onAbort, { once: true });
  return {
    cell,
    deadlineMs,
    interrupt,
    onInterrupt: (listener) => {
      if (Atomics.load(cell, 0) !== INTERRUPT_NONE) {
        listener();
        return () => undefined;
      }
      listeners.add(listener);
      return () => listeners.delete(listener);
    },
    reason: () => Atomics.load(cell, 0),
    dispose: () => {
      if (timer !== undefined) clearTimeout(timer);
      listeners.clear();
      options.signal?.removeEventListener('abort', onAbort);
    },
  };
}

/**
 * A query's memory: the latest sample of each fragment (a finished one is set to 0), summed, and
 * told to the listener when the sum changes.
 */
class QueryMemory {
  private readonly byFragment = new Map<number, number>();
  private total = 0;

  constructor(private readonly listener: (bytes: number) => void) {}

  set(fragmentId: number, bytes: number): void {
    const before = this.byFragment.get(fragmentId) ?? 0;
    if (bytes === before) return;
    if (bytes === 0) this.byFragment.delete(fragmentId);
    else this.byFragment.set(fragmentId, bytes);
    this.total += bytes - before;
    try {
      this.listener(this.total);
    } catch {
      // A listener's failure is not the query's.
    }
  }
}

/**
 * The abort handle piscina gets with each task (its event-emitter form): an `AbortController` with
 * its `EventTarget` costs more than the rest of a small query's dispatch, and is almost never used.
 */
class TaskAbort {
  aborted = false;
  reason: unknown = undefined;
  private listener: (() => void) | undefined;

  once(_event: 'abort', listener: () => void): void {
    this.listener = listener;
  }

  off(_event: 'abort', listener: () => void): void {
    if (this.listener === listener) this.listener = undefined;
  }

  /** What piscina calls (its typings name `off`). */
  removeListener(event: 'abort', listener: () => void): void {
    this.off(event, listener);
  }

  abort(reason: unknown): void {
    if (this.aborted) return;
    this.aborted = true;
    this.reason = reason;
    const l = this.listener;
    this.listener = undefined;
    l?.();
  }
}

/** The error for an interrupt the executor itself observed (a task never reached a worker, or a worker hung). */
function interruptError(reason: number, timeoutMs: number | undefined): FloeError {
  return reason === INTERRUPT_TIMEOUT ? floeError('QUERY_TIMEOUT', { limitMs: timeoutMs ?? 0, source: 'query' }) : floeError('QUERY_CANCELLED', { reason: 'cancelled by request' });
}

/**
 * How long an interrupted worker may take to answer before its task is aborted (piscina then ends
 * the thread): one minute. The abort is a last resort for a worker stuck inside one DuckDB task, and
 * a costly one: ending a thread while DuckDB unwinds an interrupted statement can abort the whole
 * process (see `close`). A worker on a loaded host can need seconds to be scheduled and reach the
 * next task boundary, so a grace of a few seconds (5 s before) turned load into that risk. What a
 * longer grace costs is only that a worker really stuck holds its thread, and its query's caller
 * waits for the error, a minute instead of seconds.
 */
export const DEFAULT_ABORT_GRACE_MS = 60_000;

/** Starts a pool. Workers start lazily; `close()` ends them. */
export function createExecutor(options: ExecutorOptions): Executor {
  const spillRoot = path.resolve(options.spillDirectory);
  mkdirSync(spillRoot, { recursive: true });
  const workers = Math.max(1, options.workers ?? 2);
  const grace = options.abortGraceMs ?? DEFAULT_ABORT_GRACE_MS;
  const maxParked = Math.max(0, options.maxParkedFragments ?? 4 * workers);
  const niceness = Math.min(19, Math.max(0, Math.floor(options.backgroundNiceness ?? 0)));
  const interactiveSlots = Math.max(0, Math.floor(options.interactiveSlots ?? 0));
  /** Parked time-sliced fragments of this pool (see `FragmentSlicing`). */
  const parked = new Int32Array(new SharedArrayBuffer(4));
  const instanceId = randomUUID().slice(0, 8);
  // Each worker thread gets its own temp_directory; piscina has one workerData for all, so the folder
  // is made unique per thread inside the worker config by thread id.
  const baseConfig: WorkerConfig = {
    threads: Math.max(1, options.threadsPerWorker ?? 1),
    memoryLimitBytes: options.memoryLimitBytes ?? 1024 ** 3,
    tempDirectory: path.join(spillRoot, `workers-${instanceId}`),
    maxTempDirectoryBytes: options.maxTempDirectoryBytes ?? 16 * 1024 ** 3,
    allowedDirectories: [...options.dataDirectories.map((d) => path.resolve(d)), spillRoot],
    creationLock: new Int32Array(new SharedArrayBuffer(4)),
    niceness: 0,
  };
  mkdirSync(baseConfig.tempDirectory, { recursive: true });
  // Two lanes of threads when asked (docs/workload.md, "Worker lanes"): a thread's lane is fixed at
  // its start, because an unprivileged process cannot raise a thread's priority back.
  const lanePool = (workerData: WorkerConfig, maxThreads: number): Piscina => new Piscina({
    filename: new URL('./worker.js', import.meta.url).href,
    minThreads: 0,
    maxThreads,
    idleTimeout: 60_000,
    concurrentTasksPerWorker: 1,
    workerData,
  });
  /**
   * The interrupt cells of the plans running now, each with a promise that settles when its plan
   * has: `close()` stops them and lets their workers answer before it ends the threads.
   */
  const running = new Map<InterruptCell, Promise<void>>();
  const pool = lanePool(baseConfig, workers + interactiveSlots + maxParked);
  const background = niceness > 0 ? lanePool({ ...baseConfig, niceness }, workers + maxParked) : pool;

  async function runTask(task: WorkerTask, cell: InterruptCell, timeoutMs: number | undefined, transferList?: readonly MessagePort[], lane: ExecutorLane = 'foreground'): Promise<WorkerReply> {
    const abort = new TaskAbort();
    // A worker that has not answered `grace` ms after the query was interrupted (cancel, failure
    // or deadline) is stuck inside one DuckDB task: abort its task, and piscina replaces the thread.
    let scheduled: NodeJS.Timeout | undefined;
    const stopWatching = cell.onInterrupt(() => {
      scheduled = setTimeout(() => abort.abort(new Error('the worker did not stop after an interrupt')), grace);
    });
    try {
      return (await (lane === 'background' ? background : pool).run(task, { signal: abort, ...(transferList ? { transferList: transferList as never } : {}) })) as WorkerReply;
    } catch (e) {
      if (abort.aborted) throw interruptError(cell.reason() === INTERRUPT_NONE ? INTERRUPT_TIMEOUT : cell.reason(), timeoutMs);
      throw e;
    } finally {
      stopWatching();
      if (scheduled !== undefined) clearTimeout(scheduled);
    }
  }

  /** Runs a task to its end; with `onMemory`, on a port of its own for the worker's memory samples. */
  async function runUnscheduled(task: WorkerTask, cell: InterruptCell, timeoutMs: number | undefined, onMemory: ((bytes: number) => void) | undefined): Promise<WorkerReply> {
    if (onMemory === undefined) return runTask(task, cell, timeoutMs);
    const channel = new MessageChannel();
    channel.port1.on('message', (m: MemorySample) => onMemory(m.bytes));
    try {
      return await runTask({ ...task, memoryReports: channel.port2 }, cell, timeoutMs, [channel.port2]);
    } finally {
      channel.port1.close();
    }
  }

  /**
   * Runs a fragment quantum by quantum under `schedule`: the first quantum starts the worker task,
   * each later one resumes the parked worker; a yield ends a quantum with its CPU, the reply ends
   * the last one with the rest. If the scheduler gives up (cancel while waiting), the worker is
   * woken to see the interrupt and its reply is awaited, so the thread and spill files are free.
   */
  async function runScheduled(task: WorkerTask, cell: InterruptCell, timeoutMs: number | undefined, schedule: FragmentScheduler, onMemory?: (bytes: number) => void): Promise<WorkerReply> {
    const channel = new MessageChannel();
    const events: (SliceYield | { readonly kind: 'done' })[] = [];
    let notify: (() => void) | undefined;
    const push = (e: SliceYield | { readonly kind: 'done' }): void => {
      events.push(e);
      notify?.();
    };
    channel.port1.on('message', (m: SliceYield | MemorySample) => {
      if (m.kind === 'memory') onMemory?.(m.bytes);
      else push(m);
    });
    // Memory samples share the slicing port (a write is not sliced: the port is its own).
    const memoryReports = onMemory === undefined ? {} : { memoryReports: channel.port2 };
    let started: Promise<WorkerReply> | undefined;
    let reply: WorkerReply | undefined;
    let failure: unknown;
    let yieldedCpuMs = 0;
    const nextEvent = async (): Promise<SliceYield | { readonly kind: 'done' }> => {
      while (events.length === 0) await new Promise<void>((resolve) => { notify = resolve; });
      notify = undefined;
      return events.shift()!;
    };
    const run = async (quantum: ExecutorQuantum): Promise<ExecutorQuantumResult> => {
      if (started === undefined) {
        // Fragments are sliced; a write (the last task of `writePlan`) runs as one quantum.
        started = task.kind === 'fragment'
          ? runTask({ ...task, ...memoryReports, slicing: { port: channel.port2, quantumMs: quantum.quantumMs, parked, maxParked } }, cell, timeoutMs, [channel.port2], quantum.lane)
          : onMemory === undefined ? runTask(task, cell, timeoutMs, undefined, quantum.lane) : runTask({ ...task, ...memoryReports }, cell, timeoutMs, [channel.port2], quantum.lane);
        started.then((r) => { reply = r; push({ kind: 'done' }); }, (e: unknown) => { failure = e; push({ kind: 'done' }); });
      } else {
        channel.port1.postMessage({ kind: 'resume', quantumMs: quantum.quantumMs } satisfies SliceCommand);
      }
      const e = await nextEvent();
      if (e.kind === 'yield') {
        yieldedCpuMs += e.cpuMs;
        return { cpuMs: e.cpuMs, finished: false };
      }
      if (failure !== undefined) throw failure;
      return { cpuMs: Math.max(0, reply!.metrics.cpuMs - yieldedCpuMs), finished: true };
    };
    try {
      await schedule(run);
      if (reply === undefined) throw failure ?? new Error('Bug: the scheduler finished a fragment that did not finish');
      return reply;
    } catch (e) {
      if (started !== undefined && reply === undefined && failure === undefined) {
        // Parked, or between quanta: make it stop and wait until it has.
        cell.interrupt(INTERRUPT_CANCEL);
        channel.port1.postMessage({ kind: 'wake' } satisfies SliceCommand);
        await started.catch(() => undefined);
      }
      throw e;
    } finally {
      channel.port1.close();
    }
  }

  /**
   * Runs a plan's fragments, each as soon as its inputs are done; the last one as `lastTask` makes it.
   * The first failure (in time) is the query's error: it interrupts the other fragments, whose
   * induced cancels are not reported.
   */
  async function runPlan(
    plan: FragmentPlan,
    opts: ExecuteOptions,
    lastTask: (common: {
      queryId: string;
      systemScans?: { relation: string; sql?: string }[];
      inputs: { relation: string; path: string }[];
      memoryLimitBytes: number | undefined;
      deadlineMs: number | undefined;
      timeoutMs: number | undefined;
      interrupt: Int32Array;
    }) => WorkerTask,
  ): Promise<{ final: WorkerReply; perFragment: FragmentMetrics[] }> {
    if (plan.fragments.length === 0) throw new Error('Bug: empty fragment plan');
    const queryId = randomUUID();
    const queryDir = path.join(spillRoot, queryId);
    const cell = interruptCell(opts);
    let settled!: () => void;
    running.set(cell, new Promise<void>((resolve) => { settled = resolve; }));
    const done = new Map<number, Promise<WorkerReply | undefined>>();
    const last = plan.fragments[plan.fragments.length - 1]!;
    const perFragment: FragmentMetrics[] = [];
    const memory = opts.onMemory === undefined ? undefined : new QueryMemory(opts.onMemory);
    let firstFailure: FloeError | undefined;
    let created = false;
    try {
      if (plan.fragments.length > 1) {
        mkdirSync(queryDir, { recursive: true });
        created = true;
      }
      const spillPath = (id: number): string => path.join(queryDir, `f${id}.duckdb`);
      for (const f of plan.fragments) {
        const deps = f.inputs.map((id) => {
          const p = done.get(id);
          if (p === undefined) throw new Error(`Bug: fragment ${f.id} reads fragment ${id}, which does not come before it`);
          return p;
        });
        const run = (async (): Promise<WorkerReply | undefined> => {
          const replies = await Promise.all(deps);
          // A failed or skipped input: this fragment is skipped.
          if (replies.some((r) => r === undefined || !r.ok)) return undefined;
          const common = {
            queryId,
            ...(f.systemScans ? { systemScans: f.systemScans.map((x) => ({ relation: x.relation, ...(x.sql !== undefined ? { sql: x.sql } : {}) })) } : {}),
            inputs: f.inputs.map((id) => ({ relation: fragmentRelation(id), path: spillPath(id) })),
            memoryLimitBytes: opts.memoryLimitBytes,
            deadlineMs: cell.deadlineMs,
            timeoutMs: opts.timeoutMs,
            interrupt: cell.cell,
          };
          const task: WorkerTask = f === last
            ? lastTask(common)
            : { ...common, kind: 'fragment', fragmentId: f.id, sql: f.sql, scans: f.scans, output: { kind: 'spill', path: spillPath(f.id) } };
          let reply: WorkerReply;
          const onMemory = memory === undefined ? undefined : (bytes: number) => memory.set(f.id, bytes);
          try {
            reply = opts.schedule === undefined ? await runUnscheduled(task, cell, opts.timeoutMs, onMemory) : await runScheduled(task, cell, opts.timeoutMs, opts.schedule, onMemory);
          } catch (e) {
            firstFailure ??= e instanceof FloeError ? e : floeError('INTERNAL_ERROR', { reference: queryId.slice(0, 8) });
            cell.interrupt(INTERRUPT_CANCEL);
            return undefined;
          } finally {
            memory?.set(f.id, 0);
          }
          perFragment.push(reply.metrics);
          try {
            opts.onFragment?.(reply.metrics);
          } catch {
            // A listener's failure is not the query's.
          }
          if (!reply.ok) {
            firstFailure ??= fromWireError(reply.error);
            // One failure stops the other fragments of the query.
            cell.interrupt(INTERRUPT_CANCEL);
          }
          return reply;
        })();
        done.set(f.id, run);
      }
      await Promise.all(done.values());
      if (firstFailure !== undefined) throw firstFailure;
      const final = await done.get(last.id)!;
      if (final === undefined) throw new Error('Bug: the last fragment did not run');
      return { final, perFragment };
    } finally {
      cell.dispose();
      if (created) rmSync(queryDir, { recursive: true, force: true });
      running.delete(cell);
      settled();
    }
  }

  function planMetrics(plan: FragmentPlan, rows: number, perFragment: readonly FragmentMetrics[], started: number): QueryMetrics {
    return {
      rows,
      // Every scan of every fragment reads its files (a split scan's fragments read disjoint files).
      bytesScanned: plan.fragments.reduce((n, f) => n + f.scans.reduce((m, s) => m + s.estimatedBytes, 0), 0),
      fragments: plan.fragments.length,
      perFragment,
      cpuMs: perFragment.reduce((n, m) => n + m.cpuMs, 0),
      wallMs: performance.now() - started,
    };
  }

  async function execute(plan: FragmentPlan, opts: ExecuteOptions = {}): Promise<QueryResult> {
    const started = performance.now();
    const last = plan.fragments[plan.fragments.length - 1];
    const { final, perFragment } = await runPlan(plan, opts, (common) => ({
      ...common,
      kind: 'fragment',
      fragmentId: last?.id ?? 0,
      sql: last?.sql ?? '',
      scans: last?.scans ?? [],
      output: { kind: 'rows', maxRows: opts.maxRows },
    }));
    if (!final.ok || final.kind !== 'rows') throw new Error('Bug: last fragment returned no rows');
    const base = { columns: final.columns, types: final.types, rows: final.rows, metrics: planMetrics(plan, final.rows.length, perFragment, started) };
    return opts.arrow === true ? { ...base, arrow: toArrowIpc(final.columns, final.types, final.rows) } : base;
  }

  async function writePlan(plan: FragmentPlan, request: Omit<WriteRequest, 'sql' | 'scans'>, opts: Omit<ExecuteOptions, 'maxRows' | 'arrow'> = {}): Promise<WriteResult & { readonly metrics: FragmentMetrics; readonly query: QueryMetrics }> {
    const started = performance.now();
    const last = plan.fragments[plan.fragments.length - 1];
    mkdirSync(request.dataDirectory, { recursive: true });
    const { final, perFragment } = await runPlan(plan, opts, (common) => ({ ...request, ...common, kind: 'write', sql: last?.sql ?? '', scans: last?.scans ?? [] }));
    if (!final.ok || final.kind !== 'written') throw new Error('Bug: write returned no files');
    return { files: final.files, metrics: final.metrics, query: planMetrics(plan, final.metrics.rows, perFragment, started) };
  }

  async function write(request: WriteRequest, opts: Omit<ExecuteOptions, 'maxRows' | 'arrow'> = {}): Promise<WriteResult> {
    const { sql, scans, ...target } = request;
    const r = await writePlan({ fragments: [{ id: 0, sql, scans, inputs: [] }] }, target, opts);
    return { files: r.files, metrics: r.metrics };
  }

  const stagingDirectory = path.join(spillRoot, `staging-${instanceId}`);
  mkdirSync(stagingDirectory, { recursive: true });
  return {
    execute,
    write,
    writePlan,
    stagingDirectory,
    get threads() {
      return pool.threads.length + (background === pool ? 0 : background.threads.length);
    },
    async close() {
      // A worker thread ended while it stops an interrupted DuckDB statement takes the whole process
      // down ("terminate called after throwing an instance of 'Napi::Error'": a server closed just
      // after cancelling a query did). So what runs is interrupted, and its workers answer first; a
      // worker that does not is ended by its task's own grace period (see `runTask`), and a
      // fragment that waits for a quantum that will not come is not waited for past that.
      if (running.size > 0) {
        for (const cell of running.keys()) cell.interrupt(INTERRUPT_CANCEL);
        let timer: NodeJS.Timeout | undefined;
        await Promise.race([
          Promise.allSettled([...running.values()]),
          new Promise<void>((resolve) => { timer = setTimeout(resolve, grace + 1000); }),
        ]);
        clearTimeout(timer);
      }
      await Promise.all([pool.destroy(), ...(background === pool ? [] : [background.destroy()])]);
      rmSync(baseConfig.tempDirectory, { recursive: true, force: true });
      rmSync(stagingDirectory, { recursive: true, force: true });
    },
  };
}

/** A default spill root under the OS temp folder (for embedding and tests). */
export function defaultSpillDirectory(): string {
  return path.join(os.tmpdir(), 'floe-spill');
}
