/**
 * The executor's public surface: start a pool of DuckDB workers, run fragment plans and writes on it.
 * See docs/engine-exec.md.
 */
export { createExecutor, defaultSpillDirectory, DEFAULT_ABORT_GRACE_MS } from './executor.js';
export type { ExecuteOptions, Executor, ExecutorOptions, ExecutorQuantum, ExecutorQuantumResult, FragmentScheduler, QueryMetrics, QueryResult, WriteRequest, WriteResult } from './executor.js';
export type { FragmentMetrics, WrittenFile } from './protocol.js';
export { toArrowIpc } from './arrow.js';
export { mapDuckDBError } from './errors.js';
export { toWire, wireInteger } from './values.js';
export type { WireValue } from './values.js';
