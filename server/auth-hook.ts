/**
 * The authentication hook: every request to a registered route is checked against the route
 * access table before its handler runs. 401 (with a `WWW-Authenticate: Bearer` challenge) for a
 * missing, malformed, expired, forged or revoked token; 403 when the token lacks the route's scope.
 */
import type { FastifyReply, FastifyRequest } from 'fastify';
import { isStoreUnavailable } from '../catalog/store/meta-store.js';
import type { Authenticated, Verification } from './auth/tokens.js';
import { ROUTE_ACCESS, routeAccessKey } from './route-access.js';
import type { FloeState } from './state.js';
import { sendWireError, wireFormatOf } from './wire-errors.js';

declare module 'fastify' {
  interface FastifyRequest {
    /** The validated token and principal; null on public routes. */
    auth: Authenticated | null;
  }
}

const REALM = 'floe';

/** How long liveness waits for the store to vouch for a principal before a signature suffices. */
export const LIVENESS_STORE_WAIT_MS = 1000;

/**
 * Liveness' check of a token: the full verification while the store answers; when it fails to
 * (an error, or no answer within `LIVENESS_STORE_WAIT_MS`), the signature, times and fixed
 * claims, which need no store. `auth` is null in the second case: nothing about the principal
 * is known.
 */
async function verifyForLiveness(state: FloeState, token: string): Promise<{ ok: true; auth: Authenticated | null } | { ok: false; reason: string }> {
  let timer: NodeJS.Timeout | undefined;
  const storeSilent = new Promise<'store-silent'>((resolve) => { timer = setTimeout(() => resolve('store-silent'), LIVENESS_STORE_WAIT_MS); });
  let outcome: Verification | 'store-silent';
  try {
    outcome = await Promise.race([state.tokens.verify(token), storeSilent]);
  } catch (e) {
    if (!isStoreUnavailable(e)) throw e;
    outcome = 'store-silent';
  } finally {
    clearTimeout(timer);
  }
  if (outcome !== 'store-silent') return outcome.ok ? { ok: true, auth: outcome.auth } : outcome;
  const signed = await state.tokens.verifySignature(token);
  return signed.ok ? { ok: true, auth: null } : signed;
}

function challenge(error?: string, description?: string, scope?: string): string {
  const parts = [`realm="${REALM}"`];
  if (error) parts.push(`error="${error}"`);
  if (description) parts.push(`error_description="${description.replaceAll('"', "'")}"`);
  if (scope) parts.push(`scope="${scope}"`);
  return `Bearer ${parts.join(', ')}`;
}

export function createAuthHook(state: FloeState) {
  return async function authenticateRequest(req: FastifyRequest, reply: FastifyReply): Promise<void> {
    const pattern = req.routeOptions.url;
    if (pattern === undefined) return; // no route: the not-found handler answers
    const access = ROUTE_ACCESS.get(routeAccessKey(req.method, pattern));
    if (!access) throw new Error(`route ${req.method} ${pattern} has no access rule`);
    if (access.kind === 'public' || access.kind === 'scim-token') return;
    const format = wireFormatOf(req.url);
    const header = req.headers.authorization;
    if (!header && access.kind === 'scope-or-invitation') return; // req.auth stays null: the handler decides
    if (!header) {
      reply.header('www-authenticate', challenge());
      await sendWireError(reply, format, { status: 401, message: 'authentication required: send Authorization: Bearer <access token>' });
      return;
    }
    const match = /^Bearer ([A-Za-z0-9_.~+/=-]+)$/i.exec(header.trim());
    if (!match) {
      reply.header('www-authenticate', challenge('invalid_request', 'malformed Authorization header'));
      await sendWireError(reply, format, { status: 401, message: 'malformed Authorization header: expected Bearer <access token>' });
      return;
    }
    if (access.kind === 'liveness') {
      const live = await verifyForLiveness(state, match[1]!);
      if (!live.ok) {
        reply.header('www-authenticate', challenge('invalid_token', live.reason));
        await sendWireError(reply, format, { status: 401, message: `not authorized: ${live.reason}` });
        return;
      }
      req.auth = live.auth;
      return;
    }
    const verified = await state.tokens.verify(match[1]!);
    if (!verified.ok) {
      reply.header('www-authenticate', challenge('invalid_token', verified.reason));
      await sendWireError(reply, format, { status: 401, message: `not authorized: ${verified.reason}` });
      return;
    }
    if ((access.kind === 'scope' || access.kind === 'scope-or-invitation') && !verified.auth.scopes.has(access.scope)) {
      reply.header('www-authenticate', challenge('insufficient_scope', `requires scope ${access.scope}`, access.scope));
      await sendWireError(reply, format, { status: 403, message: `forbidden: the token lacks scope ${access.scope}` });
      return;
    }
    req.auth = verified.auth;
  };
}
