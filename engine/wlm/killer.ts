/**
 * The query killer's vocabulary: the errors a query is cancelled or rejected with, each naming the
 * limit, all from the one registry (`grammar/errors.ts`). Status codes (docs/workload.md):
 * - queue full: `QUEUE_FULL`, SQLSTATE 53300, HTTP 429 (come back later); history records the query
 *   `cancelled` with `started_at` null and this message (the spec has no `rejected` status);
 * - timeout: `QUERY_TIMEOUT`, SQLSTATE 57014, HTTP 408;
 * - memory cap that spilling could not meet, and cancellation by the user: `QUERY_CANCELLED`,
 *   SQLSTATE 57014, HTTP 409.
 */
import { floeError, type FloeError } from '../../grammar/errors.js';
import type { WorkloadClass } from './config.js';

/** Why the killer stopped a query (metrics label and history reason). */
export type KillReason = 'timeout' | 'memory' | 'user' | 'shutdown';

/**
 * `resource group /root/a queue is full (max_queued_queries = 10)`. Made without a stack trace: a
 * full queue is an answer, not a bug, and capturing the (async) stack cost about 0.1 ms, a good part
 * of a rejection's time in the server.
 */
export function queueFullError(groupDisplayPath: string, maxQueued: number): FloeError<'QUEUE_FULL'> {
  const limit = Error.stackTraceLimit;
  Error.stackTraceLimit = 0;
  try {
    return floeError('QUEUE_FULL', { group: groupDisplayPath, limit: maxQueued });
  } finally {
    Error.stackTraceLimit = limit;
  }
}

/** Where the timeout that fired came from: the class's (operator) or the request's `timeout_ms`. */
export type TimeoutSource = { readonly kind: 'class'; readonly workloadClass: WorkloadClass } | { readonly kind: 'request' };

/** `query cancelled: exceeded interactive class timeout of 30000 ms` / `… exceeded request timeout_ms timeout of 500 ms`. */
export function timeoutError(limitMs: number, source: TimeoutSource): FloeError<'QUERY_TIMEOUT'> {
  return floeError('QUERY_TIMEOUT', { limitMs, source: source.kind === 'class' ? `${source.workloadClass} class` : 'request timeout_ms' });
}

/** `query cancelled: exceeded batch class memory cap of 8589934592 bytes (8 GiB); spilling to disk could not help (…)`. */
export function memoryCapError(workloadClass: WorkloadClass, capBytes: number, detail?: string): FloeError<'QUERY_CANCELLED'> {
  const reason = `exceeded ${workloadClass} class memory cap of ${capBytes} bytes (${formatBytes(capBytes)}); spilling to disk could not help${detail ? ` (${detail})` : ''}`;
  return floeError('QUERY_CANCELLED', { reason });
}

/** The server stopping with the query still queued or running, past its shutdown grace period. */
export function shutdownError(): FloeError<'SERVER_SHUTDOWN'> {
  return floeError('SERVER_SHUTDOWN');
}

/** `query cancelled: cancelled by the user`. */
export function userCancelError(reason = 'cancelled by the user'): FloeError<'QUERY_CANCELLED'> {
  return floeError('QUERY_CANCELLED', { reason });
}

/**
 * Whether an executor error is DuckDB running out of memory after spilling (its `memory_limit`
 * reached and the temp directory could not take more, or the operator is not spillable).
 */
export function isOutOfMemoryError(e: unknown): boolean {
  const message = e instanceof Error ? e.message : typeof e === 'string' ? e : '';
  return /out of memory/i.test(message) || (/could not allocate/i.test(message) && /memory/i.test(message));
}

export function formatBytes(bytes: number): string {
  const units = ['bytes', 'KiB', 'MiB', 'GiB', 'TiB'];
  let v = bytes;
  let u = 0;
  while (v >= 1024 && u < units.length - 1 && Number.isInteger(v / 1024)) {
    v /= 1024;
    u++;
  }
  return `${v} ${units[u]}`;
}
