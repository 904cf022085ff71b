/**
 * Issue 20 security check: recovery codes appear in exactly one answer (the one that shows them)
 * and never in the server's logs, at the most verbose level, nor in query history, through every
 * path that handles them (turning on the authenticator, a sign-in with a code, a reuse that fails,
 * regeneration). The server is a real `floe serve` process whose whole output is read.
 */
import t from 'tap';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { totpCode } from '../../engine/principals/totp.js';
import { exportsOf, startCli } from '../helpers/cli.js';
import { strongPassword } from '../principals/helpers.js';

const dataDir = mkdtempSync(join(tmpdir(), 'floe-codes-log-'));
const server = await startCli(['--port', '0', '--data-dir', dataDir], { FLOE__LOGGING__LEVEL: 'trace' });
let output = server.banner;
server.process.stdout?.on('data', (d: Buffer) => (output += d.toString()));
server.process.stderr?.on('data', (d: Buffer) => (output += d.toString()));
t.teardown(async () => {
  await server.stop();
  rmSync(dataDir, { recursive: true, force: true });
});
const creds = exportsOf(server.banner);

async function call(method: string, path: string, body: unknown, token?: string): Promise<{ status: number; text: string; json: any }> {
  const r = await fetch(`${server.url}${path}`, {
    method, headers: { 'content-type': 'application/json', ...(token ? { authorization: `Bearer ${token}` } : {}) },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await r.text();
  return { status: r.status, text, json: text === '' ? undefined : JSON.parse(text) };
}

t.test('recovery codes never reach the logs or history', async (t) => {
  const admin = await fetch(`${server.url}/v1/oauth/tokens`, {
    method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({ grant_type: 'client_credentials', client_id: creds.FLOE_CLIENT_ID!, client_secret: creds.FLOE_CLIENT_SECRET! }),
  }).then((r) => r.json() as Promise<{ access_token: string }>);
  const password = strongPassword('logs');
  t.equal((await call('POST', '/api/query', { sql: `CREATE USER quinn EMAIL 'quinn@example.com' PASSWORD '${password}'` }, admin.access_token)).status, 200);
  const signedIn = await call('POST', '/api/auth/sign-in', { username: 'quinn', password });
  t.equal(signedIn.status, 200, 'password sign-in');
  const token = signedIn.json.access_token as string;
  const enrolled = await call('POST', '/api/query', { sql: 'ALTER USER SELF ENROLL MFA TOTP' }, token);
  t.equal(enrolled.status, 200, 'enrolled');
  const secret = String(enrolled.json.rows[0][0]);
  const now = Math.floor(Date.now() / 1000);
  const turnedOn = await call('POST', '/api/auth/mfa/totp/verify', { code: totpCode(secret, now) }, token);
  t.equal(turnedOn.status, 200, 'authenticator turned on');
  const codes = turnedOn.json.recovery_codes as string[];
  t.equal(codes.length, 10);

  // A sign-in with a code, then the same code again (refused), then a regeneration.
  const withCode = await call('POST', '/api/auth/sign-in', { username: 'quinn', password, recovery_code: codes[0] });
  t.equal(withCode.status, 200, 'a recovery code signs in');
  t.notOk(codes.some((c) => withCode.text.includes(c)), 'the sign-in answer carries no code');
  const reused = await call('POST', '/api/auth/sign-in', { username: 'quinn', password, recovery_code: codes[0] });
  t.equal(reused.status, 401, 'a used code is refused');
  t.notOk(codes.some((c) => reused.text.includes(c)), 'the refusal names no code');
  const regenerated = await call('POST', '/api/auth/recovery-codes', {}, withCode.json.access_token);
  t.equal(regenerated.status, 200, 'codes regenerated');
  const fresh = regenerated.json.recovery_codes as string[];

  const history = await call('GET', '/api/query-history?limit=500', undefined, admin.access_token);
  await new Promise((r) => setTimeout(r, 300));
  t.ok(output.length > 0, 'the server wrote its logs');
  for (const c of [...codes, ...fresh]) {
    const bare = c.replace(/-/g, '');
    t.notOk(output.includes(c) || output.includes(bare), 'no recovery code in the logs');
    t.notOk(history.text.includes(c) || history.text.includes(bare), 'no recovery code in history');
  }
  t.notOk(output.includes(secret), 'nor the authenticator secret');
  t.notOk(output.includes(password), 'nor the password');
});
