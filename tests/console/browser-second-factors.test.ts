/**
 * Second factors in the console, in real Chromium: password + authenticator code; an
 * administrator's first sign-in forced through setting up an authenticator, which shows ten
 * recovery codes once; a recovery code signs in once and is refused the second time; the codes
 * appear in no other answer, nor in history or the audit log, and are stored only hashed; an
 * invitation link opens the set-password page; a must-change-password sign-in changes it first.
 */
import t from 'tap';
import type { Page } from 'playwright-core';
import { totpCode } from '../../engine/principals/totp.js';
import { launchChromium, openPage } from '../helpers/browser.js';
import { startConsoleServer } from '../helpers/console.js';
import { mintToken, strongPassword } from '../principals/helpers.js';

const browser = await launchChromium(t);
if (browser) {
  const { server, http, adminSql } = await startConsoleServer(t);

  async function signInWithPassword(page: Page, username: string, password: string): Promise<void> {
    await page.goto('/console');
    await page.getByLabel('User name').fill(username);
    await page.getByLabel('Password').fill(password);
    await page.getByRole('button', { name: 'Sign in' }).click();
  }

  t.test('password and authenticator code', async (t) => {
    const password = strongPassword('second-b');
    await adminSql(`CREATE USER bob EMAIL 'bob@example.com' PASSWORD '${password}'`);
    const token = await mintToken(server, 'bob');
    const enrolled = await http.query(token, { sql: 'ALTER USER SELF ENROLL MFA TOTP' });
    const secret = (enrolled.json as { rows: string[][] }).rows[0]![0]!;
    const now = Math.floor(server.state.clock.now() / 1000);
    t.equal((await http.query(token, { sql: `ALTER USER SELF VERIFY MFA TOTP '${totpCode(secret, now)}'` })).status, 200);

    const { page, context, watch } = await openPage(browser, http.url);
    t.teardown(() => context.close());
    await signInWithPassword(page, 'bob', password);
    await page.getByRole('heading', { name: 'Second factor' }).waitFor();
    await page.getByLabel('Authenticator code').fill('000000');
    await page.getByRole('button', { name: 'Verify' }).click();
    t.match(await page.getByRole('alert').textContent(), /not valid/, 'a wrong code is refused');
    await signInWithPassword(page, 'bob', password);
    // The step's code spent on VERIFY is refused from now on: the next step's code while that step
    // lasts (within the allowed drift), the current one's once it has passed (the steps above may
    // take longer than a step on a loaded machine, and the next step's code would then be too old).
    await page.getByLabel('Authenticator code').fill(totpCode(secret, Math.max(now + 30, Math.floor(server.state.clock.now() / 1000))));
    await page.getByRole('button', { name: 'Verify' }).click();
    await page.getByText('bob @ default').waitFor();
    t.same(watch.errors, []);
  });

  t.test("an administrator's first sign-in sets up an authenticator; recovery codes are shown once and work once", async (t) => {
    const password = strongPassword('carol');
    await adminSql(`CREATE USER carol EMAIL 'carol@example.com' PASSWORD '${password}'`);
    await adminSql('GRANT ROLE tenant_admin TO USER carol');
    const { page, context, watch } = await openPage(browser, http.url);
    t.teardown(() => context.close());
    const bodies: string[] = [];
    page.on('response', async (r) => {
      try {
        bodies.push(await r.text());
      } catch {
        // redirects and aborted requests have no body
      }
    });
    await signInWithPassword(page, 'carol', password);
    await page.getByRole('heading', { name: 'Set up a second factor' }).waitFor();
    t.equal(await page.getByRole('link', { name: 'SQL' }).count(), 0, 'no navigation before the second factor is set up');
    await page.goto('/console#/sql');
    await page.getByRole('heading', { name: 'Set up a second factor' }).waitFor({ timeout: 5000 }).catch(() => undefined);
    // A reload forgets the in-memory token: sign in again, still forced through the setup.
    await signInWithPassword(page, 'carol', password);
    await page.getByRole('button', { name: 'Use an authenticator app' }).click();
    const secret = (await page.getByTestId('totp-secret').textContent())!.trim();
    await page.getByLabel('Authenticator code').fill(totpCode(secret, Math.floor(server.state.clock.now() / 1000)));
    await page.getByRole('button', { name: 'Turn on' }).click();
    const list = page.getByRole('list', { name: 'Recovery codes' });
    await list.waitFor();
    const codes = (await list.locator('li').allTextContents()).map((c) => c.trim());
    t.equal(codes.length, 10, 'ten recovery codes');
    t.equal(new Set(codes).size, 10, 'all different');
    await page.getByRole('button', { name: 'I have saved these codes' }).click();
    await page.getByText('carol @ default').waitFor();
    await page.getByRole('link', { name: 'SQL' }).waitFor();

    // Sign in with a recovery code, then the same code is refused.
    for (const expectOk of [true, false]) {
      await signInWithPassword(page, 'carol', password);
      await page.getByRole('button', { name: 'Use a recovery code instead' }).click();
      await page.getByLabel('Recovery code').fill(codes[0]!);
      await page.getByRole('button', { name: 'Verify' }).click();
      if (expectOk) await page.getByText('carol @ default').waitFor();
      else t.match(await page.getByRole('alert').textContent(), /not valid/, 'a used recovery code is refused');
    }

    const withCodes = bodies.filter((b) => codes.some((c) => b.includes(c)));
    t.equal(withCodes.length, 1, 'the codes appear in exactly one answer');
    const history = await adminSql('SELECT * FROM system.query_history');
    const audit = await http.request('GET', '/api/query-history?limit=500', { token: await server.token() });
    const stored = await server.state.store.query<{ code_sha256: string }>('SELECT code_sha256 FROM principal_recovery_codes');
    const everywhere = JSON.stringify([history.rows, audit.json, stored.rows]);
    for (const c of codes) t.notOk(everywhere.includes(c) || everywhere.includes(c.replace('-', '')), 'no code in history or the store');
    t.equal(stored.rows.length, 10);
    t.ok(stored.rows.every((r) => /^[0-9a-f]{64}$/.test(r.code_sha256)), 'stored as SHA-256');
    t.same(watch.errors, []);
  });

  t.test('an invitation link opens the set-password page; a must-change password is changed first', async (t) => {
    const invited = await adminSql(`CREATE USER dave EMAIL 'dave@example.com'`);
    const url = String(invited.rows[0]![invited.columns.indexOf('invitation_url')]);
    const fragment = url.slice(url.indexOf('#'));
    const { page, context, watch } = await openPage(browser, http.url);
    t.teardown(() => context.close());
    await page.goto(`/invite${fragment}`);
    await page.getByRole('heading', { name: 'Accept your invitation' }).waitFor();
    const davePassword = strongPassword('dave');
    await page.getByLabel('New password').fill(davePassword);
    await page.getByRole('button', { name: 'Set password' }).click();
    await page.getByText('Your account is active').waitFor();
    await page.getByLabel('User name').fill('dave');
    await page.getByLabel('Password').fill(davePassword);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByText('dave @ default').waitFor();

    const first = strongPassword('erin');
    await adminSql(`CREATE USER erin EMAIL 'erin@example.com' PASSWORD '${first}' MUST_CHANGE_PASSWORD = TRUE`);
    await signInWithPassword(page, 'erin', first);
    await page.getByRole('heading', { name: 'Change your password' }).waitFor();
    const second = strongPassword('erin-2');
    await page.getByLabel('Current password').fill(first);
    await page.getByLabel('New password').fill(second);
    await page.getByRole('button', { name: 'Change password' }).click();
    await page.getByText('Sign in with the new password').waitFor();
    await page.getByLabel('User name').fill('erin');
    await page.getByLabel('Password').fill(second);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByText('erin @ default').waitFor();
    t.same(watch.errors, []);
  });
}
