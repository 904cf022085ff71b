/**
 * The console's second-factor endpoints, beside the SQL MFA statements:
 *
 * - `POST /api/auth/mfa/totp/verify` `{code}`: turns on the authenticator enrolled with ALTER USER
 *   SELF ENROLL MFA TOTP and answers ten recovery codes, shown this once. A token restricted to
 *   enrolling a second factor (an administrator's first sign-in) may call it.
 * - `POST /api/auth/recovery-codes`: replaces the recovery codes with ten new ones.
 *
 * Both bump `session_epoch` (so the caller's token stops working) and are audited; the answer
 * carries a new token, unrestricted, for the same sign-in (`auth_time` unchanged), so the console
 * goes on without a second password prompt. Answers are `no-store`; nothing here is logged.
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { floeError, isFloeError, type FloeError } from '../../grammar/errors.js';
import { actorFromAuth, type PrincipalContext } from '../../engine/principals/index.js';
import { loadPrincipalAuthState } from '../../engine/principals/principals.js';
import { ALL_SCOPES } from '../../engine/principals/scopes.js';
import { regenerateRecoveryCodes, turnOnTotpWithRecoveryCodes } from '../../engine/principals/second-factors.js';
import type { FloeState } from '../state.js';

export function principalContextOf(state: FloeState, req: FastifyRequest): PrincipalContext {
  const auth = req.auth;
  if (!auth) throw floeError('NOT_AUTHENTICATED', { detail: 'send Authorization: Bearer <access token>' });
  return {
    store: state.store, clock: state.clock, tenantId: auth.principal.tenantId, actor: actorFromAuth(auth),
    config: state.config.principals, webhooks: state.config.webhooks, secrets: state.principals.secrets, passwords: state.principals.passwords,
  };
}

export function sendApiError(reply: FastifyReply, e: FloeError): FastifyReply {
  return reply.code(e.httpStatus).send(e.toJSON());
}

/** A token for the same sign-in after the epoch moved: unrestricted, with the factors now proven. */
export async function reissueAfterChange(state: FloeState, req: FastifyRequest, amr: readonly string[]): Promise<{ access_token: string; token_type: 'Bearer'; expires_in: number; scope: string }> {
  const auth = req.auth!;
  const principal = await loadPrincipalAuthState(state.store, auth.principal.tenantId, auth.principal.id);
  if (!principal) throw floeError('NOT_AUTHENTICATED', { detail: 'the principal is gone' });
  const issued = await state.tokens.issue({ principal, scopes: ALL_SCOPES, authMethod: 'password', amr, authTime: auth.claims.auth_time });
  return { access_token: issued.accessToken, token_type: 'Bearer', expires_in: issued.expiresIn, scope: ALL_SCOPES.join(' ') };
}

export function registerSecondFactorRoutes(app: FastifyInstance, state: FloeState): void {
  app.post('/api/auth/mfa/totp/verify', async (req, reply) => {
    reply.header('cache-control', 'no-store');
    try {
      const body = req.body as { code?: unknown } | null;
      if (!body || typeof body !== 'object' || typeof body.code !== 'string' || body.code.length > 16) throw floeError('INVALID_REQUEST', { detail: 'the body must be {"code": "<6-digit code>"}' });
      const codes = await turnOnTotpWithRecoveryCodes(principalContextOf(state, req), body.code.trim());
      return { recovery_codes: codes, ...(await reissueAfterChange(state, req, ['pwd', 'otp', 'mfa'])) };
    } catch (e) {
      if (isFloeError(e)) return sendApiError(reply, e);
      throw e;
    }
  });

  app.post('/api/auth/recovery-codes', async (req, reply) => {
    reply.header('cache-control', 'no-store');
    try {
      const codes = await regenerateRecoveryCodes(principalContextOf(state, req));
      return { recovery_codes: codes, ...(await reissueAfterChange(state, req, req.auth!.claims.amr)) };
    } catch (e) {
      if (isFloeError(e)) return sendApiError(reply, e);
      throw e;
    }
  });
}
