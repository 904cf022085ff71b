/** A Floe server for tests: real state over a given store, driven through Fastify's inject. */
import type { FastifyInstance } from 'fastify';
import type { MetaStore } from '../../catalog/store/meta-store.js';
import { buildServer } from '../../server/app.js';
import type { Clock } from '../../server/auth/key-ring.js';
import { DEFAULT_CONFIG, loadConfig, validateConfig, type FloeConfig } from '../../server/config.js';
import { openState, type FloeState } from '../../server/state.js';

export interface TestServer {
  readonly app: FastifyInstance;
  readonly state: FloeState;
  readonly clientId: string;
  readonly clientSecret: string;
  /** A client_credentials token of the bootstrap admin with the given scope (default: all). */
  token(scope?: string): Promise<string>;
  close(): Promise<void>;
}

export interface TestServerOptions {
  readonly clock?: Clock;
  readonly config?: (c: FloeConfig) => FloeConfig;
  /** Leave the store open when the server closes (the caller owns it). */
  readonly keepStore?: boolean;
}

export const TEST_CLIENT_ID = 'floe_test_admin';
export const TEST_CLIENT_SECRET = 'fcs_test-secret-0123456789abcdefghij';

export async function startTestServer(store: MetaStore, options: TestServerOptions = {}): Promise<TestServer> {
  // FLOE_CONFIG (an operator file) is how the warehouse matrix (tests/storage/matrix-*.test.ts)
  // puts the default catalog on object storage for suites that run unchanged.
  const file = process.env.FLOE_CONFIG;
  const base: FloeConfig = withTestPriorities({ ...(file ? loadConfig({ file, env: {} }) : DEFAULT_CONFIG), logging: { level: 'silent' } });
  const config = validateConfig(options.config ? options.config(structuredClone(base)) : base);
  const state = await openState(config, {
    store, keyReloadIntervalMs: 0,
    bootstrapClientId: TEST_CLIENT_ID, bootstrapClientSecret: TEST_CLIENT_SECRET,
    ...(options.clock ? { clock: options.clock } : {}),
  });
  const app = await buildServer(state, { logger: false });
  return {
    app, state, clientId: TEST_CLIENT_ID, clientSecret: TEST_CLIENT_SECRET,
    async token(scope?: string) {
      const form = new URLSearchParams({ grant_type: 'client_credentials', client_id: TEST_CLIENT_ID, client_secret: TEST_CLIENT_SECRET });
      if (scope !== undefined) form.set('scope', scope);
      const r = await app.inject({ method: 'POST', url: '/v1/oauth/tokens', headers: { 'content-type': 'application/x-www-form-urlencoded' }, payload: form.toString() });
      if (r.statusCode !== 200) throw new Error(`token request failed: ${r.statusCode} ${r.body}`);
      return (r.json() as { access_token: string }).access_token;
    },
    async close() {
      await app.close();
      // A kept store outlives the server, its password-hashing children do not.
      if (!options.keepStore) await state.close();
      else await state.principals.passwords.close();
    },
  };
}

/**
 * A test server's background work at the OS priority of the test itself. By default Floe hashes
 * passwords in children at nice 19 under SCHED_IDLE and runs batch fragments on threads at nice 19,
 * so that they yield to interactive queries; on a test machine the rest of the CPU goes to other
 * test files, and such work starves: one Argon2id hash measured 96 s under SCHED_IDLE, 27 s at
 * nice 19 and 1.8 s at nice 0 with a load average of 26 on 2 cores. The priorities themselves are
 * tested where they are set explicitly (tests/principals/password-hashing.test.ts,
 * tests/wlm-interactive-lane.test.ts); a test's own `config` may still set them. Servers run as
 * processes get the same through `TEST_PRIORITY_ENV` (tests/helpers/cli.ts).
 */
export function withTestPriorities(c: FloeConfig): FloeConfig {
  return {
    ...c,
    principals: { ...c.principals, password_hashing: { ...c.principals.password_hashing, niceness: 0, idle_policy: false } },
    workload: { ...c.workload, mlfq: { ...c.workload.mlfq, background_niceness: 0 } },
  };
}

/** A clock the test moves by hand. */
export class ManualClock implements Clock {
  constructor(private ms: number = Date.now()) {}
  now(): number {
    return this.ms;
  }
  advance(ms: number): void {
    this.ms += ms;
  }
}

export function form(fields: Record<string, string>): { headers: Record<string, string>; payload: string } {
  return { headers: { 'content-type': 'application/x-www-form-urlencoded' }, payload: new URLSearchParams(fields).toString() };
}
