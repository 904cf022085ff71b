/**
 * Everything a server instance works with, built once and passed in (`buildServer(state)`).
 * No module-level singletons: tests build many of these in one process.
 */
import { resolve } from 'node:path';
import type { MetaStore } from '../catalog/store/meta-store.js';
import { openStore, type StoreLocation } from '../catalog/store/open-store.js';
import { readFileSync } from 'node:fs';
import { bootstrapIfEmpty, type BootstrapOutcome } from '../engine/principals/bootstrap.js';
import { PrincipalMaintenance } from '../engine/principals/maintenance.js';
import { PasswordHasher } from '../engine/principals/passwords.js';
import { openSecretBox, type SecretBox } from '../engine/principals/secret-box.js';
import { WebhookWorker } from '../engine/principals/webhook-worker.js';
import { FailureLimiter } from './auth/failure-limiter.js';
import { KeyRing, type Clock } from './auth/key-ring.js';
import { RefreshTokens } from './auth/refresh-tokens.js';
import { TokenService } from './auth/tokens.js';
import type { FloeConfig } from './config.js';
import { createMetrics, type FloeMetrics } from './metrics.js';

export interface FloeState {
  readonly config: FloeConfig;
  readonly store: MetaStore;
  readonly clock: Clock;
  readonly keys: KeyRing;
  readonly tokens: TokenService;
  readonly refreshTokens: RefreshTokens;
  readonly failuresByClient: FailureLimiter;
  readonly failuresByAddress: FailureLimiter;
  readonly metrics: FloeMetrics;
  /** Principal management: the server key box, the webhook worker and the maintenance timers. */
  readonly principals: {
    readonly secrets: SecretBox;
    readonly passwords: PasswordHasher;
    readonly webhookWorker: WebhookWorker;
    readonly maintenance: PrincipalMaintenance;
  };
  /** What the first start created (credentials to print once), or that it had been done before. */
  readonly bootstrap: BootstrapOutcome;
  /** Releases everything the state holds (timers, the store). */
  close(): Promise<void>;
}

export const systemClock: Clock = { now: () => Date.now() };

export interface OpenStateOptions {
  /** Use this store instead of the configured one (tests). It is closed with the state. */
  readonly store?: MetaStore;
  readonly clock?: Clock;
  /** Operator-chosen bootstrap credentials (FLOE_BOOTSTRAP_CLIENT_ID / _SECRET). */
  readonly bootstrapClientId?: string;
  readonly bootstrapClientSecret?: string;
  /** How often the signing-key set is re-read from the store (ms); 0 disables the timer. */
  readonly keyReloadIntervalMs?: number;
}

export function storeLocationOf(config: FloeConfig): StoreLocation {
  return config.store.database_url
    ? { kind: 'postgres', connectionString: config.store.database_url, poolSize: config.store.pool_size }
    : { kind: 'pglite', dataDir: resolve(config.data_dir) };
}

export async function openState(config: FloeConfig, options: OpenStateOptions = {}): Promise<FloeState> {
  const clock = options.clock ?? systemClock;
  const store = options.store ?? await openStore(storeLocationOf(config));
  try {
    const bootstrap = await bootstrapIfEmpty(store, {
      ...(options.bootstrapClientId ? { clientId: options.bootstrapClientId } : {}),
      ...(options.bootstrapClientSecret ? { clientSecret: options.bootstrapClientSecret } : {}),
    });
    const ttl = config.auth.access_token_ttl_seconds;
    const keys = await KeyRing.open(store, clock, ttl * 1000);
    const tokens = new TokenService(keys, store, clock, { issuer: config.auth.issuer, audience: config.auth.audience, accessTokenTtlSeconds: ttl });
    const windowMs = config.auth.rate_limit.window_seconds * 1000;
    const interval = options.keyReloadIntervalMs ?? 30_000;
    const timer = interval > 0 ? setInterval(() => void keys.reload().catch(() => undefined), interval) : undefined;
    timer?.unref();
    const secrets = await openSecretBox(store, config.principals.encryption_key);
    const webhookWorker = new WebhookWorker({ store, clock, config: config.webhooks, secrets, ca: config.webhooks.ca_file ? readFileSync(config.webhooks.ca_file, 'utf8') : undefined });
    const maintenance = new PrincipalMaintenance(store, clock, config.principals);
    if (config.principals.background_jobs) {
      webhookWorker.start();
      maintenance.start();
    }
    return {
      config, store, clock, keys, tokens, bootstrap,
      principals: { secrets, webhookWorker, maintenance, passwords: new PasswordHasher(config.principals.password_hash_concurrency) },
      refreshTokens: new RefreshTokens(store, clock, config.auth.refresh_token_ttl_seconds),
      failuresByClient: new FailureLimiter({ windowMs, maxFailures: config.auth.rate_limit.max_failures_per_client }, clock),
      failuresByAddress: new FailureLimiter({ windowMs, maxFailures: config.auth.rate_limit.max_failures_per_address }, clock),
      metrics: createMetrics(),
      async close() {
        if (timer) clearInterval(timer);
        maintenance.stop();
        await webhookWorker.stop();
        await store.close();
      },
    };
  } catch (e) {
    await store.close().catch(() => undefined);
    throw e;
  }
}
