/**
 * Passkeys in real Chromium with its virtual authenticator (DevTools protocol `WebAuthn.*`): an
 * administrator's first sign-in sets one up; sign-in with password + passkey; a replayed
 * assertion is refused; a passkey assertion of one user does not sign in another (even one with
 * passkeys of their own and a fresh challenge); users add, name and remove passkeys, and the last
 * second factor cannot be removed while one is required.
 */
import t from 'tap';
import type { BrowserContext, Page } from 'playwright-core';
import { launchChromium, openPage } from '../helpers/browser.js';
import { startConsoleServer } from '../helpers/console.js';
import { createTotpAdmin, signInWithTotp } from '../helpers/console-users.js';
import { strongPassword } from '../principals/helpers.js';

const browser = await launchChromium(t);
if (browser) {
  const c = await startConsoleServer(t);
  // WebAuthn needs a domain for its relying party (not an IP address): localhost is one, and a secure context.
  const base = c.http.url.replace('127.0.0.1', 'localhost');

  /** A virtual authenticator; a second one (another transport) stands for a second device. */
  async function withAuthenticator(page: Page, context: BrowserContext, transport: 'internal' | 'usb' = 'internal'): Promise<void> {
    const cdp = await context.newCDPSession(page);
    await cdp.send('WebAuthn.enable');
    await cdp.send('WebAuthn.addVirtualAuthenticator', {
      options: { protocol: 'ctap2', transport, hasResidentKey: true, hasUserVerification: true, isUserVerified: true, automaticPresenceSimulation: true },
    });
  }

  /** POST /api/auth/sign-in as the console at `base` would (its Host and Origin). */
  async function signInRequest(body: unknown): Promise<{ status: number; json: Record<string, unknown> }> {
    const r = await fetch(`${base}/api/auth/sign-in`, { method: 'POST', headers: { 'content-type': 'application/json', origin: base }, body: typeof body === 'string' ? body : JSON.stringify(body) });
    return { status: r.status, json: (await r.json()) as Record<string, unknown> };
  }

  async function passwordStep(page: Page, name: string, password: string): Promise<void> {
    await page.goto('/console');
    await page.getByLabel('User name').fill(name);
    await page.getByLabel('Password').fill(password);
    await page.getByRole('button', { name: 'Sign in' }).click();
  }

  t.test('first sign-in sets up a passkey; password + passkey; replay and another user refused', async (t) => {
    const password = strongPassword('first-passkey');
    await c.adminSql(`CREATE USER pam EMAIL 'pam@example.com' PASSWORD '${password}'`);
    await c.adminSql('GRANT ROLE tenant_admin TO USER pam');
    const { page, context, watch } = await openPage(browser, base);
    t.teardown(() => context.close());
    await withAuthenticator(page, context);
    await passwordStep(page, 'pam', password);
    await page.getByRole('button', { name: 'Use a passkey' }).click();
    await page.getByText('pam @ default').waitFor();

    const signIns: string[] = [];
    page.on('request', (r) => { if (r.url().endsWith('/api/auth/sign-in')) signIns.push(r.postData() ?? ''); });
    await passwordStep(page, 'pam', password);
    await page.getByRole('button', { name: 'Use your passkey' }).click();
    await page.getByText('pam @ default').waitFor();
    const withAssertion = signIns.find((b) => b.includes('"passkey"'));
    t.ok(withAssertion, 'the sign-in carried an assertion');

    const replay = await signInRequest(withAssertion!);
    t.equal(replay.status, 401, 'a replayed assertion is refused');
    t.equal((replay.json as { error: string }).error, 'NOT_AUTHENTICATED');

    // quinn has an authenticator app and a passkey of their own, and asks for a fresh challenge.
    const quinn = await createTotpAdmin(c, 'quinn');
    const q = await openPage(browser, base);
    t.teardown(() => q.context.close());
    await withAuthenticator(q.page, q.context);
    await signInWithTotp(q.page, c, quinn, 1);
    await q.page.getByRole('link', { name: 'Account' }).click();
    await q.page.getByLabel('Passkey name').fill('quinn laptop');
    await q.page.getByRole('button', { name: 'Add a passkey' }).click();
    await q.page.getByRole('cell', { name: 'quinn laptop', exact: true }).waitFor();
    const challenge = await signInRequest({ username: 'quinn', password: quinn.password });
    t.equal(challenge.status, 401);
    t.same((challenge.json as { methods: string[] }).methods, ['totp', 'recovery_code', 'passkey']);
    const stolen = JSON.parse(withAssertion!) as Record<string, unknown>;
    const other = await signInRequest({ username: 'quinn', password: quinn.password, passkey: stolen.passkey });
    t.equal(other.status, 401, "pam's passkey does not sign quinn in");
    t.equal((other.json as { error: string }).error, 'NOT_AUTHENTICATED');
    t.same(watch.errors, []);
  });

  t.test('users name and remove passkeys; the last required factor stays', async (t) => {
    const password = strongPassword('passkey-admin-two');
    await c.adminSql(`CREATE USER rita EMAIL 'rita@example.com' PASSWORD '${password}'`);
    await c.adminSql('GRANT ROLE tenant_admin TO USER rita');
    const { page, context, watch } = await openPage(browser, base);
    t.teardown(() => context.close());
    await withAuthenticator(page, context);
    await passwordStep(page, 'rita', password);
    await page.getByRole('button', { name: 'Use a passkey' }).click();
    await page.getByText('rita @ default').waitFor();
    await page.getByRole('link', { name: 'Account' }).click();
    await page.getByRole('cell', { name: 'Passkey', exact: true }).waitFor();
    await page.getByRole('button', { name: 'Remove passkey Passkey' }).click();
    t.match(await page.getByRole('alert').textContent(), /last second factor/, 'the last second factor of an administrator stays');
    // The first device already holds a credential for rita (and is excluded): a second device.
    await withAuthenticator(page, context, 'usb');
    await page.getByLabel('Passkey name').fill('backup key');
    await page.getByRole('button', { name: 'Add a passkey' }).click();
    await page.getByRole('cell', { name: 'backup key', exact: true }).waitFor();
    await page.getByRole('button', { name: 'Remove passkey Passkey' }).click();
    await page.getByRole('cell', { name: 'Passkey', exact: true }).waitFor({ state: 'detached' });
    t.equal(await page.getByRole('cell', { name: 'backup key', exact: true }).count(), 1, 'one passkey left');
    const audit = await c.adminSql("SELECT * FROM system.audit_log");
    const text = JSON.stringify(audit.rows);
    t.match(text, /add_passkey/);
    t.match(text, /remove_passkey/);
    t.same(watch.errors, []);
  });
}
