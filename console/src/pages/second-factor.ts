/**
 * Turning on an authenticator app, used by the first sign-in of an administrator without a second
 * factor and by the account page: ALTER USER SELF ENROLL MFA TOTP gives the secret, the user types
 * a code, `POST /api/auth/mfa/totp/verify` turns it on and answers ten recovery codes, shown once.
 */
import type { Api } from '../api.js';
import { alertBox, field, h, replaceChildren } from '../dom.js';
import { showError } from './errors.js';

interface VerifyAnswer { recovery_codes: string[]; access_token: string; expires_in: number; scope: string }

export async function showTotpSetup(api: Api, box: HTMLElement, onDone: () => void): Promise<void> {
  const enrolled = await api.query('ALTER USER SELF ENROLL MFA TOTP');
  const [secret, uri] = enrolled.rows[0] as [string, string];
  const code = h('input', { name: 'totp', inputmode: 'numeric', autocomplete: 'one-time-code', pattern: '[0-9]{6}', maxlength: 6, required: true });
  const error = alertBox(undefined);
  const submit = h('button', { type: 'submit' }, 'Turn on');
  const form = h('form', {
    onsubmit: async (e: Event) => {
      e.preventDefault();
      submit.disabled = true;
      try {
        const a = await api.postJson<VerifyAnswer>('/api/auth/mfa/totp/verify', { code: code.value.trim() });
        api.adoptToken(a);
        showRecoveryCodes(box, a.recovery_codes, onDone);
      } catch (err) {
        showError(error, err);
      } finally {
        submit.disabled = false;
      }
    },
  },
  h('p', {}, 'Add this key to your authenticator app (or open the link on a device that has one), then enter the code it shows.'),
  h('p', {}, 'Key: ', h('code', { class: 'secret', 'data-testid': 'totp-secret' }, secret)),
  h('p', {}, h('a', { href: uri }, 'Open in an authenticator app')),
  field('Authenticator code', code), error, submit);
  replaceChildren(box, h('h1', { id: 'mfa-h' }, 'Set up an authenticator app'), form);
  code.focus();
}

/** The codes, once: the server keeps only their hashes and never shows them again. */
export function showRecoveryCodes(box: HTMLElement, codes: readonly string[], onDone: () => void): void {
  const done = h('button', { type: 'button', onclick: onDone }, 'I have saved these codes');
  replaceChildren(box,
    h('h1', { id: 'mfa-h' }, 'Recovery codes'),
    h('div', { class: 'alert info', role: 'status' }, 'Save these codes now: they are shown only this once. Each one signs you in once instead of an authenticator code.'),
    h('ol', { class: 'secret codes', 'aria-label': 'Recovery codes' }, codes.map((c) => h('li', {}, h('code', {}, c)))),
    done);
  done.focus();
}
