/**
 * Administration in real Chromium, through the same SQL statements as the API: an administrator
 * (signed in with password and authenticator code) creates a user by invitation and sees the
 * invitation link once, suspends the user, creates a personal access token and sees it once
 * (the list shows only its prefix); a plain user is refused by the server, not by the page.
 */
import t from 'tap';
import { launchChromium, openPage } from '../helpers/browser.js';
import { startConsoleServer } from '../helpers/console.js';
import { createTotpAdmin, signInWithTotp } from '../helpers/console-users.js';
import { strongPassword } from '../principals/helpers.js';

const browser = await launchChromium(t);
if (browser) {
  const c = await startConsoleServer(t);
  const ada = await createTotpAdmin(c, 'ada');

  t.test('create a user and a PAT, each secret shown once', async (t) => {
    const { page, context, watch } = await openPage(browser, c.http.url);
    t.teardown(() => context.close());
    await signInWithTotp(page, c, ada, 1);
    await page.getByRole('link', { name: 'Administration' }).click();
    await page.getByRole('table', { name: 'Users' }).waitFor();
    const create = page.getByRole('form', { name: 'Create user' });
    await create.getByLabel('User name').fill('newbie');
    await create.getByLabel('E-mail').fill('newbie@example.com');
    await create.getByRole('button', { name: 'Create user' }).click();
    const link = (await page.getByTestId('shown-once').textContent())!;
    t.match(link, /\/invite#token=/, 'the invitation link');
    await page.getByRole('button', { name: 'Refresh the list' }).click();
    await page.getByRole('row').filter({ hasText: 'newbie' }).waitFor();
    t.match(await page.getByRole('row').filter({ hasText: 'newbie' }).textContent(), /INVITED/);
    t.notOk((await page.locator('main').textContent())!.includes(link.split('#token=')[1]!), 'not shown again');
    await page.getByRole('button', { name: 'Suspend newbie' }).click();
    await page.getByRole('button', { name: 'Unsuspend newbie' }).waitFor();
    t.match(await page.getByRole('row').filter({ hasText: 'newbie' }).textContent(), /SUSPENDED/);

    await page.getByRole('link', { name: 'Access tokens' }).click();
    const pat = page.getByRole('form', { name: 'Create access token' });
    await pat.getByLabel('Name').fill('ci_token');
    await pat.getByRole('button', { name: 'Create access token' }).click();
    const token = (await page.getByTestId('shown-once').textContent())!.trim();
    t.ok(token.length > 20, 'the token is shown');
    const exchanged = await c.http.request('POST', '/v1/oauth/tokens', { body: new URLSearchParams({ grant_type: 'pat', pat: token }).toString(), headers: { 'content-type': 'application/x-www-form-urlencoded' } });
    t.equal(exchanged.status, 200, 'the token shown works');
    await page.getByRole('button', { name: 'Refresh the list' }).click();
    await page.getByRole('row').filter({ hasText: 'ci_token' }).waitFor();
    t.notOk((await page.locator('main').textContent())!.includes(token), 'the list does not show it again');

    for (const section of ['Service accounts', 'Webhooks', 'Resource groups', 'Audit log']) {
      await page.getByRole('link', { name: section }).click();
      await page.getByRole('table', { name: section === 'Resource groups' ? 'Resource groups' : section === 'Audit log' ? 'Audit log' : section }).waitFor();
    }
    t.match(await page.getByRole('table', { name: 'Audit log' }).textContent(), /create_pat/, 'the audit log shows the PAT creation');
    t.same(watch.errors, []);
  });

  t.test("a plain user's administration is refused by the server", async (t) => {
    const password = strongPassword('plain-one');
    await c.adminSql(`CREATE USER plain EMAIL 'plain@example.com' PASSWORD '${password}'`);
    const { page, context } = await openPage(browser, c.http.url);
    t.teardown(() => context.close());
    await page.goto('/console');
    await page.getByLabel('User name').fill('plain');
    await page.getByLabel('Password').fill(password);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByText('plain @ default').waitFor();
    await page.getByRole('link', { name: 'Administration' }).click();
    t.match(await page.getByRole('alert').textContent(), /permission|not allowed|denied/i);
  });
}
