/** The signed-in user's own second factors: turn on an authenticator app, regenerate recovery codes. */
import { alertBox, h, replaceChildren } from '../dom.js';
import type { Page } from '../app.js';
import { showError } from './errors.js';
import { showRecoveryCodes, showTotpSetup } from './second-factor.js';
import { passkeySection } from './passkeys.js';

interface CodesAnswer { recovery_codes: string[]; access_token: string; expires_in: number; scope: string }

export const accountPage: Page = {
  title: 'Account',
  async render(ctx) {
    const s = ctx.api.session!;
    const box = h('section', { class: 'card', 'aria-labelledby': 'account-h' });
    const error = alertBox(undefined);
    const back = () => ctx.refresh();
    replaceChildren(box,
      h('h1', { id: 'account-h' }, 'Your account'),
      h('p', {}, `${s.username} in tenant ${s.tenant}`),
      h('h2', {}, 'Authenticator app'),
      h('div', { class: 'row' },
        h('button', { type: 'button', onclick: () => void showTotpSetup(ctx.api, box, back).catch((e) => showError(error, e)) }, 'Turn on an authenticator app'),
        h('button', {
          type: 'button', class: 'secondary',
          onclick: async () => {
            try {
              const a = await ctx.api.postJson<CodesAnswer>('/api/auth/recovery-codes');
              ctx.api.adoptToken(a);
              showRecoveryCodes(box, a.recovery_codes, back);
            } catch (e) {
              showError(error, e);
            }
          },
        }, 'Regenerate recovery codes')),
      error,
      await passkeySection(ctx.api));
    return box;
  },
};
