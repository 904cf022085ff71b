/**
 * /metrics parses as Prometheus text with the process, HTTP and token metrics; the management
 * listener serves health and metrics without a token and nothing else.
 */
import t from 'tap';
import { openStore } from '../catalog/store/open-store.js';
import { buildManagementServer } from '../server/app.js';
import { parseExposition } from './helpers/prometheus.js';
import { startTestServer } from './helpers/server.js';
import { createMetrics } from '../server/metrics.js';

const store = await openStore({ kind: 'pglite-memory' });
const server = await startTestServer(store);
const management = await buildManagementServer(server.state);
t.teardown(async () => {
  await management.close();
  await server.close();
});

t.test('metrics on the main listener need a token and parse as Prometheus text', async (t) => {
  t.equal((await server.app.inject({ method: 'GET', url: '/metrics' })).statusCode, 401);
  const token = await server.token();
  await server.app.inject({ method: 'GET', url: '/v1/config' });
  const r = await server.app.inject({ method: 'GET', url: '/metrics', headers: { authorization: `Bearer ${token}` } });
  t.equal(r.statusCode, 200);
  t.match(r.headers['content-type'], /^text\/plain; version=0\.0\.4/);
  const exposition = parseExposition(r.body);
  t.equal(exposition.types.get('process_cpu_user_seconds_total'), 'counter', 'process metrics');
  t.equal(exposition.types.get('floe_http_request_duration_seconds'), 'histogram');
  t.equal(exposition.types.get('floe_oauth_token_requests_total'), 'counter');
  t.equal(exposition.types.get('floe_query_history_pending_records'), 'gauge', 'history backlog');
  t.equal(exposition.types.get('floe_query_history_dropped_records_total'), 'counter');
  for (const name of ['floe_file_cache_hits_total', 'floe_file_cache_misses_total', 'floe_file_cache_fetched_bytes_total', 'floe_file_cache_evictions_total']) t.equal(exposition.types.get(name), 'counter', name);
  t.equal(exposition.samples.find((s) => s.name === 'floe_file_cache_max_bytes')?.value, 4 * 1024 ** 3, 'the cache budget');
  const configCount = exposition.samples.find((s) => s.name === 'floe_http_request_duration_seconds_count' && s.labels.get('route') === '/v1/config' && s.labels.get('status_code') === '200');
  t.ok(configCount && configCount.value >= 1, 'the /v1/config request is in the histogram by route and status');
  const issued = exposition.samples.find((s) => s.name === 'floe_oauth_token_requests_total' && s.labels.get('grant_type') === 'client_credentials' && s.labels.get('outcome') === 'success');
  t.ok(issued && issued.value >= 1, 'tokens issued by grant and outcome');
});

t.test('the exposition reader refuses malformed text (so the test above can fail)', async (t) => {
  t.throws(() => parseExposition('# TYPE x counter\nx{a="1" 3\n'));
  t.throws(() => parseExposition('y 1\n'), /undeclared/);
  t.throws(() => parseExposition('# TYPE x counter\nx abc\n'));
});

t.test('management listener: no token needed, only operational routes', async (t) => {
  t.equal((await management.inject({ method: 'GET', url: '/health' })).statusCode, 200);
  const ready = await management.inject({ method: 'GET', url: '/health/ready' });
  t.equal(ready.statusCode, 200);
  t.equal(ready.json().status, 'ready');
  const metrics = await management.inject({ method: 'GET', url: '/metrics' });
  t.equal(metrics.statusCode, 200);
  t.ok(parseExposition(metrics.body).types.size > 10);
  t.equal((await management.inject({ method: 'POST', url: '/v1/oauth/tokens' })).statusCode, 404);
  t.equal((await management.inject({ method: 'GET', url: '/v1/config' })).statusCode, 404);
});

t.test('management readiness turns 503 when the store is gone', async (t) => {
  const other = await openStore({ kind: 'pglite-memory' });
  const s = await startTestServer(other);
  const m = await buildManagementServer(s.state);
  await other.close();
  const r = await m.inject({ method: 'GET', url: '/health/ready' });
  t.equal(r.statusCode, 503);
  t.match(r.json().reason, /metadata store unreachable/);
  await m.close();
  await s.app.close();
});

t.test('the HTTP histogram counts each request in its bucket, cumulatively, by method, route and status', async (t) => {
  const metrics = createMetrics();
  for (const seconds of [0.0001, 0.0005, 0.002, 0.002, 0.04, 31]) metrics.observeHttp('POST', '/api/query', 200, seconds);
  metrics.observeHttp('GET', '/v1/config', 401, 0.003);
  metrics.observeHttp('GET', '/v1/config', 401, Number.NaN);
  const exposition = parseExposition(await metrics.registry.metrics());
  t.equal(exposition.types.get('floe_http_request_duration_seconds'), 'histogram');
  const of = (name: string, labels: Record<string, string>) => exposition.samples.filter((s) => s.name === name && Object.entries(labels).every(([k, v]) => s.labels.get(k) === v));
  const query = { method: 'POST', route: '/api/query', status_code: '200' };
  const bucket = (le: string) => of('floe_http_request_duration_seconds_bucket', { ...query, le })[0]?.value;
  t.equal(bucket('0.0005'), 2, 'le is inclusive');
  t.equal(bucket('0.001'), 2);
  t.equal(bucket('0.0025'), 4);
  t.equal(bucket('0.05'), 5);
  t.equal(bucket('30'), 5);
  t.equal(bucket('+Inf'), 6);
  t.equal(of('floe_http_request_duration_seconds_count', query)[0]?.value, 6);
  t.ok(Math.abs(of('floe_http_request_duration_seconds_sum', query)[0]!.value - 31.0446) < 1e-9);
  t.equal(of('floe_http_request_duration_seconds_count', { method: 'GET', route: '/v1/config', status_code: '401' })[0]?.value, 1, 'a non-finite duration is not counted');
  t.equal(of('floe_http_request_duration_seconds_bucket', query).length, 16, 'one line per bound and +Inf');
  metrics.httpDuration.reset();
  t.equal(parseExposition(await metrics.registry.metrics()).samples.filter((s) => s.name.startsWith('floe_http_request_duration_seconds')).length, 0, 'reset empties it');
  metrics.observeHttp('POST', '/api/query', 200, 0.002);
  const again = parseExposition(await metrics.registry.metrics()).samples.filter((s) => s.name === 'floe_http_request_duration_seconds_count');
  t.same(again.map((s) => [s.labels.get('route'), s.value]), [['/api/query', 1]], 'a kept series counts again after a reset');
});
