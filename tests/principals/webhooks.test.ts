/**
 * Webhook delivery against a real HTTPS receiver on loopback (a self-signed certificate made for
 * the test with the openssl CLI, trusted through `webhooks.ca_file`, loopback allowed through
 * `webhooks.allow_private_targets`): headers and signatures, the retry schedule under an injected
 * clock, failure after the last retry, replay, no redirects, timeouts, private targets refused,
 * and at-least-once across a SIGKILL of the delivering process (PostgreSQL: a second process).
 */
import t from 'tap';
import { execFileSync, spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:https';
import type { IncomingHttpHeaders } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { createPostgresDatabase, onEachBackend } from '../helpers/stores.js';
import { ManualClock, startTestServer } from '../helpers/server.js';
import { openStore } from '../../catalog/store/open-store.js';
import { signBody, WebhookWorker, replayFailedDeliveries } from '../../engine/principals/webhook-worker.js';
import { executePrincipalStatement } from '../../engine/principals/statements.js';
import { Parser } from '../../grammar/index.js';
import { adminAuth, contextFor, must } from './helpers.js';

interface Received {
  readonly headers: IncomingHttpHeaders;
  readonly body: string;
}

type Mode = 'ok' | 'fail' | 'redirect' | 'hold';

interface Receiver {
  readonly url: string;
  readonly received: Received[];
  mode: Mode;
  /** Resolves when `n` requests have arrived. */
  waitFor(n: number): Promise<void>;
  close(): Promise<void>;
}

function makeCertificate(dir: string): { key: string; cert: string; certFile: string } {
  execFileSync('openssl', ['req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:P-256', '-nodes', '-days', '1',
    '-keyout', join(dir, 'key.pem'), '-out', join(dir, 'cert.pem'), '-subj', '/CN=localhost', '-addext', 'subjectAltName=IP:127.0.0.1,DNS:localhost'], { stdio: 'ignore' });
  return { key: readFileSync(join(dir, 'key.pem'), 'utf8'), cert: readFileSync(join(dir, 'cert.pem'), 'utf8'), certFile: join(dir, 'cert.pem') };
}

async function startReceiver(tls: { key: string; cert: string }): Promise<Receiver> {
  const received: Received[] = [];
  const waiters: { n: number; resolve: () => void }[] = [];
  const state = { mode: 'ok' as Mode };
  const server: Server = createServer(tls, (req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      received.push({ headers: req.headers, body: Buffer.concat(chunks).toString('utf8') });
      for (const w of waiters.filter((w) => received.length >= w.n)) w.resolve();
      switch (state.mode) {
        case 'ok': res.writeHead(204).end(); break;
        case 'fail': res.writeHead(503).end('busy'); break;
        case 'redirect': res.writeHead(302, { location: 'https://127.0.0.1:1/elsewhere' }).end(); break;
        case 'hold': break;
      }
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as { port: number }).port;
  return {
    url: `https://127.0.0.1:${port}/hook`,
    received,
    get mode() { return state.mode; },
    set mode(m: Mode) { state.mode = m; },
    waitFor: (n) => received.length >= n ? Promise.resolve() : new Promise((resolve) => waiters.push({ n, resolve })),
    async close() {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

const SECRET = 'whsec-test-0123456789abcdef';

t.test('webhook delivery to a real HTTPS receiver', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'floe-webhooks-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const tls = makeCertificate(dir);
  await onEachBackend(t, async (t, store) => {
    const receiver = await startReceiver(tls);
    t.teardown(() => receiver.close());
    const clock = new ManualClock(Date.UTC(2026, 10, 21, 12, 0, 0));
    const server = await startTestServer(store, {
      keepStore: true, clock,
      config: (c) => ({ ...c, principals: { ...c.principals, background_jobs: false }, webhooks: { ...c.webhooks, allow_private_targets: true, ca_file: tls.certFile } }),
    });
    t.teardown(() => server.close());
    const admin = await adminAuth(server);
    const worker = server.state.principals.webhookWorker;
    const rows = async (): Promise<{ state: string; attempts: number; next_attempt_at: Date }[]> =>
      (await store.query<{ state: string; attempts: number; next_attempt_at: Date }>('SELECT state, attempts, next_attempt_at FROM webhook_deliveries ORDER BY created_at')).rows;

    await must(server, admin, `CREATE WEBHOOK users URL='${receiver.url}' SECRET='${SECRET}' EVENTS=('user.', 'create_pat')`);
    await must(server, admin, "CREATE SERVICE ACCOUNT bot");
    await must(server, admin, "CREATE USER una EMAIL='una@example.com'");
    t.same((await rows()).map((r) => r.state), ['pending'], 'only the matching event became a delivery row');

    // Delivered once, signed, with the spec's headers.
    t.match(await worker.runOnce(), { attempted: 1, delivered: 1 });
    t.equal(receiver.received.length, 1);
    const first = receiver.received[0]!;
    t.equal(first.headers['content-type'], 'application/json');
    t.equal(first.headers['x-svc-event-type'], 'create_user');
    t.equal(first.headers['x-svc-delivery-attempt'], '1');
    t.equal(first.headers['x-svc-signature'], signBody(SECRET, first.body), 'hex HMAC-SHA256 of the exact body');
    const body = JSON.parse(first.body) as { id: string; type: string; alias: string; target: { name: string } };
    t.equal(body.id, first.headers['x-svc-event-id']);
    t.match(body, { type: 'create_user', alias: 'user.create', target: { name: 'una' } });
    t.notMatch(first.body, /floe_inv_/, 'no invitation token in the event');
    t.same((await rows()).map((r) => r.state), ['delivered']);
    t.match(await worker.runOnce(), { attempted: 0 }, 'delivered rows are not sent again');

    // Two replicas draining together post every row exactly once (SKIP LOCKED + lease).
    for (let i = 0; i < 12; i++) await must(server, admin, `ALTER USER una SET COMMENT = 'c${i}'`);
    const replica = (): WebhookWorker => new WebhookWorker({ store, clock, secrets: server.state.principals.secrets, ca: tls.cert, config: { ...server.state.config.webhooks, allow_private_targets: true, batch_size: 2 } });
    const [r1, r2] = [replica(), replica()];
    const before12 = receiver.received.length;
    const [a, b] = await Promise.all([r1.runOnce(), r2.runOnce()]);
    await r1.stop();
    await r2.stop();
    t.equal(a.delivered + b.delivered, 12, `replicas split the work (${a.delivered} + ${b.delivered})`);
    const ids = receiver.received.slice(before12).map((r) => r.headers['x-svc-event-id']);
    t.equal(ids.length, 12);
    t.equal(new Set(ids).size, 12, 'no event posted twice');

    // Three attempts in all (the spec's Limits): retries at 30 s and 2 min, the third failure is
    // final, and no fourth attempt follows however long one waits; then replay.
    receiver.mode = 'fail';
    await store.query('DELETE FROM webhook_deliveries');
    receiver.received.length = 0;
    await must(server, admin, 'ALTER USER una SUSPEND');
    const schedule = [0, 30_000, 120_000];
    for (let i = 0; i < schedule.length; i++) {
      if (schedule[i]! > 0) {
        clock.advance(schedule[i]! - 1000);
        t.match(await worker.runOnce(), { attempted: 0 }, `attempt ${i + 1} not before its time`);
        clock.advance(1000);
      }
      t.match(await worker.runOnce(), { attempted: 1 }, `attempt ${i + 1} after ${schedule[i]! / 1000} s`);
      const [row] = await rows();
      t.equal(row!.attempts, i + 1);
      t.equal(row!.state, i < 2 ? 'retrying' : 'failed');
    }
    clock.advance(480_000);
    t.match(await worker.runOnce(), { attempted: 0 }, 'no fourth attempt, not even after 8 min');
    t.same(receiver.received.map((r) => r.headers['x-svc-delivery-attempt']), ['1', '2', '3']);
    t.equal(new Set(receiver.received.map((r) => r.headers['x-svc-event-id'])).size, 1, 'every attempt carries the same event id');
    clock.advance(3600_000);
    t.match(await worker.runOnce(), { attempted: 0 }, 'failed rows stay failed');
    receiver.mode = 'ok';
    t.equal(await replayFailedDeliveries(store, clock, { tenantId: 'default' }), 1);
    t.match(await worker.runOnce(), { attempted: 1, delivered: 1 }, 'replay delivers');
    t.equal(receiver.received.at(-1)!.headers['x-svc-event-id'], receiver.received[0]!.headers['x-svc-event-id']);

    // Redirects are not followed: a 302 is a failed attempt.
    receiver.mode = 'redirect';
    await must(server, admin, 'ALTER USER una UNSUSPEND');
    t.match(await worker.runOnce(), { attempted: 1, delivered: 0 });
    t.equal((await rows()).at(-1)!.state, 'retrying');
    await store.query("UPDATE webhook_deliveries SET state = 'delivered'");

    // A receiver that does not answer times out.
    receiver.mode = 'hold';
    const impatient = new WebhookWorker({ store, clock, secrets: server.state.principals.secrets, ca: tls.cert, config: { ...server.state.config.webhooks, allow_private_targets: true, timeout_ms: 300 } });
    await must(server, admin, 'ALTER USER una UNLOCK');
    t.match(await impatient.runOnce(), { attempted: 1, delivered: 0 }, 'timed out');
    await impatient.stop();
    await store.query("UPDATE webhook_deliveries SET state = 'delivered'");
    receiver.mode = 'ok';

    // Loopback and private targets are refused unless the operator allows them.
    const strict = new WebhookWorker({ store, clock, secrets: server.state.principals.secrets, ca: tls.cert, config: { ...server.state.config.webhooks, allow_private_targets: false } });
    await must(server, admin, 'ALTER USER una SUSPEND');
    const before = receiver.received.length;
    t.match(await strict.runOnce(), { attempted: 1, delivered: 0 });
    t.equal(receiver.received.length, before, 'nothing was posted');
    t.match((await store.query<{ last_error: string }>("SELECT last_error FROM webhook_deliveries WHERE state = 'retrying'")).rows[0]!.last_error, /private/);
    await strict.stop();
    const strictCtx = { ...contextFor(server, admin), webhooks: { ...server.state.config.webhooks, allow_private_targets: false } };
    const parse = (sql: string) => new Parser({ cacheSize: 0 }).parse(sql) as Parameters<typeof executePrincipalStatement>[1];
    await t.rejects(executePrincipalStatement(strictCtx, parse(`CREATE WEBHOOK local URL='https://127.0.0.1:9/x' SECRET='${SECRET}'`)), { code: 'INVALID_PARAMETER' });
    await t.rejects(executePrincipalStatement(strictCtx, parse(`CREATE WEBHOOK local URL='https://localhost/x' SECRET='${SECRET}'`)), { code: 'INVALID_PARAMETER' });
    const shown = JSON.stringify(await must(server, admin, 'SHOW WEBHOOKS'));
    t.notOk(shown.includes(SECRET), 'SHOW WEBHOOKS never shows the secret');
    await must(server, admin, 'DROP WEBHOOK users');
    t.equal((await store.query<{ n: number }>("SELECT count(*)::int AS n FROM webhook_deliveries WHERE state IN ('pending', 'retrying')")).rows[0]!.n, 0, 'dropping a subscription ends its pending deliveries');
  });
});

t.test('at-least-once across a SIGKILL of the delivering process (PostgreSQL)', async (t) => {
  const db = await createPostgresDatabase();
  if (!db) {
    if (process.env.CI === 'true') t.fail('PostgreSQL is required in CI');
    return;
  }
  t.teardown(() => db.drop());
  const dir = mkdtempSync(join(tmpdir(), 'floe-webhooks-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const tls = makeCertificate(dir);
  const receiver = await startReceiver(tls);
  t.teardown(() => receiver.close());
  const store = await openStore({ kind: 'postgres', connectionString: db.url, poolSize: 4 });
  const clock = new ManualClock(Date.now());
  const server = await startTestServer(store, {
    clock,
    config: (c) => ({ ...c, principals: { ...c.principals, background_jobs: false }, webhooks: { ...c.webhooks, allow_private_targets: true, ca_file: tls.certFile } }),
  });
  t.teardown(() => server.close());
  const admin = await adminAuth(server);
  await must(server, admin, `CREATE WEBHOOK all_events URL='${receiver.url}' SECRET='${SECRET}'`);
  await store.query('DELETE FROM webhook_deliveries'); // the subscription's own create_webhook event

  // A second process writes the audit row (the statement commits) and starts delivering; the
  // receiver holds the request, and the process is killed before it can record anything.
  receiver.mode = 'hold';
  const dist = fileURLToPath(new URL('../../', import.meta.url));
  const script = `
    import { openStore } from '${join(dist, 'catalog/store/open-store.js')}';
    import { WebhookWorker } from '${join(dist, 'engine/principals/webhook-worker.js')}';
    import { openSecretBox } from '${join(dist, 'engine/principals/secret-box.js')}';
    import { executePrincipalStatement } from '${join(dist, 'engine/principals/statements.js')}';
    import { DEFAULT_PRINCIPALS_CONFIG, DEFAULT_WEBHOOKS_CONFIG } from '${join(dist, 'engine/principals/settings.js')}';
    import { Parser } from '${join(dist, 'grammar/index.js')}';
    import { PasswordHasher } from '${join(dist, 'engine/principals/passwords.js')}';
    import { readFileSync } from 'node:fs';
    const store = await openStore({ kind: 'postgres', connectionString: process.env.DB_URL });
    const secrets = await openSecretBox(store, null);
    const clock = { now: () => Date.now() };
    const webhooks = { ...DEFAULT_WEBHOOKS_CONFIG, allow_private_targets: true };
    const actor = JSON.parse(process.env.ACTOR);
    await executePrincipalStatement({ store, clock, tenantId: 'default', actor, config: DEFAULT_PRINCIPALS_CONFIG, webhooks, secrets, passwords: new PasswordHasher({ workers: 1 }) },
      new Parser().parse("CREATE USER victor EMAIL='victor@example.com'"));
    process.stdout.write('committed\\n');
    await new WebhookWorker({ store, clock, config: webhooks, secrets, ca: readFileSync(process.env.CA_FILE, 'utf8') }).runOnce();
  `;
  const actor = { id: admin.principal.id, name: admin.principal.name, kind: admin.principal.kind, roles: admin.principal.roles, amr: [], authTime: 0, authMethod: 'client_credentials', restriction: undefined, scopes: ['sql'] };
  const child = spawn(process.execPath, ['--input-type=module', '-e', script], {
    env: { ...process.env, DB_URL: db.url, CA_FILE: tls.certFile, ACTOR: JSON.stringify(actor) }, stdio: ['ignore', 'pipe', 'inherit'],
  });
  const exited = new Promise<void>((resolve) => child.on('exit', () => resolve()));
  // Against a child that hangs: starting node with these imports took tens of seconds under load.
  const timer = setTimeout(() => child.kill('SIGKILL'), 240_000);
  let posted = false;
  await Promise.race([receiver.waitFor(1).then(() => { posted = true; }), exited]);
  if (!posted) throw new Error('the delivering process exited before it posted');
  child.kill('SIGKILL');
  await exited;
  clearTimeout(timer);
  t.equal(receiver.received.length, 1, 'the killed process had posted once');
  const row = (await store.query<{ state: string; attempts: number; lease_until: Date | null }>('SELECT state, attempts, lease_until FROM webhook_deliveries')).rows;
  t.equal(row.length, 1);
  t.match(row[0], { state: 'pending', attempts: 0 }, 'the row survived the crash, leased');

  // The lease runs out; another worker delivers the same event.
  receiver.mode = 'ok';
  t.match(await server.state.principals.webhookWorker.runOnce(), { attempted: 0 }, 'not while the lease holds');
  clock.advance(10 * 60_000);
  t.match(await server.state.principals.webhookWorker.runOnce(), { attempted: 1, delivered: 1 });
  t.equal(receiver.received.length, 2);
  t.equal(receiver.received[1]!.headers['x-svc-event-id'], receiver.received[0]!.headers['x-svc-event-id'], 'the duplicate carries the same X-Svc-Event-Id');
  t.equal(receiver.received[1]!.body, receiver.received[0]!.body, 'and the same body');
  t.equal(receiver.received[0]!.headers['x-svc-event-type'], 'create_user');
});
