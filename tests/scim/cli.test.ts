/**
 * The operator's SCIM commands: `floe admin scim-token create|rotate|revoke|show` (the token
 * printed once, never again) and `floe admin scim-sign-in --methods …`.
 */
import t from 'tap';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openStore, type StoreLocation } from '../../catalog/store/open-store.js';
import { bootstrapIfEmpty } from '../../engine/principals/bootstrap.js';
import { loadProvisioningPolicy } from '../../engine/principals/provisioning-policy.js';
import { authenticateScimToken } from '../../engine/scim/token.js';
import { runCli } from '../helpers/cli.js';
import { createPostgresDatabase } from '../helpers/stores.js';

t.test('SCIM token and sign-in methods from the CLI', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'floe-scim-cli-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  // PostgreSQL when it answers (opening an embedded store per command is slow); else PGlite files.
  const db = await createPostgresDatabase();
  if (db) t.teardown(() => db.drop());
  const location: StoreLocation = db ? { kind: 'postgres', connectionString: db.url, poolSize: 2 } : { kind: 'pglite', dataDir: dir };
  const common = ['--data-dir', dir];
  const env = db ? { FLOE_DATABASE_URL: db.url } : {};
  const bootstrap = await openStore(location);
  await bootstrapIfEmpty(bootstrap);
  await bootstrap.close();
  const live = async (token: string): Promise<boolean> => {
    const store = await openStore(location);
    try {
      return (await authenticateScimToken(store, token, new Date()))?.tenantId === 'default';
    } finally {
      await store.close();
    }
  };
  const tokenIn = (out: string): string => {
    const m = /scim_token:\s+(floe_scim_\S+)/.exec(out);
    if (!m) throw new Error(`no token in ${out}`);
    return m[1]!;
  };

  const created = runCli(['admin', 'scim-token', 'create', '--tenant', 'default', ...common], env);
  t.equal(created.status, 0, created.stderr);
  t.match(created.stdout, /shown only this once/);
  const first = tokenIn(created.stdout);
  t.ok(await live(first), 'the printed token authenticates');
  const again = runCli(['admin', 'scim-token', 'create', '--tenant', 'default', ...common], env);
  t.equal(again.status, 2);
  t.match(again.stderr, /already has a SCIM token; rotate it/);

  const shown = runCli(['admin', 'scim-token', 'show', '--tenant', 'default', ...common], env);
  t.equal(shown.status, 0, shown.stderr);
  t.match(shown.stdout, /SCIM token floe_scim_\w{12}… created/);
  t.notMatch(shown.stdout, first, 'show never prints the token');
  t.ok(first.startsWith(/(floe_scim_\w{12})/.exec(shown.stdout)![1]!), 'only its prefix');

  const rotated = runCli(['admin', 'scim-token', 'rotate', '--tenant', 'default', ...common], env);
  t.equal(rotated.status, 0, rotated.stderr);
  const second = tokenIn(rotated.stdout);
  t.not(second, first);
  t.notOk(await live(first), 'the rotated-out token stops working');
  t.ok(await live(second));

  t.equal(runCli(['admin', 'scim-token', 'revoke', '--tenant', 'default', ...common], env).status, 0);
  t.notOk(await live(second), 'revoked');
  t.match(runCli(['admin', 'scim-token', 'show', '--tenant', 'default', ...common], env).stdout, /has no live SCIM token/);
  t.equal(runCli(['admin', 'scim-token', 'revoke', '--tenant', 'default', ...common], env).status, 2, 'nothing to revoke');
  t.equal(runCli(['admin', 'scim-token', 'create', '--tenant', 'nope', ...common], env).status, 2, 'unknown tenant');
  t.equal(runCli(['admin', 'scim-token', 'frobnicate', '--tenant', 'default', ...common], env).status, 2);

  const allow = runCli(['admin', 'scim-sign-in', '--tenant', 'default', '--methods', 'password,pat', ...common], env);
  t.equal(allow.status, 0, allow.stderr);
  t.match(allow.stdout, /may sign in with: password, pat/);
  t.equal(runCli(['admin', 'scim-sign-in', '--tenant', 'default', '--methods', 'password,sso', ...common], env).status, 2);
  t.equal(runCli(['admin', 'scim-sign-in', '--tenant', 'nope', '--methods', 'none', ...common], env).status, 2);
  let store = await openStore(location);
  t.same([...await loadProvisioningPolicy(store, 'default')].sort(), ['password', 'pat']);
  await store.close();
  t.equal(runCli(['admin', 'scim-sign-in', '--tenant', 'default', '--methods', 'none', ...common], env).status, 0);
  store = await openStore(location);
  t.same([...await loadProvisioningPolicy(store, 'default')], []);
  await store.close();
});
