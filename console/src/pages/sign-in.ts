/**
 * Sign-in: tenant, user name and password, then the second factor the account has (an
 * authenticator code or a one-time recovery code). The server answers MFA_REQUIRED only after a
 * correct password, so the second step appears only then. A token restricted to changing the
 * password or setting up a second factor leads here too, to do just that before anything else.
 */
import { ApiError, sqlString } from '../api.js';
import { alertBox, field, h, replaceChildren } from '../dom.js';
import type { Page, PageContext } from '../app.js';
import { showError } from './errors.js';
import { showTotpSetup } from './second-factor.js';
import { addPasskey, passkeyAssertion } from './passkeys.js';

export { showError };

type Credentials = { tenant: string; username: string; password: string };

export function signInPage(takeNotice: () => string | undefined): Page {
  return {
    title: 'Sign in',
    render(ctx: PageContext) {
      const box = h('section', { class: 'card narrow', 'aria-labelledby': 'signin-h' });
      const session = ctx.api.session;
      if (session?.restriction === 'enroll_mfa') {
        box.setAttribute('aria-labelledby', 'mfa-h');
        replaceChildren(box, h('h1', { id: 'mfa-h' }, 'Set up a second factor'),
          h('p', {}, 'Administrators must use a second factor. Set one up to continue.'));
        const start = h('button', { type: 'button', onclick: () => void showTotpSetup(ctx.api, box, () => ctx.navigate('#/sql')).catch((e) => showError(err, e)) }, 'Use an authenticator app');
        const passkey = h('button', {
          type: 'button', class: 'secondary',
          onclick: async () => {
            try {
              await addPasskey(ctx.api, 'Passkey');
              ctx.navigate('#/sql');
            } catch (e) {
              showError(err, e);
            }
          },
        }, 'Use a passkey');
        const err = alertBox(undefined);
        box.append(h('div', { class: 'row' }, start, passkey), err);
      } else if (session?.restriction === 'change_password') showChangePassword(ctx, box);
      else showPasswordStep(ctx, box, takeNotice());
      return box;
    },
  };
}

function afterSignIn(ctx: PageContext): void {
  ctx.navigate(ctx.api.session?.restriction ? '#/sign-in' : '#/sql');
}

function showPasswordStep(ctx: PageContext, box: HTMLElement, notice?: string): void {
  const tenant = h('input', { name: 'tenant', autocomplete: 'organization', value: 'default', required: true });
  const username = h('input', { name: 'username', autocomplete: 'username', required: true, 'data-autofocus': true });
  const password = h('input', { name: 'password', type: 'password', autocomplete: 'current-password', required: true });
  const error = alertBox(notice, notice ? 'info' : 'error');
  const submit = h('button', { type: 'submit' }, 'Sign in');
  const form = h('form', {
    onsubmit: async (e: Event) => {
      e.preventDefault();
      submit.disabled = true;
      const fields = { tenant: tenant.value.trim(), username: username.value.trim(), password: password.value };
      try {
        await ctx.api.signIn(fields);
        afterSignIn(ctx);
      } catch (err) {
        if (err instanceof ApiError && err.code === 'MFA_REQUIRED') {
          const methods = Array.isArray(err.body.methods) ? (err.body.methods as string[]) : ['totp'];
          if (methods.includes('passkey')) return showPasskeyStep(ctx, box, fields, err.body.passkey_options, methods.includes('totp'));
          return showSecondFactorStep(ctx, box, fields, 'totp');
        }
        showError(error, err);
      } finally {
        submit.disabled = false;
      }
    },
  }, field('Tenant', tenant), field('User name', username), field('Password', password), error, submit);
  replaceChildren(box, h('h1', { id: 'signin-h' }, 'Sign in to Floe'), form);
  username.focus();
}

function showSecondFactorStep(ctx: PageContext, box: HTMLElement, fields: Credentials, method: 'totp' | 'recovery'): void {
  const input = method === 'totp'
    ? h('input', { name: 'totp', inputmode: 'numeric', autocomplete: 'one-time-code', pattern: '[0-9]{6}', maxlength: 6, required: true })
    : h('input', { name: 'recovery_code', autocomplete: 'off', spellcheck: 'false', required: true });
  const error = alertBox(undefined);
  const submit = h('button', { type: 'submit' }, 'Verify');
  const form = h('form', {
    onsubmit: async (e: Event) => {
      e.preventDefault();
      submit.disabled = true;
      try {
        await ctx.api.signIn({ ...fields, ...(method === 'totp' ? { totp: input.value.trim() } : { recoveryCode: input.value.trim() }) });
        afterSignIn(ctx);
      } catch (err) {
        showError(error, err);
      } finally {
        submit.disabled = false;
      }
    },
  },
  h('p', {}, method === 'totp' ? 'Enter the 6-digit code from your authenticator app.' : 'Enter one of your recovery codes. Each code works once.'),
  field(method === 'totp' ? 'Authenticator code' : 'Recovery code', input), error,
  h('div', { class: 'row' }, submit,
    h('button', { type: 'button', class: 'link', onclick: () => showSecondFactorStep(ctx, box, fields, method === 'totp' ? 'recovery' : 'totp') },
      method === 'totp' ? 'Use a recovery code instead' : 'Use an authenticator code instead'),
    h('button', { type: 'button', class: 'link', onclick: () => showPasswordStep(ctx, box) }, 'Start over')));
  replaceChildren(box, h('h1', { id: 'signin-h' }, 'Second factor'), form);
  input.focus();
}

/** The account has a passkey: sign the challenge with it (or use the authenticator instead). */
function showPasskeyStep(ctx: PageContext, box: HTMLElement, fields: Credentials, options: unknown, totpToo: boolean): void {
  const error = alertBox(undefined);
  const use = h('button', {
    type: 'button',
    onclick: async () => {
      use.disabled = true;
      try {
        await ctx.api.signIn({ ...fields, passkey: await passkeyAssertion(options) });
        afterSignIn(ctx);
      } catch (err) {
        showError(error, err);
      } finally {
        use.disabled = false;
      }
    },
  }, 'Use your passkey');
  replaceChildren(box, h('h1', { id: 'signin-h' }, 'Second factor'),
    h('p', {}, 'Confirm with your passkey.'), error,
    h('div', { class: 'row' }, use,
      totpToo ? h('button', { type: 'button', class: 'link', onclick: () => showSecondFactorStep(ctx, box, fields, 'totp') }, 'Use an authenticator code instead') : null,
      h('button', { type: 'button', class: 'link', onclick: () => showPasswordStep(ctx, box) }, 'Start over')));
  use.focus();
}

function showChangePassword(ctx: PageContext, box: HTMLElement): void {
  const old = h('input', { name: 'old-password', type: 'password', autocomplete: 'current-password', required: true });
  const fresh = h('input', { name: 'new-password', type: 'password', autocomplete: 'new-password', required: true });
  const error = alertBox(undefined);
  const submit = h('button', { type: 'submit' }, 'Change password');
  const form = h('form', {
    onsubmit: async (e: Event) => {
      e.preventDefault();
      submit.disabled = true;
      try {
        await ctx.api.query(`ALTER USER SELF SET PASSWORD ${sqlString(fresh.value)} OLD PASSWORD ${sqlString(old.value)}`);
        // The change moved the session epoch: sign in again with the new password.
        ctx.api.signOut();
        replaceChildren(box, h('h1', { id: 'signin-h' }, 'Password changed'));
        showPasswordStep(ctx, box, 'Password changed. Sign in with the new password.');
      } catch (err) {
        showError(error, err);
      } finally {
        submit.disabled = false;
      }
    },
  }, h('p', {}, 'Your password must be changed before you go on.'), field('Current password', old), field('New password', fresh), error, submit);
  replaceChildren(box, h('h1', { id: 'signin-h' }, 'Change your password'), form);
  old.focus();
}

/** An invitation URL (`…/invite#token=…`, redirected to /console): set a password to activate the account. */
export function invitationPage(token: string): Page {
  return {
    title: 'Accept invitation',
    render(ctx) {
      const password = h('input', { name: 'new-password', type: 'password', autocomplete: 'new-password', required: true });
      const error = alertBox(undefined);
      const submit = h('button', { type: 'submit' }, 'Set password');
      const box = h('section', { class: 'card narrow', 'aria-labelledby': 'invite-h' });
      const form = h('form', {
        onsubmit: async (e: Event) => {
          e.preventDefault();
          submit.disabled = true;
          try {
            await ctx.api.redeemInvitation(token, password.value);
            history.replaceState(null, '', '/console#/sign-in');
            showPasswordStep(ctx, box, 'Your account is active. Sign in with your new password.');
          } catch (err) {
            showError(error, err);
          } finally {
            submit.disabled = false;
          }
        },
      }, h('p', {}, 'Choose a password to activate your account.'), field('New password', password), error, submit);
      replaceChildren(box, h('h1', { id: 'invite-h' }, 'Accept your invitation'), form);
      return box;
    },
  };
}
