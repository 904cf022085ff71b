/**
 * POST /api/auth/sign-in: password sign-in for users → an access token whose `amr` says how
 * (["pwd"] or ["pwd","otp","mfa"]) and whose `auth_time` is now. Public like the token endpoint.
 *
 * Body (JSON): { tenant?: string (default "default"), username, password, totp?: "123456",
 * recovery_code?: "abcde-fghij", passkey?: <WebAuthn assertion> } (a one-time recovery code, or an
 * assertion from one of the user's passkeys, instead of the TOTP code). MFA_REQUIRED answers
 * `methods` (totp, recovery_code, passkey) and, for a passkey, `passkey_options` to sign.
 * 200: { access_token, token_type: "Bearer", expires_in, scope, restriction? }.
 * 401 NOT_AUTHENTICATED with one message for every refusal (unknown user, wrong password or
 * code, SUSPENDED, INVITED, DEACTIVATED, LOCKED): no enumeration. 401 MFA_REQUIRED only after a
 * correct password when the account has an authenticator and no code was sent. 429 when the
 * address has failed too often (the token endpoint's per-address limiter). 503 SERVICE_UNAVAILABLE
 * (Retry-After) when too many password checks already wait (`principals.password_hashing.max_queued`).
 *
 * Restricted tokens: MUST_CHANGE_PASSWORD gives scope "sql restricted:change_password" (only
 * ALTER USER SELF SET PASSWORD); an administrator (or, under a tenant policy requiring MFA, any
 * user) without a second factor gets "sql restricted:enroll_mfa" (only ENROLL/VERIFY MFA).
 * The session enforces them with `statementAllowedUnderRestriction`; the token endpoint refuses to
 * exchange or refresh them.
 */
import type { FastifyInstance } from 'fastify';
import { ALL_SCOPES, type Scope } from '../../engine/principals/scopes.js';
import { RESTRICTION_SCOPE_PREFIX } from '../../engine/principals/settings.js';
import { signIn } from '../../engine/principals/sign-in.js';
import { DEFAULT_TENANT } from '../../engine/principals/bootstrap.js';
import { ERRORS, floeError, isFloeError } from '../../grammar/errors.js';
import type { AuthenticationResponseJSON } from '../../engine/principals/passkeys.js';
import { relyingPartyOf } from './passkeys.js';
import { unreachable } from '../../grammar/ir.js';
import type { FloeState } from '../state.js';
import { sendWireError } from '../wire-errors.js';

export const SIGN_IN_PATH = '/api/auth/sign-in';
const GENERIC_REFUSAL = 'sign-in failed: the credentials are not valid or the account cannot sign in';
const MAX_FIELD = 1024;

function field(body: Record<string, unknown>, name: string, required: boolean): string | undefined {
  const v = body[name];
  if (v === undefined || v === null) {
    if (required) throw new Error(`${name} is required`);
    return undefined;
  }
  if (typeof v !== 'string' || v.length > MAX_FIELD) throw new Error(`${name} must be a string of at most ${MAX_FIELD} characters`);
  return v;
}

export function registerSignInRoute(app: FastifyInstance, state: FloeState): void {
  app.post(SIGN_IN_PATH, async (req, reply) => {
    reply.header('cache-control', 'no-store');
    const body = req.body;
    let tenantId: string;
    let username: string;
    let password: string;
    let totp: string | undefined;
    let recoveryCode: string | undefined;
    let passkey: AuthenticationResponseJSON | undefined;
    try {
      if (body === null || typeof body !== 'object' || Array.isArray(body)) throw new Error('the body must be a JSON object');
      const b = body as Record<string, unknown>;
      tenantId = field(b, 'tenant', false) ?? DEFAULT_TENANT;
      username = field(b, 'username', true)!;
      password = field(b, 'password', true)!;
      totp = field(b, 'totp', false);
      recoveryCode = field(b, 'recovery_code', false);
      if (b.passkey !== undefined) {
        if (typeof b.passkey !== 'object' || b.passkey === null || Array.isArray(b.passkey) || JSON.stringify(b.passkey).length > 16_384) throw new Error('passkey must be a WebAuthn assertion object');
        passkey = b.passkey as AuthenticationResponseJSON;
      }
    } catch (e) {
      return sendWireError(reply, 'api', { status: 400, apiCode: 'INVALID_REQUEST', message: ERRORS.INVALID_REQUEST.message({ detail: (e as Error).message }) });
    }
    const addressKey = `sign-in:${req.ip}`;
    const wait = state.failuresByAddress.retryAfterSeconds(addressKey);
    if (wait > 0) {
      reply.header('retry-after', String(wait));
      return sendWireError(reply, 'api', { status: 429, apiCode: 'NOT_AUTHENTICATED', message: `too many failed sign-ins from this address; retry in ${wait} s` });
    }
    let outcome;
    try {
      outcome = await signIn(state.store, state.clock, state.config.principals, state.principals.secrets, state.principals.passwords, { tenantId, username, password, totp, recoveryCode, passkey, relyingParty: relyingPartyOf(req) });
    } catch (e) {
      // The password gate is full or shutting down (SERVICE_UNAVAILABLE): a 503 to retry, not a 500.
      if (!isFloeError(e)) throw e;
      if (e.httpStatus === 503) reply.header('retry-after', '1');
      return sendWireError(reply, 'api', { status: e.httpStatus, apiCode: e.code, message: e.message });
    }
    switch (outcome.kind) {
      case 'refused':
        state.failuresByAddress.recordFailure(addressKey);
        return sendWireError(reply, 'api', { status: 401, apiCode: 'NOT_AUTHENTICATED', message: GENERIC_REFUSAL });
      case 'second-factor-required':
        // Which factors the account has, and for a passkey the options to sign (a fresh challenge).
        return reply.code(401).send({
          ...floeError('MFA_REQUIRED').toJSON(), methods: outcome.methods,
          ...(outcome.passkeyOptions ? { passkey_options: outcome.passkeyOptions } : {}),
        });
      case 'signed-in': {
        const scopes: readonly Scope[] = outcome.restriction
          ? ['sql', `${RESTRICTION_SCOPE_PREFIX}${outcome.restriction}` as Scope]
          : ALL_SCOPES;
        const issued = await state.tokens.issue({ principal: outcome.principal, scopes, authMethod: 'password', amr: outcome.amr });
        return reply.send({
          access_token: issued.accessToken, token_type: 'Bearer', expires_in: issued.expiresIn, scope: scopes.join(' '),
          ...(outcome.restriction ? { restriction: outcome.restriction } : {}),
        });
      }
      default:
        return unreachable(outcome);
    }
  });
}
