/**
 * Workload classification (service spec, Limits): a query is interactive, medium or batch by its
 * plan shape and estimated size, and each class carries a default priority, timeout and memory cap.
 *
 * | class       | criteria (first match from the top)                                              |
 * |-------------|-----------------------------------------------------------------------------------|
 * | batch       | ≥ 3 joins, or window functions together with aggregates, or > 10M estimated rows  |
 * | medium      | 1-2 joins, or a window function, or ≥ 3 scans, or 100K-10M estimated rows         |
 * | interactive | everything else: no joins, no windows, < 3 scans, < 100K estimated rows          |
 *
 * Defaults: interactive High / 30 s / 1 GB; medium Normal / 3 min / 4 GB; batch Low / 10 min / 8 GB.
 * The operator's settings replace any default per class; `SET svc.workload_class` wins over the
 * automatic class (the class's limits still come from the operator's settings).
 */
import type { PlanFeatures, WorkloadClass } from '../../grammar/index.js';
import { unreachable } from '../../grammar/index.js';

export type PriorityLevel = 'low' | 'normal' | 'high' | 'critical';

/**
 * History's integer `priority` per level ("higher means more important"), the same integers as the
 * workload manager's `PRIORITY` (engine/wlm/config.ts); `critical` is above High for the operator.
 */
export const PRIORITY_VALUES: Readonly<Record<PriorityLevel, number>> = { low: 1, normal: 2, high: 3, critical: 4 };

/** The level of an integer priority: the highest level whose value does not exceed it. */
export function priorityLevel(value: number): PriorityLevel {
  let best: PriorityLevel = 'low';
  for (const [name, v] of Object.entries(PRIORITY_VALUES) as [PriorityLevel, number][]) if (v <= value && v >= PRIORITY_VALUES[best]) best = name;
  return best;
}

/** Estimated rows at which a query stops being interactive (spec: "under 100K"). */
export const INTERACTIVE_MAX_ROWS_EXCLUSIVE = 100_000;
/** Estimated rows above which a query is batch (spec: "over 10M"). */
export const MEDIUM_MAX_ROWS_INCLUSIVE = 10_000_000;

const GIB = 1024 ** 3;

export interface WorkloadClassLimits {
  readonly priority: PriorityLevel;
  readonly timeoutMs: number;
  readonly memoryCapBytes: number;
}

/** The spec's defaults per class. */
export const DEFAULT_CLASS_LIMITS: Readonly<Record<WorkloadClass, WorkloadClassLimits>> = {
  interactive: { priority: 'high', timeoutMs: 30_000, memoryCapBytes: 1 * GIB },
  medium: { priority: 'normal', timeoutMs: 180_000, memoryCapBytes: 4 * GIB },
  batch: { priority: 'low', timeoutMs: 600_000, memoryCapBytes: 8 * GIB },
};

/**
 * The operator's setting for one class; any field left out keeps the default. `priority` is a level
 * name or its integer, so the workload manager's resolved class limits can be passed as they are.
 */
export interface ClassLimitsOverride {
  readonly priority?: PriorityLevel | number;
  readonly timeoutMs?: number;
  readonly memoryCapBytes?: number;
}

/** What may override the automatic result. */
export interface ClassificationOverrides {
  /** The operator's per-class settings. */
  readonly classes?: Partial<Record<WorkloadClass, ClassLimitsOverride>>;
  /** `SET svc.workload_class = …` of the session: replaces the automatic class. */
  readonly session?: WorkloadClass;
}

export interface WorkloadClassification extends WorkloadClassLimits {
  readonly workloadClass: WorkloadClass;
  /** The integer history and the workload manager use (`PRIORITY_VALUES[priority]` unless the operator gave an integer). */
  readonly priorityValue: number;
  /** The class the plan alone gives (equal to `workloadClass` unless the session overrode it). */
  readonly automaticClass: WorkloadClass;
  readonly source: 'automatic' | 'session';
  /** Why the automatic class was chosen, for EXPLAIN and logs. */
  readonly reason: string;
}

/** The automatic class of a plan and the first criterion that decided it. */
export function automaticClass(features: PlanFeatures, estimatedRows: number): { readonly workloadClass: WorkloadClass; readonly reason: string } {
  const rows = Number.isFinite(estimatedRows) && estimatedRows > 0 ? estimatedRows : 0;
  if (features.joins >= 3) return { workloadClass: 'batch', reason: `${features.joins} joins (3 or more)` };
  if (features.windowFunctions > 0 && features.aggregates > 0) return { workloadClass: 'batch', reason: 'window functions with aggregates' };
  if (rows > MEDIUM_MAX_ROWS_INCLUSIVE) return { workloadClass: 'batch', reason: `${rows} estimated rows (over 10M)` };
  if (features.joins > 0) return { workloadClass: 'medium', reason: `${features.joins} join${features.joins === 1 ? '' : 's'}` };
  if (features.windowFunctions > 0) return { workloadClass: 'medium', reason: 'window function' };
  if (features.scans >= 3) return { workloadClass: 'medium', reason: `${features.scans} scans (3 or more)` };
  if (rows >= INTERACTIVE_MAX_ROWS_EXCLUSIVE) return { workloadClass: 'medium', reason: `${rows} estimated rows (100K to 10M)` };
  return { workloadClass: 'interactive', reason: 'no joins or windows, few scans, under 100K estimated rows' };
}

/** The limits of a class after the operator's settings, with the integer priority. */
export function classLimits(workloadClass: WorkloadClass, overrides: ClassificationOverrides = {}): WorkloadClassLimits & { readonly priorityValue: number } {
  const base = DEFAULT_CLASS_LIMITS[workloadClass];
  const op = overrides.classes?.[workloadClass] ?? {};
  const p = op.priority ?? base.priority;
  return {
    priority: typeof p === 'number' ? priorityLevel(p) : p,
    priorityValue: typeof p === 'number' ? p : PRIORITY_VALUES[p],
    timeoutMs: op.timeoutMs ?? base.timeoutMs,
    memoryCapBytes: op.memoryCapBytes ?? base.memoryCapBytes,
  };
}

/**
 * Classifies a query from its plan features and the rows its scans are estimated to read (summed
 * over scans), applying the operator's per-class settings and the session override.
 */
export function classifyWorkload(features: PlanFeatures, estimatedRows: number, overrides: ClassificationOverrides = {}): WorkloadClassification {
  const auto = automaticClass(features, estimatedRows);
  const workloadClass = overrides.session ?? auto.workloadClass;
  switch (workloadClass) {
    case 'interactive': case 'medium': case 'batch': break;
    default: return unreachable(workloadClass);
  }
  const limits = classLimits(workloadClass, overrides);
  return {
    ...limits,
    workloadClass,
    automaticClass: auto.workloadClass,
    source: overrides.session === undefined ? 'automatic' : 'session',
    reason: overrides.session === undefined ? auto.reason : `session override (SET svc.workload_class = '${overrides.session}')`,
  };
}
