/**
 * Prometheus metrics of workload management, registered on the registry passed in (the server's
 * own, never the global one). Gauges, and the per-group admitted and rejected counters (which the
 * group tree counts anyway), are read at scrape time from the same row provider as
 * `SHOW RESOURCE GROUPS`, so admission itself updates no metric; the queue-wait histogram and the
 * kill and MLFQ counters are updated on events.
 */
import { Counter, Gauge, type Registry } from 'prom-client';
import { CountingHistogram } from '../metrics.js';
import type { MlfqStats } from './mlfq.js';
import type { ResourceGroupRow } from './resource-groups.js';
import type { KillReason } from './killer.js';

/** What the gauges read at scrape time. */
export interface WorkloadMetricsSource {
  resourceGroupRows(): readonly ResourceGroupRow[];
  mlfqStats(): MlfqStats;
}

export interface WorkloadMetrics {
  readonly queueWait: CountingHistogram<'group'>;
  readonly killed: Counter<'reason'>;
  readonly levelCpu: Counter<'level'>;
  readonly levelSelected: Counter<'level'>;
  /** Points the scrape-time gauges at a manager (set once the manager exists). */
  attach(source: WorkloadMetricsSource): void;
}

/** Creates and registers the workload metrics on `registry`. */
export function createWorkloadMetrics(registry: Registry): WorkloadMetrics {
  let source: WorkloadMetricsSource | null = null;
  const registers = [registry];
  const groupGauge = (name: string, help: string, pick: (r: ResourceGroupRow) => number): void => {
    new Gauge({
      name, help, labelNames: ['group'], registers,
      collect() {
        this.reset();
        for (const r of source?.resourceGroupRows() ?? []) this.set({ group: r.path }, pick(r));
      },
    });
  };
  groupGauge('floe_wlm_group_running_queries', 'Queries running in the resource group and its subgroups', (r) => r.running);
  groupGauge('floe_wlm_group_queued_queries', 'Queries queued in the resource group and its subgroups', (r) => r.queued);
  groupGauge('floe_wlm_group_effective_concurrency_limit', 'Concurrency the group may use now (hard limit after the CPU penalty)', (r) => r.effectiveConcurrencyLimit);
  groupGauge('floe_wlm_group_cpu_seconds', 'CPU time ever charged to the group and its subgroups, seconds', (r) => r.cumulativeCpuMs / 1000);
  groupGauge('floe_wlm_group_memory_bytes', 'Memory reported by running queries of the group and its subgroups', (r) => r.memoryBytes);
  // Counters of the group itself (not its subgroups), kept by the tree: they survive a reload for
  // the paths that survive it.
  const groupCounter = (name: string, help: string, pick: (r: ResourceGroupRow) => number): void => {
    new Counter({
      name, help, labelNames: ['group'], registers,
      collect() {
        this.reset();
        for (const r of source?.resourceGroupRows() ?? []) this.inc({ group: r.path }, pick(r));
      },
    });
  };
  groupCounter('floe_wlm_group_admitted_total', 'Queries that started running in the resource group', (r) => r.admitted);
  groupCounter('floe_wlm_group_rejected_total', 'Submissions refused because a queue on the group path was full', (r) => r.rejected);

  const levelGauge = (name: string, help: string, pick: (s: MlfqStats) => readonly number[]): void => {
    new Gauge({
      name, help, labelNames: ['level'], registers,
      collect() {
        if (!source) return;
        pick(source.mlfqStats()).forEach((v, level) => this.set({ level: String(level) }, v));
      },
    });
  };
  levelGauge('floe_mlfq_level_queue_depth', 'Fragment quanta waiting at each MLFQ level', (s) => s.levelQueueDepths);
  new Gauge({
    name: 'floe_mlfq_running_quanta', help: 'Fragment quanta running on the workers', registers,
    collect() {
      if (source) this.set(source.mlfqStats().running);
    },
  });
  new Gauge({
    name: 'floe_mlfq_tracked_queries', help: 'Queries the MLFQ tracks (admitted and not yet released)', registers,
    collect() {
      if (source) this.set(source.mlfqStats().trackedQueries);
    },
  });

  return {
    queueWait: new CountingHistogram({
      name: 'floe_wlm_queue_wait_seconds', help: 'Time from submission to start (0 for queries that started at once)', labelNames: ['group'], registers,
      buckets: [0.001, 0.005, 0.01, 0.05, 0.1, 0.5, 1, 5, 10, 30, 60, 300],
    }),
    killed: new Counter({ name: 'floe_wlm_queries_killed_total', help: 'Queries cancelled by the query killer or the user, by reason', labelNames: ['reason'], registers }),
    levelCpu: new Counter({ name: 'floe_mlfq_level_cpu_seconds_total', help: 'CPU time run at each MLFQ level', labelNames: ['level'], registers }),
    levelSelected: new Counter({ name: 'floe_mlfq_level_selected_total', help: 'Quanta dispatched from each MLFQ level', labelNames: ['level'], registers }),
    attach(s) {
      source = s;
    },
  };
}

/** The label of a kill reason (kept in one place for the docs). */
export const KILL_REASONS: readonly KillReason[] = ['timeout', 'memory', 'user', 'shutdown'];
