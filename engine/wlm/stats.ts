/**
 * Visibility: one provider (`WorkloadManager.resourceGroupRows()` and `.mlfqStats()`), three
 * shapes. `SHOW RESOURCE GROUPS` and `system.resource_groups` read the same rows in SQL's
 * snake_case; `GET /api/qos/stats` answers exactly the spec's QoS statistics object.
 */
import type { MlfqStats } from './mlfq.js';
import type { ResourceGroupRow } from './resource-groups.js';

/** What the visibility functions read; `WorkloadManager` is one. */
export interface WorkloadStatsSource {
  resourceGroupRows(): readonly ResourceGroupRow[];
  mlfqStats(): MlfqStats;
}

/** The spec's `GET /api/qos/stats` response (its table's names, as given there). */
export interface QosStats {
  readonly resource_groups: readonly {
    readonly path: string;
    readonly running: number;
    readonly queued: number;
    readonly hard_concurrency_limit: number;
    readonly scheduling_policy: string;
  }[];
  readonly mlfq: {
    readonly running: number;
    readonly max_concurrent: number;
    readonly level_queue_depths: readonly number[];
    readonly level_scheduled_ms: readonly number[];
    readonly tracked_queries: number;
  };
}

export function qosStats(source: WorkloadStatsSource): QosStats {
  const m = source.mlfqStats();
  return {
    resource_groups: source.resourceGroupRows().map((r) => ({
      path: r.path, running: r.running, queued: r.queued, hard_concurrency_limit: r.hardConcurrencyLimit, scheduling_policy: r.schedulingPolicy,
    })),
    mlfq: {
      running: m.running,
      max_concurrent: m.maxConcurrent,
      level_queue_depths: [...m.levelQueueDepths],
      level_scheduled_ms: [...m.levelScheduledMs],
      tracked_queries: m.trackedQueries,
    },
  };
}

/** Column types in the engine's SQL vocabulary (DuckDB names). */
export type ResourceGroupColumnType = 'VARCHAR' | 'BIGINT' | 'DOUBLE';

/** The columns of `SHOW RESOURCE GROUPS`, in order (the spec's list). */
export const SHOW_RESOURCE_GROUPS_COLUMNS: readonly { readonly name: string; readonly type: ResourceGroupColumnType }[] = [
  { name: 'path', type: 'VARCHAR' },
  { name: 'running', type: 'BIGINT' },
  { name: 'queued', type: 'BIGINT' },
  { name: 'hard_concurrency_limit', type: 'BIGINT' },
  { name: 'soft_concurrency_limit', type: 'BIGINT' },
  { name: 'scheduling_policy', type: 'VARCHAR' },
  { name: 'cumulative_cpu_ms', type: 'BIGINT' },
];

/** The columns of `system.resource_groups`: the SHOW columns, then everything else the row knows. */
export const SYSTEM_RESOURCE_GROUPS_COLUMNS: readonly { readonly name: string; readonly type: ResourceGroupColumnType }[] = [
  ...SHOW_RESOURCE_GROUPS_COLUMNS,
  { name: 'effective_concurrency_limit', type: 'BIGINT' },
  { name: 'max_queued_queries', type: 'BIGINT' },
  { name: 'scheduling_weight', type: 'BIGINT' },
  { name: 'soft_memory_limit_bytes', type: 'BIGINT' },
  { name: 'soft_cpu_limit_ms', type: 'BIGINT' },
  { name: 'hard_cpu_limit_ms', type: 'BIGINT' },
  { name: 'memory_bytes', type: 'BIGINT' },
  { name: 'cpu_usage_ms', type: 'BIGINT' },
  { name: 'admitted', type: 'BIGINT' },
  { name: 'rejected', type: 'BIGINT' },
];

export type ResourceGroupSqlRow = Readonly<Record<string, string | number | null>>;

/** `system.resource_groups` rows (snake_case keys, SYSTEM_RESOURCE_GROUPS_COLUMNS order). */
export function systemResourceGroupRows(source: WorkloadStatsSource): ResourceGroupSqlRow[] {
  return source.resourceGroupRows().map((r) => ({
    path: r.path,
    running: r.running,
    queued: r.queued,
    hard_concurrency_limit: r.hardConcurrencyLimit,
    soft_concurrency_limit: r.softConcurrencyLimit,
    scheduling_policy: r.schedulingPolicy,
    cumulative_cpu_ms: r.cumulativeCpuMs,
    effective_concurrency_limit: r.effectiveConcurrencyLimit,
    max_queued_queries: r.maxQueuedQueries,
    scheduling_weight: r.schedulingWeight,
    soft_memory_limit_bytes: r.softMemoryLimitBytes,
    soft_cpu_limit_ms: r.softCpuLimitMs,
    hard_cpu_limit_ms: r.hardCpuLimitMs,
    memory_bytes: r.memoryBytes,
    cpu_usage_ms: r.cpuUsageMs,
    admitted: r.admitted,
    rejected: r.rejected,
  }));
}

/** `SHOW RESOURCE GROUPS` rows: the same provider, the spec's columns only. */
export function showResourceGroupRows(source: WorkloadStatsSource): ResourceGroupSqlRow[] {
  return systemResourceGroupRows(source).map((row) => Object.fromEntries(SHOW_RESOURCE_GROUPS_COLUMNS.map((c) => [c.name, row[c.name] ?? null])));
}
