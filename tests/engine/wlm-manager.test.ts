import t from 'tap';
import fc from 'fast-check';
import { Registry } from 'prom-client';
import { isFloeError, type FloeError } from '../../grammar/errors.js';
import { PRIORITY, resolveWorkloadConfig, type WorkloadClass, type WorkloadConfigSpec } from '../../engine/wlm/config.js';
import { VirtualClock } from '../../engine/wlm/clock.js';
import { WorkloadManager, type AdmissionRequest, type QueryLease } from '../../engine/wlm/manager.js';
import { createWorkloadMetrics } from '../../engine/wlm/metrics.js';
import { qosStats, showResourceGroupRows, systemResourceGroupRows, SHOW_RESOURCE_GROUPS_COLUMNS, SYSTEM_RESOURCE_GROUPS_COLUMNS } from '../../engine/wlm/stats.js';
import { isOutOfMemoryError } from '../../engine/wlm/killer.js';
import { CancellationSource } from '../../engine/wlm/cancellation.js';
import { parseExposition } from '../helpers/prometheus.js';

const manager = (spec: WorkloadConfigSpec = {}) => {
  const clock = new VirtualClock(1_000_000);
  const registry = new Registry();
  const metrics = createWorkloadMetrics(registry);
  const config = resolveWorkloadConfig(spec);
  const wlm = new WorkloadManager({ config, clock, metrics });
  let n = 0;
  const request = (over: Partial<AdmissionRequest> = {}): AdmissionRequest => {
    const cls: WorkloadClass = over.workloadClass ?? 'interactive';
    const limits = config.classes[cls];
    return {
      queryId: `q${n++}`, tenant: 't1', user: 'alice', source: null, resourcePool: null, queryType: 'select', workloadClass: cls,
      priority: limits.priority, timeoutMs: limits.timeoutMs, memoryCapBytes: limits.memoryCapBytes, ...over,
    };
  };
  const running = async (over: Partial<AdmissionRequest> = {}): Promise<QueryLease> => {
    const ticket = wlm.admit(request(over));
    if (ticket.kind !== 'accepted') throw new Error('rejected');
    return ticket.lease;
  };
  return { clock, registry, wlm, request, running, config };
};
const flush = () => new Promise<void>((r) => setImmediate(r));

t.test('routing fields reach the group path recorded in history', async (t) => {
  const { wlm, request } = manager({
    resource_groups: { root: { subgroups: [{ name: 'tenant' }, { name: 'user' }, { name: 'dash', subgroups: [{ name: 'grafana' }] }, { name: 'pool' }, { name: 'writes' }] } },
    routing_rules: [
      { match_tenant: 'acme', target_group: 'root.tenant' },
      { match_user: 'bob', target_group: 'root.user' },
      { match_source: 'grafana', target_group: 'root.dash.grafana' },
      { match_resource_pool: 'etl', target_group: 'root.pool' },
      { match_query_type: 'insert', target_group: 'root.writes' },
    ],
  });
  const path = (over: Partial<AdmissionRequest>) => {
    const ticket = wlm.admit(request(over));
    return ticket.groupPath;
  };
  t.equal(path({ tenant: 'acme' }), '/root/tenant');
  t.equal(path({ user: 'bob' }), '/root/user');
  t.equal(path({ source: 'grafana' }), '/root/dash/grafana');
  t.equal(path({ resourcePool: 'etl' }), '/root/pool');
  t.equal(path({ queryType: 'insert' }), '/root/writes');
  t.equal(path({}), '/root');
});

t.test('queue full: rejected at once with QUEUE_FULL (429, 53300) naming the group and the limit', async (t) => {
  const { wlm, request, registry } = manager({ resource_groups: { root: { subgroups: [{ name: 'small', hard_concurrency_limit: 1, max_queued_queries: 1 }] } }, routing_rules: [{ match_user: 'alice', target_group: 'root.small' }] });
  const a = wlm.admit(request());
  const b = wlm.admit(request());
  const c = wlm.admit(request());
  t.same([a.kind, b.kind, c.kind], ['accepted', 'accepted', 'rejected']);
  t.equal(a.kind === 'accepted' && a.queued, false);
  t.equal(b.kind === 'accepted' && b.queued, true);
  if (c.kind !== 'rejected') throw new Error('unreachable');
  t.equal(c.error.code, 'QUEUE_FULL');
  t.equal(c.error.httpStatus, 429);
  t.equal(c.error.sqlState, '53300');
  t.equal(c.error.message, 'resource group /root/small queue is full (max_queued_queries = 1)');
  t.same(c.error.toJSON(), { error: 'QUEUE_FULL', message: c.error.message, sql_state: '53300' });
  t.equal(wlm.activeQueries, 2, 'the rejected query holds nothing');
  const samples = parseExposition(await registry.metrics()).samples;
  t.equal(samples.find((s) => s.name === 'floe_wlm_group_rejected_total' && s.labels.get('group') === '/root/small')?.value, 1);
});

t.test('each class timeout cancels the query with a message naming the limit; a smaller timeout_ms wins', async (t) => {
  for (const [cls, ms] of [['interactive', 30_000], ['medium', 180_000], ['batch', 600_000]] as const) {
    const { wlm, request, clock } = manager();
    const cancelled: FloeError[] = [];
    const ticket = wlm.admit(request({ workloadClass: cls }), { onCancel: (e) => cancelled.push(e) });
    if (ticket.kind !== 'accepted') throw new Error('rejected');
    const lease = await ticket.lease;
    clock.advance(ms - 1);
    t.notOk(lease.signal.aborted, `${cls}: not before ${ms} ms`);
    clock.advance(1);
    t.ok(lease.signal.aborted, `${cls}: at ${ms} ms`);
    const reason = lease.signal.reason as FloeError;
    t.ok(isFloeError(reason));
    t.equal(reason.message, `query cancelled: exceeded ${cls} class timeout of ${ms} ms`);
    t.same([reason.code, reason.httpStatus, reason.sqlState], ['QUERY_TIMEOUT', 408, '57014']);
    t.same(cancelled, [reason], 'onCancel told once');
    t.equal(wlm.resourceGroupRows()[0]!.running, 1, 'the slot stays taken until the executor stopped');
    lease.release();
    t.equal(wlm.resourceGroupRows()[0]!.running, 0);
    t.equal(clock.pending, 0, 'no timers left');
  }
  const { wlm, request, clock } = manager();
  const ticket = wlm.admit(request({ requestTimeoutMs: 500 }));
  const lease = ticket.kind === 'accepted' ? await ticket.lease : null;
  clock.advance(500);
  t.equal((lease!.signal.reason as Error).message, 'query cancelled: exceeded request timeout_ms timeout of 500 ms');
});

t.test('a timeout or a cancel while queued removes the query from the queue; release starts the next', async (t) => {
  const { wlm, request, clock, running } = manager({ resource_groups: { root: { hard_concurrency_limit: 1 } } });
  const first = await running();
  const t1 = wlm.admit(request({ requestTimeoutMs: 1000 }));
  const ac = new CancellationSource();
  const t2 = wlm.admit(request(), { cancellation: ac });
  const t3 = wlm.admit(request());
  if (t1.kind !== 'accepted' || t2.kind !== 'accepted' || t3.kind !== 'accepted') throw new Error('rejected');
  t.equal(wlm.resourceGroupRows()[0]!.queued, 3);
  clock.advance(1000);
  await t.rejects(t1.lease, { code: 'QUERY_TIMEOUT', message: 'query cancelled: exceeded request timeout_ms timeout of 1000 ms' });
  ac.abort();
  await t.rejects(t2.lease, { code: 'QUERY_CANCELLED', message: 'query cancelled: cancelled by the user' });
  t.equal(wlm.resourceGroupRows()[0]!.queued, 1);
  clock.advance(250);
  first.release();
  const third = await t3.lease;
  t.equal(third.queuedMs, 1250, 'queued time measured on the injected clock');
  t.equal(third.groupPath, '/root');
  const running2 = wlm.resourceGroupRows()[0]!;
  t.same([running2.running, running2.queued], [1, 0]);
  third.cancel();
  t.equal((third.signal.reason as Error).message, 'query cancelled: cancelled by the user');
  third.release();
  third.release();
  t.equal(wlm.activeQueries, 0, 'release is idempotent');
});

t.test('memory cap: the lease carries the DuckDB memory_limit; out of memory after spilling cancels with a memory message', async (t) => {
  const { running } = manager({ classes: { medium: { memory_cap_bytes: 64 * 1024 * 1024 } } });
  const lease = await running({ workloadClass: 'medium', memoryCapBytes: 64 * 1024 * 1024 });
  t.equal(lease.memoryLimitBytes, 64 * 1024 * 1024);
  t.ok(isOutOfMemoryError(new Error('Out of Memory Error: could not allocate block of size 256.0 KiB (64.0 MiB/64.0 MiB used)')));
  t.notOk(isOutOfMemoryError(new Error('Binder Error: column x not found')));
  const error = lease.reportOutOfMemory('could not allocate block of size 256.0 KiB');
  t.equal(error.message, 'query cancelled: exceeded medium class memory cap of 67108864 bytes (64 MiB); spilling to disk could not help (could not allocate block of size 256.0 KiB)');
  t.equal(error.code, 'QUERY_CANCELLED');
  t.equal(lease.signal.reason, error);
  t.equal(lease.reportOutOfMemory(), error, 'the first kill wins');
  lease.release();
});

t.test('soft memory limit: new queries wait while the group is over it', async (t) => {
  const { wlm, request, running } = manager({ resource_groups: { root: { soft_memory_limit_bytes: 1000 } } });
  const big = await running();
  big.reportMemory(5000);
  const next = wlm.admit(request());
  t.equal(next.kind === 'accepted' && next.queued, true);
  big.reportMemory(10);
  if (next.kind === 'accepted') t.ok(await next.lease);
});

t.test('fragments run through the MLFQ; their CPU is charged to the group; CPU limits throttle and quota regenerates with time', async (t) => {
  const { wlm, request, clock, running } = manager({ cpu_quota_period_ms: 10_000, resource_groups: { root: { hard_concurrency_limit: 5, soft_concurrency_limit: 5, soft_cpu_limit_ms: 1000 } } });
  const a = await running({ workloadClass: 'batch' });
  const b = await running({ workloadClass: 'batch' });
  let quanta = 0;
  await a.runFragment(async (q) => {
    t.equal(q.level, quanta === 0 ? 0 : 1);
    quanta++;
    return { cpuMs: 1500, finished: quanta === 2 };
  });
  t.equal(wlm.resourceGroupRows()[0]!.cumulativeCpuMs, 3000);
  t.equal(wlm.mlfqStats().levelScheduledMs.reduce((x, y) => x + y, 0), 3000);
  t.equal(wlm.resourceGroupRows()[0]!.effectiveConcurrencyLimit, 1, '3000 ms ≥ the hard CPU limit of 2000 ms: effective concurrency 1');
  const c = wlm.admit(request());
  t.equal(c.kind === 'accepted' && c.queued, true, 'two run, effective limit 1: queued');
  b.release();
  a.release();
  t.equal(wlm.resourceGroupRows()[0]!.running, 1, 'over the hard CPU limit one query still runs: c started when a and b left');
  if (c.kind !== 'accepted') throw new Error('rejected');
  const cl = await c.lease;
  const d = wlm.admit(request());
  t.equal(d.kind === 'accepted' && d.queued, true, 'c runs; d waits for quota');
  // 2000 ms of quota per 10 s drains 200 ms/s. With c running, d needs an effective limit of 2:
  // floor(5 - 4 × (usage - 1000) / 1000) ≥ 2 once usage ≤ 1750, i.e. after 6.25 s; ticks are 1 s apart.
  clock.advance(10_001);
  if (d.kind !== 'accepted') throw new Error('rejected');
  const dl = await d.lease;
  t.equal(dl.queuedMs, 7000, 'started on the first quota tick after the linear penalty allowed 2');
  cl.release(); dl.release();
  t.equal(clock.pending, 0, 'the quota tick stops when nothing waits');
});

t.test('reload keeps queued queries and applies the new limits', async (t) => {
  const { wlm, request, running } = manager({ resource_groups: { root: { hard_concurrency_limit: 1 } } });
  const first = await running();
  const queued = [wlm.admit(request()), wlm.admit(request())];
  wlm.reload(resolveWorkloadConfig({ resource_groups: { root: { hard_concurrency_limit: 2, subgroups: [{ name: 'new' }] } } }));
  const [q1, q2] = queued;
  if (q1?.kind !== 'accepted' || q2?.kind !== 'accepted') throw new Error('rejected');
  const l1 = await q1.lease;
  t.equal(wlm.resourceGroupRows()[0]!.queued, 1, 'one started under the new limit, one still waits');
  first.release();
  const l2 = await q2.lease;
  t.same(wlm.resourceGroupRows().map((r) => r.path), ['/root', '/root/new']);
  l1.release(); l2.release();
});

t.test('visibility: QoS stats exactly as the spec, SHOW RESOURCE GROUPS and system.resource_groups from one provider, Prometheus', async (t) => {
  const { wlm, request, registry, running } = manager({
    // no reserved interactive slot here: two shared slots held, the third quantum waits
    mlfq: { max_concurrent: 2, interactive_slots: 0 },
    resource_groups: { root: { hard_concurrency_limit: 3, scheduling_policy: 'weighted', subgroups: [{ name: 'bi', scheduling_weight: 2 }, { name: 'etl', hard_concurrency_limit: 1 }] } },
    routing_rules: [{ match_source: 'etl', target_group: 'root.etl' }, { match_source: 'bi', target_group: 'root.bi' }],
  });
  const leases = [await running({ source: 'bi' }), await running({ source: 'bi' }), await running({ source: 'etl', workloadClass: 'batch', priority: PRIORITY.low })];
  wlm.admit(request({ source: 'etl' }));
  wlm.admit(request({ source: 'bi' }));
  // two fragments hold both MLFQ slots; a third waits at level 0
  const gates: (() => void)[] = [];
  const frag = () => new Promise<{ cpuMs: number; finished: boolean }>((r) => gates.push(() => r({ cpuMs: 10, finished: true })));
  const f = leases.map((l) => l.runFragment(frag));
  await flush();
  const stats = qosStats(wlm);
  t.same(Object.keys(stats).sort(), ['mlfq', 'resource_groups']);
  t.same(Object.keys(stats.mlfq).sort(), ['level_queue_depths', 'level_scheduled_ms', 'max_concurrent', 'running', 'tracked_queries']);
  t.same(stats.resource_groups, [
    { path: '/root', running: 3, queued: 2, hard_concurrency_limit: 3, scheduling_policy: 'weighted' },
    { path: '/root/bi', running: 2, queued: 1, hard_concurrency_limit: 100, scheduling_policy: 'fair' },
    { path: '/root/etl', running: 1, queued: 1, hard_concurrency_limit: 1, scheduling_policy: 'fair' },
  ]);
  t.same(stats.mlfq, { running: 2, max_concurrent: 2, level_queue_depths: [1, 0, 0, 0, 0], level_scheduled_ms: [0, 0, 0, 0, 0], tracked_queries: 3 });
  t.same(JSON.parse(JSON.stringify(stats)), stats, 'plain JSON');

  const show = showResourceGroupRows(wlm);
  t.same(Object.keys(show[0]!), SHOW_RESOURCE_GROUPS_COLUMNS.map((c) => c.name));
  t.same(show[1], { path: '/root/bi', running: 2, queued: 1, hard_concurrency_limit: 100, soft_concurrency_limit: 100, scheduling_policy: 'fair', cumulative_cpu_ms: 0 });
  const system = systemResourceGroupRows(wlm);
  t.same(Object.keys(system[0]!), SYSTEM_RESOURCE_GROUPS_COLUMNS.map((c) => c.name));
  t.same(system.map((r) => r.path), show.map((r) => r.path));

  const text = await registry.metrics();
  const samples = parseExposition(text).samples;
  const value = (name: string, label: string, v: string) => samples.find((s) => s.name === name && [...s.labels.values()].includes(v) && s.labels.has(label))?.value;
  t.equal(value('floe_wlm_group_running_queries', 'group', '/root/bi'), 2);
  t.equal(value('floe_wlm_group_queued_queries', 'group', '/root'), 2);
  t.equal(value('floe_wlm_group_admitted_total', 'group', '/root/etl'), 1);
  t.equal(value('floe_mlfq_level_queue_depth', 'level', '0'), 1);
  t.ok(samples.some((s) => s.name === 'floe_wlm_queue_wait_seconds_bucket'), 'queue-wait histogram');
  while (gates.length) { gates.shift()!(); await flush(); }
  await Promise.all(f);
  const after = parseExposition(await registry.metrics()).samples;
  t.equal(after.find((s) => s.name === 'floe_mlfq_level_cpu_seconds_total' && s.labels.get('level') === '0')?.value, 0.03);
  t.equal(after.find((s) => s.name === 'floe_mlfq_level_selected_total' && s.labels.get('level') === '0')?.value, 3);
  t.same(qosStats(wlm).mlfq.level_scheduled_ms, [30, 0, 0, 0, 0]);
  leases.forEach((l) => l.release());
});

t.test('a query killed while its fragment waits for a worker: the fragment rejects with the kill reason', async (t) => {
  const { running, clock } = manager({ mlfq: { max_concurrent: 1, interactive_slots: 0 } });
  const a = await running();
  const b = await running({ requestTimeoutMs: 100 });
  let release!: () => void;
  const fa = a.runFragment(() => new Promise((r) => { release = () => r({ cpuMs: 1, finished: true }); }));
  const fb = b.runFragment(async () => ({ cpuMs: 1, finished: true }));
  await flush();
  clock.advance(100);
  await t.rejects(fb, { code: 'QUERY_TIMEOUT' });
  release();
  await fa;
  b.release();
  await t.rejects(b.runFragment(async () => ({ cpuMs: 1, finished: true })), { code: 'QUERY_TIMEOUT' }, 'after release: no more fragments');
  a.release();
});

t.test('createWorkloadManager: the server wiring from the operator section and a registry', async (t) => {
  const { createWorkloadManager } = await import('../../engine/wlm/index.js');
  const registry = new Registry();
  const clock = new VirtualClock();
  const wlm = createWorkloadManager({ spec: { resource_groups: { root: { subgroups: [{ name: 'bi' }] } }, routing_rules: [{ match_source: 'bi', target_group: 'root.bi' }] }, registry, clock });
  const ticket = wlm.admit({ queryId: 'x', tenant: 't', user: 'u', source: 'bi', resourcePool: null, queryType: 'select', workloadClass: 'medium', ...wlm.classLimits('medium') });
  t.equal(ticket.groupPath, '/root/bi');
  if (ticket.kind === 'accepted') (await ticket.lease).release();
  const text = await registry.metrics();
  t.match(text, /floe_wlm_group_admitted_total\{group="\/root\/bi"\} 1/);
  t.match(text, /floe_mlfq_level_queue_depth\{level="4"\} 0/);
  t.equal(clock.pending, 0);
});

t.test('rejectEarly: a full queue is refused before admission, counted once, and nothing is held', async (t) => {
  const { wlm, request, registry } = manager({ resource_groups: { root: { subgroups: [{ name: 'tiny', hard_concurrency_limit: 1, max_queued_queries: 0 }] } }, routing_rules: [{ match_source: 'tiny', target_group: 'root.tiny' }] });
  const routing = { tenant: 't1', user: 'alice', source: 'tiny', resourcePool: null, queryType: 'select' };
  t.equal(wlm.rejectEarly(routing), null, 'room to run');
  const first = wlm.admit(request({ source: 'tiny' }));
  t.equal(first.kind, 'accepted');
  const early = wlm.rejectEarly(routing);
  t.equal(early?.groupPath, '/root/tiny');
  t.equal(early?.error.code, 'QUEUE_FULL');
  t.equal(early?.error.message, 'resource group /root/tiny queue is full (max_queued_queries = 0)');
  t.equal(wlm.rejectEarly({ ...routing, source: null }), null, 'another group has room');
  t.equal(wlm.activeQueries, 1);
  const row = wlm.resourceGroupRows().find((r) => r.path === '/root/tiny')!;
  t.same([row.running, row.queued, row.rejected], [1, 0, 1]);
  const samples = parseExposition(await registry.metrics()).samples;
  t.equal(samples.find((s) => s.name === 'floe_wlm_group_rejected_total' && s.labels.get('group') === '/root/tiny')?.value, 1);
  if (first.kind === 'accepted') (await first.lease).release();
});

t.test('property: every query is killed at its deadline (class or request timeout, queued or running) unless released first; one timer serves them all', async (t) => {
  type Op = { kind: 'admit'; cls: WorkloadClass; requestMs: number | null } | { kind: 'release'; pick: number } | { kind: 'advance'; ms: number };
  const op: fc.Arbitrary<Op> = fc.oneof(
    fc.record({ kind: fc.constant('admit' as const), cls: fc.constantFrom<WorkloadClass>('interactive', 'medium', 'batch'), requestMs: fc.option(fc.integer({ min: 1, max: 40_000 }), { nil: null }) }),
    fc.record({ kind: fc.constant('release' as const), pick: fc.nat(100) }),
    fc.record({ kind: fc.constant('advance' as const), ms: fc.integer({ min: 0, max: 20_000 }) }),
  );
  await fc.assert(fc.asyncProperty(fc.array(op, { minLength: 1, maxLength: 60 }), async (ops) => {
    const { wlm, request, clock, config } = manager({ resource_groups: { root: { hard_concurrency_limit: 2 } } });
    type Tracked = { deadline: number; released: boolean; lease: QueryLease | null; rejected: FloeError | null; queued: boolean };
    const all: Tracked[] = [];
    const settle = async () => { for (let i = 0; i < 3; i++) await flush(); };
    const killed = (q: Tracked) => q.rejected !== null || (q.lease !== null && q.lease.signal.aborted);
    for (const o of ops) {
      if (o.kind === 'admit') {
        const limit = config.classes[o.cls].timeoutMs;
        const req = request({ workloadClass: o.cls, requestTimeoutMs: o.requestMs });
        const ticket = wlm.admit(req);
        if (ticket.kind !== 'accepted') throw new Error('rejected');
        const q: Tracked = { deadline: clock.now() + (o.requestMs !== null && o.requestMs < limit ? o.requestMs : limit), released: false, lease: null, rejected: null, queued: ticket.queued };
        ticket.lease.then((l) => { q.lease = l; }, (e: FloeError) => { q.rejected = e; });
        all.push(q);
      } else if (o.kind === 'release') {
        const open = all.filter((q) => !q.released && q.lease !== null);
        if (open.length > 0) {
          const q = open[o.pick % open.length]!;
          q.released = true;
          q.lease!.release();
        }
      } else {
        clock.advance(o.ms);
      }
      await settle();
      for (const q of all) {
        if (q.released) continue;
        const due = clock.now() >= q.deadline;
        if (due !== killed(q)) throw new Error(`deadline ${q.deadline}, now ${clock.now()}: killed ${killed(q)}`);
        const e = q.rejected ?? (q.lease?.signal.reason as FloeError | undefined);
        if (due && e?.code !== 'QUERY_TIMEOUT') throw new Error(`killed with ${String(e)}`);
      }
      if (clock.pending > 1) throw new Error(`${clock.pending} timers pending: one should serve every deadline`);
    }
    // Release everything; queued queries start as slots free, then are released in turn.
    for (let round = 0; round <= all.length; round++) {
      for (const q of all) {
        if (!q.released && q.lease) { q.released = true; q.lease.release(); }
      }
      await settle();
    }
    return wlm.activeQueries === 0 && clock.pending === 0;
  }), { numRuns: 150 });
  t.pass('deadlines exact, one timer, none left');
});
