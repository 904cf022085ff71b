/**
 * bench/token: client-credentials tokens per second and `GET /v1/config` requests per second over
 * real HTTP on loopback with 64 concurrent clients (issue 2). The server is the real `floe serve`
 * in its own process, so the load generator does not share its event loop; on a 2-core machine the
 * two still share the cores, which the figures include.
 *
 * Both store backends are measured: the embedded default (PGlite) and PostgreSQL when it answers on
 * 127.0.0.1:5432. The baseline measured in the same run is an empty Fastify route in a child
 * process (`GET /health` of the management listener, no token, no store): the ratio to it shows
 * what Floe's own work costs, whatever the machine's noise.
 *
 *   npm run bench -- token [--seconds N] [--clients N]
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Pool } from 'undici';
import { createPostgresDatabase } from '../tests/helpers/stores.js';
import { startCli, type RunningServer } from '../tests/helpers/cli.js';
import { atLeast, atMost, percentile, writeBenchResult } from './report.js';

const args = new Map<string, string>();
for (let i = 2; i < process.argv.length; i += 2) args.set(process.argv[i]!.replace(/^--/, ''), process.argv[i + 1] ?? '');
const SECONDS = Number(args.get('seconds') ?? 8);
const CLIENTS = Number(args.get('clients') ?? 64);
const WARMUP_SECONDS = 2;

const CLIENT_ID = 'floe_bench_admin';
const CLIENT_SECRET = 'fcs_bench-secret-0123456789abcdefghij';

interface LoadResult {
  readonly requests: number;
  readonly errors: number;
  readonly perSecond: number;
  readonly p50Ms: number;
  readonly p99Ms: number;
}

/** Runs `clients` closed loops of one request each for `seconds`; latencies after a warm-up. */
async function load(url: string, request: () => { method: 'GET' | 'POST'; path: string; headers?: Record<string, string>; body?: string }, seconds: number): Promise<LoadResult> {
  const pool = new Pool(url, { connections: CLIENTS, pipelining: 1 });
  const latencies: number[] = [];
  let errors = 0;
  const run = async (until: number, record: boolean): Promise<void> => {
    while (performance.now() < until) {
      const started = performance.now();
      try {
        const r = await pool.request(request());
        await r.body.arrayBuffer();
        if (r.statusCode !== 200) errors += record ? 1 : 0;
      } catch {
        if (record) errors++;
      }
      if (record) latencies.push(performance.now() - started);
    }
  };
  await Promise.all(Array.from({ length: CLIENTS }, () => run(performance.now() + WARMUP_SECONDS * 1000, false)));
  const started = performance.now();
  await Promise.all(Array.from({ length: CLIENTS }, () => run(started + seconds * 1000, true)));
  const elapsed = (performance.now() - started) / 1000;
  await pool.close();
  latencies.sort((a, b) => a - b);
  return {
    requests: latencies.length,
    errors,
    perSecond: Math.round(latencies.length / elapsed),
    p50Ms: round(percentile(latencies, 50)),
    p99Ms: round(percentile(latencies, 99)),
  };
}

function round(x: number): number {
  return Math.round(x * 100) / 100;
}

const tokenRequest = () => ({
  method: 'POST' as const,
  path: '/v1/oauth/tokens',
  headers: { 'content-type': 'application/x-www-form-urlencoded' },
  body: new URLSearchParams({ grant_type: 'client_credentials', client_id: CLIENT_ID, client_secret: CLIENT_SECRET, scope: 'catalog' }).toString(),
});
const configRequest = (token: string) => () => ({ method: 'GET' as const, path: '/v1/config', headers: { authorization: `Bearer ${token}` } });

async function serve(extraEnv: Record<string, string>, dataDir: string): Promise<RunningServer> {
  return startCli(['--port', '0', '--data-dir', dataDir], {
    FLOE_BOOTSTRAP_CLIENT_ID: CLIENT_ID,
    FLOE_BOOTSTRAP_CLIENT_SECRET: CLIENT_SECRET,
    FLOE_LOG_LEVEL: 'warn',
    FLOE_MANAGEMENT_LISTEN: '127.0.0.1:0',
    ...extraEnv,
  });
}

async function measure(backend: string, env: Record<string, string>): Promise<Record<string, LoadResult>> {
  const dir = mkdtempSync(join(tmpdir(), `floe-bench-token-${backend}-`));
  const server = await serve(env, dir);
  try {
    const { body, headers } = tokenRequest();
    const token = await fetch(`${server.url}/v1/oauth/tokens`, { method: 'POST', body, headers }).then((r) => r.json()) as { access_token: string };
    const tokens = await load(server.url, tokenRequest, SECONDS);
    const config = await load(server.url, configRequest(token.access_token), SECONDS);
    return { tokens, config };
  } finally {
    await server.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}

/** The baseline: Floe's own unauthenticated liveness route on the management listener. */
async function baseline(): Promise<LoadResult> {
  const dir = mkdtempSync(join(tmpdir(), 'floe-bench-token-base-'));
  const server = await serve({}, dir);
  try {
    const mgmt = /Management listener \(health, metrics\) on (http:\/\/[^\s]+)/.exec(server.banner)?.[1];
    if (!mgmt) throw new Error(`no management listener in the banner:\n${server.banner}`);
    return await load(mgmt, () => ({ method: 'GET', path: '/health' }), SECONDS);
  } finally {
    await server.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}

const results: Record<string, Record<string, LoadResult>> = {};
results.pglite = await measure('pglite', {});
const db = await createPostgresDatabase();
if (db) {
  try {
    results.postgres = await measure('postgres', { DATABASE_URL: db.url });
  } finally {
    await db.drop();
  }
}
const base = await baseline();

const best = results.postgres ?? results.pglite;
const metrics = {
  clients: CLIENTS, seconds: SECONDS,
  baseline_health_per_second: base.perSecond, baseline_health_p99_ms: base.p99Ms,
  ...Object.fromEntries(Object.entries(results).flatMap(([backend, r]) => Object.entries(r).flatMap(([what, x]) => [
    [`${backend}_${what}_per_second`, x.perSecond],
    [`${backend}_${what}_p50_ms`, x.p50Ms],
    [`${backend}_${what}_p99_ms`, x.p99Ms],
    [`${backend}_${what}_errors`, x.errors],
    [`${backend}_${what}_ratio_to_baseline`, round(x.perSecond / base.perSecond)],
  ]))),
};
const targets = {
  pglite_tokens_per_second: atLeast(results.pglite.tokens!.perSecond, 2000),
  pglite_tokens_p99_ms: atMost(results.pglite.tokens!.p99Ms, 20),
  pglite_config_per_second: atLeast(results.pglite.config!.perSecond, 10000),
  pglite_config_p99_ms: atMost(results.pglite.config!.p99Ms, 20),
  ...(results.postgres ? {
    postgres_tokens_per_second: atLeast(results.postgres.tokens!.perSecond, 2000),
    postgres_tokens_p99_ms: atMost(results.postgres.tokens!.p99Ms, 20),
    postgres_config_per_second: atLeast(results.postgres.config!.perSecond, 10000),
    postgres_config_p99_ms: atMost(results.postgres.config!.p99Ms, 20),
  } : {}),
};
writeBenchResult('token', metrics, targets,
  `token: ${best.tokens!.perSecond} tokens/s (p99 ${best.tokens!.p99Ms} ms), ${best.config!.perSecond} config req/s (p99 ${best.config!.p99Ms} ms) with ${CLIENTS} clients; baseline /health ${base.perSecond} req/s`);
