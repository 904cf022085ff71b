/** Users for the console's browser tests: an administrator with an authenticator already on. */
import { totpCode } from '../../engine/principals/totp.js';
import type { ConsoleServer } from './console.js';
import { mintToken, strongPassword } from '../principals/helpers.js';
import type { Page } from 'playwright-core';

export interface TotpUser { readonly name: string; readonly password: string; readonly secret: string }

/** Creates a tenant_admin user with TOTP turned on through SQL (as a fresh password sign-in would). */
export async function createTotpAdmin(c: ConsoleServer, name: string): Promise<TotpUser> {
  const password = strongPassword("console-admin");
  await c.adminSql(`CREATE USER ${name} EMAIL '${name}@example.com' PASSWORD '${password}'`);
  await c.adminSql(`GRANT ROLE tenant_admin TO USER ${name}`);
  const token = await mintToken(c.server, name);
  const enrolled = await c.http.query(token, { sql: 'ALTER USER SELF ENROLL MFA TOTP' });
  const secret = (enrolled.json as { rows: string[][] }).rows[0]![0]!;
  const now = Math.floor(c.server.state.clock.now() / 1000);
  const verified = await c.http.query(token, { sql: `ALTER USER SELF VERIFY MFA TOTP '${totpCode(secret, now)}'` });
  if (verified.status !== 200) throw new Error(verified.text);
  return { name, password, secret };
}

/** Signs a TOTP user in through the console's page; `stepOffset` picks an unused time step. */
export async function signInWithTotp(page: Page, c: ConsoleServer, u: TotpUser, stepOffset: number): Promise<void> {
  await page.goto('/console');
  await page.getByLabel('User name').fill(u.name);
  await page.getByLabel('Password').fill(u.password);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.getByLabel('Authenticator code').fill(totpCode(u.secret, Math.floor(c.server.state.clock.now() / 1000) + 30 * stepOffset));
  await page.getByRole('button', { name: 'Verify' }).click();
  await page.getByText(`${u.name} @ default`).waitFor();
}
