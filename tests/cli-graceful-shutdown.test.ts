/**
 * Stopping `floe serve` while a statement runs: after `server.shutdown_grace_ms` (or at a second
 * signal) the statement is cancelled with SERVER_SHUTDOWN (57P01, 503), its client is answered,
 * history records it, and the process exits 0 without waiting for the statement's own timeout.
 * Real processes on an embedded (PGlite) data directory.
 */
import t from 'tap';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { exportsOf, startCli, type RunningServer } from './helpers/cli.js';

const dataDir = mkdtempSync(join(tmpdir(), 'floe-shutdown-'));
const common = ['--port', '0', '--data-dir', dataDir];
/** Runs for hours unless interrupted (one DuckDB thread summing 10^11 integers). */
const LONG = 'SELECT sum(i) FROM range(100000000000) t(i)';

async function tokenOf(url: string, clientId: string, clientSecret: string): Promise<string> {
  const r = await fetch(`${url}/v1/oauth/tokens`, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: new URLSearchParams({ grant_type: 'client_credentials', client_id: clientId, client_secret: clientSecret }) });
  return ((await r.json()) as { access_token: string }).access_token;
}

function query(url: string, token: string, sql: string): Promise<{ status: number; body: Record<string, unknown> }> {
  return fetch(`${url}/api/query`, {
    method: 'POST', headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
    body: JSON.stringify({ sql, timeout_ms: 600_000 }),
  }).then(async (r) => ({ status: r.status, body: (await r.json()) as Record<string, unknown> }));
}

/**
 * Bounds that only a broken server reaches: the statements run for hours (timeout 10 minutes), and
 * on a loaded machine a start, a statement's start or an exit can each take tens of seconds.
 */
const STARTED_WITHIN_MS = 120_000;
const EXITED_WITHIN_MS = 120_000;

/** Waits until the server runs `n` statements (its QoS statistics say so). */
async function running(url: string, token: string, n: number): Promise<void> {
  for (const until = Date.now() + STARTED_WITHIN_MS; Date.now() < until;) {
    const r = await fetch(`${url}/api/qos/stats`, { headers: { authorization: `Bearer ${token}` } });
    const stats = (await r.json()) as { resource_groups: { path: string; running: number }[] };
    if ((stats.resource_groups.find((g) => g.path === '/root')?.running ?? 0) >= n) return;
    await new Promise((done) => setTimeout(done, 50));
  }
  throw new Error(`the server did not start ${n} statement(s)`);
}

const first = await startCli(common);
const creds = exportsOf(first.banner);
await first.stop();

async function startWith(graceMs: number): Promise<{ server: RunningServer; token: string }> {
  const server = await startCli(common, { FLOE__SERVER__SHUTDOWN_GRACE_MS: String(graceMs) });
  return { server, token: await tokenOf(server.url, creds.FLOE_CLIENT_ID!, creds.FLOE_CLIENT_SECRET!) };
}

t.test('past the grace period a running statement is cancelled with 57P01 and the server exits 0', async (t) => {
  const { server, token } = await startWith(300);
  const answer = query(server.url, token, LONG);
  await running(server.url, token, 1);
  const stopping = Date.now();
  const code = await server.stop('SIGTERM');
  const took = Date.now() - stopping;
  t.equal(code, 0, 'clean exit');
  t.ok(took < EXITED_WITHIN_MS, `exited ${took} ms after SIGTERM (the statement's own timeout was 10 minutes)`);
  const r = await answer;
  t.equal(r.status, 503);
  t.match(r.body, { error: 'SERVER_SHUTDOWN', sql_state: '57P01', message: /shutting down/ });
});

t.test('a second signal cancels at once, without waiting for the grace period', async (t) => {
  const { server, token } = await startWith(600_000);
  const answer = query(server.url, token, LONG);
  await running(server.url, token, 1);
  const stopping = Date.now();
  const exited = new Promise<number | null>((done) => server.process.once('exit', (c) => done(c)));
  server.process.kill('SIGTERM');
  await new Promise((done) => setTimeout(done, 300));
  t.equal(server.process.exitCode, null, 'the first signal waits for the running statement');
  server.process.kill('SIGTERM');
  t.equal(await exited, 0, 'clean exit');
  t.ok(Date.now() - stopping < EXITED_WITHIN_MS, `well before the 10-minute grace period (${Date.now() - stopping} ms)`);
  t.equal((await answer).status, 503);
});

t.test('history records the cancelled statements with the reason', async (t) => {
  const { server, token } = await startWith(300);
  t.teardown(() => server.stop());
  const r = await fetch(`${server.url}/api/query-history?status=cancelled&limit=10`, { headers: { authorization: `Bearer ${token}` } });
  const rows = (await r.json()) as { sql: string; status: string; errorMessage: string | null; startedAt: string | null }[];
  const long = rows.filter((row) => row.sql === LONG);
  t.equal(long.length, 2, 'both statements, each once');
  for (const row of long) t.match(row, { status: 'cancelled', errorMessage: /shutting down/, startedAt: String });
});
