import t from 'tap';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadConfig } from '../../server/config.js';
import { CLASS_DEFAULTS, PRIORITY, displayPath, resolveWorkloadConfig, type WorkloadConfigSpec } from '../../engine/wlm/config.js';
import { route, type RoutingRequest } from '../../engine/wlm/routing.js';

const dir = mkdtempSync(join(tmpdir(), 'floe-wlm-config-'));
const yamlFile = (text: string): string => {
  const path = join(dir, `${Math.random().toString(36).slice(2)}.yaml`);
  writeFileSync(path, text);
  return path;
};

t.test('defaults: one root group with the spec values, the class table, the MLFQ levels', async (t) => {
  const c = resolveWorkloadConfig(undefined);
  t.same(
    { hard: c.root.hardConcurrencyLimit, soft: c.root.softConcurrencyLimit, queued: c.root.maxQueuedQueries, mem: c.root.softMemoryLimitBytes, softCpu: c.root.softCpuLimitMs, hardCpu: c.root.hardCpuLimitMs, policy: c.root.schedulingPolicy, weight: c.root.schedulingWeight },
    { hard: 100, soft: 100, queued: 1000, mem: null, softCpu: null, hardCpu: null, policy: 'fair', weight: 1 },
  );
  t.equal(c.root.path, 'root');
  t.same(c.classes.interactive, { priority: PRIORITY.high, timeoutMs: 30_000, memoryCapBytes: 1024 ** 3 });
  t.same(c.classes.medium, { priority: PRIORITY.normal, timeoutMs: 180_000, memoryCapBytes: 4 * 1024 ** 3 });
  t.same(c.classes.batch, { priority: PRIORITY.low, timeoutMs: 600_000, memoryCapBytes: 8 * 1024 ** 3 });
  t.same(c.mlfq.levelThresholdsSeconds, [0, 1, 10, 60, 300]);
  t.equal(c.mlfq.levelTimeMultiplier, 2);
  t.same([c.mlfq.interactiveSlots, c.mlfq.backgroundNiceness], [1, 19], 'one reserved interactive slot; background lane at nice 19');
  t.equal(c.cpuQuotaPeriodMs, 60_000);
  t.equal(CLASS_DEFAULTS.interactive.timeout_ms, 30_000);
});

t.test('hard_cpu_limit_ms defaults to 2x soft; a lone hard limit is both; soft concurrency follows a small hard limit', async (t) => {
  const c = resolveWorkloadConfig({ resource_groups: { root: { subgroups: [
    { name: 'a', soft_cpu_limit_ms: 1000 },
    { name: 'b', hard_cpu_limit_ms: 5000 },
    { name: 'c', hard_concurrency_limit: 10 },
  ] } } });
  const [a, b, cc] = c.root.subgroups;
  t.same([a!.softCpuLimitMs, a!.hardCpuLimitMs], [1000, 2000]);
  t.same([b!.softCpuLimitMs, b!.hardCpuLimitMs], [5000, 5000]);
  t.same([cc!.hardConcurrencyLimit, cc!.softConcurrencyLimit], [10, 10]);
  t.equal(a!.path, 'root.a');
  t.equal(displayPath('root.a.b'), '/root/a/b');
});

t.test('bad trees are refused with the key named', async (t) => {
  const bad = (spec: WorkloadConfigSpec, message: RegExp, what: string): void => {
    t.throws(() => resolveWorkloadConfig(spec), { name: 'WorkloadConfigError', message }, what);
  };
  bad({ resource_groups: { root: { subgroups: [{ name: 'a' }, { name: 'b', hard_concurrency_limit: 0 }] } } },
    /workload\.resource_groups\.root\.subgroups\[1\]\.hard_concurrency_limit must be ≥ 1/, 'hard limit 0');
  bad({ resource_groups: { root: { subgroups: [{ name: 'a' }, { name: 'a' }] } } },
    /subgroups\[1\]\.name "a" duplicates workload\.resource_groups\.root\.subgroups\[0\]\.name/, 'duplicate sibling names');
  bad({ resource_groups: { root: { subgroups: [{}] } } }, /subgroups\[0\]\.name is required/, 'missing name');
  bad({ routing_rules: [{ match_user: 'u', target_group: 'root.nope' }] }, /routing_rules\[0\]\.target_group "root\.nope" is not a resource group/, 'unknown target');
  bad({ resource_groups: { root: { soft_concurrency_limit: 20, hard_concurrency_limit: 10 } } }, /root\.soft_concurrency_limit \(20\) must be ≤ hard_concurrency_limit \(10\)/, 'soft > hard');
  bad({ resource_groups: { root: { soft_cpu_limit_ms: 20, hard_cpu_limit_ms: 10 } } }, /soft_cpu_limit_ms \(20\) must be ≤ hard_cpu_limit_ms \(10\)/, 'soft cpu > hard cpu');
  bad({ mlfq: { level_thresholds_seconds: [1, 2, 3, 4, 5] } }, /level_thresholds_seconds\[0\] must be 0/, 'thresholds from 0');
  bad({ mlfq: { level_thresholds_seconds: [0, 10, 5, 60, 300] } }, /level_thresholds_seconds\[2\] must be greater/, 'rising thresholds');
  bad({ classes: { interactive: { timeout_ms: 0 } } }, /workload\.classes\.interactive\.timeout_ms/, 'class timeout');
  bad({ resource_groups: { root: { name: 'top' } } }, /root\.name must be "root"/, 'root renamed');
  // Every problem is listed, not just the first.
  t.throws(() => resolveWorkloadConfig({ resource_groups: { root: { hard_concurrency_limit: 0, max_queued_queries: -1 } } }), /hard_concurrency_limit[\s\S]*max_queued_queries/);
});

t.test('the server configuration carries the workload section: schema errors and tree errors name the key', async (t) => {
  const good = loadConfig({ env: {}, file: yamlFile([
    'workload:',
    '  resource_groups:',
    '    root:',
    '      hard_concurrency_limit: 20',
    '      scheduling_policy: weighted',
    '      subgroups:',
    '        - name: dashboards',
    '          scheduling_weight: 3',
    '        - name: etl',
    '          soft_cpu_limit_ms: 60000',
    '  routing_rules:',
    '    - match_source: grafana',
    '      target_group: root.dashboards',
    '  classes:',
    '    interactive:',
    '      timeout_ms: 5000',
    '',
  ].join('\n')) });
  const w = resolveWorkloadConfig(good.workload);
  t.equal(w.root.subgroups[0]!.schedulingWeight, 3);
  t.equal(w.root.subgroups[1]!.hardCpuLimitMs, 120_000);
  t.equal(w.classes.interactive.timeoutMs, 5000);
  t.equal(w.classes.medium.timeoutMs, 180_000, 'other classes keep their defaults');
  t.equal(w.routingRules[0]!.targetGroup, 'root.dashboards');

  t.throws(() => loadConfig({ env: {}, file: yamlFile('workload:\n  resource_groups:\n    root:\n      subgroups:\n        - name: a\n        - name: b\n          hard_concurrency_limit: 0\n') }),
    { name: 'ConfigError', message: /workload\.resource_groups\.root\.subgroups\[1\]\.hard_concurrency_limit: must be >= 1/ });
  t.throws(() => loadConfig({ env: {}, file: yamlFile('workload:\n  resource_groups:\n    root:\n      scheduling_policy: lottery\n') }),
    /workload\.resource_groups\.root\.scheduling_policy: must be one of fair, weighted, query_priority/);
  t.throws(() => loadConfig({ env: {}, file: yamlFile('workload:\n  resource_groups:\n    root:\n      hard_concurency_limit: 3\n') }),
    /unknown key workload\.resource_groups\.root\.hard_concurency_limit/);
  t.throws(() => loadConfig({ env: {}, file: yamlFile('workload:\n  routing_rules:\n    - match_user: bob\n      target_group: root.missing\n') }),
    { name: 'ConfigError', message: /workload\.routing_rules\[0\]\.target_group "root\.missing" is not a resource group/ });
  t.throws(() => loadConfig({ env: {}, file: yamlFile('workload:\n  resource_groups:\n    root:\n      subgroups:\n        - name: a\n        - name: a\n') }), /duplicates/);
  t.equal(loadConfig({ env: { FLOE__WORKLOAD__MLFQ__MAX_CONCURRENT: '8' } }).workload.mlfq?.max_concurrent, 8, 'environment override');
  t.throws(() => loadConfig({ env: {}, file: yamlFile('workload:\n  mlfq:\n    background_niceness: 20\n') }), /workload\.mlfq\.background_niceness: must be <= 19/);
  t.throws(() => loadConfig({ env: {}, file: yamlFile('workload:\n  mlfq:\n    interactive_slots: -1\n') }), /workload\.mlfq\.interactive_slots: must be >= 0/);
  const lanes = resolveWorkloadConfig(loadConfig({ env: {}, file: yamlFile('workload:\n  mlfq:\n    interactive_slots: 0\n    background_niceness: 0\n') }).workload);
  t.same([lanes.mlfq.interactiveSlots, lanes.mlfq.backgroundNiceness], [0, 0], 'both can be turned off');
  t.throws(() => resolveWorkloadConfig({ mlfq: { background_niceness: 25 } }), /workload\.mlfq\.background_niceness must be an integer from 0 to 19/, 'checked without the schema too');
});

t.test('routing: top to bottom, first match wins, each field, else root', async (t) => {
  const w = resolveWorkloadConfig({
    resource_groups: { root: { subgroups: [
      { name: 'a', subgroups: [{ name: 'b' }] }, { name: 'tenant' }, { name: 'user' }, { name: 'source' }, { name: 'pool' }, { name: 'writes' },
    ] } },
    routing_rules: [
      { match_tenant: 't1', match_user: 'alice', target_group: 'root.a.b' },
      { match_tenant: 't1', target_group: 'root.tenant' },
      { match_user: 'bob', target_group: 'root.user' },
      { match_source: 'grafana', target_group: 'root.source' },
      { match_resource_pool: 'etl', target_group: 'root.pool' },
      { match_query_type: 'insert', target_group: 'root.writes' },
      { match_user: 'alice', target_group: 'root.user' },
    ],
  });
  const req = (over: Partial<RoutingRequest>): RoutingRequest => ({ tenant: 't0', user: 'carol', source: null, resourcePool: null, queryType: 'select', ...over });
  t.equal(route(w.routingRules, req({ tenant: 't1', user: 'alice' })), 'root.a.b', 'all fields of a rule must match; first rule wins');
  t.equal(route(w.routingRules, req({ tenant: 't1', user: 'bob' })), 'root.tenant', 'a later rule does not override an earlier match');
  t.equal(route(w.routingRules, req({ user: 'bob' })), 'root.user');
  t.equal(route(w.routingRules, req({ source: 'grafana' })), 'root.source');
  t.equal(route(w.routingRules, req({ resourcePool: 'etl' })), 'root.pool');
  t.equal(route(w.routingRules, req({ queryType: 'INSERT' })), 'root.writes', 'query type without case');
  t.equal(route(w.routingRules, req({ user: 'alice' })), 'root.user', 'rule 1 needs tenant t1 too');
  t.equal(route(w.routingRules, req({})), 'root', 'no match: root');
  t.equal(route([], req({ user: 'constructor' })), 'root');
  t.equal(displayPath(route(w.routingRules, req({ tenant: 't1', user: 'alice' }))), '/root/a/b', 'history form');
});
