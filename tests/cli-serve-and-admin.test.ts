/**
 * The `floe` command as an operator uses it: first start prints the bootstrap credentials once,
 * the admin commands create tenants and clients and rotate or revoke them, signing keys rotate
 * without invalidating live tokens. Real processes on an embedded (PGlite) data directory.
 */
import t from 'tap';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { decodeJwt, decodeProtectedHeader } from 'jose';
import { credentialsOf, exportsOf, runCli, startCli } from './helpers/cli.js';

// Some twenty processes, one after the other, each opening the embedded store: 444 s at a load
// average of 17 on 2 cores (about a minute on an idle machine), so more than tap's default time.
t.setTimeout(1_200_000);

const dataDir = mkdtempSync(join(tmpdir(), 'floe-cli-'));
const common = ['--data-dir', dataDir];

async function token(url: string, clientId: string, clientSecret: string): Promise<{ status: number; body: Record<string, unknown> }> {
  const r = await fetch(`${url}/v1/oauth/tokens`, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: new URLSearchParams({ grant_type: 'client_credentials', client_id: clientId, client_secret: clientSecret }) });
  return { status: r.status, body: await r.json() as Record<string, unknown> };
}

const first = await startCli(['--port', '0', ...common]);
const creds = exportsOf(first.banner);
t.ok(creds.FLOE_CLIENT_ID && creds.FLOE_CLIENT_SECRET, 'first start prints the bootstrap credentials');
const firstToken = await token(first.url, creds.FLOE_CLIENT_ID!, creds.FLOE_CLIENT_SECRET!);
t.equal(firstToken.status, 200);
const oldAccessToken = firstToken.body.access_token as string;

t.test('admin commands refuse to open the embedded store while the server runs', async (t) => {
  const r = runCli(['admin', 'create-tenant', 'acme', ...common]);
  t.equal(r.status, 2);
  t.match(r.stderr, /in use by a running server/);
});

t.equal(await first.stop(), 0, 'SIGTERM stops the server cleanly');

t.test('a second start prints nothing new', async (t) => {
  const again = await startCli(['--port', '0', ...common]);
  t.notMatch(again.banner, /export FLOE_CLIENT/);
  t.notMatch(again.banner, /Bootstrap/);
  t.equal((await token(again.url, creds.FLOE_CLIENT_ID!, creds.FLOE_CLIENT_SECRET!)).status, 200, 'the bootstrap credentials still work');
  await again.stop();
});

t.test('tenants and clients from the admin CLI', async (t) => {
  const tenant = runCli(['admin', 'create-tenant', 'acme', ...common]);
  t.equal(tenant.status, 0, tenant.stderr);
  const acme = credentialsOf(tenant.stdout);
  t.equal(runCli(['admin', 'create-tenant', 'acme', ...common]).status, 2, 'a tenant id is taken once');
  t.equal(runCli(['admin', 'create-tenant', 'Bad Name', ...common]).status, 2);
  const limited = runCli(['admin', 'create-client', '--tenant', 'default', '--principal', 'admin', '--scope', 'table:read', ...common]);
  t.equal(limited.status, 0, limited.stderr);
  const limitedCreds = credentialsOf(limited.stdout);
  t.equal(runCli(['admin', 'create-client', '--tenant', 'default', '--principal', 'nobody', ...common]).status, 2);
  t.equal(runCli(['admin', 'create-client', '--tenant', 'default', '--principal', 'admin', '--scope', 'everything', ...common]).status, 2);

  const rotated = runCli(['admin', 'rotate-client', creds.FLOE_CLIENT_ID!, ...common]);
  t.equal(rotated.status, 0, rotated.stderr);
  const newSecret = credentialsOf(rotated.stdout).clientSecret;
  const key = runCli(['admin', 'rotate-signing-key', ...common]);
  t.equal(key.status, 0, key.stderr);
  t.equal(runCli(['admin', 'revoke-client', limitedCreds.clientId, ...common]).status, 0);
  t.equal(runCli(['admin', 'revoke-client', 'floe_no_such_client', ...common]).status, 2);

  const server = await startCli(['--port', '0', ...common]);
  t.teardown(() => server.stop());
  const acmeToken = await token(server.url, acme.clientId, acme.clientSecret);
  t.equal(acmeToken.status, 200);
  t.equal(decodeJwt(acmeToken.body.access_token as string).tid, 'acme', 'the new tenant\'s administrator');
  t.equal((await token(server.url, creds.FLOE_CLIENT_ID!, creds.FLOE_CLIENT_SECRET!)).status, 401, 'the rotated-out secret fails');
  const fresh = await token(server.url, creds.FLOE_CLIENT_ID!, newSecret);
  t.equal(fresh.status, 200, 'the new secret works');
  t.equal((await token(server.url, limitedCreds.clientId, limitedCreds.clientSecret)).status, 401, 'a revoked client fails');

  const newKid = decodeProtectedHeader(fresh.body.access_token as string).kid;
  t.not(newKid, decodeProtectedHeader(oldAccessToken).kid, 'tokens are signed with the new key');
  const jwks = await (await fetch(`${server.url}/.well-known/jwks.json`)).json() as { keys: { kid: string }[] };
  t.equal(jwks.keys.length, 2, 'the JWKS holds the new key and the retired one');
  const health = await fetch(`${server.url}/health`, { headers: { authorization: `Bearer ${oldAccessToken}` } });
  t.equal(health.status, 200, 'a token signed by the retired key verifies until it expires');
});

t.test('usage errors', async (t) => {
  t.equal(runCli(['frobnicate']).status, 2);
  t.equal(runCli(['serve', '--port', 'eighty', ...common]).status, 2);
  const badConfig = runCli(['serve', ...common], { FLOE__SERVER__PROT: '1' });
  t.equal(badConfig.status, 2);
  t.match(badConfig.stderr, /unknown key server\.prot/);
});
