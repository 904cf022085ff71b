/**
 * Accessibility of every console page and state in real headless Firefox ESR: axe-core finds no
 * serious or critical violation. Besides the pages the Chromium check covers, this walks the ones
 * reached only through a flow: an administrator's forced second-factor setup, the authenticator
 * setup, the recovery codes shown once, the recovery-code step, a refused sign-in, the SQL
 * editor's error, a catalog's and a namespace's listing, a view, the invitation and
 * must-change-password pages. axe-core is evaluated through WebDriver BiDi, which the page's CSP
 * does not govern, so the console's own CSP stays on while it is checked.
 */
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import t, { type Test } from 'tap';
import type { Page } from 'puppeteer-core';
import { totpCode } from '../../engine/principals/totp.js';
import { startConsoleServer } from '../helpers/console.js';
import { createTotpAdmin } from '../helpers/console-users.js';
import { buttonNamed, fieldByLabel, launchFirefox, openFirefoxPage, waitForHeading, waitForText } from '../helpers/firefox.js';
import { strongPassword } from '../principals/helpers.js';

const AXE_SOURCE = readFileSync(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8');

interface Violation { readonly id: string; readonly impact: string; readonly nodes: number; readonly help: string }

const browser = await launchFirefox(t);
if (browser) {
  const c = await startConsoleServer(t);
  await c.adminSql('CREATE SCHEMA sales');
  await c.adminSql('CREATE TABLE sales.orders (id bigint NOT NULL, placed timestamptz, total decimal(12,2), info STRUCT(a INTEGER, b VARCHAR)) PARTITIONED BY (day(placed))');
  await c.adminSql("INSERT INTO sales.orders VALUES (1, TIMESTAMPTZ '2024-05-01 10:00:00+00', 19.90, {'a': 1, 'b': 'x'}), (2, TIMESTAMPTZ '2024-05-02 11:00:00+00', 5.00, {'a': 2, 'b': 'y'})");
  await c.adminSql('CREATE VIEW sales.big_orders AS SELECT id, total FROM sales.orders WHERE total > 10');

  /** Runs axe-core on the page as it is; `name` says which page in the assertion. */
  const serious = async (page: Page): Promise<Violation[]> => {
    if (await page.evaluate('typeof window.axe') !== 'object') await page.evaluate(AXE_SOURCE);
    const found = await page.evaluate(`axe.run(document, { resultTypes: ['violations'] }).then((r) => r.violations.map((v) => ({ id: v.id, impact: v.impact, nodes: v.nodes.length, help: v.help })))`) as Violation[];
    return found.filter((v) => v.impact === 'serious' || v.impact === 'critical');
  };
  const check = async (t: Test, page: Page, name: string): Promise<void> => {
    t.same(await serious(page), [], `${name}: no serious or critical axe violation`);
  };

  t.test("an administrator's first sign-in, then every page of the console", async (t) => {
    const password = strongPassword('nina');
    await c.adminSql(`CREATE USER nina EMAIL 'nina@example.com' PASSWORD '${password}'`);
    await c.adminSql('GRANT ROLE tenant_admin TO USER nina');
    const { page, context, watch, goto } = await openFirefoxPage(browser, c.http.url);
    t.teardown(() => context.close());

    await goto('/console');
    await waitForHeading(page, 'Sign in to Floe');
    // The probe: a field without a label is a critical violation axe must find here.
    await page.evaluate(`document.querySelector('main').append(Object.assign(document.createElement('input'), { id: 'unlabelled-probe' }))`);
    t.match(await serious(page), [{ id: 'label', impact: 'critical' }], 'axe runs in Firefox and finds an unlabelled field');
    await page.evaluate(`document.getElementById('unlabelled-probe').remove()`);
    await check(t, page, 'sign-in');
    await (await fieldByLabel(page, 'User name')).type('nina');
    await (await fieldByLabel(page, 'Password')).type('not-the-password');
    await (await buttonNamed(page, 'Sign in')).click();
    await waitForText(page, 'credentials are not valid');
    await check(t, page, 'sign-in refused');
    await (await fieldByLabel(page, 'Password')).evaluate((e: unknown) => { (e as { value: string }).value = ''; });
    await (await fieldByLabel(page, 'Password')).type(password);
    await (await buttonNamed(page, 'Sign in')).click();
    await waitForHeading(page, 'Set up a second factor');
    await check(t, page, 'set up a second factor');
    await (await buttonNamed(page, 'Use an authenticator app')).click();
    await waitForHeading(page, 'Set up an authenticator app');
    await check(t, page, 'set up an authenticator app');
    const secret = (await page.evaluate(`document.querySelector('[data-testid="totp-secret"]').textContent`) as string).trim();
    await (await fieldByLabel(page, 'Authenticator code')).type(totpCode(secret, Math.floor(c.server.state.clock.now() / 1000)));
    await (await buttonNamed(page, 'Turn on')).click();
    await waitForHeading(page, 'Recovery codes');
    await check(t, page, 'recovery codes');
    await (await buttonNamed(page, 'I have saved these codes')).click();
    await waitForHeading(page, 'SQL');
    await check(t, page, 'sql-editor');

    const editor = await fieldByLabel(page, 'SQL script');
    await editor.type('SELECT id, placed, total FROM sales.orders ORDER BY id');
    await runEditor(page);
    await waitForText(page, /2 rows ·/);
    await check(t, page, 'sql-editor with a result');
    await editor.evaluate((e: unknown) => { (e as { value: string }).value = ''; });
    await editor.type('SELECT 1,\n  FROM WHERE');
    await runEditor(page);
    await page.waitForFunction(`document.querySelector('main [role="alert"]:not([hidden])')`);
    await check(t, page, 'sql-editor with an error');

    for (const [route, heading, name] of [
      ['#/history', 'Query history', 'history'],
      ['#/catalog', 'Catalogs', 'catalogs'],
      ['#/catalog/default', 'Catalog default', 'catalog'],
      ['#/catalog/default/sales', 'Namespace sales', 'namespace'],
    ] as const) {
      await goto(`/console${route}`);
      await waitForHeading(page, heading);
      await check(t, page, name);
    }
    // A view is reached from its namespace's listing.
    const viewLink = await page.waitForFunction(`[...document.querySelectorAll('main a')].find((a) => a.textContent.trim() === 'big_orders') ?? null`);
    await (viewLink.asElement() as unknown as { click(): Promise<void> }).click();
    await waitForHeading(page, 'View sales.big_orders');
    await check(t, page, 'view');
    await goto('/console#/catalog/default/sales/orders');
    await waitForHeading(page, 'Table sales.orders');
    await check(t, page, 'table');
    await (await buttonNamed(page, 'Preview first 100 rows')).click();
    await page.waitForFunction(`document.querySelectorAll('.grid-scroll tbody tr').length === 2`);
    await check(t, page, 'table with its preview');

    await goto('/console#/history');
    await waitForHeading(page, 'Query history');
    const queryLink = await page.waitForFunction(`[...document.querySelectorAll('main tr')].find((r) => r.textContent.includes('sales.orders'))?.querySelector('a') ?? null`);
    await (queryLink.asElement() as unknown as { click(): Promise<void> }).click();
    await waitForHeading(page, /^Query /);
    await check(t, page, 'one query');

    for (const [section, title] of [['users', 'Users'], ['service-accounts', 'Service accounts'], ['pats', 'Personal access tokens'], ['webhooks', 'Webhooks'], ['resource-groups', 'Resource groups'], ['audit', 'Audit log']] as const) {
      await goto(`/console#/admin/${section}`);
      await page.waitForFunction(`[...document.querySelectorAll('main caption')].some((e) => e.textContent.trim() === ${JSON.stringify(title)})`);
      await check(t, page, `admin ${section}`);
    }
    await goto('/console#/account');
    await waitForHeading(page, 'Passkeys');
    await check(t, page, 'account');
    t.same(watch.errors, [], 'no script error');
    t.same(watch.cspViolations, [], 'no CSP violation');
  });

  t.test('the second-factor steps, the invitation and the must-change-password pages', async (t) => {
    const ursula = await createTotpAdmin(c, 'ursula');
    const invited = await c.adminSql(`CREATE USER victor EMAIL 'victor@example.com'`);
    const url = String(invited.rows[0]![invited.columns.indexOf('invitation_url')]);
    const first = strongPassword('wanda');
    await c.adminSql(`CREATE USER wanda EMAIL 'wanda@example.com' PASSWORD '${first}' MUST_CHANGE_PASSWORD = TRUE`);
    const { page, context, watch, goto } = await openFirefoxPage(browser, c.http.url);
    t.teardown(() => context.close());

    await goto('/console');
    await (await fieldByLabel(page, 'User name')).type(ursula.name);
    await (await fieldByLabel(page, 'Password')).type(ursula.password);
    await (await buttonNamed(page, 'Sign in')).click();
    await waitForHeading(page, 'Second factor');
    await fieldByLabel(page, 'Authenticator code');
    await check(t, page, 'second factor: authenticator code');
    await (await buttonNamed(page, 'Use a recovery code instead')).click();
    await fieldByLabel(page, 'Recovery code');
    await check(t, page, 'second factor: recovery code');

    await goto(`/invite${url.slice(url.indexOf('#'))}`);
    await waitForHeading(page, 'Accept your invitation');
    await check(t, page, 'invitation');

    await goto('/console#/sign-in');
    await page.reload();
    await waitForHeading(page, 'Sign in to Floe');
    await (await fieldByLabel(page, 'User name')).type('wanda');
    await (await fieldByLabel(page, 'Password')).type(first);
    await (await buttonNamed(page, 'Sign in')).click();
    await waitForHeading(page, 'Change your password');
    await check(t, page, 'change password');
    t.same(watch.errors, [], 'no script error');
    t.same(watch.cspViolations, [], 'no CSP violation');
  });
}

async function runEditor(page: Page): Promise<void> {
  await page.keyboard.down('Control');
  await page.keyboard.press('Enter');
  await page.keyboard.up('Control');
}
