/** A Floe server for tests: real state over a given store, driven through Fastify's inject. */
import type { FastifyInstance } from 'fastify';
import type { MetaStore } from '../../catalog/store/meta-store.js';
import { buildServer } from '../../server/app.js';
import type { Clock } from '../../server/auth/key-ring.js';
import { DEFAULT_CONFIG, validateConfig, type FloeConfig } from '../../server/config.js';
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
  const base: FloeConfig = { ...DEFAULT_CONFIG, logging: { level: 'silent' } };
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
