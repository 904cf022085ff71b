/**
 * The messages between the executor (main thread) and its piscina workers. Everything here is
 * structured-clonable: plain objects, bigints, Maps, typed arrays, and one SharedArrayBuffer per
 * query for interrupts.
 */
import type { Transform } from '../../catalog/iceberg/transforms.js';
import type { PrimitiveType } from '../../catalog/iceberg/types.js';
import type { TableScanInput } from '../fragments.js';
import type { MessagePort } from 'node:worker_threads';
import type { WireValue } from './values.js';

/** What a worker's DuckDB instance is configured with, once, at start. */
export interface WorkerConfig {
  /** DuckDB `threads` of the worker's instance. */
  readonly threads: number;
  /** Default `memory_limit` in bytes (a query may ask for less or more per fragment). */
  readonly memoryLimitBytes: number;
  /** The worker's own spill folder (`temp_directory`). */
  readonly tempDirectory: string;
  /** `max_temp_directory_size` in bytes. */
  readonly maxTempDirectoryBytes: number;
  /** Folders the instance may read and write: the warehouse folder(s) and the executor's spill root. */
  readonly allowedDirectories: readonly string[];
  /** Shared lock serializing instance creation across the pool's workers (CPU accounting). */
  readonly creationLock: Int32Array;
  /**
   * OS nice value of the thread and its instance's background threads (Linux; elsewhere ignored):
   * 0 for the foreground lane, `backgroundNiceness` for the background lane.
   */
  readonly niceness: number;
}

/** Values of the interrupt cell (`Int32Array` over a SharedArrayBuffer, index 0). */
export const INTERRUPT_NONE = 0;
export const INTERRUPT_CANCEL = 1;
export const INTERRUPT_TIMEOUT = 2;

/**
 * Time slicing of one fragment (`ExecuteOptions.schedule`): the worker runs the fragment for about
 * `quantumMs` of its thread's CPU, then, at a DuckDB task boundary, posts `{kind: 'yield', cpuMs}` on
 * `port` and parks (the pending result kept) until the executor posts `{kind: 'resume', quantumMs}`.
 * It parks only while fewer than `maxParked` fragments of the pool are parked (`parked[0]`, shared by
 * all tasks of the executor): the pool has that many threads beyond its workers, so a granted quantum
 * always finds a thread. Otherwise it runs on (one longer quantum: correct, just coarser).
 */
export interface FragmentSlicing {
  readonly port: MessagePort;
  readonly quantumMs: number;
  readonly parked: Int32Array;
  readonly maxParked: number;
}

/** Executor → worker while slicing. */
export type SliceCommand = { readonly kind: 'resume'; readonly quantumMs: number } | { readonly kind: 'wake' };
/** Worker → executor while slicing: a quantum ended and the fragment parked. */
export interface SliceYield {
  readonly kind: 'yield';
  readonly cpuMs: number;
}

/**
 * Worker → executor, on `memoryReports`: the memory DuckDB holds for the task (bytes), sampled every
 * `MEMORY_SAMPLE_MS` while it runs and posted when it changed. The worker's instance runs this task
 * alone, so its buffer pool's usage (`duckdb_memory()`) is the task's.
 */
export interface MemorySample {
  readonly kind: 'memory';
  readonly bytes: number;
}

/** How often a running task's memory is sampled (ms): a task shorter than this is never sampled. */
export const MEMORY_SAMPLE_MS = 100;

/** An input of a fragment: an earlier fragment's result, stored as a DuckDB database file (table `r`). */
export interface FragmentInputFile {
  readonly relation: string;
  readonly path: string;
}

/** Where a fragment's result goes. */
export type FragmentOutput =
  /** Into a DuckDB database file in the query's spill folder (table `r`), for later fragments. */
  | { readonly kind: 'spill'; readonly path: string }
  /** Back to the caller as wire rows; `maxRows` is the result-size limit (exceeding it is an error). */
  | { readonly kind: 'rows'; readonly maxRows: number | undefined };

/** Run one fragment of a plan. */
export interface FragmentTask {
  readonly kind: 'fragment';
  readonly queryId: string;
  readonly fragmentId: number;
  readonly sql: string;
  readonly scans: readonly TableScanInput[];
  /** System-table rows the fragment reads, each a query bound as a view under its relation name. */
  readonly systemScans?: readonly { readonly relation: string; readonly sql?: string }[];
  readonly inputs: readonly FragmentInputFile[];
  readonly output: FragmentOutput;
  /** Per-fragment memory limit in bytes (the instance's `memory_limit` is set for the fragment). */
  readonly memoryLimitBytes: number | undefined;
  /** Wall-clock deadline (ms since epoch), the query's timeout; the worker interrupts itself past it. */
  readonly deadlineMs: number | undefined;
  readonly timeoutMs: number | undefined;
  /** Shared interrupt cell, set by the executor on cancel or timeout. */
  readonly interrupt: Int32Array;
  /** Present when the fragment is time-sliced. */
  readonly slicing?: FragmentSlicing;
  /** Where `MemorySample`s go (for a sliced fragment, its slicing port); none: not sampled. */
  readonly memoryReports?: MessagePort;
}

/** A write: run `sql` over the scans and write its rows as Parquet files with Iceberg field ids. */
export interface WriteTask {
  readonly kind: 'write';
  readonly queryId: string;
  readonly sql: string;
  readonly scans: readonly TableScanInput[];
  /** System-table rows the write's query reads (as for fragments). */
  readonly systemScans?: readonly { readonly relation: string; readonly sql?: string }[];
  readonly inputs: readonly FragmentInputFile[];
  /** Output columns in order with their field ids (`FIELD_IDS` of the COPY) and DuckDB types. */
  readonly columns: readonly { readonly name: string; readonly fieldId: number; readonly duckdbType: string; readonly fieldIdsSpec: string }[];
  /** The partition spec's fields over the output columns (in spec order); empty = unpartitioned. */
  readonly partitionFields: readonly { readonly column: string; readonly transform: Transform; readonly sourceType: PrimitiveType }[];
  /** Columns each file is sorted by (position delete files are sorted by file and position). */
  readonly orderBy?: readonly string[];
  /** Folder (local path) the data files go to: `<dataDirectory>/<fileNamePrefix>-<n>.parquet`, one per partition tuple. */
  readonly dataDirectory: string;
  readonly fileNamePrefix: string;
  /**
   * The table's data location when it is on object storage: the worker writes into a local staging
   * folder (`dataDirectory`, picked by the executor) and each file is uploaded under this location
   * before the write returns (`localizing-executor.ts`).
   */
  readonly uploadLocation?: string;
  /** The catalog of the table written (whose storage receives an upload). */
  readonly targetCatalog?: string;
  readonly memoryLimitBytes: number | undefined;
  readonly deadlineMs: number | undefined;
  readonly timeoutMs: number | undefined;
  readonly interrupt: Int32Array;
  /** Where `MemorySample`s go; none: not sampled. */
  readonly memoryReports?: MessagePort;
}

export type WorkerTask = FragmentTask | WriteTask;

/** Metrics of one fragment run. */
export interface FragmentMetrics {
  readonly fragmentId: number;
  readonly rows: number;
  /** CPU time of the worker thread that drove the fragment (ms). */
  readonly cpuMs: number;
  readonly wallMs: number;
}

/** A written Parquet file, with what the manifest needs (stats raw from `parquet_metadata`). */
export interface WrittenFile {
  readonly path: string;
  /** The partition tuple as DuckDB values turned into wire form (decoded by the caller per transform). */
  readonly partition: readonly WireValue[];
  readonly recordCount: number;
  readonly fileSizeInBytes: number;
  readonly columns: readonly {
    /** `path_in_schema` of the column chunk (a top-level column's name), one entry per row group. */
    readonly name: string;
    readonly valueCount: number;
    readonly nullCount: number | null;
    readonly compressedSize: number;
    readonly min: string | null;
    readonly max: string | null;
  }[];
}

/** A serialized registry error (FloeError does not survive structured cloning as a class). */
export interface WireError {
  readonly code: string;
  readonly params: unknown;
}

export type WorkerReply =
  | { readonly ok: true; readonly kind: 'rows'; readonly columns: readonly string[]; readonly types: readonly string[]; readonly rows: readonly (readonly WireValue[])[]; readonly metrics: FragmentMetrics }
  | { readonly ok: true; readonly kind: 'spilled'; readonly metrics: FragmentMetrics }
  | { readonly ok: true; readonly kind: 'written'; readonly files: readonly WrittenFile[]; readonly metrics: FragmentMetrics }
  | { readonly ok: false; readonly error: WireError; readonly metrics: FragmentMetrics };
