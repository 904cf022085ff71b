/**
 * Sign-in: tenant, user name and password, then the second factor the account has. The server
 * answers MFA_REQUIRED only after a correct password, so the second step appears only then.
 */
import { ApiError, type Api } from '../api.js';
import { alertBox, field, h, replaceChildren } from '../dom.js';
import type { Page, PageContext } from '../app.js';

export function signInPage(takeNotice: () => string | undefined): Page {
  return {
    title: 'Sign in',
    render(ctx: PageContext) {
      const box = h('section', { class: 'card narrow', 'aria-labelledby': 'signin-h' });
      showPasswordStep(ctx, box, takeNotice());
      return box;
    },
  };
}

function showPasswordStep(ctx: PageContext, box: HTMLElement, notice?: string): void {
  const tenant = h('input', { name: 'tenant', autocomplete: 'organization', value: 'default', required: true });
  const username = h('input', { name: 'username', autocomplete: 'username', required: true });
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
        ctx.navigate(ctx.api.session?.restriction ? '#/sign-in' : '#/sql');
      } catch (err) {
        if (err instanceof ApiError && err.code === 'MFA_REQUIRED') return showSecondFactorStep(ctx, box, fields);
        showError(error, err);
      } finally {
        submit.disabled = false;
      }
    },
  }, field('Tenant', tenant), field('User name', username), field('Password', password), error, submit);
  replaceChildren(box, h('h1', { id: 'signin-h' }, 'Sign in to Floe'), form);
  username.focus();
}

function showSecondFactorStep(ctx: PageContext, box: HTMLElement, fields: { tenant: string; username: string; password: string }): void {
  const code = h('input', { name: 'totp', inputmode: 'numeric', autocomplete: 'one-time-code', pattern: '[0-9]{6}', maxlength: 6, required: true });
  const error = alertBox(undefined);
  const submit = h('button', { type: 'submit' }, 'Verify');
  const form = h('form', {
    onsubmit: async (e: Event) => {
      e.preventDefault();
      submit.disabled = true;
      try {
        await ctx.api.signIn({ ...fields, totp: code.value.trim() });
        ctx.navigate(ctx.api.session?.restriction ? '#/sign-in' : '#/sql');
      } catch (err) {
        showError(error, err);
      } finally {
        submit.disabled = false;
      }
    },
  }, h('p', {}, 'Enter the 6-digit code from your authenticator app.'), field('Authenticator code', code), error, submit,
  h('button', { type: 'button', class: 'link', onclick: () => showPasswordStep(ctx, box) }, 'Start over'));
  replaceChildren(box, h('h1', { id: 'signin-h' }, 'Second factor'), form);
  code.focus();
}

export function showError(box: HTMLElement, err: unknown): void {
  box.textContent = err instanceof Error ? err.message : String(err);
  box.className = 'alert error';
  box.setAttribute('role', 'alert');
  box.hidden = false;
}

export type { Api };
