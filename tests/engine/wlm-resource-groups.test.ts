import t from 'tap';
import fc from 'fast-check';
import { resolveWorkloadConfig, type ResourceGroupSpec, type SchedulingPolicy } from '../../engine/wlm/config.js';
import {
  chargeCpu, checkTreeInvariants, createTree, drainCpuQuota, effectiveConcurrencyLimit, finishQuery, isRunning, reloadTree,
  rejectIfFull, resourceGroupRows, setQueryMemory, startQueuedQueries, submitQuery, type ResourceGroupTree,
} from '../../engine/wlm/resource-groups.js';
import { IndexedHeap } from '../../engine/wlm/heap.js';

const tree = (root: ResourceGroupSpec): ResourceGroupTree => createTree(resolveWorkloadConfig({ resource_groups: { root } }).root);
const submit = (tr: ResourceGroupTree, id: string, groupPath = 'root', priority = 2) => submitQuery(tr, { id, groupPath, priority });

t.test('admission: runs while every ancestor can run more, queues while every ancestor can queue more, else rejects', async (t) => {
  const tr = tree({ hard_concurrency_limit: 3, max_queued_queries: 10, subgroups: [{ name: 'a', hard_concurrency_limit: 2, max_queued_queries: 1 }, { name: 'b' }] });
  t.same(submit(tr, 'q1', 'root.a'), { kind: 'running' });
  t.same(submit(tr, 'q2', 'root.a'), { kind: 'running' });
  t.same(submit(tr, 'q3', 'root.a'), { kind: 'queued' }, 'a is at its hard limit');
  t.same(submit(tr, 'q4', 'root.a'), { kind: 'rejected', group: 'root.a', maxQueued: 1 }, 'a queue holds 1');
  t.same(submit(tr, 'q5', 'root.b'), { kind: 'running' });
  t.same(submit(tr, 'q6', 'root.b'), { kind: 'queued' }, 'root is at its hard limit of 3');
  t.same(finishQuery(tr, 'q1'), ['q3'], 'fair: the earliest queued query in the subtree starts');
  t.ok(isRunning(tr, 'q3'));
  t.same(finishQuery(tr, 'q5'), ['q6']);
  t.same(checkTreeInvariants(tr), []);
  const rows = resourceGroupRows(tr);
  t.same(rows.map((r) => [r.path, r.running, r.queued, r.admitted, r.rejected]), [['/root', 3, 0, 0, 0], ['/root/a', 2, 0, 3, 1], ['/root/b', 1, 0, 2, 0]]);
});

t.test('the root queue, when unmatched queries land on a group with subgroups, competes with them in arrival order', async (t) => {
  const tr = tree({ hard_concurrency_limit: 1, subgroups: [{ name: 'a' }] });
  submit(tr, 'r1');
  submit(tr, 'a1', 'root.a');
  submit(tr, 'r2');
  t.same(finishQuery(tr, 'r1'), ['a1']);
  t.same(finishQuery(tr, 'a1'), ['r2']);
  t.same(checkTreeInvariants(tr), []);
});

t.test('CPU: between the soft and hard CPU limits effective concurrency falls linearly toward 1, and quota drains per period', async (t) => {
  const config = resolveWorkloadConfig({ resource_groups: { root: { hard_concurrency_limit: 20, soft_concurrency_limit: 10, soft_cpu_limit_ms: 1000 } } }).root;
  t.equal(config.hardCpuLimitMs, 2000);
  t.equal(effectiveConcurrencyLimit(config, 0), 20);
  t.equal(effectiveConcurrencyLimit(config, 999), 20);
  t.equal(effectiveConcurrencyLimit(config, 1000), 10, 'at the soft limit: the soft concurrency limit');
  t.equal(effectiveConcurrencyLimit(config, 1500), 5, 'half way: 10 - 9/2');
  t.equal(effectiveConcurrencyLimit(config, 1999), 1);
  t.equal(effectiveConcurrencyLimit(config, 5000), 1, 'above the hard limit: 1');
  fc.assert(fc.property(fc.integer({ min: 1000, max: 1999 }), fc.integer({ min: 1000, max: 1999 }), (a, b) => {
    const [lo, hi] = a <= b ? [a, b] : [b, a];
    return effectiveConcurrencyLimit(config, lo) >= effectiveConcurrencyLimit(config, hi);
  }), { numRuns: 200 });

  const tr = createTree(config);
  for (let i = 0; i < 4; i++) t.equal(submit(tr, `q${i}`).kind, 'running');
  chargeCpu(tr, 'q0', 2500);
  t.equal(resourceGroupRows(tr)[0]!.cumulativeCpuMs, 2500);
  t.equal(submit(tr, 'q4').kind, 'queued', 'over the hard CPU limit only 1 may run, 4 already do');
  finishQuery(tr, 'q0'); finishQuery(tr, 'q1'); finishQuery(tr, 'q2');
  t.notOk(isRunning(tr, 'q4'), 'still one running: q3');
  // 2000 ms of hard limit regenerate per 60 s period: 45 s bring 2500 down to 1000.
  t.same(drainCpuQuota(tr, 45_000, 60_000), ['q4'], 'drained to the soft limit: 10 may run again');
  t.equal(resourceGroupRows(tr)[0]!.cpuUsageMs, 1000);
  t.equal(resourceGroupRows(tr)[0]!.cumulativeCpuMs, 2500, 'cumulative CPU does not drain');
});

t.test('memory: above the soft memory limit no new query starts', async (t) => {
  const tr = tree({ subgroups: [{ name: 'a', soft_memory_limit_bytes: 1000 }] });
  submit(tr, 'q1', 'root.a');
  t.same(setQueryMemory(tr, 'q1', 1500), []);
  t.equal(submit(tr, 'q2', 'root.a').kind, 'queued');
  t.equal(submit(tr, 'q3', 'root').kind, 'running', 'the root has no memory limit');
  t.same(setQueryMemory(tr, 'q1', 800), ['q2'], 'memory fell under the limit');
  t.equal(resourceGroupRows(tr)[1]!.memoryBytes, 800);
  t.same(checkTreeInvariants(tr), []);
});

t.test('policies: query_priority takes the highest priority first; weighted the lowest running/weight', async (t) => {
  const p = tree({ hard_concurrency_limit: 1, scheduling_policy: 'query_priority' });
  submit(p, 'run', 'root', 1);
  submit(p, 'low', 'root', 1);
  submit(p, 'high', 'root', 3);
  submit(p, 'normal', 'root', 2);
  submit(p, 'high2', 'root', 3);
  const order: string[] = [];
  for (let cur = 'run'; ;) {
    const s = finishQuery(p, cur);
    if (s.length === 0) break;
    order.push(...s);
    cur = s[0]!;
  }
  t.same(order, ['high', 'high2', 'normal', 'low']);

  const w = tree({ hard_concurrency_limit: 4, scheduling_policy: 'weighted', subgroups: [{ name: 'a', scheduling_weight: 3 }, { name: 'b', scheduling_weight: 1 }] });
  for (let i = 0; i < 4; i++) submit(w, `x${i}`, 'root');
  for (let i = 0; i < 10; i++) { submit(w, `a${i}`, 'root.a'); submit(w, `b${i}`, 'root.b'); }
  for (let i = 0; i < 4; i++) finishQuery(w, `x${i}`);
  const rows = resourceGroupRows(w);
  t.same(rows.map((r) => r.running), [4, 3, 1], 'running split 3:1 by weight once the queues decide');
});

t.test('reload keeps running and queued queries, moves orphans to the nearest surviving ancestor, applies new limits', async (t) => {
  let tr = tree({ hard_concurrency_limit: 2, subgroups: [{ name: 'a', subgroups: [{ name: 'x' }] }, { name: 'b' }] });
  submit(tr, 'r1', 'root.a.x'); submit(tr, 'r2', 'root.b');
  submit(tr, 'q1', 'root.a.x'); submit(tr, 'q2', 'root.b'); submit(tr, 'q3', 'root.a.x');
  chargeCpu(tr, 'r2', 70);
  const next = resolveWorkloadConfig({ resource_groups: { root: { hard_concurrency_limit: 3, max_queued_queries: 1, subgroups: [{ name: 'a' }, { name: 'b', hard_concurrency_limit: 1 }] } } }).root;
  const { tree: reloaded, started } = reloadTree(tr, next);
  tr = reloaded;
  t.same(started, ['q1'], 'the new root limit of 3 lets the oldest queued (now in root.a) start; root.b is full');
  t.same(checkTreeInvariants(tr), []);
  const rows = new Map(resourceGroupRows(tr).map((r) => [r.path, r]));
  t.equal(rows.get('/root/a')!.running, 2, 'r1 and q1 moved to root.a');
  t.equal(rows.get('/root')!.queued, 2, 'q2 and q3 kept though max_queued_queries is now 1');
  t.equal(rows.get('/root/b')!.cumulativeCpuMs, 70, 'CPU carried for surviving paths');
  t.equal(submit(tr, 'q4', 'root.a').kind, 'rejected', 'new submissions see the smaller queue');
  t.same(finishQuery(tr, 'r2'), ['q2']);
  t.same(finishQuery(tr, 'q1'), ['q3']);
  t.same(checkTreeInvariants(tr), []);
});

// ---- property tests -------------------------------------------------------------------------

const policy = fc.constantFrom<SchedulingPolicy>('fair', 'weighted', 'query_priority');
const groupSpec = (depth: number): fc.Arbitrary<ResourceGroupSpec> => fc.record<{
  hard_concurrency_limit: number; max_queued_queries: number; soft_memory_limit_bytes: number | undefined; soft_cpu_limit_ms: number | undefined;
  scheduling_policy: SchedulingPolicy; scheduling_weight: number; subgroups: ResourceGroupSpec[];
}>({
  hard_concurrency_limit: fc.integer({ min: 1, max: 4 }),
  max_queued_queries: fc.integer({ min: 0, max: 5 }),
  soft_memory_limit_bytes: fc.option(fc.integer({ min: 1, max: 1000 }), { nil: undefined }),
  soft_cpu_limit_ms: fc.option(fc.integer({ min: 1, max: 1000 }), { nil: undefined }),
  scheduling_policy: policy,
  scheduling_weight: fc.integer({ min: 1, max: 5 }),
  subgroups: depth === 0 ? fc.constant<ResourceGroupSpec[]>([]) : fc.array(groupSpec(depth - 1), { maxLength: 3 }),
}).map((g): ResourceGroupSpec => ({ ...g, subgroups: g.subgroups.map((c: ResourceGroupSpec, i: number) => ({ ...c, name: `g${i}` })) }));

type Op =
  | { kind: 'submit'; group: number; priority: number }
  | { kind: 'finish'; pick: number }
  | { kind: 'cpu'; pick: number; ms: number }
  | { kind: 'drain'; ms: number }
  | { kind: 'memory'; pick: number; bytes: number };
const op: fc.Arbitrary<Op> = fc.oneof(
  { weight: 5, arbitrary: fc.record({ kind: fc.constant('submit' as const), group: fc.nat(), priority: fc.integer({ min: 1, max: 4 }) }) },
  { weight: 3, arbitrary: fc.record({ kind: fc.constant('finish' as const), pick: fc.nat() }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('cpu' as const), pick: fc.nat(), ms: fc.integer({ min: 1, max: 3000 }) }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('drain' as const), ms: fc.integer({ min: 1, max: 60_000 }) }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('memory' as const), pick: fc.nat(), bytes: fc.integer({ min: 0, max: 2000 }) }) },
);

t.test('property: no group runs more than its hard limit or queues more than its maximum; rejections only when a queue is full; bookkeeping exact', async (t) => {
  fc.assert(fc.property(groupSpec(2), fc.array(op, { maxLength: 120 }), (root, ops) => {
    const tr = tree(root);
    const paths = [...tr.groups.keys()];
    let n = 0;
    for (const o of ops) {
      const ids = [...tr.queries.keys()];
      switch (o.kind) {
        case 'submit': {
          const path = paths[o.group % paths.length]!;
          const before = resourceGroupRows(tr);
          // The early check (before planning) decides as admission would, and changes nothing else.
          const early = rejectIfFull(tr, path);
          const d = submitQuery(tr, { id: `q${n++}`, groupPath: path, priority: o.priority });
          if ((early === null) !== (d.kind !== 'rejected') || (early !== null && d.kind === 'rejected' && early.group !== d.group)) {
            throw new Error(`early check ${JSON.stringify(early)} disagrees with admission ${JSON.stringify(d)}`);
          }
          if (d.kind === 'rejected') {
            const full = before.find((r) => r.path === `/${d.group.replaceAll('.', '/')}`)!;
            if (full.queued < full.maxQueuedQueries) throw new Error(`rejected while ${d.group} had room`);
          }
          break;
        }
        case 'finish': if (ids.length) finishQuery(tr, ids[o.pick % ids.length]!); break;
        case 'cpu': if (ids.length) chargeCpu(tr, ids[o.pick % ids.length]!, o.ms); break;
        case 'drain': drainCpuQuota(tr, o.ms, 60_000); break;
        case 'memory': if (ids.length) setQueryMemory(tr, ids[o.pick % ids.length]!, o.bytes); break;
      }
      const problems = checkTreeInvariants(tr);
      if (problems.length) throw new Error(problems.join('; '));
      for (const r of resourceGroupRows(tr)) {
        if (r.running > r.hardConcurrencyLimit) throw new Error(`${r.path} runs ${r.running} > ${r.hardConcurrencyLimit}`);
        if (r.queued > r.maxQueuedQueries) throw new Error(`${r.path} queues ${r.queued} > ${r.maxQueuedQueries}`);
      }
    }
  }), { numRuns: 300 });
  t.pass('held over 300 random trees and operation sequences');
});

t.test('property: fair is FIFO (any completion order; subgroups without limits of their own)', async (t) => {
  fc.assert(fc.property(fc.integer({ min: 1, max: 5 }), fc.integer({ min: 1, max: 4 }), fc.array(fc.tuple(fc.nat(), fc.nat()), { minLength: 1, maxLength: 60 }), (limit, children, plan) => {
    const tr = tree({ hard_concurrency_limit: limit, subgroups: Array.from({ length: children }, (_, i) => ({ name: `c${i}` })) });
    const started: string[] = [];
    const arrived: string[] = [];
    plan.forEach(([g, finishPick], i) => {
      const id = `q${i}`;
      arrived.push(id);
      const path = g % (children + 1) === children ? 'root' : `root.c${g % (children + 1)}`;
      if (submitQuery(tr, { id, groupPath: path, priority: (i * 7) % 4 }).kind === 'running') started.push(id);
      const running = [...tr.queries.keys()].filter((q) => isRunning(tr, q));
      if (finishPick % 2 === 0 && running.length) started.push(...finishQuery(tr, running[finishPick % running.length]!));
    });
    for (;;) {
      const running = [...tr.queries.keys()].filter((q) => isRunning(tr, q));
      if (!running.length) break;
      started.push(...finishQuery(tr, running[0]!));
    }
    if (started.join() !== arrived.join()) throw new Error(`start order ${started.join()} differs from arrival ${arrived.join()}`);
  }), { numRuns: 300 });
  t.pass('start order equals arrival order');
});

t.test('property: weighted shares converge to the weights, and no backlogged subgroup starves', async (t) => {
  fc.assert(fc.property(fc.array(fc.integer({ min: 1, max: 8 }), { minLength: 2, maxLength: 4 }), fc.integer({ min: 1, max: 3 }), (weights, perWeight) => {
    const total = weights.reduce((a, b) => a + b, 0);
    const limit = total * perWeight;
    const tr = tree({ hard_concurrency_limit: limit, scheduling_policy: 'weighted', subgroups: weights.map((w, i) => ({ name: `c${i}`, scheduling_weight: w, max_queued_queries: 100_000 })) });
    const running: string[] = [];
    const starts = weights.map(() => 0);
    let n = 0;
    const feed = (): void => {
      // keep every subgroup backlogged
      weights.forEach((_, i) => {
        while (resourceGroupRows(tr).find((r) => r.path === `/root/c${i}`)!.queued < 2) {
          const id = `c${i}-${n++}`;
          if (submitQuery(tr, { id, groupPath: `root.c${i}`, priority: 2 }).kind === 'running') { running.push(id); starts[i]! += 1; }
        }
      });
    };
    feed();
    const steps = limit * 60;
    for (let s = 0; s < steps; s++) {
      // equal-length queries: the oldest running one finishes first
      const done = running.shift()!;
      for (const id of finishQuery(tr, done)) { running.push(id); starts[Number(id.slice(1, id.indexOf('-')))]! += 1; }
      feed();
    }
    const all = starts.reduce((a, b) => a + b, 0);
    weights.forEach((w, i) => {
      const share = starts[i]! / all;
      if (Math.abs(share - w / total) > 0.02) throw new Error(`subgroup ${i} got ${share.toFixed(3)} of starts, weight share ${(w / total).toFixed(3)}`);
      if (starts[i]! < steps * (w / total) * 0.5) throw new Error(`subgroup ${i} starved`);
    });
  }), { numRuns: 60 });
  t.pass('start shares within 2 points of the weight shares');
});

t.test('property: nothing starves: once arrivals stop, every queued query starts as running ones finish (any tree, any policy)', async (t) => {
  fc.assert(fc.property(groupSpec(2), fc.array(fc.tuple(fc.nat(), fc.integer({ min: 1, max: 4 })), { maxLength: 60 }), (root, arrivals) => {
    const tr = tree(root);
    const paths = [...tr.groups.keys()];
    const accepted = new Set<string>();
    arrivals.forEach(([g, priority], i) => {
      const d = submitQuery(tr, { id: `q${i}`, groupPath: paths[g % paths.length]!, priority });
      if (d.kind !== 'rejected') accepted.add(`q${i}`);
    });
    // CPU penalties and memory never block forever: quota drains and memory is freed on finish.
    chargeCpu(tr, [...tr.queries.keys()][0] ?? 'none', 5000);
    const ran = new Set<string>();
    for (let guard = 0; guard < 10_000 && tr.queries.size > 0; guard++) {
      const running = [...tr.queries.keys()].filter((q) => isRunning(tr, q));
      if (running.length === 0) { drainCpuQuota(tr, 60_000, 60_000); startQueuedQueries(tr); continue; }
      ran.add(running[0]!);
      finishQuery(tr, running[0]!);
      drainCpuQuota(tr, 1000, 60_000);
    }
    for (const id of accepted) if (!ran.has(id)) throw new Error(`${id} never ran`);
  }), { numRuns: 300 });
  t.pass('every accepted query ran');
});

t.test('rejectIfFull: the early check before planning counts a rejection and changes nothing else', async (t) => {
  const tr = tree({ subgroups: [{ name: 'tiny', hard_concurrency_limit: 1, max_queued_queries: 1 }] });
  t.equal(rejectIfFull(tr, 'root.tiny'), null, 'room to run');
  submit(tr, 'q1', 'root.tiny');
  t.equal(rejectIfFull(tr, 'root.tiny'), null, 'room to queue');
  submit(tr, 'q2', 'root.tiny');
  t.same(rejectIfFull(tr, 'root.tiny'), { group: 'root.tiny', maxQueued: 1 });
  t.equal(rejectIfFull(tr, 'root'), null, 'the root still has room');
  const rows = resourceGroupRows(tr);
  t.same(rows.map((r) => [r.path, r.running, r.queued, r.rejected]), [['/root', 1, 1, 0], ['/root/tiny', 1, 1, 1]]);
  t.same(checkTreeInvariants(tr), []);
  t.throws(() => rejectIfFull(tr, 'root.nope'), /no resource group root.nope/);
});

t.test('property: the indexed heap pops in order and removes any item in place (against a sorted model)', async (t) => {
  type Item = { key: number; seq: number; heapIndex: number };
  const op = fc.oneof(
    fc.record({ kind: fc.constant('push' as const), key: fc.integer({ min: 0, max: 20 }) }),
    fc.record({ kind: fc.constant('pop' as const) }),
    fc.record({ kind: fc.constant('remove' as const), pick: fc.nat(100) }),
  );
  fc.assert(fc.property(fc.array(op, { maxLength: 200 }), (ops) => {
    const less = (a: Item, b: Item) => (a.key !== b.key ? a.key < b.key : a.seq < b.seq);
    const heap = new IndexedHeap<Item>(less);
    let model: Item[] = [];
    let seq = 0;
    for (const o of ops) {
      if (o.kind === 'push') {
        const item = { key: o.key, seq: seq++, heapIndex: -1 };
        heap.push(item);
        model.push(item);
      } else if (o.kind === 'pop') {
        model.sort((a, b) => (less(a, b) ? -1 : 1));
        const want = model.shift();
        if (heap.pop() !== want) throw new Error('pop out of order');
        if (want && want.heapIndex !== -1) throw new Error('a popped item still has a place');
      } else if (model.length > 0) {
        const item = model[o.pick % model.length]!;
        model = model.filter((m) => m !== item);
        if (!heap.remove(item)) throw new Error('remove missed an item the heap holds');
        if (heap.remove(item)) throw new Error('removed twice');
      }
      if (heap.size !== model.length) throw new Error('size');
      if (heap.peek() !== [...model].sort((a, b) => (less(a, b) ? -1 : 1))[0]) throw new Error('peek');
      heap.values().forEach((it, i) => {
        if (it.heapIndex !== i) throw new Error('stale heapIndex');
        if (i > 0 && less(it, heap.values()[(i - 1) >> 1]!)) throw new Error('heap order');
      });
    }
    return true;
  }), { numRuns: 300 });
  t.pass('pop order, removal and positions held');
});
