/**
 * Accessibility of every console page, in real Chromium: axe-core finds no serious or critical
 * violation on sign-in, the second-factor step, the SQL editor with a result, history and one
 * query, the catalog and a table, each administration section and the account page; the console
 * is driven by keyboard alone here (sign-in, running a query, following links). With
 * FLOE_CONSOLE_SCREENSHOTS set, each page's screenshot is written to docs/console/.
 */
import { mkdirSync } from 'node:fs';
import { createRequire } from 'node:module';
import t from 'tap';
import type { Page } from 'playwright-core';
import { totpCode } from '../../engine/principals/totp.js';
import { launchChromium, openPage } from '../helpers/browser.js';
import { startConsoleServer } from '../helpers/console.js';
import { createTotpAdmin } from '../helpers/console-users.js';

const AXE = createRequire(import.meta.url).resolve('axe-core/axe.min.js');
const SHOTS = process.env.FLOE_CONSOLE_SCREENSHOTS ? new URL('../../../docs/console/', import.meta.url).pathname : undefined;

const browser = await launchChromium(t);
if (browser) {
  const c = await startConsoleServer(t);
  await c.adminSql('CREATE SCHEMA sales');
  await c.adminSql('CREATE TABLE sales.orders (id bigint NOT NULL, placed timestamptz, total decimal(12,2)) PARTITIONED BY (day(placed))');
  await c.adminSql("INSERT INTO sales.orders VALUES (1, TIMESTAMPTZ '2024-05-01 10:00:00+00', 19.90), (2, TIMESTAMPTZ '2024-05-02 11:00:00+00', 5.00)");
  const admin = await createTotpAdmin(c, 'ava');
  if (SHOTS) mkdirSync(SHOTS, { recursive: true });

  t.test('every page passes axe-core and works by keyboard', async (t) => {
    const { page, context } = await openPage(browser, c.http.url, { bypassCSP: true });
    t.teardown(() => context.close());
    const check = async (name: string) => {
      await page.addScriptTag({ path: AXE });
      const found = await page.evaluate(`axe.run(document, { resultTypes: ['violations'] }).then((r) => r.violations.map((v) => ({ id: v.id, impact: v.impact, nodes: v.nodes.length, help: v.help })))`) as { id: string; impact: string; nodes: number; help: string }[];
      const bad = found.filter((v) => v.impact === 'serious' || v.impact === 'critical');
      t.same(bad, [], `${name}: no serious or critical axe violation`);
      if (SHOTS) await page.screenshot({ path: `${SHOTS}${name}.png`, fullPage: false });
    };

    // Sign-in by keyboard alone: the user name field has focus; Tab to the password; Enter submits.
    await page.goto('/console');
    await page.getByRole('heading', { name: 'Sign in to Floe' }).waitFor();
    await check('sign-in');
    await page.keyboard.type(admin.name);
    await page.keyboard.press('Tab');
    await page.keyboard.type(admin.password);
    await page.keyboard.press('Enter');
    await page.getByRole('heading', { name: 'Second factor' }).waitFor();
    await check('second-factor');
    await page.keyboard.type(totpCode(admin.secret, Math.floor(c.server.state.clock.now() / 1000) + 30));
    await page.keyboard.press('Enter');
    await page.getByText('ava @ default').waitFor();

    // The editor has focus: type, Ctrl+Enter runs.
    await page.keyboard.press('Control+A');
    await page.keyboard.type('SELECT id, placed, total FROM sales.orders ORDER BY id');
    await page.keyboard.press('Control+Enter');
    await page.getByText(/2 rows ·/).waitFor();
    await check('sql-editor');

    // Follow a navigation link by keyboard: Tab until it has focus, then Enter.
    const follow = async (name: string) => {
      for (let i = 0; i < 40; i++) {
        await page.keyboard.press('Tab');
        if (await page.evaluate('document.activeElement && document.activeElement.textContent') === name) break;
      }
      await page.keyboard.press('Enter');
    };
    await follow('History');
    await page.getByRole('heading', { name: 'Query history' }).waitFor();
    await check('history');
    await page.getByRole('row').filter({ hasText: 'sales.orders' }).getByRole('link').first().click();
    await page.getByRole('heading', { name: /^Query / }).waitFor();
    await check('history-query');

    await page.goto('/console#/catalog');
    await page.getByRole('heading', { name: 'Catalogs' }).waitFor();
    await check('catalog');
    await page.goto('/console#/catalog/default/sales/orders');
    await page.getByRole('heading', { name: 'Table sales.orders' }).waitFor();
    await page.getByRole('button', { name: 'Preview first 100 rows' }).click();
    await page.locator('.grid-scroll tbody tr').nth(1).waitFor();
    await check('catalog-table');

    for (const [section, title] of [['users', 'Users'], ['service-accounts', 'Service accounts'], ['pats', 'Personal access tokens'], ['webhooks', 'Webhooks'], ['resource-groups', 'Resource groups'], ['audit', 'Audit log']] as const) {
      await page.goto(`/console#/admin/${section}`);
      await page.getByRole('table', { name: title }).or(page.getByText('None.')).first().waitFor();
      await check(`admin-${section}`);
    }
    await page.goto('/console#/account');
    await page.getByRole('heading', { name: 'Passkeys' }).waitFor();
    await check('account');
  });
}
