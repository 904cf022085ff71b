/**
 * The caller's own passkeys (engine/principals/passkeys.ts), for the web console:
 *
 * - `GET /api/auth/passkeys`: the list (id, name, created, last used);
 * - `POST /api/auth/passkeys/registration-options`: options for `navigator.credentials.create`;
 * - `POST /api/auth/passkeys` `{name, response}`: keeps the new passkey;
 * - `DELETE /api/auth/passkeys/:id`: removes one (not the last second factor while one is required).
 *
 * Adding and removing bump `session_epoch`, are audited, and answer a new token for the same
 * sign-in, like the other second-factor changes (server/routes/second-factors.ts). The relying
 * party is the origin the console is served at: the request's Origin, which must be this server's.
 */
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { floeError, isFloeError } from '../../grammar/errors.js';
import { listPasskeys, passkeyRegistrationOptions, registerPasskey, removePasskey, type RegistrationResponseJSON, type RelyingParty } from '../../engine/principals/passkeys.js';
import type { FloeState } from '../state.js';
import { principalContextOf, reissueAfterChange, sendApiError } from './second-factors.js';

/**
 * The relying party of a request: this server's host name and origin, as the browser sees them.
 * A browser sends Origin on every POST; the one it sends must be the host the request went to, so
 * a page elsewhere cannot run a ceremony for this server.
 */
export function relyingPartyOf(req: FastifyRequest): RelyingParty | undefined {
  const origin = req.headers.origin;
  if (typeof origin !== 'string') return undefined;
  let url: URL;
  try {
    url = new URL(origin);
  } catch {
    return undefined;
  }
  if (url.host !== req.host) return undefined;
  return { id: url.hostname, origin: url.origin, name: 'Floe' };
}

function requireRelyingParty(req: FastifyRequest): RelyingParty {
  const rp = relyingPartyOf(req);
  if (!rp) throw floeError('INVALID_REQUEST', { detail: 'passkeys are set up from the console: the request needs an Origin header naming this server' });
  return rp;
}

export function registerPasskeyRoutes(app: FastifyInstance, state: FloeState): void {
  const guarded = (fn: (req: FastifyRequest) => Promise<unknown>) => async (req: FastifyRequest, reply: import('fastify').FastifyReply) => {
    reply.header('cache-control', 'no-store');
    try {
      return await fn(req);
    } catch (e) {
      if (isFloeError(e)) return sendApiError(reply, e);
      throw e;
    }
  };

  app.get('/api/auth/passkeys', guarded(async (req) => ({ passkeys: await listPasskeys(principalContextOf(state, req)) })));

  app.post('/api/auth/passkeys/registration-options', guarded(async (req) =>
    passkeyRegistrationOptions(principalContextOf(state, req), requireRelyingParty(req))));

  app.post('/api/auth/passkeys', guarded(async (req) => {
    const body = req.body as { name?: unknown; response?: unknown } | null;
    if (!body || typeof body !== 'object' || typeof body.response !== 'object' || body.response === null) throw floeError('INVALID_REQUEST', { detail: 'the body must be {"name", "response"}' });
    const passkey = await registerPasskey(principalContextOf(state, req), requireRelyingParty(req), body.name, body.response as RegistrationResponseJSON);
    return { passkey, ...(await reissueAfterChange(state, req, ['pwd', 'hwk', 'mfa'])) };
  }));

  app.delete('/api/auth/passkeys/:id', guarded(async (req) => {
    const { id } = req.params as { id: string };
    await removePasskey(principalContextOf(state, req), id);
    return { removed: id, ...(await reissueAfterChange(state, req, req.auth!.claims.amr)) };
  }));
}
