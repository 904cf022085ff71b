/**
 * Catalog throughput and latency over real HTTP on loopback, with the server in its own process
 * (`floe serve`) on PostgreSQL:
 * - loadTable (GET .../tables/{table}) with 1, 16 and 64 concurrent clients;
 * - commits (add-snapshot + set-snapshot-ref main with assert-ref-snapshot-id, as the SQL engine
 *   appends) with 1, 16 and 64 clients over 16 tables (64 clients: four per table, so conflicts
 *   happen and are retried; conflicts are counted, not timed as successes);
 * - a baseline in the same run: GET /health through the same auth hook, 64 clients. Results are
 *   reported as ratios to it too, since the machine is shared and absolute numbers are noisy.
 * Each level runs three times (BENCH_REPEATS) and keeps the median run, as the machine is shared.
 * Targets: loadTable >= 3000 req/s with p99 <= 20 ms at 64 clients; >= 300 commits/s across
 * 16 tables (16 clients, one per table).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Pool } from 'undici';
import { parseJson, stringifyJson } from '../catalog/iceberg/json.js';
import { createPostgresDatabase } from '../tests/helpers/stores.js';
import { startCli } from '../tests/helpers/cli.js';
import { atLeast, atMost, percentile, writeBenchResult } from './report.js';

const CLIENT_ID = 'floe_bench_admin';
const CLIENT_SECRET = 'fcs_bench-secret-0123456789abcdefghij';
const SECONDS = Number(process.env.BENCH_SECONDS ?? 3);
const REPEATS = Number(process.env.BENCH_REPEATS ?? 3);
const LEVELS = [1, 16, 64] as const;
const TABLES = 16;

interface Run {
  readonly clients: number;
  readonly allRunsPerSecond?: readonly number[];
  readonly requests: number;
  readonly conflicts: number;
  readonly perSecond: number;
  readonly p50Ms: number;
  readonly p99Ms: number;
}

async function main(): Promise<void> {
  const db = await createPostgresDatabase();
  if (db === undefined) throw new Error('bench/catalog needs PostgreSQL on 127.0.0.1:5432');
  const dataDir = mkdtempSync(join(tmpdir(), 'floe-bench-catalog-'));
  const server = await startCli(['--port', '0', '--data-dir', dataDir], {
    FLOE_DATABASE_URL: db.url, FLOE__STORE__POOL_SIZE: '32', UV_THREADPOOL_SIZE: process.env.UV_THREADPOOL_SIZE ?? '16', FLOE_LOG_LEVEL: 'silent', FLOE_BOOTSTRAP_CLIENT_ID: CLIENT_ID, FLOE_BOOTSTRAP_CLIENT_SECRET: CLIENT_SECRET,
  });
  const pool = new Pool(server.url, { connections: 64, pipelining: 1 });
  try {
    const tokenResponse = await pool.request({ method: 'POST', path: '/v1/oauth/tokens', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: new URLSearchParams({ grant_type: 'client_credentials', client_id: CLIENT_ID, client_secret: CLIENT_SECRET }).toString() });
    const token = ((await tokenResponse.body.json()) as { access_token: string }).access_token;
    /** A request whose body the client does not parse (the client must not steal the server's CPU). */
    const status = async (path: string): Promise<number> => {
      const r = await pool.request({ method: 'GET', path, headers: { authorization: `Bearer ${token}` } });
      await r.body.dump();
      return r.statusCode;
    };
    const call = async (method: 'GET' | 'POST', path: string, body?: unknown): Promise<{ status: number; body: any }> => {
      const r = await pool.request({ method, path, headers: { authorization: `Bearer ${token}`, ...(body !== undefined ? { 'content-type': 'application/json' } : {}) }, ...(body !== undefined ? { body: stringifyJson(body) } : {}) });
      const text = await r.body.text();
      return { status: r.statusCode, body: text === '' ? undefined : parseJson(text) };
    };
    const schema = { type: 'struct', 'schema-id': 0, fields: [{ id: 1, name: 'id', type: 'long', required: true }, { id: 2, name: 'v', type: 'string', required: false }] };
    await call('POST', '/v1/default/namespaces', { namespace: ['bench'] });
    await call('POST', '/v1/default/namespaces/bench/tables', { name: 'read', schema });

    /** Runs `op` from `clients` loops for SECONDS; `op` returns false for a conflict. */
    const measureOnce = async (clients: number, op: (client: number) => Promise<boolean>): Promise<Run> => {
      const latencies: number[] = [];
      let conflicts = 0;
      const end = performance.now() + SECONDS * 1000;
      const start = performance.now();
      await Promise.all(Array.from({ length: clients }, async (_, c) => {
        while (performance.now() < end) {
          const t0 = performance.now();
          if (await op(c)) latencies.push(performance.now() - t0);
          else conflicts++;
        }
      }));
      const elapsed = (performance.now() - start) / 1000;
      latencies.sort((a, b) => a - b);
      return { clients, requests: latencies.length, conflicts, perSecond: latencies.length / elapsed, p50Ms: percentile(latencies, 50), p99Ms: percentile(latencies, 99) };
    };
    /** The machine is shared: each level runs REPEATS times and the median run (by throughput) is kept. */
    const measure = async (clients: number, op: (client: number) => Promise<boolean>, setup?: () => Promise<void>): Promise<Run> => {
      const runs: Run[] = [];
      for (let i = 0; i < REPEATS; i++) {
        await setup?.();
        runs.push(await measureOnce(clients, op));
      }
      runs.sort((a, b) => a.perSecond - b.perSecond);
      return { ...(runs[Math.floor(runs.length / 2)] as Run), allRunsPerSecond: runs.map((r) => Math.round(r.perSecond)) } as Run;
    };

    // Warm-up (connections, JIT, metadata cache).
    await measureOnce(16, async () => (await status('/v1/default/namespaces/bench/tables/read')) === 200);

    const baseline = await measure(64, async () => (await status('/health')) === 200);
    const loads: Run[] = [];
    for (const clients of LEVELS) {
      loads.push(await measure(clients, async () => {
        const code = await status('/v1/default/namespaces/bench/tables/read');
        if (code !== 200) throw new Error(`load failed: ${code}`);
        return true;
      }));
    }

    const commits: Run[] = [];
    let generation = 0;
    for (const clients of LEVELS) {
      const tables = Math.min(clients, TABLES);
      let names: string[] = [];
      const state = new Map<string, any>();
      // Fresh tables for every repeat, so metadata size does not grow from run to run.
      const setup = async (): Promise<void> => {
        generation++;
        names = Array.from({ length: tables }, (_, i) => `w${clients}_${generation}_${i}`);
        state.clear();
        for (const name of names) state.set(name, (await call('POST', '/v1/default/namespaces/bench/tables', { name, schema })).body);
      };
      let nextId = BigInt(clients) * 10_000_000n;
      commits.push(await measure(clients, async (c) => {
        const name = names[c % tables] as string;
        const path = `/v1/default/namespaces/bench/tables/${name}`;
        const current = state.get(name);
        const m = current.metadata;
        const parent = m['current-snapshot-id'] === -1 ? null : m['current-snapshot-id'];
        const id = nextId++;
        const r = await call('POST', path, {
          requirements: [{ type: 'assert-ref-snapshot-id', ref: 'main', 'snapshot-id': parent }],
          updates: [
            { action: 'add-snapshot', snapshot: { 'snapshot-id': id, ...(parent !== null ? { 'parent-snapshot-id': parent } : {}), 'sequence-number': Number(m['last-sequence-number']) + 1, 'timestamp-ms': Date.now(), 'manifest-list': `${m.location}/metadata/snap-${id}.avro`, summary: { operation: 'append' }, 'schema-id': 0 } },
            { action: 'set-snapshot-ref', 'ref-name': 'main', type: 'branch', 'snapshot-id': id },
          ],
        });
        if (r.status === 200) {
          state.set(name, r.body);
          return true;
        }
        if (r.status !== 409) throw new Error(`commit failed: ${r.status} ${stringifyJson(r.body)}`);
        state.set(name, (await call('GET', path)).body);
        return false;
      }, setup));
    }

    const at = (runs: Run[], clients: number): Run => runs.find((r) => r.clients === clients) as Run;
    const load64 = at(loads, 64);
    const commit16 = at(commits, 16);
    const metrics = {
      seconds_per_run: SECONDS,
      store: 'postgres',
      transport: 'HTTP/1.1 keep-alive on loopback, server in its own process',
      baseline_health_64: baseline,
      load_table: loads,
      commit: commits,
      load_table_64_vs_health_ratio: load64.perSecond / baseline.perSecond,
      commit_16_vs_health_ratio: commit16.perSecond / baseline.perSecond,
    };
    writeBenchResult('catalog', metrics, {
      load_table_per_second_64: atLeast(load64.perSecond, 3000),
      load_table_p99_ms_64: atMost(load64.p99Ms, 20),
      commits_per_second_16_tables: atLeast(commit16.perSecond, 300),
    }, `loadTable ${LEVELS.map((c) => `${c}c ${Math.round(at(loads, c).perSecond)}/s p99 ${at(loads, c).p99Ms.toFixed(1)}ms`).join(', ')}; commits ${LEVELS.map((c) => `${c}c ${Math.round(at(commits, c).perSecond)}/s p99 ${at(commits, c).p99Ms.toFixed(1)}ms`).join(', ')}; health baseline ${Math.round(baseline.perSecond)}/s`);
  } finally {
    await pool.close();
    await server.stop();
    await db.drop();
    rmSync(dataDir, { recursive: true, force: true });
  }
}

await main();
