/**
 * The operator's workload configuration: the resource-group tree, routing rules, per-class limits
 * and the MLFQ settings. Two layers, like the rest of `server/config.ts`:
 *
 * - `WORKLOAD_CONFIG_SCHEMA`: the JSON Schema of the `workload` section (shapes, types, ranges,
 *   unknown keys refused), plugged into the server's one schema so Ajv names the bad key;
 * - `resolveWorkloadConfig`: the rules a schema cannot say (unique sibling names, routing targets
 *   that exist, soft ≤ hard), then every default filled in, giving the `ResolvedWorkloadConfig` the
 *   rest of `engine/wlm/` reads. Errors name the key as the operator wrote it, e.g.
 *   `workload.resource_groups.root.subgroups[1].hard_concurrency_limit must be ≥ 1`.
 *
 * Keys are snake_case like the service spec's Resource group table.
 */
import { LEVEL_THRESHOLD_SECONDS } from './mlfq.js';

/** The three dequeue policies of the spec's table. */
export type SchedulingPolicy = 'fair' | 'weighted' | 'query_priority';
export const SCHEDULING_POLICIES: readonly SchedulingPolicy[] = ['fair', 'weighted', 'query_priority'];

/** The workload classes the planner assigns (`classifyWorkload`) or `SET svc.workload_class` forces. */
export type WorkloadClass = 'interactive' | 'medium' | 'batch';
export const WORKLOAD_CLASSES: readonly WorkloadClass[] = ['interactive', 'medium', 'batch'];

/** Priority names of the operator file; the engine works with the integers of `PRIORITY`. */
export type PriorityName = 'low' | 'normal' | 'high' | 'critical';

/**
 * Query priorities as integers (history's `priority`: higher is more important). "High or above"
 * (the spec's MLFQ bypass) is `priority >= PRIORITY.high`.
 */
export const PRIORITY: Readonly<Record<PriorityName, number>> = { low: 1, normal: 2, high: 3, critical: 4 };

/** One group as the operator writes it (every property optional except a subgroup's name). */
export interface ResourceGroupSpec {
  readonly name?: string;
  readonly hard_concurrency_limit?: number;
  readonly soft_concurrency_limit?: number;
  readonly max_queued_queries?: number;
  readonly soft_memory_limit_bytes?: number | null;
  readonly soft_cpu_limit_ms?: number | null;
  readonly hard_cpu_limit_ms?: number | null;
  readonly scheduling_policy?: SchedulingPolicy;
  readonly scheduling_weight?: number;
  readonly subgroups?: readonly ResourceGroupSpec[];
}

/** One routing rule as written: every `match_*` omitted matches anything. */
export interface RoutingRuleSpec {
  readonly match_tenant?: string;
  readonly match_user?: string;
  readonly match_source?: string;
  readonly match_resource_pool?: string;
  readonly match_query_type?: string;
  /** Dotted group path, `root.a.b`. */
  readonly target_group: string;
}

export interface WorkloadClassSpec {
  readonly priority?: PriorityName;
  readonly timeout_ms?: number;
  readonly memory_cap_bytes?: number;
}

export interface MlfqSpec {
  /** Fragments running at once (the worker pool's size). */
  readonly max_concurrent?: number;
  /** Level entry thresholds in seconds of a query's cumulative scheduled CPU; five, from 0, rising. */
  readonly level_thresholds_seconds?: readonly number[];
  /** Each level gets this many times the CPU time of the next (2 gives 16:8:4:2:1). */
  readonly level_time_multiplier?: number;
  /** Most CPU one quantum may add to its level's account (a hung fragment must not starve a level). */
  readonly level_contribution_cap_ms?: number;
  /** Time slice the executor should yield after (at a DuckDB task boundary). */
  readonly quantum_ms?: number;
  /**
   * Slots beyond `max_concurrent` that only quanta of High priority or above may use: an
   * interactive fragment starts at once instead of waiting for a batch quantum to end.
   */
  readonly interactive_slots?: number;
  /**
   * OS nice value (0–19) of the worker threads that run fragments below High priority, so the
   * kernel gives the CPU to interactive fragments and the server's own thread first. 0: one lane.
   */
  readonly background_niceness?: number;
}

/** The `workload` section of the operator file. */
export interface WorkloadConfigSpec {
  readonly cpu_quota_period_ms?: number;
  readonly resource_groups?: { readonly root?: ResourceGroupSpec };
  readonly routing_rules?: readonly RoutingRuleSpec[];
  readonly classes?: Partial<Record<WorkloadClass, WorkloadClassSpec>>;
  readonly mlfq?: MlfqSpec;
}

/** A group with every default filled in. `path` is dotted (`root.a`). */
export interface ResolvedGroupConfig {
  readonly name: string;
  readonly path: string;
  readonly hardConcurrencyLimit: number;
  readonly softConcurrencyLimit: number;
  readonly maxQueuedQueries: number;
  /** null: no memory limit. */
  readonly softMemoryLimitBytes: number | null;
  /** null: no CPU limits (then `hardCpuLimitMs` is null as well). */
  readonly softCpuLimitMs: number | null;
  readonly hardCpuLimitMs: number | null;
  readonly schedulingPolicy: SchedulingPolicy;
  readonly schedulingWeight: number;
  readonly subgroups: readonly ResolvedGroupConfig[];
}

export interface ResolvedRoutingRule {
  readonly matchTenant: string | null;
  readonly matchUser: string | null;
  readonly matchSource: string | null;
  readonly matchResourcePool: string | null;
  readonly matchQueryType: string | null;
  /** Dotted path of an existing group. */
  readonly targetGroup: string;
}

export interface ClassLimits {
  readonly priority: number;
  readonly timeoutMs: number;
  readonly memoryCapBytes: number;
}

export interface ResolvedMlfqConfig {
  readonly maxConcurrent: number;
  readonly levelThresholdsSeconds: readonly number[];
  readonly levelTimeMultiplier: number;
  readonly levelContributionCapMs: number;
  readonly quantumMs: number;
  readonly interactiveSlots: number;
  readonly backgroundNiceness: number;
}

export interface ResolvedWorkloadConfig {
  readonly cpuQuotaPeriodMs: number;
  readonly root: ResolvedGroupConfig;
  readonly routingRules: readonly ResolvedRoutingRule[];
  readonly classes: Readonly<Record<WorkloadClass, ClassLimits>>;
  readonly mlfq: ResolvedMlfqConfig;
}

const GiB = 1024 ** 3;

/** The spec's Resource group defaults (Limits table). */
export const GROUP_DEFAULTS = {
  hard_concurrency_limit: 100,
  soft_concurrency_limit: 100,
  max_queued_queries: 1000,
  scheduling_policy: 'fair' as SchedulingPolicy,
  scheduling_weight: 1,
} as const;

/** The spec's workload-class defaults: High/Normal/Low, 30 s/3 min/10 min, 1/4/8 GB. */
export const CLASS_DEFAULTS: Readonly<Record<WorkloadClass, Required<WorkloadClassSpec>>> = {
  interactive: { priority: 'high', timeout_ms: 30_000, memory_cap_bytes: 1 * GiB },
  medium: { priority: 'normal', timeout_ms: 180_000, memory_cap_bytes: 4 * GiB },
  batch: { priority: 'low', timeout_ms: 600_000, memory_cap_bytes: 8 * GiB },
};

export const MLFQ_DEFAULTS: Required<MlfqSpec> = {
  max_concurrent: 4,
  level_thresholds_seconds: LEVEL_THRESHOLD_SECONDS,
  level_time_multiplier: 2,
  level_contribution_cap_ms: 30_000,
  quantum_ms: 1_000,
  interactive_slots: 1,
  background_niceness: 19,
};

/**
 * Default CPU quota period: a group regenerates `hard_cpu_limit_ms` of CPU each period (Trino's
 * `cpuQuotaPeriod`). One minute suits a single node whose queries last seconds to minutes.
 */
export const DEFAULT_CPU_QUOTA_PERIOD_MS = 60_000;

/** The `workload` defaults as they appear in the server's DEFAULT_CONFIG (a root group, no rules). */
export const DEFAULT_WORKLOAD_SPEC: WorkloadConfigSpec = {
  cpu_quota_period_ms: DEFAULT_CPU_QUOTA_PERIOD_MS,
  resource_groups: { root: {} },
  routing_rules: [],
  classes: {},
  mlfq: {},
};

const positiveInt = { type: 'integer', minimum: 1 } as const;
const nonNegativeInt = { type: 'integer', minimum: 0 } as const;
const nullablePositiveInt = { anyOf: [positiveInt, { type: 'null' }] } as const;
const name = { type: 'string', minLength: 1, maxLength: 128, pattern: '^[A-Za-z0-9_-]+$' } as const;
const matchText = { type: 'string', minLength: 1, maxLength: 256 } as const;

/** JSON Schema of one group (recursive through `subgroups`, by `$ref` to the definition). */
const GROUP_SCHEMA = {
  type: 'object', additionalProperties: false,
  properties: {
    name,
    hard_concurrency_limit: positiveInt,
    soft_concurrency_limit: positiveInt,
    max_queued_queries: nonNegativeInt,
    soft_memory_limit_bytes: nullablePositiveInt,
    soft_cpu_limit_ms: nullablePositiveInt,
    hard_cpu_limit_ms: nullablePositiveInt,
    scheduling_policy: { enum: SCHEDULING_POLICIES },
    scheduling_weight: positiveInt,
    subgroups: { type: 'array', items: { $ref: '#/$defs/workloadResourceGroup' } },
  },
} as const;

const CLASS_SCHEMA = {
  type: 'object', additionalProperties: false,
  properties: {
    priority: { enum: Object.keys(PRIORITY) },
    timeout_ms: positiveInt,
    memory_cap_bytes: positiveInt,
  },
} as const;

/**
 * JSON Schema of the `workload` section. It refers to `#/$defs/workloadResourceGroup`, so the
 * including schema must carry `WORKLOAD_SCHEMA_DEFS` under its top-level `$defs`.
 */
export const WORKLOAD_CONFIG_SCHEMA = {
  type: 'object', additionalProperties: false,
  properties: {
    cpu_quota_period_ms: positiveInt,
    resource_groups: {
      type: 'object', additionalProperties: false,
      properties: { root: { $ref: '#/$defs/workloadResourceGroup' } },
    },
    routing_rules: {
      type: 'array',
      items: {
        type: 'object', additionalProperties: false, required: ['target_group'],
        properties: {
          match_tenant: matchText,
          match_user: matchText,
          match_source: matchText,
          match_resource_pool: matchText,
          match_query_type: { enum: ['select', 'insert', 'update', 'delete', 'merge', 'ddl', 'copy', 'explain', 'show', 'set', 'principal'] },
          target_group: { type: 'string', minLength: 4, pattern: '^root(\\.[A-Za-z0-9_-]+)*$' },
        },
      },
    },
    classes: {
      type: 'object', additionalProperties: false,
      properties: { interactive: CLASS_SCHEMA, medium: CLASS_SCHEMA, batch: CLASS_SCHEMA },
    },
    mlfq: {
      type: 'object', additionalProperties: false,
      properties: {
        max_concurrent: { type: 'integer', minimum: 1, maximum: 1024 },
        level_thresholds_seconds: { type: 'array', minItems: 5, maxItems: 5, items: nonNegativeInt },
        level_time_multiplier: { type: 'number', exclusiveMinimum: 1, maximum: 100 },
        level_contribution_cap_ms: positiveInt,
        quantum_ms: { type: 'integer', minimum: 1, maximum: 60_000 },
        interactive_slots: { type: 'integer', minimum: 0, maximum: 64 },
        background_niceness: { type: 'integer', minimum: 0, maximum: 19 },
      },
    },
  },
} as const;

/** Definitions the including schema puts under `$defs` (the recursive group). */
export const WORKLOAD_SCHEMA_DEFS = { workloadResourceGroup: GROUP_SCHEMA } as const;

/** A workload configuration the schema accepted but the tree rules refuse; the message names the key. */
export class WorkloadConfigError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'WorkloadConfigError';
  }
}

/**
 * Checks the rules beyond the schema and fills every default. Throws `WorkloadConfigError` listing
 * every problem, each naming its key under `prefix` (the section's place in the operator file).
 * It also re-checks the ranges the schema checks, so a caller without Ajv gets the same safety.
 */
export function resolveWorkloadConfig(spec: WorkloadConfigSpec | undefined, prefix = 'workload'): ResolvedWorkloadConfig {
  const problems: string[] = [];
  const s = spec ?? {};
  const cpuQuotaPeriodMs = s.cpu_quota_period_ms ?? DEFAULT_CPU_QUOTA_PERIOD_MS;
  if (!isInt(cpuQuotaPeriodMs) || cpuQuotaPeriodMs < 1) problems.push(`${prefix}.cpu_quota_period_ms must be an integer ≥ 1`);

  const rootSpec = s.resource_groups?.root ?? {};
  if (rootSpec.name !== undefined && rootSpec.name !== 'root') problems.push(`${prefix}.resource_groups.root.name must be "root" (or omitted)`);
  const root = resolveGroup(rootSpec, 'root', 'root', `${prefix}.resource_groups.root`, problems);

  const paths = new Set<string>();
  collectPaths(root, paths);
  const routingRules = (s.routing_rules ?? []).map((r, i) => resolveRule(r, `${prefix}.routing_rules[${i}]`, paths, problems));

  const classes = {} as Record<WorkloadClass, ClassLimits>;
  for (const c of WORKLOAD_CLASSES) {
    const given = s.classes?.[c] ?? {};
    const merged = { ...CLASS_DEFAULTS[c], ...given };
    const at = `${prefix}.classes.${c}`;
    if (!Object.hasOwn(PRIORITY, merged.priority)) problems.push(`${at}.priority must be one of ${Object.keys(PRIORITY).join(', ')}`);
    if (!isInt(merged.timeout_ms) || merged.timeout_ms < 1) problems.push(`${at}.timeout_ms must be an integer ≥ 1`);
    if (!isInt(merged.memory_cap_bytes) || merged.memory_cap_bytes < 1) problems.push(`${at}.memory_cap_bytes must be an integer ≥ 1`);
    classes[c] = { priority: PRIORITY[merged.priority] ?? PRIORITY.normal, timeoutMs: merged.timeout_ms, memoryCapBytes: merged.memory_cap_bytes };
  }
  for (const key of Object.keys(s.classes ?? {})) {
    if (!(WORKLOAD_CLASSES as readonly string[]).includes(key)) problems.push(`${prefix}.classes.${key} is not a workload class (one of ${WORKLOAD_CLASSES.join(', ')})`);
  }

  const m = { ...MLFQ_DEFAULTS, ...(s.mlfq ?? {}) };
  const mAt = `${prefix}.mlfq`;
  if (!isInt(m.max_concurrent) || m.max_concurrent < 1) problems.push(`${mAt}.max_concurrent must be an integer ≥ 1`);
  const t = m.level_thresholds_seconds;
  if (t.length !== LEVEL_THRESHOLD_SECONDS.length) problems.push(`${mAt}.level_thresholds_seconds must hold ${LEVEL_THRESHOLD_SECONDS.length} values`);
  else if (t[0] !== 0) problems.push(`${mAt}.level_thresholds_seconds[0] must be 0 (every query starts at level 0)`);
  t.forEach((v, i) => {
    if (i > 0 && !(v > t[i - 1]!)) problems.push(`${mAt}.level_thresholds_seconds[${i}] must be greater than level_thresholds_seconds[${i - 1}]`);
  });
  if (!(m.level_time_multiplier > 1)) problems.push(`${mAt}.level_time_multiplier must be > 1`);
  if (!isInt(m.level_contribution_cap_ms) || m.level_contribution_cap_ms < 1) problems.push(`${mAt}.level_contribution_cap_ms must be an integer ≥ 1`);
  if (!isInt(m.quantum_ms) || m.quantum_ms < 1) problems.push(`${mAt}.quantum_ms must be an integer ≥ 1`);
  if (!isInt(m.interactive_slots) || m.interactive_slots < 0 || m.interactive_slots > 64) problems.push(`${mAt}.interactive_slots must be an integer from 0 to 64`);
  if (!isInt(m.background_niceness) || m.background_niceness < 0 || m.background_niceness > 19) problems.push(`${mAt}.background_niceness must be an integer from 0 to 19`);

  if (problems.length > 0) throw new WorkloadConfigError(`invalid workload configuration:\n  ${problems.join('\n  ')}`);
  return {
    cpuQuotaPeriodMs,
    root,
    routingRules,
    classes,
    mlfq: {
      maxConcurrent: m.max_concurrent,
      levelThresholdsSeconds: [...t],
      levelTimeMultiplier: m.level_time_multiplier,
      levelContributionCapMs: m.level_contribution_cap_ms,
      quantumMs: m.quantum_ms,
      interactiveSlots: m.interactive_slots,
      backgroundNiceness: m.background_niceness,
    },
  };
}

function resolveGroup(g: ResourceGroupSpec, groupName: string, path: string, at: string, problems: string[]): ResolvedGroupConfig {
  const hard = g.hard_concurrency_limit ?? GROUP_DEFAULTS.hard_concurrency_limit;
  if (!isInt(hard) || hard < 1) problems.push(`${at}.hard_concurrency_limit must be ≥ 1`);
  // An unset soft limit follows a smaller hard limit: `hard: 10` alone must not be an error.
  const soft = g.soft_concurrency_limit ?? Math.min(GROUP_DEFAULTS.soft_concurrency_limit, hard);
  if (!isInt(soft) || soft < 1) problems.push(`${at}.soft_concurrency_limit must be ≥ 1`);
  else if (soft > hard) problems.push(`${at}.soft_concurrency_limit (${soft}) must be ≤ hard_concurrency_limit (${hard})`);
  const maxQueued = g.max_queued_queries ?? GROUP_DEFAULTS.max_queued_queries;
  if (!isInt(maxQueued) || maxQueued < 0) problems.push(`${at}.max_queued_queries must be ≥ 0`);
  const mem = g.soft_memory_limit_bytes ?? null;
  if (mem !== null && (!isInt(mem) || mem < 1)) problems.push(`${at}.soft_memory_limit_bytes must be ≥ 1`);
  let softCpu = g.soft_cpu_limit_ms ?? null;
  let hardCpu = g.hard_cpu_limit_ms ?? null;
  if (softCpu !== null && (!isInt(softCpu) || softCpu < 1)) problems.push(`${at}.soft_cpu_limit_ms must be ≥ 1`);
  if (hardCpu !== null && (!isInt(hardCpu) || hardCpu < 1)) problems.push(`${at}.hard_cpu_limit_ms must be ≥ 1`);
  // The spec: hard defaults to 2× soft. A hard limit alone acts as both (no linear range), as in Trino.
  if (softCpu !== null && hardCpu === null) hardCpu = 2 * softCpu;
  if (softCpu === null && hardCpu !== null) softCpu = hardCpu;
  if (softCpu !== null && hardCpu !== null && softCpu > hardCpu) problems.push(`${at}.soft_cpu_limit_ms (${softCpu}) must be ≤ hard_cpu_limit_ms (${hardCpu})`);
  const policy = g.scheduling_policy ?? GROUP_DEFAULTS.scheduling_policy;
  if (!SCHEDULING_POLICIES.includes(policy)) problems.push(`${at}.scheduling_policy must be one of ${SCHEDULING_POLICIES.join(', ')}`);
  const weight = g.scheduling_weight ?? GROUP_DEFAULTS.scheduling_weight;
  if (!isInt(weight) || weight < 1) problems.push(`${at}.scheduling_weight must be ≥ 1`);

  const seen = new Map<string, number>();
  const subgroups: ResolvedGroupConfig[] = [];
  (g.subgroups ?? []).forEach((child, i) => {
    const childAt = `${at}.subgroups[${i}]`;
    const childName = child.name;
    if (typeof childName !== 'string' || !/^[A-Za-z0-9_-]+$/.test(childName)) {
      problems.push(`${childAt}.name is required (letters, digits, _ and -)`);
      return;
    }
    const first = seen.get(childName);
    if (first !== undefined) {
      problems.push(`${childAt}.name "${childName}" duplicates ${at}.subgroups[${first}].name`);
      return;
    }
    seen.set(childName, i);
    subgroups.push(resolveGroup(child, childName, `${path}.${childName}`, childAt, problems));
  });

  return {
    name: groupName,
    path,
    hardConcurrencyLimit: hard,
    softConcurrencyLimit: soft,
    maxQueuedQueries: maxQueued,
    softMemoryLimitBytes: mem,
    softCpuLimitMs: softCpu,
    hardCpuLimitMs: hardCpu,
    schedulingPolicy: policy,
    schedulingWeight: weight,
    subgroups,
  };
}

function resolveRule(r: RoutingRuleSpec, at: string, paths: ReadonlySet<string>, problems: string[]): ResolvedRoutingRule {
  const target = r.target_group;
  if (typeof target !== 'string' || target.length === 0) problems.push(`${at}.target_group is required`);
  else if (!paths.has(target)) problems.push(`${at}.target_group "${target}" is not a resource group (known: ${[...paths].join(', ')})`);
  return {
    matchTenant: r.match_tenant ?? null,
    matchUser: r.match_user ?? null,
    matchSource: r.match_source ?? null,
    matchResourcePool: r.match_resource_pool ?? null,
    matchQueryType: r.match_query_type ?? null,
    targetGroup: target,
  };
}

function collectPaths(g: ResolvedGroupConfig, into: Set<string>): void {
  into.add(g.path);
  for (const c of g.subgroups) collectPaths(c, into);
}

function isInt(v: unknown): v is number {
  return typeof v === 'number' && Number.isSafeInteger(v);
}

/** `root.a.b` → `/root/a/b`, the form history and `SHOW RESOURCE GROUPS` show. */
export function displayPath(dotted: string): string {
  return `/${dotted.replaceAll('.', '/')}`;
}
