/**
 * A piscina worker: one DuckDB instance per worker thread, created on the first task from
 * `workerData` (a `WorkerConfig`) and locked down before any task SQL runs:
 *
 * - `enable_external_access = false` with `allowed_directories` = the warehouse folder(s) and the
 *   spill root: file functions, COPY, ATTACH and EXPORT reach nothing else, nor the network;
 * - extension autoload/autoinstall off (and INSTALL/LOAD fail: external access is off);
 * - `allowed_configs = ['memory_limit']`: the executor sets a per-fragment memory limit; nothing else
 *   can be changed after `lock_configuration = true`.
 *
 * Queries are driven with pending results (`runTask()`) on this thread, so they do not occupy
 * libuv's thread pool, the interrupt cell is checked between DuckDB tasks (cancel and timeout stop
 * a fragment within one task's time), and the thread's own CPU time measures the fragment.
 *
 * The instance lives as long as the thread: that is the worker's state by design (a process
 * boundary), and the only module-level state in the engine.
 */
import { closeSync, mkdirSync, openSync, readSync, readdirSync, rmSync, statSync } from 'node:fs';
import { stat } from 'node:fs/promises';
import { setPriority } from 'node:os';
import { threadId, workerData, type MessagePort } from 'node:worker_threads';
import {
  DuckDBBlobValue, DuckDBDateValue, DuckDBDecimalValue, DuckDBInstance, DuckDBPendingResultState, DuckDBTimeValue, DuckDBTimestampTZValue, DuckDBTimestampValue,
} from '@duckdb/node-api';
import type { DuckDBConnection, DuckDBPendingResult, DuckDBPreparedStatement, DuckDBResult, DuckDBValue } from '@duckdb/node-api';
import type { IcebergValue } from '../../catalog/iceberg/conversions.js';
import { applyTransform } from '../../catalog/iceberg/transforms.js';
import { DuckDBMaterializedResult, DuckDBResultReader } from '@duckdb/node-api';
import { isFloeError, floeError } from '../../grammar/errors.js';
import type { FloeError } from '../../grammar/errors.js';
import { projectedFields, quoteIdent, scanFilePath, scanSql, sqlString } from '../iceberg-io/read.js';
import { defaultedFieldIds } from '../iceberg-io/defaults.js';
import { fileMayMatch } from '../planner/prune.js';
import type { FileColumn } from '../iceberg-io/read.js';
import { transformSql } from '../iceberg-io/partition-sql.js';
import { fragmentRelation } from '../fragments.js';
import type { TableScanInput } from '../fragments.js';
import { mapDuckDBError } from './errors.js';
import { INTERRUPT_CANCEL, INTERRUPT_NONE, INTERRUPT_TIMEOUT, MEMORY_SAMPLE_MS } from './protocol.js';
import type { FragmentInputFile, FragmentMetrics, FragmentSlicing, FragmentTask, MemorySample, SliceCommand, SliceYield, WorkerConfig, WorkerReply, WorkerTask, WriteTask, WrittenFile } from './protocol.js';
import { toWire } from './values.js';
import type { WireValue } from './values.js';

const config = workerData as WorkerConfig;
let instancePromise: Promise<DuckDBInstance> | undefined;

/** Creates and locks the worker's instance. */
async function createInstance(c: WorkerConfig): Promise<DuckDBInstance> {
  // One temp_directory per instance: DuckDB names its spill files per instance, not per process.
  const tempDirectory = `${c.tempDirectory}/thread-${threadId}`;
  mkdirSync(tempDirectory, { recursive: true });
  // DuckDB's background threads (threads − 1) are this worker's too: find their ids by the threads
  // that appear while the instance starts, under a lock shared by the pool's workers (and with
  // libuv's thread pool already started), so the fragment's CPU time includes theirs.
  await stat(tempDirectory);
  while (Atomics.compareExchange(c.creationLock, 0, 0, 1) !== 0) Atomics.wait(c.creationLock, 0, 1, 20);
  let instance: DuckDBInstance;
  try {
    const before = new Set(taskIds());
    instance = await DuckDBInstance.create(':memory:', {
      threads: String(c.threads),
      memory_limit: `${c.memoryLimitBytes}B`,
      temp_directory: tempDirectory,
      max_temp_directory_size: `${c.maxTempDirectoryBytes}B`,
      autoload_known_extensions: 'false',
      autoinstall_known_extensions: 'false',
    });
    const spawned = taskIds().filter((t) => !before.has(t));
    // Anything but exactly the expected count means another thread started meanwhile: count only our own.
    backgroundThreads = spawned.length === c.threads - 1 ? spawned : [];
  } finally {
    Atomics.store(c.creationLock, 0, 0);
    Atomics.notify(c.creationLock, 0);
  }
  // A background-lane worker lowers its thread and its instance's threads (started from a libuv
  // thread, so they did not inherit anything from this one) only now: holding the creation lock at
  // a low priority could make a foreground worker wait for it. libuv's thread pool is started
  // already (the `stat` above), so its threads, which serve the server too, keep their priority.
  lowerPriority(0, c.niceness);
  for (const tid of backgroundThreads) lowerPriority(Number(tid), c.niceness);
  const conn = await instance.connect();
  try {
    try {
      await conn.run(`SET TimeZone = 'UTC'`);
    } catch {
      // Without ICU there is no time zone setting; TIMESTAMPTZ is UTC already.
    }
    // Parquet footers are kept between queries (DuckDB re-reads one whose file changed since):
    // Iceberg data files are written once, and a small query re-read its footers every time.
    await conn.run(`SET parquet_metadata_cache = true`);
    const dirs = c.allowedDirectories.map((d) => sqlString(d.endsWith('/') ? d : `${d}/`)).join(', ');
    await conn.run(`SET allowed_directories = [${dirs}]`);
    await conn.run(`SET enable_external_access = false`);
    await conn.run(`SET allowed_configs = ['memory_limit']`);
    await conn.run(`SET lock_configuration = true`);
  } finally {
    conn.closeSync();
  }
  return instance;
}

let connectionPromise: Promise<DuckDBConnection> | undefined;
let currentMemoryLimit: number | undefined;

/**
 * The worker's one connection, reused by every task (a task runs alone on its worker): connecting
 * and closing per fragment costs more than a small query. Tasks drop what they create (temp views
 * and tables, attached databases) in `finally`.
 */
function connection(): Promise<DuckDBConnection> {
  connectionPromise ??= (async () => {
    instancePromise ??= createInstance(config);
    return (await instancePromise).connect();
  })();
  return connectionPromise;
}

/**
 * The statement that reads the instance's buffer-pool memory, prepared on a second connection: the
 * first one is busy with the task whose memory it measures. Made on the first sample.
 */
let memoryProbe: Promise<DuckDBPreparedStatement> | undefined;

/** The memory DuckDB's buffer manager holds now for this worker's instance (bytes). */
async function instanceMemoryBytes(): Promise<number> {
  memoryProbe ??= (async () => {
    instancePromise ??= createInstance(config);
    const probe = await (await instancePromise).connect();
    return probe.prepare(`SELECT coalesce(sum(memory_usage_bytes), 0)::BIGINT FROM duckdb_memory()`);
  })();
  const result = await (await memoryProbe).run();
  const rows = result instanceof DuckDBMaterializedResult && result.chunkCount > 0 ? result.getChunk(0).getRows() : await result.getRows();
  return Number(rows[0]?.[0] ?? 0);
}

/**
 * Samples the task's memory every `MEMORY_SAMPLE_MS` while `drive` runs it and posts a
 * `MemorySample` when the value changed (the workload manager charges it to the query's resource
 * groups). A task that ends sooner is never sampled: small queries pay one clock read per DuckDB
 * task. The instance runs this task alone (one task per worker thread; a parked fragment keeps its
 * thread), so the whole buffer pool is the task's.
 */
class MemorySampler {
  private nextAt = performance.now() + MEMORY_SAMPLE_MS;
  private last = 0;
  private failed = false;

  constructor(private readonly port: MessagePort) {}

  due(): boolean {
    return !this.failed && performance.now() >= this.nextAt;
  }

  async sample(): Promise<void> {
    try {
      const bytes = await instanceMemoryBytes();
      if (bytes !== this.last) {
        this.last = bytes;
        this.port.postMessage({ kind: 'memory', bytes } satisfies MemorySample);
      }
    } catch {
      // No measure this time (the port closed, the probe failed): the task is not hurt, it just stops reporting.
      this.failed = true;
    }
    this.nextAt = performance.now() + MEMORY_SAMPLE_MS;
  }
}

/**
 * Gives a thread of this worker (0: the calling one) the lane's nice value. Linux only: there
 * `setpriority` on a thread id changes that thread alone; on other systems it would change the
 * whole process, the server included, so nothing is done. Failure (a sandbox) leaves the thread as
 * it is: the lane still separates the work, only without the kernel's help.
 */
function lowerPriority(tid: number, niceness: number): void {
  if (niceness <= 0 || process.platform !== 'linux') return;
  try {
    setPriority(tid, niceness);
  } catch {
    // Not permitted here: run at the inherited priority.
  }
}

/** Ids of the process's threads (Linux), or none. */
function taskIds(): string[] {
  try {
    return readdirSync('/proc/self/task');
  } catch {
    return [];
  }
}

/** The DuckDB background threads of this worker's instance (empty with `threads = 1`). */
let backgroundThreads: readonly string[] = [];

/**
 * Open `schedstat` files of this thread and of its instance's background threads, read again from
 * offset 0 each time (the kernel writes them afresh): two system calls fewer per read than opening
 * them each time, which a small query does four times. A thread that ended reads as nothing.
 */
const schedstatFds = new Map<string, number | null>();
const schedstatBuffer = Buffer.alloc(128);
// The files are this thread's: closed when it ends (piscina ends idle threads), so that a pool
// that starts and ends threads all day does not collect descriptors.
process.once('exit', () => {
  for (const fd of schedstatFds.values()) {
    if (fd === null) continue;
    try {
      closeSync(fd);
    } catch {
      // Already closed with the thread.
    }
  }
  schedstatFds.clear();
});

function schedstatNs(path: string): number {
  let fd = schedstatFds.get(path);
  if (fd === undefined) {
    try {
      fd = openSync(path, 'r');
    } catch {
      fd = null;
    }
    schedstatFds.set(path, fd);
  }
  if (fd === null) return 0;
  try {
    const n = readSync(fd, schedstatBuffer, 0, schedstatBuffer.length, 0);
    return Number(schedstatBuffer.toString('latin1', 0, n).split(' ')[0]);
  } catch {
    return 0;
  }
}

/**
 * CPU time in ms of this thread plus its instance's background threads (Linux `schedstat`), else
 * `undefined` (callers use wall time).
 */
function threadCpuMs(): number | undefined {
  if (process.platform !== 'linux') return undefined;
  const own = schedstatNs('/proc/thread-self/schedstat');
  if (own === 0) return undefined;
  let ns = own;
  for (const tid of backgroundThreads) ns += schedstatNs(`/proc/self/task/${tid}/schedstat`);
  return ns / 1e6;
}

/** Why a task stops early, from the shared cell. */
function interruptReason(task: { readonly interrupt: Int32Array; readonly deadlineMs: number | undefined }): number {
  const v = Atomics.load(task.interrupt, 0);
  if (v !== INTERRUPT_NONE) return v;
  if (task.deadlineMs !== undefined && Date.now() >= task.deadlineMs) return INTERRUPT_TIMEOUT;
  return INTERRUPT_NONE;
}

function interruptedError(task: { readonly timeoutMs: number | undefined }, reason: number): FloeError {
  return reason === INTERRUPT_TIMEOUT
    ? floeError('QUERY_TIMEOUT', { limitMs: task.timeoutMs ?? 0, source: 'query' })
    : floeError('QUERY_CANCELLED', { reason: 'cancelled by request' });
}

class Interrupted extends Error {
  constructor(readonly reason: number) {
    super('interrupted');
  }
}

type Interruptible = { readonly interrupt: Int32Array; readonly deadlineMs: number | undefined };

/** While parked, how often the interrupt cell and the deadline are re-checked (ms). */
const PARKED_POLL_MS = 20;

/**
 * The time slicer of one fragment (see `FragmentSlicing`): `due()` is asked between DuckDB tasks;
 * once the quantum's CPU is used, `yieldQuantum()` posts a yield and waits for the next quantum.
 */
class Slicer {
  private quantumMs: number;
  private quantumCpu0: number;
  private quantumWall0: number;
  private readonly resumes: SliceCommand[] = [];
  private wake: (() => void) | undefined;

  /** `cpu0`: the thread CPU the fragment started with (read once by the caller: each read is a file). */
  constructor(private readonly s: FragmentSlicing, private readonly task: Interruptible, cpu0: number | undefined, wall0: number) {
    this.quantumMs = s.quantumMs;
    this.quantumWall0 = wall0;
    this.quantumCpu0 = cpu0 ?? wall0;
    s.port.on('message', (m: SliceCommand) => {
      this.resumes.push(m);
      this.wake?.();
    });
  }

  /** CPU of this quantum so far (ms); wall time where thread CPU cannot be read. */
  private used(): number {
    const cpu = threadCpuMs();
    return cpu === undefined ? performance.now() - this.quantumWall0 : cpu - this.quantumCpu0;
  }

  /**
   * Whether the quantum is used up: thread CPU ≥ quantumMs (read only once the wall time reached it;
   * CPU ≤ wall on a one-thread instance), or wall ≥ 4 × quantumMs on a machine so busy that the
   * thread gets little CPU. Cheap when not: one clock read.
   */
  due(): boolean {
    const wall = performance.now() - this.quantumWall0;
    if (wall < this.quantumMs) return false;
    return wall >= 4 * this.quantumMs || this.used() >= this.quantumMs;
  }

  /**
   * Ends the quantum: posts the yield and parks until the next quantum is granted (or runs on when
   * the pool has no free parking place). Returns the interrupt reason seen while parked, else NONE.
   */
  async yieldQuantum(): Promise<number> {
    const cpuMs = this.used();
    if (!this.tryPark()) {
      this.restart();
      return INTERRUPT_NONE;
    }
    try {
      this.s.port.postMessage({ kind: 'yield', cpuMs } satisfies SliceYield);
      for (;;) {
        const next = this.resumes.shift();
        if (next?.kind === 'resume') {
          this.quantumMs = next.quantumMs;
          break;
        }
        const reason = interruptReason(this.task);
        if (reason !== INTERRUPT_NONE) return reason;
        if (next === undefined) {
          await new Promise<void>((resolve) => {
            const timer = setTimeout(() => { this.wake = undefined; resolve(); }, PARKED_POLL_MS);
            this.wake = () => { clearTimeout(timer); this.wake = undefined; resolve(); };
          });
        }
      }
    } finally {
      Atomics.sub(this.s.parked, 0, 1);
    }
    this.restart();
    return INTERRUPT_NONE;
  }

  private restart(): void {
    this.quantumWall0 = performance.now();
    this.quantumCpu0 = threadCpuMs() ?? this.quantumWall0;
  }

  /** Takes one of the pool's parking places, if one is free. */
  private tryPark(): boolean {
    for (;;) {
      const n = Atomics.load(this.s.parked, 0);
      if (n >= this.s.maxParked) return false;
      if (Atomics.compareExchange(this.s.parked, 0, n, n + 1) === n) return true;
    }
  }

  close(): void {
    this.s.port.removeAllListeners('message');
    this.s.port.close();
  }
}

/**
 * Prepared statements of SQL that reads no relation, by text, kept for the next task that runs the
 * same text: health checks and constant queries (`SELECT 1`) skip DuckDB's parse, bind and optimise
 * (most of their cost). Only relation-free SQL is kept: DuckDB does not re-bind a prepared
 * statement when a temp view it read is replaced, and every table a task reads is such a view.
 */
const reusableStatements = new Map<string, DuckDBPreparedStatement>();
const MAX_REUSABLE_STATEMENTS = 256;

/**
 * Starts one statement: prepared directly (one trip to DuckDB's thread instead of extracting
 * statements first), or taken from `reusableStatements` when `reusable`.
 */
async function startStatement(conn: DuckDBConnection, sql: string, reusable: boolean): Promise<DuckDBPendingResult> {
  const kept = reusable ? reusableStatements.get(sql) : undefined;
  if (kept !== undefined) return kept.start();
  let prepared: DuckDBPreparedStatement;
  try {
    prepared = await conn.prepare(sql);
  } catch (e) {
    // Several statements in one text cannot be prepared at once: run all but the last, start the last.
    if (/multiple statements/i.test(String(e))) return conn.start(sql);
    throw e;
  }
  if (!reusable) {
    try {
      return prepared.start();
    } finally {
      prepared.destroySync();
    }
  }
  reusableStatements.set(sql, prepared);
  if (reusableStatements.size > MAX_REUSABLE_STATEMENTS) {
    const [oldest, statement] = reusableStatements.entries().next().value!;
    reusableStatements.delete(oldest);
    statement.destroySync();
  }
  return prepared.start();
}

/** Bounds of the wait between polls while DuckDB's background threads run every task (ms). */
const MIN_IDLE_WAIT_MS = 0.02;
const MAX_IDLE_WAIT_MS = 1;

/**
 * Runs one statement to completion by pending-result tasks, checking the interrupt cell between
 * tasks; on an interrupt, `connection.interrupt()` stops it and `Interrupted` is thrown.
 */
async function drive(conn: DuckDBConnection, sql: string, task: Interruptible, slicer?: Slicer, reusable = false, memory?: MemorySampler): Promise<DuckDBResult> {
  const before = interruptReason(task);
  if (before !== INTERRUPT_NONE) throw new Interrupted(before);
  const pending = await startStatement(conn, sql, reusable);
  // While DuckDB's own threads hold every task, wait on the interrupt cell (an interrupt wakes it)
  // for a short time that grows: a small query is done within microseconds, and a fixed 1 ms sleep
  // was most of its latency; a long one settles at 1 ms between polls.
  let idleWaitMs = MIN_IDLE_WAIT_MS;
  for (;;) {
    if (memory?.due() === true) await memory.sample();
    const parkedReason = slicer?.due() === true ? await slicer.yieldQuantum() : INTERRUPT_NONE;
    const reason = parkedReason !== INTERRUPT_NONE ? parkedReason : interruptReason(task);
    if (reason !== INTERRUPT_NONE) {
      conn.interrupt();
      try {
        pending.runTask();
      } catch {
        // The interrupted query reports an error; the reason is ours.
      }
      throw new Interrupted(reason);
    }
    let state: DuckDBPendingResultState;
    try {
      state = pending.runTask();
    } catch (e) {
      const late = interruptReason(task);
      if (late !== INTERRUPT_NONE && /interrupt/i.test(String(e))) throw new Interrupted(late);
      throw e;
    }
    if (state === DuckDBPendingResultState.RESULT_READY) break;
    if (state === DuckDBPendingResultState.NO_TASKS_AVAILABLE) {
      Atomics.wait(task.interrupt, 0, INTERRUPT_NONE, idleWaitMs);
      idleWaitMs = Math.min(MAX_IDLE_WAIT_MS, idleWaitMs * 2);
    } else {
      idleWaitMs = MIN_IDLE_WAIT_MS;
    }
  }
  return pending.getResult();
}

/** Makes the inputs and scans visible under their relation names in this connection. */
/** What a task created in the shared connection, removed when it ends. */
interface Created {
  readonly attached: string[];
  readonly views: string[];
}

/**
 * Views of the previous task, dropped with the next task's first statement batch (one round trip
 * instead of one per view; nothing can use them in between, the connection is this worker's).
 */
let staleViews: string[] = [];

/**
 * Binds a task's relations in one round trip: drops of the previous task's views, the memory limit
 * when it changes, ATTACH of input files, and a view per input, scan and system table. Name-mapped
 * scans first probe their files (rare: migrated tables only).
 */
async function bindRelations(
  conn: DuckDBConnection,
  task: { readonly queryId: string; readonly inputs: readonly FragmentInputFile[]; readonly scans: readonly TableScanInput[]; readonly systemScans?: readonly { readonly relation: string; readonly sql?: string }[]; readonly memoryLimitBytes: number | undefined },
  created: Created,
): Promise<void> {
  const statements = staleViews.map((v) => `DROP VIEW IF EXISTS temp.${quoteIdent(v)}`);
  staleViews = [];
  const limit = Math.max(16 * 1024 * 1024, Math.floor(task.memoryLimitBytes ?? config.memoryLimitBytes));
  if (limit !== currentMemoryLimit) {
    statements.push(`SET memory_limit = '${limit}B'`);
    currentMemoryLimit = undefined;
  }
  const view = (relation: string, sql: string): void => {
    statements.push(`CREATE OR REPLACE TEMP VIEW ${quoteIdent(relation)} AS ${sql}`);
    created.views.push(relation);
  };
  for (const [i, input] of task.inputs.entries()) {
    const alias = `__floe_in_${task.queryId.replace(/[^a-zA-Z0-9]/g, '')}_${i}`;
    statements.push(`ATTACH ${sqlString(input.path)} AS ${quoteIdent(alias)} (READ_ONLY)`);
    created.attached.push(alias);
    view(input.relation, `SELECT * FROM ${quoteIdent(alias)}.r`);
  }
  for (const planned of task.scans) {
    const noIds = planned.nameMapping === undefined ? new Map<string, readonly string[]>() : await filesWithoutFieldIds(conn, planned);
    const scan = prunedByMetrics(planned, noIds);
    const fieldIds = projectedFields(scan.schema, scan.columns).some((f) => defaultedFieldIds(f.type).size > 0) ? await fileFieldIds(conn, scan) : undefined;
    view(scan.relation, scanSql(scan, { filesWithoutFieldIds: noIds, fileColumnsById: await fileColumnsById(conn, scan), ...(fieldIds !== undefined ? { fileFieldIds: fieldIds } : {}) }));
  }
  for (const system of task.systemScans ?? []) {
    if (system.sql === undefined) throw new Error(`Bug: system table ${system.relation} reached the worker without its rows`);
    view(system.relation, system.sql);
  }
  if (statements.length > 0) await conn.run(statements.join(';\n'));
  currentMemoryLimit = limit;
}

/**
 * Ends a task: attached databases are detached now (another worker may attach an output file next,
 * and the query's folder is removed), views are dropped with the next task's batch.
 */
async function cleanUp(conn: DuckDBConnection, created: Created): Promise<void> {
  staleViews.push(...created.views);
  if (created.attached.length === 0) return;
  try {
    await conn.run(created.attached.map((a) => `DETACH DATABASE IF EXISTS ${quoteIdent(a)}`).join(';\n'));
  } catch {
    for (const a of created.attached) {
      try {
        await conn.run(`DETACH DATABASE IF EXISTS ${quoteIdent(a)}`);
      } catch {
        // Gone already.
      }
    }
  }
}

/** Data files of a name-mapped scan that carry no Parquet field ids, with their top-level column names. */
/** Scans of more files than this are read through the field-id map without looking at the files first. */
const MAX_FILES_INSPECTED = 256;

/**
 * The top-level primitive columns of each data file of a scan by field id, from the Parquet
 * footers (`parquet_schema`, depth-first: a row's depth follows from its parents' child counts).
 * `scanSql` reads files by name when they all store the projected fields alike (see there).
 */
async function fileColumnsById(conn: DuckDBConnection, scan: TableScanInput): Promise<Map<string, Map<number, FileColumn>>> {
  const files = new Map<string, number>();
  for (const t of scan.tasks) files.set(scanFilePath(scan, t.file.filePath), t.file.fileSizeInBytes);
  const out = new Map<string, Map<number, FileColumn>>();
  if (files.size === 0 || files.size > MAX_FILES_INSPECTED) return out;
  const unknown: string[] = [];
  for (const [path, size] of files) {
    const known = footerColumns.get(path);
    if (known === undefined || known.size !== size) unknown.push(path);
    else if (known.columns.size > 0) out.set(path, known.columns);
  }
  if (unknown.length === 0) return out;
  const reader = await conn.runAndReadAll(
    `SELECT file_name, name, field_id, num_children, concat_ws('|', type, type_length, repetition_type, converted_type, scale, precision, logical_type::VARCHAR) FROM parquet_schema([${unknown.map(sqlString).join(', ')}])`,
  );
  const read = new Map<string, Map<number, FileColumn>>(unknown.map((path) => [path, new Map()]));
  const remaining = new Map<string, number[]>();
  for (const [file, name, fieldId, children, signature] of reader.getRowsJS()) {
    const path = String(file);
    let stack = remaining.get(path);
    if (stack === undefined) remaining.set(path, stack = []);
    const depth = stack.length;
    if (depth > 0) stack[depth - 1]! -= 1;
    const n = children === null ? 0 : Number(children);
    if (depth === 1 && n === 0 && fieldId !== null) {
      let columns = read.get(path);
      if (columns === undefined) read.set(path, columns = new Map());
      columns.set(Number(fieldId), { name: String(name), signature: String(signature) });
    }
    if (n > 0) stack.push(n);
    while (stack.length > 0 && stack[stack.length - 1] === 0) stack.pop();
  }
  for (const [path, columns] of read) {
    if (columns.size > 0) out.set(path, columns);
    const size = files.get(path);
    if (size === undefined) continue;
    footerColumns.delete(path);
    footerColumns.set(path, { size, columns });
    if (footerColumns.size > MAX_FOOTERS_KEPT) footerColumns.delete(footerColumns.keys().next().value!);
  }
  return out;
}

/**
 * Top-level columns of data files already inspected, by local path with the file's size: Iceberg
 * never rewrites a data file in place (a file is written once under a new name), so the footer of
 * a path is read once per worker, not once per query (a query over a small table spent a
 * millisecond on it). The size from the manifest guards against a file replaced under the same
 * name outside Iceberg. Oldest first out.
 */
const footerColumns = new Map<string, { readonly size: number; readonly columns: Map<number, FileColumn> }>();
const MAX_FOOTERS_KEPT = 4096;

/**
 * A name-mapped scan pruned by column metrics, now that the files without field ids are known:
 * files with ids are judged by their metrics as any file is; files without ids keep every row
 * (their metrics may describe columns the name mapping resolves differently).
 */
function prunedByMetrics(scan: TableScanInput, noIds: ReadonlyMap<string, readonly string[]>): TableScanInput {
  const predicates = scan.metricPredicates;
  if (predicates === undefined || predicates.length === 0) return scan;
  const ctx = { schema: scan.schema, specs: new Map((scan.partitionSpecs ?? []).map((s) => [s.specId, s] as const)) };
  const tasks = scan.tasks.filter((t) => noIds.has(scanFilePath(scan, t.file.filePath)) || fileMayMatch(t, predicates, ctx));
  return tasks.length === scan.tasks.length ? scan : { ...scan, tasks };
}

/**
 * Every Parquet field id each data file of a scan stores, at any depth: a struct child added later
 * with an initial default is absent from older files, which must read the default (see scanSql).
 */
async function fileFieldIds(conn: DuckDBConnection, scan: TableScanInput): Promise<Map<string, ReadonlySet<number>>> {
  const paths = [...new Set(scan.tasks.map((t) => scanFilePath(scan, t.file.filePath)))];
  const out = new Map<string, Set<number>>(paths.map((p) => [p, new Set()]));
  if (paths.length === 0) return out;
  const reader = await conn.runAndReadAll(`SELECT file_name, field_id FROM parquet_schema([${paths.map(sqlString).join(', ')}]) WHERE field_id IS NOT NULL`);
  for (const [file, id] of reader.getRowsJS()) out.get(String(file))?.add(Number(id));
  return out;
}

async function filesWithoutFieldIds(conn: DuckDBConnection, scan: TableScanInput): Promise<Map<string, readonly string[]>> {
  const paths = scan.tasks.map((t) => scanFilePath(scan, t.file.filePath));
  const out = new Map<string, readonly string[]>();
  if (paths.length === 0) return out;
  const reader = await conn.runAndReadAll(
    `SELECT file_name FROM parquet_schema([${paths.map(sqlString).join(', ')}]) GROUP BY file_name HAVING count(field_id) = 0`,
  );
  for (const [file] of reader.getRowsJS()) {
    const names = (await conn.runAndReadAll(`DESCRIBE SELECT * FROM read_parquet(${sqlString(String(file))})`)).getRowsJS().map((r) => String(r[0]));
    out.set(String(file), names);
  }
  return out;
}


async function runFragment(task: FragmentTask): Promise<WorkerReply> {
  const conn = await connection();
  const created: Created = { attached: [], views: [] };
  const cpu0 = threadCpuMs();
  const wall0 = performance.now();
  const slicer = task.slicing === undefined ? undefined : new Slicer(task.slicing, task, cpu0, wall0);
  const memory = task.memoryReports === undefined ? undefined : new MemorySampler(task.memoryReports);
  let rows = 0;
  const metrics = (): FragmentMetrics => {
    const cpu1 = threadCpuMs();
    const wallMs = performance.now() - wall0;
    return { fragmentId: task.fragmentId, rows, cpuMs: cpu0 === undefined || cpu1 === undefined ? wallMs : cpu1 - cpu0, wallMs };
  };
  try {
    await bindRelations(conn, task, created);
    const output = task.output;
    switch (output.kind) {
      case 'spill': {
        const alias = `__floe_out_${task.queryId.replace(/[^a-zA-Z0-9]/g, '')}_${task.fragmentId}`;
        await conn.run(`ATTACH ${sqlString(output.path)} AS ${quoteIdent(alias)}`);
        created.attached.push(alias);
        const result = await drive(conn, `CREATE TABLE ${quoteIdent(alias)}.r AS ${task.sql}`, task, slicer, false, memory);
        rows = Number((await result.getRowsJS())[0]?.[0] ?? 0);
        return { ok: true, kind: 'spilled', metrics: metrics() };
      }
      case 'rows': {
        const readsNothing = task.scans.length === 0 && task.inputs.length === 0 && (task.systemScans?.length ?? 0) === 0;
        const result = await drive(conn, task.sql, task, slicer, readsNothing, memory);
        const limit = output.maxRows;
        const wire: WireValue[][] = [];
        if (result instanceof DuckDBMaterializedResult) {
          // The whole result is already in memory: its chunks are read in this thread. Each
          // `fetchChunk` would be a round trip through libuv's thread pool (two thread wake-ups),
          // most of a small query's cost.
          if (limit !== undefined && result.rowCount > limit) throw floeError('RESULT_TOO_LARGE', { limit, unit: 'rows' });
          for (let i = 0; i < result.chunkCount; i++) {
            for (const row of result.getChunk(i).getRows()) wire.push(row.map(toWire));
          }
        } else {
          const reader = new DuckDBResultReader(result);
          if (limit === undefined) await reader.readAll();
          else await reader.readUntil(limit + 1);
          if (limit !== undefined && reader.currentRowCount > limit) throw floeError('RESULT_TOO_LARGE', { limit, unit: 'rows' });
          for (const row of reader.getRows()) wire.push(row.map(toWire));
        }
        rows = wire.length;
        return { ok: true, kind: 'rows', columns: result.columnNames(), types: result.columnTypes().map((t) => t.toString()), rows: wire, metrics: metrics() };
      }
      default: {
        const never: never = output;
        throw new Error(`unknown output ${String(never)}`);
      }
    }
  } catch (e) {
    return { ok: false, error: toWireError(e, task), metrics: metrics() };
  } finally {
    slicer?.close();
    task.memoryReports?.close();
    await cleanUp(conn, created);
  }
}

/** A DuckDB value as the Iceberg single value the transforms take. */
function icebergValueOf(v: DuckDBValue): IcebergValue | null {
  if (v === null || v === undefined) return null;
  if (typeof v === 'boolean' || typeof v === 'number' || typeof v === 'bigint' || typeof v === 'string') return v;
  if (v instanceof DuckDBDecimalValue) return v.value;
  if (v instanceof DuckDBDateValue) return v.days;
  if (v instanceof DuckDBTimestampValue || v instanceof DuckDBTimestampTZValue || v instanceof DuckDBTimeValue) return v.micros;
  if (v instanceof DuckDBBlobValue) return v.bytes;
  return v.toString();
}

/** A written Parquet file as the catalog needs it: row count, size, and per-column stats as `parquet_metadata` has them. */
async function writtenFile(conn: DuckDBConnection, path: string, partition: WrittenFile['partition']): Promise<WrittenFile> {
  const meta = (await conn.runAndReadAll(
    `SELECT row_group_id, row_group_num_rows, path_in_schema, num_values, stats_null_count, total_compressed_size, coalesce(stats_min_value, stats_min), coalesce(stats_max_value, stats_max) FROM parquet_metadata(${sqlString(path)})`,
  )).getRowsJS();
  const groups = new Map<string, number>();
  for (const r of meta) groups.set(String(r[0]), Number(r[1]));
  return {
    path,
    partition,
    recordCount: [...groups.values()].reduce((a, b) => a + b, 0),
    fileSizeInBytes: statSync(path).size,
    columns: meta.map((r) => ({
      name: String(r[2]),
      valueCount: Number(r[3]),
      nullCount: r[4] === null ? null : Number(r[4]),
      compressedSize: Number(r[5]),
      min: r[6] === null ? null : String(r[6]),
      max: r[7] === null ? null : String(r[7]),
    })),
  };
}

/** Removes a file this worker wrote and will not report (a failed or empty write); best effort. */
function removeLocalFile(path: string): void {
  try {
    rmSync(path, { force: true });
  } catch {
    // not a local path, or already gone: an orphan at worst
  }
}

/**
 * A write: the rows of `sql` go to one Parquet file per partition tuple, with Iceberg field ids.
 * An unpartitioned table's file is written straight from `sql`. Otherwise rows are staged in a temp table (which spills like any DuckDB data); partition values are computed
 * in SQL, except `bucket`, computed here with Iceberg's murmur3 over the distinct values and joined
 * back. Tuples are numbered by `dense_rank()`, each file is one COPY of one number, and the stats
 * come back raw from `parquet_metadata`.
 */
async function runWrite(task: WriteTask): Promise<WorkerReply> {
  const conn = await connection();
  const created: Created = { attached: [], views: [] };
  const cpu0 = threadCpuMs();
  const wall0 = performance.now();
  const memory = task.memoryReports === undefined ? undefined : new MemorySampler(task.memoryReports);
  let rows = 0;
  const metrics = (): FragmentMetrics => {
    const cpu1 = threadCpuMs();
    const wallMs = performance.now() - wall0;
    return { fragmentId: 0, rows, cpuMs: cpu0 === undefined || cpu1 === undefined ? wallMs : cpu1 - cpu0, wallMs };
  };
  try {
    await bindRelations(conn, task, created);
    const cols = task.columns.map((c) => quoteIdent(c.name)).join(', ');
    const fieldIds = `{${task.columns.map((c) => `${sqlString(c.name)}: ${c.fieldIdsSpec}`).join(', ')}}`;
    const casts = task.columns.map((c) => `CAST(q.${quoteIdent(c.name)} AS ${c.duckdbType}) AS ${quoteIdent(c.name)}`).join(', ');
    if (task.partitionFields.length === 0) {
      // Unpartitioned: one file, written straight from the query (staging the rows in temp tables
      // first cost two more passes over them: COPY INTO and CTAS of big tables).
      const path = `${task.dataDirectory.replace(/\/$/, '')}/${task.fileNamePrefix}-00001.parquet`;
      const fileOrder = task.orderBy === undefined || task.orderBy.length === 0 ? '' : ` ORDER BY ${task.orderBy.map(quoteIdent).join(', ')}`;
      try {
        await drive(conn, `COPY (SELECT ${casts} FROM (${task.sql}) AS q(${cols})${fileOrder}) TO ${sqlString(path)} (FORMAT parquet, FIELD_IDS ${fieldIds})`, task, undefined, false, memory);
      } catch (e) {
        removeLocalFile(path);
        throw e;
      }
      const file = await writtenFile(conn, path, []);
      if (file.recordCount === 0) {
        removeLocalFile(path);
        return { ok: true, kind: 'written', files: [], metrics: metrics() };
      }
      rows = file.recordCount;
      return { ok: true, kind: 'written', files: [file], metrics: metrics() };
    }
    await drive(conn, `CREATE TEMP TABLE __floe_stage AS SELECT ${casts} FROM (${task.sql}) AS q(${cols})`, task, undefined, false, memory);
    const exprs: string[] = [];
    const joins: string[] = [];
    for (const [i, pf] of task.partitionFields.entries()) {
      if (pf.transform.kind !== 'bucket') {
        exprs.push(`${transformSql(pf.column, pf.transform, pf.sourceType)} AS __floe_p${i}`);
        continue;
      }
      // Bucket: murmur3 of each distinct value, computed with the catalog's transform.
      await conn.run(`CREATE TEMP TABLE __floe_d${i} AS SELECT row_number() OVER () AS k, v FROM (SELECT DISTINCT ${quoteIdent(pf.column)} AS v FROM __floe_stage WHERE ${quoteIdent(pf.column)} IS NOT NULL)`);
      await conn.run(`CREATE TEMP TABLE __floe_b${i} (k BIGINT, b INTEGER)`);
      const distinct = (await conn.runAndReadAll(`SELECT k, v FROM __floe_d${i}`)).getRows();
      for (let at = 0; at < distinct.length; at += 2000) {
        const values = distinct.slice(at, at + 2000).map(([k, v]) => `(${String(k)}, ${String(applyTransform(pf.transform, pf.sourceType, icebergValueOf(v ?? null)))})`);
        await conn.run(`INSERT INTO __floe_b${i} VALUES ${values.join(', ')}`);
      }
      joins.push(`LEFT JOIN (SELECT d.v, b.b FROM __floe_d${i} d JOIN __floe_b${i} b USING (k)) AS __floe_j${i} ON s.${quoteIdent(pf.column)} = __floe_j${i}.v`);
      exprs.push(`__floe_j${i}.b AS __floe_p${i}`);
    }
    const order = task.partitionFields.map((_, i) => `__floe_p${i}`).join(', ');
    await drive(
      conn,
      order === ''
        ? `CREATE TEMP TABLE __floe_write AS SELECT *, 1 AS __floe_part FROM __floe_stage`
        : `CREATE TEMP TABLE __floe_write AS SELECT *, dense_rank() OVER (ORDER BY ${order}) AS __floe_part FROM (SELECT s.*, ${exprs.join(', ')} FROM __floe_stage s ${joins.join(' ')})`,
      task, undefined, false, memory,
    );
    const tuples = (await conn.runAndReadAll(`SELECT DISTINCT __floe_part${order === '' ? '' : `, ${order}`} FROM __floe_write ORDER BY 1`)).getRows();
    const files: WrittenFile[] = [];
    for (const tuple of tuples) {
      const n = Number(tuple[0]);
      const path = `${task.dataDirectory.replace(/\/$/, '')}/${task.fileNamePrefix}-${String(n).padStart(5, '0')}.parquet`;
      const fileOrder = task.orderBy === undefined || task.orderBy.length === 0 ? '' : ` ORDER BY ${task.orderBy.map(quoteIdent).join(', ')}`;
      await drive(conn, `COPY (SELECT ${cols} FROM __floe_write WHERE __floe_part = ${n}${fileOrder}) TO ${sqlString(path)} (FORMAT parquet, FIELD_IDS ${fieldIds})`, task, undefined, false, memory);
      const file = await writtenFile(conn, path, tuple.slice(1).map(toWire));
      rows += file.recordCount;
      files.push(file);
    }
    return { ok: true, kind: 'written', files, metrics: metrics() };
  } catch (e) {
    return { ok: false, error: toWireError(e, task), metrics: metrics() };
  } finally {
    try {
      const temps = (await conn.runAndReadAll(`SELECT table_name FROM duckdb_tables() WHERE temporary AND starts_with(table_name, '__floe_')`)).getRowsJS();
      for (const [name] of temps) await conn.run(`DROP TABLE IF EXISTS ${quoteIdent(String(name))}`);
    } catch {
      // The connection is closed next anyway.
    }
    task.memoryReports?.close();
    await cleanUp(conn, created);
  }
}

function toWireError(e: unknown, task: { readonly timeoutMs: number | undefined }): { code: string; params: unknown } {
  let err: FloeError;
  if (e instanceof Interrupted) err = interruptedError(task, e.reason === INTERRUPT_CANCEL ? INTERRUPT_CANCEL : INTERRUPT_TIMEOUT);
  else if (isFloeError(e)) err = e;
  else err = mapDuckDBError(e);
  return { code: err.code, params: err.params };
}

/** The piscina entry point. */
export default async function handle(task: WorkerTask): Promise<WorkerReply> {
  switch (task.kind) {
    case 'fragment':
      return runFragment(task);
    case 'write':
      return runWrite(task);
    default: {
      const never: never = task;
      throw new Error(`unknown task ${String(never)}`);
    }
  }
}
