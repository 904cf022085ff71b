/**
 * The console in real headless Chromium: it loads under its CSP without a violation or a script
 * error, signs a user in with a password, keeps the token in memory only (no cookie, nothing in
 * Web Storage, gone after a reload), and shows a refusal without saying why.
 */
import t from 'tap';
import { launchChromium, openPage } from '../helpers/browser.js';
import { startConsoleServer } from '../helpers/console.js';
import { strongPassword } from '../principals/helpers.js';

const browser = await launchChromium(t);
if (browser) {
  const { http, adminSql } = await startConsoleServer(t);
  const password = strongPassword('alice');
  await adminSql(`CREATE USER alice EMAIL 'alice@example.com' PASSWORD '${password}'`);

  t.test('password sign-in; the token lives in memory only', async (t) => {
    const { page, context, watch } = await openPage(browser, http.url);
    t.teardown(() => context.close());
    await page.goto('/console');
    await page.getByRole('heading', { name: 'Sign in to Floe' }).waitFor();
    await page.getByLabel('User name').fill('alice');
    await page.getByLabel('Password').fill('wrong-password');
    await page.getByRole('button', { name: 'Sign in' }).click();
    t.match(await page.getByRole('alert').textContent(), /credentials are not valid/);
    await page.getByLabel('Password').fill(password);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByText('alice @ default').waitFor();
    t.equal(new URL(page.url()).hash, '#/sql');
    t.same(await context.cookies(), [], 'no cookie');
    t.equal(await page.evaluate('localStorage.length + sessionStorage.length'), 0, 'nothing in Web Storage');
    await page.reload();
    await page.getByRole('heading', { name: 'Sign in to Floe' }).waitFor();
    t.same(watch.cspViolations, [], 'no CSP violation');
    t.same(watch.errors, [], 'no script error');
  });
}
