/** Workload management: the public surface other contexts import (see README.md beside this file). */
export * from './config.js';
export * from './routing.js';
export * from './clock.js';
export * from './killer.js';
export { WorkloadManager, type AdmissionRequest, type AdmissionTicket, type AdmitOptions, type QueryLease, type WorkloadManagerOptions } from './manager.js';
export {
  computeLevel, levelFor, LEVEL_THRESHOLD_SECONDS, LEVEL_TIME_MULTIPLIER, LEVEL_CONTRIBUTION_CAP_NANOS, HIGH_PRIORITY,
  MultilevelQueue, MlfqDispatcher, type FragmentQuantum, type FragmentRunner, type QuantumResult, type MlfqStats,
} from './mlfq.js';
export { type ResourceGroupRow } from './resource-groups.js';
export { createWorkloadMetrics, type WorkloadMetrics } from './metrics.js';
export * from './stats.js';
