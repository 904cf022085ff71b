/**
 * The console in real headless Firefox (Debian's firefox-esr over WebDriver BiDi): the page shell
 * loads its ES module under the strict CSP with no violation and no script error (and a probe
 * shows a violation would have been seen); an administrator signs in with password and TOTP; a
 * query answers in the result grid (exact BIGINT and DECIMAL) and the virtualized grid scrolls
 * 100k rows; a long query is cancelled; history lists the queries and opens a record; the catalog browser reaches a table
 * and time-travels from its snapshot list; and the console is used by keyboard alone.
 */
import t from 'tap';
import type { Page } from 'puppeteer-core';
import { totpCode } from '../../engine/principals/totp.js';
import { startConsoleServer, type ConsoleServer } from '../helpers/console.js';
import { createTotpAdmin, type TotpUser } from '../helpers/console-users.js';
import { buttonNamed, fieldByLabel, launchFirefox, openFirefoxPage, waitForHeading, waitForText } from '../helpers/firefox.js';

const browser = await launchFirefox(t);
if (browser) {
  const c = await startConsoleServer(t);
  await c.adminSql('CREATE SCHEMA sales');
  await c.adminSql('CREATE TABLE sales.orders (id bigint NOT NULL, placed timestamptz, total decimal(12,2), info STRUCT(a INTEGER, b VARCHAR)) PARTITIONED BY (day(placed))');
  await c.adminSql("INSERT INTO sales.orders VALUES (1, TIMESTAMPTZ '2024-05-01 10:00:00+00', 19.90, {'a': 1, 'b': 'x'})");
  await c.adminSql("INSERT INTO sales.orders VALUES (2, TIMESTAMPTZ '2024-05-02 10:00:00+00', 5.00, {'a': 2, 'b': 'y'})");
  const raw = await c.http.request('GET', '/v1/default/namespaces/sales/tables/orders', { token: await c.server.token() });
  const olderSnapshot = /"parent-snapshot-id":(\d+)/.exec(raw.text)?.[1] ?? '';
  // One administrator per sign-in: a TOTP code is accepted once and only near its time step, and
  // each account's enrolment used the current step, so each signs in with the next one.
  const [fiona, frida, fern] = [await createTotpAdmin(c, 'fiona'), await createTotpAdmin(c, 'frida'), await createTotpAdmin(c, 'fern')];

  t.test('the shell loads its module under the CSP, with no violation and no script error', async (t) => {
    const { page, context, watch, goto } = await openFirefoxPage(browser, c.http.url);
    t.teardown(() => context.close());
    await goto('/console');
    await waitForHeading(page, 'Sign in to Floe');
    t.match(await page.evaluate('navigator.userAgent') as string, /Firefox\/\d+/, 'this is Firefox');
    t.same(await page.evaluate(`[...document.scripts].map((s) => [s.type, new URL(s.src, location.href).pathname, s.text.trim().length])`),
      [['module', '/console/assets/app.js', 0]], 'one external module script, nothing inline');
    t.same(watch.cspViolations, [], 'no CSP violation');
    t.same(watch.errors, [], 'no script error');

    // The probe: an inline script added to the page is refused by the CSP, and the watch sees it,
    // so the empty list above means something.
    await page.evaluate(`(() => { const s = document.createElement('script'); s.textContent = 'window.__inlineRan = true'; document.body.append(s); })()`);
    await page.waitForFunction('true', { polling: 100, timeout: 60_000 });
    for (let i = 0; i < 300 && watch.cspViolations.length === 0; i++) await new Promise((r) => setTimeout(r, 100));
    t.equal(await page.evaluate('window.__inlineRan === true'), false, 'the inline script did not run');
    t.match(watch.cspViolations.join('\n'), /script-src/, 'the violation was reported');
  });

  t.test('sign in with password and TOTP, run a query, see history, browse to a table and time-travel', async (t) => {
    const { page, context, watch, goto } = await openFirefoxPage(browser, c.http.url);
    t.teardown(() => context.close());
    await signInWithTotp(page, goto, c, fiona);
    await waitForHeading(page, 'SQL');

    await runSql(page, "SELECT 9007199254740993::BIGINT AS big, CAST('12345678901234567.89' AS DECIMAL(20,2)) AS d, 'x' AS s");
    await waitForText(page, /1 row · \d+ ms on the server · query id /);
    t.same(await page.evaluate(`[...document.querySelectorAll('.grid-scroll tbody td')].map((td) => td.textContent)`),
      ['9007199254740993', '12345678901234567.89', 'x'], 'BIGINT and DECIMAL exact in the grid');

    await (await linkNamed(page, 'History')).click();
    await waitForHeading(page, 'Query history');
    await waitForText(page, '9007199254740993::BIGINT');
    const queryLink = await page.waitForFunction(`[...document.querySelectorAll('main tr')].find((r) => r.textContent.includes('9007199254740993::BIGINT'))?.querySelector('a') ?? null`);
    await (queryLink.asElement() as unknown as { click(): Promise<void> }).click();
    await waitForHeading(page, /^Query /);
    t.match(await page.evaluate(`document.querySelector('main').textContent`) as string, /completed/, 'the full record of the query');

    await (await linkNamed(page, 'Catalog')).click();
    await waitForHeading(page, 'Catalogs');
    await (await linkNamed(page, 'default', 'main')).click();
    await (await linkNamed(page, 'sales', 'main')).click();
    await (await linkNamed(page, 'orders', 'main')).click();
    await waitForHeading(page, 'Table sales.orders');
    const text = await page.evaluate(`document.querySelector('main').textContent`) as string;
    t.match(text, /struct<a: int, b: string>/, 'nested type');
    t.match(text, /placed_day = day\(placed\)/, 'partition spec');
    t.ok(olderSnapshot !== '' && text.includes(olderSnapshot), `snapshot id ${olderSnapshot} exact`);
    await (await linkNamed(page, `Query snapshot ${olderSnapshot}`)).click();
    await waitForHeading(page, 'SQL');
    const editor = await fieldByLabel(page, 'SQL script');
    t.match(await editor.evaluate((e: unknown) => (e as { value: string }).value), new RegExp(`FOR VERSION AS OF ${olderSnapshot}`));
    await editor.focus();
    await chord(page, 'Control', 'Enter');
    await waitForText(page, /1 row ·/);
    t.equal(await page.evaluate(`document.querySelector('.grid-scroll tbody td').textContent`), '1', 'the older snapshot has the first row only');

    await page.goBack();
    await waitForHeading(page, 'Table sales.orders');
    await (await buttonNamed(page, 'Preview first 100 rows')).click();
    await page.waitForFunction(`document.querySelectorAll('.grid-scroll tbody tr').length === 2`);
    t.same(watch.errors, [], 'no script error');
    t.same(watch.cspViolations, [], 'no CSP violation');
  });

  t.test('100k rows render and scroll in the virtualized grid; a long query is cancelled; both in history', async (t) => {
    const { page, context, watch, goto } = await openFirefoxPage(browser, c.http.url);
    t.teardown(() => context.close());
    await signInWithTotp(page, goto, c, frida);
    await waitForHeading(page, 'SQL');
    await runSql(page, "SELECT i, i * 3 AS x, 'row ' || i AS label FROM range(100000) t(i)");
    await waitForText(page, /100000 rows ·/, 60_000);
    const scrolled = await page.evaluate(`(async () => {
      const s = document.querySelector('.grid-scroll');
      for (let i = 1; i <= 40; i++) { s.scrollTop = (s.scrollHeight * i) / 40; await new Promise((r) => requestAnimationFrame(() => r())); }
      await new Promise((r) => setTimeout(r, 100));
      return { last: document.querySelector('.grid-scroll tbody tr:last-child td').textContent, rowsInDom: document.querySelectorAll('.grid-scroll tbody tr').length };
    })()`) as { last: string; rowsInDom: number };
    t.equal(scrolled.last, '99999', 'scrolled to the last row (the spacer is within Firefox\'s element height limit)');
    t.ok(scrolled.rowsInDom < 100, `only the rows in view are in the DOM (${scrolled.rowsInDom})`);

    // A long query is cancelled (the request is aborted; the server cancels the statement).
    await runSql(page, 'SELECT sum(i) FROM range(100000000000) t(i)');
    await waitForText(page, 'Running…');
    await (await buttonNamed(page, 'Cancel')).click();
    await waitForText(page, /Cancelled after/);
    // History is written behind the request: wait until the server has recorded the cancellation.
    const adminToken = await c.server.token();
    for (let i = 0; i < 300; i++) {
      const h = await c.http.request('GET', '/api/query-history?status=cancelled', { token: adminToken });
      if (JSON.stringify(h.json).includes('range(100000000000)')) break;
      await new Promise((r) => setTimeout(r, 100));
    }
    await goto('/console#/history');
    await waitForHeading(page, 'Query history');
    const statuses = await page.evaluate(`[...document.querySelectorAll('main tr')].map((r) => r.textContent)`) as string[];
    t.ok(statuses.some((r) => r.includes('range(100000000000)') && r.includes('cancelled')), 'the cancelled query is in history');
    t.ok(statuses.some((r) => r.includes('range(100000)') && r.includes('completed')), 'the 100k-row query is in history');
    t.same(watch.errors, []);
  });

  t.test('keyboard alone: sign in, run a query, follow the navigation', async (t) => {
    const { page, context, watch, goto } = await openFirefoxPage(browser, c.http.url);
    t.teardown(() => context.close());
    await goto('/console');
    await waitForHeading(page, 'Sign in to Floe');
    t.equal(await page.evaluate(`document.activeElement && document.activeElement.name`), 'username', 'the user name field has focus');
    await page.keyboard.type(fern.name);
    await page.keyboard.press('Tab');
    await page.keyboard.type(fern.password);
    await page.keyboard.press('Enter');
    await waitForHeading(page, 'Second factor');
    t.equal(await page.evaluate(`document.activeElement && document.activeElement.name`), 'totp', 'the code field has focus');
    await page.keyboard.type(totpCode(fern.secret, Math.floor(c.server.state.clock.now() / 1000) + 30 * 1));
    await page.keyboard.press('Enter');
    await waitForText(page, `${fern.name} @ default`);

    // The editor has focus: select all, type, Ctrl+Enter runs.
    t.equal(await page.evaluate(`document.activeElement && document.activeElement.getAttribute('aria-label') || document.activeElement.labels?.[0]?.textContent`), 'SQL script', 'the editor has focus');
    await chord(page, 'Control', 'a');
    await page.keyboard.type('SELECT id FROM sales.orders ORDER BY id');
    await chord(page, 'Control', 'Enter');
    await waitForText(page, /2 rows ·/);

    // Tab through the page until the History link has focus; Enter follows it.
    let reached = false;
    for (let i = 0; i < 40 && !reached; i++) {
      await page.keyboard.press('Tab');
      reached = await page.evaluate(`document.activeElement && document.activeElement.tagName === 'A' && document.activeElement.textContent === 'History'`) as boolean;
    }
    t.ok(reached, 'Tab reaches the History link');
    await page.keyboard.press('Enter');
    await waitForHeading(page, 'Query history');
    t.match(await page.evaluate(`location.hash`) as string, /^#\/history/);
    // Shift+Tab goes back through the page, and the focus is always visible somewhere on it.
    await page.keyboard.down('Shift');
    await page.keyboard.press('Tab');
    await page.keyboard.up('Shift');
    t.not(await page.evaluate(`document.activeElement && document.activeElement.tagName`), 'BODY', 'Shift+Tab moves the focus to an element');
    t.same(watch.errors, []);
    t.same(watch.cspViolations, []);
  });
}

async function signInWithTotp(page: Page, goto: (path: string) => Promise<void>, c: ConsoleServer, u: TotpUser): Promise<void> {
  await goto('/console');
  await (await fieldByLabel(page, 'User name')).type(u.name);
  await (await fieldByLabel(page, 'Password')).type(u.password);
  await (await buttonNamed(page, 'Sign in')).click();
  await (await fieldByLabel(page, 'Authenticator code')).type(totpCode(u.secret, Math.floor(c.server.state.clock.now() / 1000) + 30));
  await (await buttonNamed(page, 'Verify')).click();
  await waitForText(page, `${u.name} @ default`);
}

/** Replaces the editor's text with `sql` and runs it with Ctrl+Enter. */
async function runSql(page: Page, sql: string): Promise<void> {
  const editor = await fieldByLabel(page, 'SQL script');
  await editor.focus();
  await chord(page, 'Control', 'a');
  await page.keyboard.press('Delete');
  await page.keyboard.type(sql);
  await chord(page, 'Control', 'Enter');
}

async function chord(page: Page, modifier: 'Control' | 'Shift', key: string): Promise<void> {
  await page.keyboard.down(modifier);
  await page.keyboard.press(key as Parameters<Page['keyboard']['press']>[0]);
  await page.keyboard.up(modifier);
}

/** The link whose text is `name`, optionally inside `within` (a CSS selector). */
async function linkNamed(page: Page, name: string, within = 'body') {
  const handle = await page.waitForFunction(`[...document.querySelectorAll(${JSON.stringify(`${within} a`)})].find((a) => a.textContent.trim() === ${JSON.stringify(name)} || a.getAttribute('aria-label') === ${JSON.stringify(name)}) ?? null`);
  return handle.asElement() as unknown as { click(): Promise<void> };
}
