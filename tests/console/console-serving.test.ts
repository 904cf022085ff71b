/**
 * The console is served by the same process at /console: the page shell, one ES module and one
 * style sheet, each with a strict Content-Security-Policy; the page has no inline script or
 * style; the first load's JavaScript stays under 300 KB gzip; an invitation URL opens it.
 */
import t from 'tap';
import { openStore } from '../../catalog/store/open-store.js';
import { startTestServer } from '../helpers/server.js';
import { CONSOLE_CSP } from '../../server/routes/console.js';

const store = await openStore({ kind: 'pglite-memory' });
const server = await startTestServer(store);
t.teardown(() => server.close());

t.test('the page and its assets carry the strict CSP and no inline code', async (t) => {
  const page = await server.app.inject({ method: 'GET', url: '/console' });
  t.equal(page.statusCode, 200);
  t.match(page.headers['content-type'], /^text\/html/);
  const csp = String(page.headers['content-security-policy']);
  t.equal(csp, CONSOLE_CSP);
  t.match(csp, /script-src 'self'(;|$)/, 'scripts only from the origin');
  t.notMatch(csp, /unsafe-inline|unsafe-eval|\*/, 'no inline, no eval, no wildcard');
  t.match(csp, /frame-ancestors 'none'/);
  t.equal(page.headers['x-content-type-options'], 'nosniff');
  t.equal(page.headers['cache-control'], 'no-store');
  t.notOk(page.headers['set-cookie'], 'no cookie');
  const html = page.body;
  const scripts = [...html.matchAll(/<script\b([^>]*)>([\s\S]*?)<\/script>/g)];
  t.ok(scripts.length >= 1, 'loads a script');
  for (const [, attrs, body] of scripts) {
    t.match(attrs, /\bsrc="\/console\/assets\//, 'every script has a same-origin src');
    t.equal(body!.trim(), '', 'no inline script body');
  }
  t.notMatch(html, /<style\b|\sstyle="|\son[a-z]+=/i, 'no inline style or event handler attribute');
  for (const asset of ['/console/assets/app.js', '/console/assets/console.css']) {
    const r = await server.app.inject({ method: 'GET', url: asset });
    t.equal(r.statusCode, 200, asset);
    t.equal(r.headers['content-security-policy'], CONSOLE_CSP, `${asset} has the CSP`);
  }
  t.equal((await server.app.inject({ method: 'GET', url: '/console/' })).statusCode, 200);
});

t.test('the first load transfers at most 300 KB of gzip JavaScript', async (t) => {
  const r = await server.app.inject({ method: 'GET', url: '/console/assets/app.js', headers: { 'accept-encoding': 'gzip, br' } });
  t.equal(r.headers['content-encoding'], 'gzip');
  t.match(r.headers['content-type'], /^text\/javascript/);
  t.ok(r.rawPayload.length <= 300 * 1024, `app.js is ${r.rawPayload.length} bytes gzip`);
  const plain = await server.app.inject({ method: 'GET', url: '/console/assets/app.js' });
  t.notOk(plain.headers['content-encoding'], 'plain for a client that does not accept gzip');
  t.ok(plain.rawPayload.length > r.rawPayload.length);
});

t.test('unknown assets are 404 in the /api error format, and no path escapes the folder', async (t) => {
  for (const url of ['/console/assets/nope.js', '/console/assets/..%2Findex.html', '/console/assets/%2e%2e%2f%2e%2e%2fpackage.json']) {
    const r = await server.app.inject({ method: 'GET', url });
    t.equal(r.statusCode, 404, url);
    t.equal(r.json().error, 'NOT_FOUND');
  }
});

t.test('an invitation URL opens the console, keeping its fragment', async (t) => {
  const r = await server.app.inject({ method: 'GET', url: '/invite' });
  t.equal(r.statusCode, 302);
  t.equal(r.headers.location, '/console', 'no fragment of its own, so the browser keeps #token=…');
});

t.test("the console's API calls need a token", async (t) => {
  for (const [method, url] of [['POST', '/api/query'], ['GET', '/api/query-history'], ['GET', '/api/tables']] as const) {
    const r = await server.app.inject({ method, url, ...(method === 'POST' ? { payload: { sql: 'SELECT 1' } } : {}) });
    t.equal(r.statusCode, 401, `${method} ${url}`);
  }
});

t.test("another tenant's token reaches none of this tenant's console data", async (t) => {
  const { createTenantWithAdmin } = await import('../../engine/principals/bootstrap.js');
  const other = await createTenantWithAdmin(store, 'acme');
  const form = new URLSearchParams({ grant_type: 'client_credentials', client_id: other.credentials.clientId, client_secret: other.credentials.clientSecret });
  const acme = (await server.app.inject({ method: 'POST', url: '/v1/oauth/tokens', headers: { 'content-type': 'application/x-www-form-urlencoded' }, payload: form.toString() })).json().access_token as string;
  const mine = await server.token();
  const ran = await server.app.inject({ method: 'POST', url: '/api/query', headers: { authorization: `Bearer ${mine}` }, payload: { sql: 'SELECT 7 AS seven' } });
  const queryId = ran.json().query_id as string;
  const as = (token: string, method: 'GET' | 'POST' | 'DELETE', url: string, payload?: unknown) =>
    server.app.inject({ method, url, headers: { authorization: `Bearer ${token}` }, ...(payload ? { payload: payload as Record<string, unknown> } : {}) });
  t.equal((await as(acme, 'GET', `/api/query-history/${queryId}`)).statusCode, 404, "the default tenant's query is not acme's");
  t.notMatch((await as(acme, 'GET', '/api/query-history')).body, queryId);
  t.same((await as(acme, 'GET', '/v1/catalogs')).json().catalogs, [], "no catalog of the default tenant");
  t.equal((await as(acme, 'GET', '/v1/default/namespaces')).statusCode, 404);
  t.equal((await as(acme, 'DELETE', '/api/auth/passkeys/some-credential')).statusCode !== 200, true, 'no passkey of another tenant to remove');
  t.equal((await server.app.inject({ method: 'POST', url: '/api/auth/recovery-codes' })).statusCode, 401, 'second-factor endpoints need a token');
  t.equal((await server.app.inject({ method: 'GET', url: '/api/auth/passkeys' })).statusCode, 401);
});
