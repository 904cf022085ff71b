/**
 * Passkeys in the console, through @simplewebauthn/browser: add one (the server's registration
 * options → the authenticator → `POST /api/auth/passkeys`), list and remove them, and answer a
 * sign-in challenge with one.
 */
import { startAuthentication, startRegistration, type PublicKeyCredentialCreationOptionsJSON, type PublicKeyCredentialRequestOptionsJSON } from '@simplewebauthn/browser';
import type { Api } from '../api.js';
import { alertBox, field, h, replaceChildren } from '../dom.js';
import { showError } from './errors.js';

interface TokenAnswer { access_token: string; expires_in: number; scope: string }
interface PasskeyInfo { id: string; name: string; created_at: string; last_used_at: string | null }

/** Runs the registration ceremony and keeps the passkey under `name`; the token is renewed. */
export async function addPasskey(api: Api, name: string): Promise<void> {
  const options = await api.postJson<PublicKeyCredentialCreationOptionsJSON>('/api/auth/passkeys/registration-options');
  const response = await startRegistration({ optionsJSON: options });
  api.adoptToken(await api.postJson<TokenAnswer>('/api/auth/passkeys', { name, response }));
}

/** Signs the sign-in challenge with a passkey. */
export async function passkeyAssertion(options: unknown): Promise<unknown> {
  return startAuthentication({ optionsJSON: options as PublicKeyCredentialRequestOptionsJSON });
}

/** The account page's passkey section. */
export async function passkeySection(api: Api): Promise<HTMLElement> {
  const box = h('div');
  const error = alertBox(undefined);
  const draw = async () => {
    const { passkeys } = await api.getJson<{ passkeys: PasskeyInfo[] }>('/api/auth/passkeys');
    const name = h('input', { name: 'passkey-name', required: true, maxlength: 64, value: 'My passkey', autocomplete: 'off' });
    const add = h('button', { type: 'submit' }, 'Add a passkey');
    replaceChildren(box,
      h('h2', {}, 'Passkeys'),
      passkeys.length === 0 ? h('p', {}, 'No passkeys yet.') : h('table', { class: 'data' },
        h('caption', {}, 'Your passkeys'),
        h('thead', {}, h('tr', {}, ['Name', 'Added', 'Last used', ''].map((c) => h('th', { scope: 'col' }, c)))),
        h('tbody', {}, passkeys.map((p) => h('tr', {}, h('td', {}, p.name), h('td', {}, p.created_at), h('td', {}, p.last_used_at ?? 'never'),
          h('td', {}, h('button', {
            type: 'button', class: 'secondary small', 'aria-label': `Remove passkey ${p.name}`,
            onclick: async () => {
              try {
                api.adoptToken(await api.deleteJson<TokenAnswer>(`/api/auth/passkeys/${encodeURIComponent(p.id)}`));
                await draw();
              } catch (e) {
                showError(error, e);
              }
            },
          }, 'Remove')))))),
      h('form', {
        class: 'row',
        onsubmit: async (e: Event) => {
          e.preventDefault();
          add.disabled = true;
          try {
            await addPasskey(api, name.value.trim());
            await draw();
          } catch (err) {
            showError(error, err);
          } finally {
            add.disabled = false;
          }
        },
      }, field('Passkey name', name), add),
      error);
  };
  await draw();
  return box;
}
