/** Workload management: the public surface other contexts import (see README.md beside this file). */
export * from './config.js';
export * from './routing.js';
export * from './clock.js';
export * from './killer.js';
export { CancellationSource, type Cancellation } from './cancellation.js';
export { WorkloadManager, type AdmissionRequest, type AdmissionTicket, type AdmitOptions, type QueryLease, type RunningQuery, type WorkloadManagerOptions } from './manager.js';
export {
  computeLevel, levelFor, LEVEL_THRESHOLD_SECONDS, LEVEL_TIME_MULTIPLIER, LEVEL_CONTRIBUTION_CAP_NANOS, HIGH_PRIORITY,
  levelShares, MultilevelQueue, MlfqDispatcher, type TakenQuantum, type FragmentQuantum, type FragmentRunner, type QuantumResult, type MlfqStats,
} from './mlfq.js';
export { type ResourceGroupRow } from './resource-groups.js';
export { createWorkloadMetrics, type WorkloadMetrics } from './metrics.js';
export * from './stats.js';

import type { Registry } from 'prom-client';
import { resolveWorkloadConfig as resolve, type WorkloadConfigSpec as Spec } from './config.js';
import { systemClock as wallClock, type WlmClock as Clock } from './clock.js';
import { WorkloadManager as Manager } from './manager.js';
import { createWorkloadMetrics as metricsOn } from './metrics.js';

/**
 * The one-line wiring for the server: the `workload` section of the operator file (already
 * validated by `loadConfig`), the server's Prometheus registry, and the wall clock unless a test
 * passes its own.
 */
export function createWorkloadManager(options: { readonly spec: Spec | undefined; readonly registry?: Registry; readonly clock?: Clock }): Manager {
  return new Manager({
    config: resolve(options.spec),
    clock: options.clock ?? wallClock(),
    ...(options.registry ? { metrics: metricsOn(options.registry) } : {}),
  });
}
