/**
 * The console's own API calls, made from the console page in real headless Firefox ESR (same
 * origin, the browser's fetch): every route the console uses is refused without a token, and a
 * token of another tenant's user (signed in through the same sign-in endpoint the console uses)
 * reaches none of this tenant's data: no table, view, query record, passkey or second factor. The
 * signed-in console itself keeps its token out of cookies and Web Storage.
 */
import t from 'tap';
import { createTenantWithAdmin } from '../../engine/principals/bootstrap.js';
import { startConsoleServer } from '../helpers/console.js';
import { buttonNamed, fieldByLabel, launchFirefox, openFirefoxPage, waitForHeading, waitForText } from '../helpers/firefox.js';
import { strongPassword } from '../principals/helpers.js';

interface Answer { readonly status: number; readonly text: string }

const browser = await launchFirefox(t);
if (browser) {
  const c = await startConsoleServer(t);
  await c.adminSql('CREATE SCHEMA sales');
  await c.adminSql('CREATE TABLE sales.orders (id bigint NOT NULL, total decimal(12,2))');
  await c.adminSql('INSERT INTO sales.orders VALUES (1, 19.90)');
  await c.adminSql('CREATE VIEW sales.big_orders AS SELECT id FROM sales.orders WHERE total > 10');
  const loaded = await c.http.request('GET', '/v1/default/namespaces/sales/tables/orders', { token: await c.server.token() });
  const tableUuid = (loaded.json as { metadata: { 'table-uuid': string } }).metadata['table-uuid'];
  const paulaPassword = strongPassword('default-console');
  await c.adminSql(`CREATE USER paula EMAIL 'paula@example.com' PASSWORD '${paulaPassword}'`);

  // Another tenant with a console user of its own, signed in as the console signs in.
  const acme = await createTenantWithAdmin(c.server.state.store, 'acme');
  const form = new URLSearchParams({ grant_type: 'client_credentials', client_id: acme.credentials.clientId, client_secret: acme.credentials.clientSecret });
  const acmeAdmin = (await c.http.request('POST', '/v1/oauth/tokens', { headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: form.toString() })).json as { access_token: string };
  const ottoPassword = strongPassword('acme-console');
  const created = await c.http.query(acmeAdmin.access_token, { sql: `CREATE USER otto EMAIL 'otto@example.com' PASSWORD '${ottoPassword}'` });
  if (created.status !== 200) throw new Error(`CREATE USER otto in acme: ${created.status} ${created.text}`);
  const otto = await c.http.request('POST', '/api/auth/sign-in', { body: { tenant: 'acme', username: 'otto', password: ottoPassword } });
  if (otto.status !== 200) throw new Error(`otto's sign-in: ${otto.status} ${otto.text}`);
  const ottoToken = (otto.json as { access_token: string }).access_token;

  t.test("from the console page: no token, or acme's token, gets nothing of the default tenant", async (t) => {
    const { page, context, watch, goto } = await openFirefoxPage(browser, c.http.url);
    t.teardown(() => context.close());
    await goto('/console');
    await (await fieldByLabel(page, 'User name')).type('paula');
    await (await fieldByLabel(page, 'Password')).type(paulaPassword);
    await (await buttonNamed(page, 'Sign in')).click();
    await waitForHeading(page, 'SQL');
    t.same(await page.evaluate('[document.cookie, localStorage.length, sessionStorage.length]'), ['', 0, 0], 'no token in a cookie or Web Storage');
    await (await fieldByLabel(page, 'SQL script')).type('SELECT 4242 AS paulas_answer');
    await page.keyboard.down('Control');
    await page.keyboard.press('Enter');
    await page.keyboard.up('Control');
    await waitForText(page, /1 row · \d+ ms on the server · query id /);
    const queryId = /query id (\S+)/.exec(await page.evaluate('document.body.innerText') as string)?.[1] ?? '';
    t.ok(queryId.length > 0, 'the query id is shown');

    // Every route the console calls (console/src/api.ts and pages/), with a body where it takes one.
    const routes: readonly (readonly [string, string, unknown?])[] = [
      ['POST', '/api/query', { sql: 'SELECT * FROM sales.orders' }],
      ['GET', '/api/query-history'],
      ['GET', `/api/query-history/${queryId}`],
      ['GET', '/api/tables'],
      ['GET', '/api/qos/stats'],
      ['GET', '/v1/catalogs'],
      ['GET', '/v1/default/namespaces'],
      ['GET', '/v1/default/namespaces/sales/tables'],
      ['GET', '/v1/default/namespaces/sales/views'],
      ['GET', '/v1/default/namespaces/sales/tables/orders'],
      ['GET', '/v1/default/namespaces/sales/views/big_orders'],
      ['POST', '/api/auth/recovery-codes', {}],
      ['POST', '/api/auth/mfa/totp/verify', { code: '123456' }],
      ['GET', '/api/auth/passkeys'],
      ['POST', '/api/auth/passkeys/registration-options', {}],
      ['POST', '/api/auth/passkeys', { name: 'x', response: {} }],
      ['DELETE', '/api/auth/passkeys/some-credential'],
    ];
    const call = async (method: string, path: string, body: unknown, token: string | undefined): Promise<Answer> => page.evaluate(`(async () => {
      const headers = { 'content-type': 'application/json' };
      ${token === undefined ? '' : `headers.authorization = 'Bearer ' + ${JSON.stringify(token)};`}
      const r = await fetch(${JSON.stringify(path)}, { method: ${JSON.stringify(method)}, headers, credentials: 'omit', cache: 'no-store'${body === undefined ? '' : `, body: ${JSON.stringify(JSON.stringify(body))}`} });
      return { status: r.status, text: await r.text() };
    })()`) as Promise<Answer>;

    for (const [method, path, body] of routes) {
      const none = await call(method, path, body, undefined);
      t.equal(none.status, 401, `${method} ${path} without a token: 401`);
      // Each interface answers in its own error model: Iceberg's on /v1, {error,message,sql_state} on /api.
      t.match(none.text, path.startsWith('/v1/') ? /^\{"error":\{"message":.*"type":"NotAuthorizedException","code":401\}\}$/ : /^\{"error":"NOT_AUTHENTICATED"/,
        `${method} ${path} without a token: the interface's error format`);
    }

    // What acme's user can see of the default tenant: nothing. Either a refusal, or (for lists
    // that are per tenant) acme's own. Markers only the default tenant's data holds (the request's
    // own words, echoed in an error or in acme's own history, are not a leak).
    const defaultsData = ['paulas_answer', '4242', 'total > 10', tableUuid];
    for (const [method, path, body] of routes) {
      const r = await call(method, path, body, ottoToken);
      const markers = path.includes(queryId) ? defaultsData : [...defaultsData, queryId];
      t.notOk(markers.some((d) => r.text.includes(d)), `${method} ${path} with acme's token shows nothing of the default tenant (${r.status})`);
      if (path.startsWith('/v1/default/') || path.startsWith('/api/query-history/')) t.ok(r.status === 403 || r.status === 404, `${method} ${path} with acme's token is refused (${r.status})`);
    }
    // The control: the same routes with the default tenant's own tokens do show those markers.
    const paula = (await c.http.request('POST', '/api/auth/sign-in', { body: { tenant: 'default', username: 'paula', password: paulaPassword } })).json as { access_token: string };
    t.match((await call('GET', `/api/query-history/${queryId}`, undefined, paula.access_token)).text, '4242', "paula's own record shows her query");
    const admin = await c.server.token();
    t.match((await call('GET', '/v1/default/namespaces/sales/tables/orders', undefined, admin)).text, tableUuid, "the default tenant's admin loads the table");
    t.match((await call('GET', '/v1/default/namespaces/sales/views/big_orders', undefined, admin)).text, 'total > 10', "the default tenant's admin loads the view");

    const query = await call('POST', '/api/query', { sql: 'SELECT * FROM sales.orders' }, ottoToken);
    t.ok(query.status >= 400 && query.status < 500, `acme's token cannot read the default tenant's table (${query.status})`);

    // The page's own token still works: the refusals above were about the tokens, not the page.
    await (await fieldByLabel(page, 'SQL script')).evaluate((e: unknown) => { (e as { value: string }).value = ''; });
    await (await fieldByLabel(page, 'SQL script')).type('SELECT 7 AS still_signed_in');
    await page.keyboard.down('Control');
    await page.keyboard.press('Enter');
    await page.keyboard.up('Control');
    await waitForText(page, 'still_signed_in');
    t.same(watch.cspViolations, [], 'no CSP violation');
  });
}
