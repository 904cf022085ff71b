/**
 * Resource groups: admission state and the pure, synchronous functions over it, after Trino's
 * `InternalResourceGroup`. No clock, no I/O, no promises: the `WorkloadManager` owns time and
 * callbacks; this file only decides. Every mutating function leaves the tree *work-conserving*: when
 * it returns, no queued query could start (the started ones are returned so the caller can wake
 * their waiters).
 *
 * Admission (`submitQuery`) walks from the query's group to the root: it runs when every ancestor
 * can run more, queues when every ancestor can queue more, and is rejected at once otherwise.
 *
 * Unlike Trino, a query may sit in a group that has subgroups: the spec sends unmatched queries to
 * the root group, which usually has children. Such a group's own queue competes with its children
 * as one more candidate.
 */
import type { ResolvedGroupConfig, SchedulingPolicy } from './config.js';
import { displayPath } from './config.js';
import { IndexedHeap, type HeapSlot } from './heap.js';

/**
 * A query waiting in a group's own queue. `seq` is the arrival order, global to the tree;
 * `heapIndex` is the queue's bookkeeping (its position), so leaving from anywhere is O(log n).
 */
export interface QueuedQuery extends HeapSlot {
  readonly id: string;
  readonly priority: number;
  readonly seq: number;
}

/** A group's own queue: a heap in dequeue order for the group's policy (see `queueOrder`). */
export type GroupQueue = IndexedHeap<QueuedQuery>;

/** Dequeue order inside one group: arrival, or (query_priority) priority then arrival. */
function queueOrder(policy: SchedulingPolicy): (a: QueuedQuery, b: QueuedQuery) => boolean {
  return policy === 'query_priority'
    ? (a, b) => (a.priority !== b.priority ? a.priority > b.priority : a.seq < b.seq)
    : (a, b) => a.seq < b.seq;
}

/** Mutable state of one group. Counts include only this group; `descendant*` the strict subtree. */
export interface GroupState {
  config: ResolvedGroupConfig;
  readonly parent: GroupState | null;
  readonly children: GroupState[];
  /** Own queue: its head (`peek()`) is the next to start by this group's policy. */
  readonly queue: GroupQueue;
  running: number;
  descendantRunning: number;
  descendantQueued: number;
  /** CPU charged and not yet drained by quota regeneration (ms), this group and its subtree. */
  cpuUsageMs: number;
  /** CPU ever charged (ms), this group and its subtree; for `SHOW RESOURCE GROUPS`. */
  cumulativeCpuMs: number;
  /** Memory reported by running queries of the subtree (bytes). */
  memoryBytes: number;
  /** Queries of this group that started running (ever). */
  admitted: number;
  /** Submissions to this group refused because a queue on its path was full (ever). */
  rejected: number;
}

interface QueryEntry {
  readonly id: string;
  group: GroupState;
  state: 'queued' | 'running';
  readonly priority: number;
  readonly seq: number;
  memoryBytes: number;
  /** Its place in `group.queue` while queued. */
  queued: QueuedQuery | null;
}

/** The whole admission state. Keyed by dotted path (`root.a`) and by query id. */
export interface ResourceGroupTree {
  readonly root: GroupState;
  readonly groups: ReadonlyMap<string, GroupState>;
  readonly queries: Map<string, QueryEntry>;
  /** Groups with CPU limits: the only ones quota regeneration changes. */
  readonly cpuLimited: readonly GroupState[];
  nextSeq: number;
}

/** Builds an empty tree from a resolved configuration. */
export function createTree(root: ResolvedGroupConfig): ResourceGroupTree {
  const groups = new Map<string, GroupState>();
  const build = (config: ResolvedGroupConfig, parent: GroupState | null): GroupState => {
    const g: GroupState = {
      config, parent, children: [], queue: new IndexedHeap(queueOrder(config.schedulingPolicy)), running: 0, descendantRunning: 0, descendantQueued: 0,
      cpuUsageMs: 0, cumulativeCpuMs: 0, memoryBytes: 0, admitted: 0, rejected: 0,
    };
    groups.set(config.path, g);
    for (const c of config.subgroups) g.children.push(build(c, g));
    return g;
  };
  const tree = build(root, null);
  return { root: tree, groups, queries: new Map(), cpuLimited: [...groups.values()].filter((g) => g.config.hardCpuLimitMs !== null), nextSeq: 0 };
}

/**
 * The concurrency a group may use now. Below its soft CPU limit: the hard concurrency limit. From
 * the soft CPU limit on, it starts at the soft concurrency limit (the "target") and falls linearly
 * to 1 as usage approaches the hard CPU limit; at or above the hard CPU limit it is 1, so a group
 * that spent its quota still makes progress, one query at a time (the spec; Trino stops at 0).
 */
export function effectiveConcurrencyLimit(config: ResolvedGroupConfig, cpuUsageMs: number): number {
  const soft = config.softCpuLimitMs;
  const hard = config.hardCpuLimitMs;
  if (soft === null || hard === null || cpuUsageMs < soft) return config.hardConcurrencyLimit;
  if (cpuUsageMs >= hard) return 1;
  const penalty = (cpuUsageMs - soft) / (hard - soft);
  const base = Math.min(config.softConcurrencyLimit, config.hardConcurrencyLimit);
  return Math.max(1, Math.floor(base - (base - 1) * penalty));
}

/** A group can start one more query: memory under its soft limit and running under the effective limit. */
export function canRunMore(g: GroupState): boolean {
  const mem = g.config.softMemoryLimitBytes;
  if (mem !== null && g.memoryBytes > mem) return false;
  return g.running + g.descendantRunning < effectiveConcurrencyLimit(g.config, g.cpuUsageMs);
}

/** A group can hold one more queued query in its subtree. */
export function canQueueMore(g: GroupState): boolean {
  return g.queue.size + g.descendantQueued < g.config.maxQueuedQueries;
}

/** What `submitQuery` decided. `rejected.group` is the dotted path of the group whose queue is full. */
export type AdmissionDecision =
  | { readonly kind: 'running' }
  | { readonly kind: 'queued' }
  | { readonly kind: 'rejected'; readonly group: string; readonly maxQueued: number };

export interface Submission {
  readonly id: string;
  /** Dotted path of an existing group (routing output). */
  readonly groupPath: string;
  readonly priority: number;
}

/**
 * Admits, queues or rejects one query (Trino's `InternalResourceGroup.run`). Because every
 * function keeps the tree work-conserving, "every ancestor can run more" also means nobody queued
 * on this path was skipped.
 */
export function submitQuery(tree: ResourceGroupTree, s: Submission): AdmissionDecision {
  if (tree.queries.has(s.id)) throw new Error(`query ${s.id} is already admitted`);
  const group = groupAt(tree, s.groupPath);
  const { canRun, fullGroup } = pathCapacity(group);
  if (!canRun && fullGroup !== null) {
    group.rejected += 1;
    return { kind: 'rejected', group: fullGroup.config.path, maxQueued: fullGroup.config.maxQueuedQueries };
  }
  const entry: QueryEntry = { id: s.id, group, state: 'queued', priority: s.priority, seq: tree.nextSeq++, memoryBytes: 0, queued: null };
  tree.queries.set(s.id, entry);
  if (canRun) {
    markRunning(entry);
    return { kind: 'running' };
  }
  enqueue(entry);
  return { kind: 'queued' };
}

/**
 * The rejection `submitQuery` would decide now for a query routed to `groupPath` (counted as one),
 * or null when it would run or queue. Nothing else changes: the caller asks before it spends work
 * on a query (planning, catalog reads) that a full queue would refuse anyway, then submits.
 */
export function rejectIfFull(tree: ResourceGroupTree, groupPath: string): { readonly group: string; readonly maxQueued: number } | null {
  const group = groupAt(tree, groupPath);
  const { canRun, fullGroup } = pathCapacity(group);
  if (canRun || fullGroup === null) return null;
  group.rejected += 1;
  return { group: fullGroup.config.path, maxQueued: fullGroup.config.maxQueuedQueries };
}

function groupAt(tree: ResourceGroupTree, path: string): GroupState {
  const group = tree.groups.get(path);
  if (!group) throw new Error(`no resource group ${path}`);
  return group;
}

/** Whether every group from `group` to the root can run more, and the first that cannot queue more. */
function pathCapacity(group: GroupState): { canRun: boolean; fullGroup: GroupState | null } {
  let canRun = true;
  let fullGroup: GroupState | null = null;
  for (let g: GroupState | null = group; g; g = g.parent) {
    if (canRun && !canRunMore(g)) canRun = false;
    if (fullGroup === null && !canQueueMore(g)) fullGroup = g;
  }
  return { canRun, fullGroup };
}

/**
 * Removes a query, running or queued (finished, failed, cancelled, or given up while waiting), then
 * starts what can start. Returns the ids started, in start order. Unknown ids are ignored.
 */
export function finishQuery(tree: ResourceGroupTree, id: string): string[] {
  const e = tree.queries.get(id);
  if (!e) return [];
  tree.queries.delete(id);
  if (e.state === 'running') {
    e.group.running -= 1;
    for (let p = e.group.parent; p; p = p.parent) p.descendantRunning -= 1;
    addMemory(e.group, -e.memoryBytes);
  } else {
    if (e.queued) e.group.queue.remove(e.queued);
    e.queued = null;
    for (let p = e.group.parent; p; p = p.parent) p.descendantQueued -= 1;
  }
  return startQueuedQueries(tree);
}

/** Charges CPU (ms) measured on a fragment of a query to its group and every ancestor. */
export function chargeCpu(tree: ResourceGroupTree, id: string, cpuMs: number): void {
  const e = tree.queries.get(id);
  if (!e || !(cpuMs > 0)) return;
  for (let g: GroupState | null = e.group; g; g = g.parent) {
    // Usage only counts against limits; a group without them keeps none (nothing would drain it).
    if (g.config.hardCpuLimitMs !== null) g.cpuUsageMs += cpuMs;
    g.cumulativeCpuMs += cpuMs;
  }
}

/**
 * Records a running query's current memory (bytes). A drop may let queued queries start; their ids
 * are returned.
 */
export function setQueryMemory(tree: ResourceGroupTree, id: string, bytes: number): string[] {
  const e = tree.queries.get(id);
  if (!e || e.state !== 'running') return [];
  const delta = Math.max(0, bytes) - e.memoryBytes;
  e.memoryBytes += delta;
  addMemory(e.group, delta);
  return delta < 0 ? startQueuedQueries(tree) : [];
}

/**
 * Regenerates CPU quota for `elapsedMs` of wall time: each group with CPU limits drains
 * `hard_cpu_limit_ms` per `periodMs` (Trino's `cpuQuotaGenerationMillisPerSecond`); a group
 * without limits keeps no usage. Returns the queries that the freed quota let start.
 */
export function drainCpuQuota(tree: ResourceGroupTree, elapsedMs: number, periodMs: number): string[] {
  if (!(elapsedMs > 0)) return [];
  // Only groups with CPU limits keep usage (`chargeCpu`), so only they drain; queued queries can
  // start only if some group's effective limit rose, otherwise the tree is still work-conserving.
  let rose = false;
  for (const g of tree.cpuLimited) {
    const before = effectiveConcurrencyLimit(g.config, g.cpuUsageMs);
    g.cpuUsageMs = Math.max(0, g.cpuUsageMs - (elapsedMs * g.config.hardCpuLimitMs!) / periodMs);
    if (effectiveConcurrencyLimit(g.config, g.cpuUsageMs) > before) rose = true;
  }
  return rose ? startQueuedQueries(tree) : [];
}

/** Starts queued queries while any can start (Trino's `internalStartNext` loop). */
export function startQueuedQueries(tree: ResourceGroupTree): string[] {
  const started: string[] = [];
  for (;;) {
    const next = peekNext(tree.root);
    if (!next) return started;
    const e = tree.queries.get(next.id)!;
    e.group.queue.remove(next);
    e.queued = null;
    for (let p = e.group.parent; p; p = p.parent) p.descendantQueued -= 1;
    markRunning(e);
    started.push(e.id);
  }
}

interface Candidate {
  readonly query: QueuedQuery;
  readonly running: number;
  readonly weight: number;
  readonly belowSoftLimit: boolean;
}

/**
 * The query this group would start next, or null when it cannot start one. The choice among the
 * group's own queue head and each eligible subgroup follows the group's policy:
 * - fair: arrival order across the whole subtree (the earliest queued query first);
 * - weighted: the candidate with the lowest running/weight ratio first (Trino also puts groups under
 *   their soft concurrency limit ahead of those above it; so do we), ties by arrival;
 * - query_priority: the highest priority first, ties by arrival.
 */
export function peekNext(g: GroupState): QueuedQuery | null {
  if (!canRunMore(g)) return null;
  if (g.descendantQueued === 0) return g.queue.peek() ?? null;
  const candidates: Candidate[] = [];
  const head = g.queue.peek();
  if (head) candidates.push({ query: head, running: g.running, weight: 1, belowSoftLimit: true });
  for (const c of g.children) {
    if (c.queue.size + c.descendantQueued === 0) continue;
    const q = peekNext(c);
    if (!q) continue;
    const running = c.running + c.descendantRunning;
    candidates.push({ query: q, running, weight: c.config.schedulingWeight, belowSoftLimit: running < c.config.softConcurrencyLimit });
  }
  let best: Candidate | null = null;
  for (const cand of candidates) {
    if (best === null || before(g.config.schedulingPolicy, cand, best)) best = cand;
  }
  return best?.query ?? null;
}

/** Whether candidate `a` goes before `b` under `policy`. */
function before(policy: SchedulingPolicy, a: Candidate, b: Candidate): boolean {
  switch (policy) {
    case 'fair':
      return a.query.seq < b.query.seq;
    case 'query_priority':
      return a.query.priority !== b.query.priority ? a.query.priority > b.query.priority : a.query.seq < b.query.seq;
    case 'weighted': {
      if (a.belowSoftLimit !== b.belowSoftLimit) return a.belowSoftLimit;
      // Compare running/weight without division: a.r/a.w < b.r/b.w ⇔ a.r·b.w < b.r·a.w.
      const l = a.running * b.weight;
      const r = b.running * a.weight;
      return l !== r ? l < r : a.query.seq < b.query.seq;
    }
    default:
      return unreachable(policy);
  }
}

function unreachable(x: never): never {
  throw new Error(`unexpected ${String(x)}`);
}

function markRunning(e: QueryEntry): void {
  e.state = 'running';
  e.group.running += 1;
  e.group.admitted += 1;
  for (let p = e.group.parent; p; p = p.parent) p.descendantRunning += 1;
}

function enqueue(e: QueryEntry): void {
  for (let p = e.group.parent; p; p = p.parent) p.descendantQueued += 1;
  e.queued = { id: e.id, priority: e.priority, seq: e.seq, heapIndex: -1 };
  e.group.queue.push(e.queued);
}

function addMemory(g: GroupState, delta: number): void {
  for (let p: GroupState | null = g; p; p = p.parent) p.memoryBytes += delta;
}

/**
 * A new tree from a new configuration, keeping every query: running ones stay running (counted in
 * their group even if the new limits are lower: they drain), queued ones keep their arrival order.
 * A query whose group disappeared moves to the nearest surviving ancestor (root at worst). CPU
 * usage, cumulative CPU and counters carry over for surviving paths. Queued queries never drop,
 * even when a new `max_queued_queries` is lower than the queue: new submissions are refused until
 * it shrinks. Returns the new tree and the queries that the new limits let start.
 */
export function reloadTree(old: ResourceGroupTree, root: ResolvedGroupConfig): { tree: ResourceGroupTree; started: string[] } {
  const tree = createTree(root);
  tree.nextSeq = old.nextSeq;
  for (const [path, g] of old.groups) {
    const n = tree.groups.get(path);
    if (!n) continue;
    n.cpuUsageMs = g.cpuUsageMs;
    n.cumulativeCpuMs = g.cumulativeCpuMs;
    n.admitted = g.admitted;
    n.rejected = g.rejected;
  }
  const entries = [...old.queries.values()].sort((a, b) => a.seq - b.seq);
  for (const e of entries) {
    const group = survivingGroup(tree, e.group.config.path);
    const moved: QueryEntry = { id: e.id, group, state: e.state, priority: e.priority, seq: e.seq, memoryBytes: e.memoryBytes, queued: null };
    tree.queries.set(e.id, moved);
    if (e.state === 'running') {
      group.running += 1;
      for (let p = group.parent; p; p = p.parent) p.descendantRunning += 1;
      addMemory(group, e.memoryBytes);
    } else {
      enqueue(moved);
    }
  }
  return { tree, started: startQueuedQueries(tree) };
}

function survivingGroup(tree: ResourceGroupTree, path: string): GroupState {
  let p = path;
  for (;;) {
    const g = tree.groups.get(p);
    if (g) return g;
    const dot = p.lastIndexOf('.');
    if (dot < 0) return tree.root;
    p = p.slice(0, dot);
  }
}

/** Dotted path of the group a query is in, or null when the tree does not hold it. */
export function groupOfQuery(tree: ResourceGroupTree, id: string): string | null {
  return tree.queries.get(id)?.group.config.path ?? null;
}

/** Whether the query is running (false when queued or unknown). */
export function isRunning(tree: ResourceGroupTree, id: string): boolean {
  return tree.queries.get(id)?.state === 'running';
}

/**
 * One row per group, parents before children: the single source of `SHOW RESOURCE GROUPS`,
 * `system.resource_groups`, `/api/qos/stats` and the per-group gauges. Counts cover the subtree.
 */
export interface ResourceGroupRow {
  /** `/root/a/b`. */
  readonly path: string;
  readonly running: number;
  readonly queued: number;
  readonly hardConcurrencyLimit: number;
  readonly softConcurrencyLimit: number;
  /** What the CPU penalty leaves of the hard limit right now. */
  readonly effectiveConcurrencyLimit: number;
  readonly maxQueuedQueries: number;
  readonly schedulingPolicy: SchedulingPolicy;
  readonly schedulingWeight: number;
  readonly softMemoryLimitBytes: number | null;
  readonly softCpuLimitMs: number | null;
  readonly hardCpuLimitMs: number | null;
  readonly memoryBytes: number;
  readonly cpuUsageMs: number;
  readonly cumulativeCpuMs: number;
  readonly admitted: number;
  readonly rejected: number;
}

export function resourceGroupRows(tree: ResourceGroupTree): ResourceGroupRow[] {
  const rows: ResourceGroupRow[] = [];
  const visit = (g: GroupState): void => {
    const c = g.config;
    rows.push({
      path: displayPath(c.path),
      running: g.running + g.descendantRunning,
      queued: g.queue.size + g.descendantQueued,
      hardConcurrencyLimit: c.hardConcurrencyLimit,
      softConcurrencyLimit: c.softConcurrencyLimit,
      effectiveConcurrencyLimit: effectiveConcurrencyLimit(c, g.cpuUsageMs),
      maxQueuedQueries: c.maxQueuedQueries,
      schedulingPolicy: c.schedulingPolicy,
      schedulingWeight: c.schedulingWeight,
      softMemoryLimitBytes: c.softMemoryLimitBytes,
      softCpuLimitMs: c.softCpuLimitMs,
      hardCpuLimitMs: c.hardCpuLimitMs,
      memoryBytes: g.memoryBytes,
      cpuUsageMs: Math.round(g.cpuUsageMs),
      cumulativeCpuMs: Math.round(g.cumulativeCpuMs),
      admitted: g.admitted,
      rejected: g.rejected,
    });
    for (const ch of g.children) visit(ch);
  };
  visit(tree.root);
  return rows;
}

/**
 * Checks the bookkeeping against a recount (tests and debugging): descendant counts, memory sums,
 * queue order, and that the tree is work-conserving. Returns the problems found.
 */
export function checkTreeInvariants(tree: ResourceGroupTree): string[] {
  const problems: string[] = [];
  const recount = (g: GroupState): { running: number; queued: number; memory: number } => {
    let running = 0, queued = 0, memory = 0;
    for (const e of tree.queries.values()) {
      if (e.group !== g) continue;
      if (e.state === 'running') { running++; memory += e.memoryBytes; } else queued++;
    }
    if (running !== g.running) problems.push(`${g.config.path}: running ${g.running}, recount ${running}`);
    if (queued !== g.queue.size) problems.push(`${g.config.path}: queue ${g.queue.size}, recount ${queued}`);
    let dRunning = 0, dQueued = 0, dMemory = 0;
    for (const c of g.children) {
      const r = recount(c);
      dRunning += r.running; dQueued += r.queued; dMemory += r.memory;
    }
    if (dRunning !== g.descendantRunning) problems.push(`${g.config.path}: descendantRunning ${g.descendantRunning}, recount ${dRunning}`);
    if (dQueued !== g.descendantQueued) problems.push(`${g.config.path}: descendantQueued ${g.descendantQueued}, recount ${dQueued}`);
    if (memory + dMemory !== g.memoryBytes) problems.push(`${g.config.path}: memory ${g.memoryBytes}, recount ${memory + dMemory}`);
    // Heap property: no queued query goes before its parent in the heap, and each knows its place.
    const items = g.queue.values();
    const ahead = queueOrder(g.config.schedulingPolicy);
    for (let i = 0; i < items.length; i++) {
      if (items[i]!.heapIndex !== i) problems.push(`${g.config.path}: queue slot ${i} says ${items[i]!.heapIndex}`);
      if (i > 0 && ahead(items[i]!, items[(i - 1) >> 1]!)) problems.push(`${g.config.path}: queue out of order at ${i}`);
      const e = tree.queries.get(items[i]!.id);
      if (!e || e.queued !== items[i] || e.group !== g) problems.push(`${g.config.path}: queue holds ${items[i]!.id}, not queued here`);
    }
    return { running: running + dRunning, queued: queued + dQueued, memory: memory + dMemory };
  };
  recount(tree.root);
  if (peekNext(tree.root) !== null) problems.push('a queued query could start but did not (not work-conserving)');
  return problems;
}
