/** The operator's commands: `floe admin webhooks replay` and `floe admin set-password-policy`. */
import t from 'tap';
import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openStore } from '../../catalog/store/open-store.js';
import { bootstrapIfEmpty } from '../../engine/principals/bootstrap.js';
import { loadPasswordPolicy } from '../../engine/principals/passwords.js';
import { runCli } from '../helpers/cli.js';
import { createPostgresDatabase } from '../helpers/stores.js';
import type { StoreLocation } from '../../catalog/store/open-store.js';

t.test('webhooks replay and password policy from the CLI', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'floe-principals-cli-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  // PostgreSQL when it answers (opening an embedded store per command is slow); else PGlite files.
  const db = await createPostgresDatabase();
  if (db) t.teardown(() => db.drop());
  const location: StoreLocation = db ? { kind: 'postgres', connectionString: db.url, poolSize: 2 } : { kind: 'pglite', dataDir: dir };
  const common = ['--data-dir', dir];
  const env = db ? { FLOE_DATABASE_URL: db.url } : {};
  let store = await openStore(location);
  await bootstrapIfEmpty(store);
  const sub = randomUUID();
  const event = randomUUID();
  const now = new Date();
  await store.query("INSERT INTO webhook_subscriptions (id, tenant_id, name, url, secret_encrypted, created_at) VALUES ($1, 'default', 'w', 'https://example.com/', 'v1:x', $2)", [sub, now]);
  await store.query("INSERT INTO audit_events (id, tenant_id, event_type, payload, created_at) VALUES ($1, 'default', 'create_user', '{}', $2)", [event, now]);
  for (const state of ['failed', 'failed', 'delivered']) {
    await store.query(`INSERT INTO webhook_deliveries (id, tenant_id, event_id, subscription_id, state, attempts, next_attempt_at, created_at, updated_at)
      VALUES ($1, 'default', $2, $3, $4, 4, $5, $5, $5)`, [randomUUID(), event, sub, state, now]);
  }
  await store.close();

  const replay = runCli(['admin', 'webhooks', 'replay', '--tenant', 'default', ...common], env);
  t.equal(replay.status, 0, replay.stderr);
  t.match(replay.stdout, /^2 failed webhook deliveries set back to pending/);
  t.equal(runCli(['admin', 'webhooks', 'frobnicate', ...common]).status, 2);

  const policy = runCli(['admin', 'set-password-policy', '--tenant', 'default', '--min-length', '16', '--history', '2', '--require-mfa', ...common], env);
  t.equal(policy.status, 0, policy.stderr);
  t.equal(runCli(['admin', 'set-password-policy', '--tenant', 'nope', ...common], env).status, 2);
  t.equal(runCli(['admin', 'set-password-policy', '--tenant', 'default', '--min-length', 'x', ...common], env).status, 2);

  store = await openStore(location);
  t.teardown(() => store.close());
  const states = (await store.query<{ state: string; attempts: number }>('SELECT state, attempts FROM webhook_deliveries ORDER BY state')).rows;
  t.same(states, [{ state: 'delivered', attempts: 4 }, { state: 'pending', attempts: 0 }, { state: 'pending', attempts: 0 }]);
  t.match(await loadPasswordPolicy(store, 'default'), { minLength: 16, historyCount: 2, requireMfa: true, minClasses: 3 });
});
