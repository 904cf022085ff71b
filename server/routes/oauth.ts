/**
 * POST /v1/oauth/tokens: the OAuth2 token endpoint (RFC 6749 §3.2, form-encoded).
 * Grants: client_credentials (form fields or HTTP Basic), token exchange (RFC 8693: a valid Floe
 * access token as subject_token gives a fresh one; Iceberg clients refresh this way) and
 * refresh_token (refresh tokens are issued when a client asks for `offline_access`, rotated on use).
 * Errors are RFC 6749 `{error, error_description}`; failed client authentications are rate-limited
 * per client id and per address.
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { checkClientSecret, type OAuthClient } from '../../engine/principals/clients.js';
import { canAuthenticate, loadPrincipalAuthState, type PrincipalAuthState } from '../../engine/principals/principals.js';
import { parseScopeClaim, resolveRequestedScopes, type Scope } from '../../engine/principals/scopes.js';
import type { AuthMethod } from '../auth/tokens.js';
import type { FloeState } from '../state.js';
import { authenticatePat, verifyKeypairAssertion } from '../../engine/principals/credentials.js';
import { ALL_SCOPES } from '../../engine/principals/scopes.js';
import { tokenRestriction } from '../../engine/principals/settings.js';
import { DEFAULT_TENANT } from '../../engine/principals/bootstrap.js';
import { registerSignInRoute } from './sign-in.js';

export const GRANT_CLIENT_CREDENTIALS = 'client_credentials';
export const GRANT_TOKEN_EXCHANGE = 'urn:ietf:params:oauth:grant-type:token-exchange';
export const GRANT_REFRESH_TOKEN = 'refresh_token';
/** A personal access token (form field `pat`) for a short-lived JWT with auth_method=pat. */
export const GRANT_PAT = 'pat';
/** RFC 7523: a JWT signed with a registered service-account keypair (form field `assertion`). */
export const GRANT_JWT_BEARER = 'urn:ietf:params:oauth:grant-type:jwt-bearer';
export const TOKEN_TYPE_ACCESS = 'urn:ietf:params:oauth:token-type:access_token';
export const TOKEN_TYPE_JWT = 'urn:ietf:params:oauth:token-type:jwt';

type OAuthErrorCode = 'invalid_request' | 'invalid_client' | 'invalid_grant' | 'unauthorized_client' | 'unsupported_grant_type' | 'invalid_scope';

/** A refusal of the token endpoint. */
class OAuthRefusal extends Error {
  constructor(readonly code: OAuthErrorCode, message: string, readonly status = code === 'invalid_client' ? 401 : 400, readonly retryAfter?: number) {
    super(message);
  }
}

/** A parsed form: each parameter at most once (RFC 6749 §3.2). */
export type TokenForm = ReadonlyMap<string, string>;

/** Parses an x-www-form-urlencoded body; a repeated parameter is an invalid_request. */
export function parseTokenForm(body: string): TokenForm | OAuthRefusal {
  const form = new Map<string, string>();
  for (const [key, value] of new URLSearchParams(body)) {
    if (form.has(key)) return new OAuthRefusal('invalid_request', `parameter ${key} is repeated`);
    form.set(key, value);
  }
  return form;
}

interface TokenResponse {
  access_token: string;
  token_type: 'Bearer';
  expires_in: number;
  scope: string;
  issued_token_type?: string;
  refresh_token?: string;
}

export function registerOAuthRoutes(app: FastifyInstance, state: FloeState): void {
  app.post('/v1/oauth/tokens', async (req, reply) => {
    const grantLabel = { value: 'unknown' };
    try {
      const form = req.body instanceof Map ? (req.body as TokenForm) : undefined;
      if (!form) throw new OAuthRefusal('invalid_request', 'the body must be application/x-www-form-urlencoded');
      const grantType = form.get('grant_type');
      if (!grantType) throw new OAuthRefusal('invalid_request', 'grant_type is required');
      let response: TokenResponse;
      switch (grantType) {
        case GRANT_CLIENT_CREDENTIALS:
          grantLabel.value = 'client_credentials';
          response = await clientCredentialsGrant(state, req, form);
          break;
        case GRANT_TOKEN_EXCHANGE:
          grantLabel.value = 'token_exchange';
          response = await tokenExchangeGrant(state, form);
          break;
        case GRANT_REFRESH_TOKEN:
          grantLabel.value = 'refresh_token';
          response = await refreshTokenGrant(state, req, form);
          break;
        case GRANT_PAT:
          grantLabel.value = 'pat';
          response = await patGrant(state, req, form);
          break;
        case GRANT_JWT_BEARER:
          grantLabel.value = 'jwt_bearer';
          response = await jwtBearerGrant(state, req, form);
          break;
        default:
          throw new OAuthRefusal('unsupported_grant_type', `grant_type ${grantType} is not supported`);
      }
      state.metrics.tokensIssued.inc({ grant_type: grantLabel.value, outcome: 'success' });
      return noStore(reply).send(response);
    } catch (e) {
      if (!(e instanceof OAuthRefusal)) throw e;
      state.metrics.tokensIssued.inc({ grant_type: grantLabel.value, outcome: e.retryAfter ? 'rate_limited' : e.code });
      return sendRefusal(reply, req, e);
    }
  });
  registerSignInRoute(app, state);
}

function noStore(reply: FastifyReply): FastifyReply {
  return reply.header('cache-control', 'no-store').header('pragma', 'no-cache');
}

function sendRefusal(reply: FastifyReply, req: FastifyRequest, e: OAuthRefusal): FastifyReply {
  noStore(reply).code(e.status);
  if (e.retryAfter) reply.header('retry-after', String(e.retryAfter));
  // RFC 6749 §5.2: a client that tried Basic gets the Basic challenge back.
  if (e.status === 401 && /^basic /i.test(req.headers.authorization ?? '')) reply.header('www-authenticate', 'Basic realm="floe"');
  return reply.send({ error: e.code, error_description: e.message });
}

interface PresentedClient {
  readonly clientId: string;
  readonly clientSecret: string;
}

/** Client credentials from HTTP Basic (RFC 6749 §2.3.1, form-encoded id and secret) or the form; not both. */
function presentedClient(req: FastifyRequest, form: TokenForm): PresentedClient | undefined {
  const header = req.headers.authorization;
  const basic = header && /^basic /i.test(header) ? decodeBasic(header.slice(6).trim()) : undefined;
  if (header && /^basic /i.test(header) && !basic) throw new OAuthRefusal('invalid_client', 'malformed Basic credentials');
  const formId = form.get('client_id');
  const formSecret = form.get('client_secret');
  if (basic && formSecret !== undefined) throw new OAuthRefusal('invalid_request', 'client credentials given both in the Authorization header and in the body');
  if (basic) {
    if (formId !== undefined && formId !== basic.clientId) throw new OAuthRefusal('invalid_request', 'client_id in the body differs from the Authorization header');
    return basic;
  }
  if (formId === undefined && formSecret === undefined) return undefined;
  if (!formId || formSecret === undefined) throw new OAuthRefusal('invalid_client', 'client authentication needs client_id and client_secret');
  return { clientId: formId, clientSecret: formSecret };
}

function decodeBasic(encoded: string): PresentedClient | undefined {
  const text = Buffer.from(encoded, 'base64').toString('utf8');
  const colon = text.indexOf(':');
  if (colon <= 0) return undefined;
  try {
    return { clientId: decodeURIComponent(text.slice(0, colon).replaceAll('+', ' ')), clientSecret: decodeURIComponent(text.slice(colon + 1).replaceAll('+', ' ')) };
  } catch {
    return undefined;
  }
}

/** Authenticates a client under the brute-force limits; every failure looks the same. */
async function authenticate(state: FloeState, req: FastifyRequest, presented: PresentedClient): Promise<{ client: OAuthClient; principal: PrincipalAuthState }> {
  const clientKey = `client:${presented.clientId}`;
  const addressKey = `address:${req.ip}`;
  const wait = Math.max(state.failuresByClient.retryAfterSeconds(clientKey), state.failuresByAddress.retryAfterSeconds(addressKey));
  if (wait > 0) throw new OAuthRefusal('invalid_client', `too many failed authentication attempts; retry in ${wait} s`, 429, wait);
  const found = checkClientSecret(await state.authStates.clientPrincipal(presented.clientId), presented.clientSecret);
  const client = found?.client;
  const principal = found?.principal;
  if (!client || !principal) {
    state.failuresByClient.recordFailure(clientKey);
    state.failuresByAddress.recordFailure(addressKey);
    throw new OAuthRefusal('invalid_client', 'client authentication failed');
  }
  if (!canAuthenticate(principal)) throw new OAuthRefusal('invalid_client', 'client authentication failed');
  return { client, principal };
}

async function clientCredentialsGrant(state: FloeState, req: FastifyRequest, form: TokenForm): Promise<TokenResponse> {
  const presented = presentedClient(req, form);
  if (!presented) throw new OAuthRefusal('invalid_client', 'client authentication is required');
  const { client, principal } = await authenticate(state, req, presented);
  const scopes = resolveRequestedScopes(form.get('scope'), client.allowedScopes);
  if (!scopes.ok) throw new OAuthRefusal('invalid_scope', scopes.reason);
  const amr = ['client_secret'];
  const issued = await state.tokens.issue({ principal, scopes: scopes.scopes, authMethod: 'client_credentials', amr });
  const response: TokenResponse = { access_token: issued.accessToken, token_type: 'Bearer', expires_in: issued.expiresIn, scope: scopes.scopes.join(' ') };
  if (scopes.offlineAccess) {
    response.refresh_token = await state.refreshTokens.issue({
      tenantId: principal.tenantId, principalId: principal.id, clientId: client.clientId, scope: issued.claims.scope,
      authMethod: 'client_credentials', amr, authTime: issued.claims.auth_time, sessionEpoch: principal.sessionEpoch,
    });
  }
  return response;
}

async function tokenExchangeGrant(state: FloeState, form: TokenForm): Promise<TokenResponse> {
  const subjectToken = form.get('subject_token');
  const subjectType = form.get('subject_token_type');
  if (!subjectToken) throw new OAuthRefusal('invalid_request', 'subject_token is required');
  if (!subjectType) throw new OAuthRefusal('invalid_request', 'subject_token_type is required');
  if (subjectType !== TOKEN_TYPE_ACCESS && subjectType !== TOKEN_TYPE_JWT) throw new OAuthRefusal('invalid_request', `subject_token_type ${subjectType} is not supported`);
  const requested = form.get('requested_token_type');
  if (requested !== undefined && requested !== TOKEN_TYPE_ACCESS && requested !== TOKEN_TYPE_JWT) throw new OAuthRefusal('invalid_request', `requested_token_type ${requested} is not supported`);
  const subject = await state.tokens.verify(subjectToken);
  if (!subject.ok) throw new OAuthRefusal('invalid_grant', `subject_token is not valid: ${subject.reason}`);
  if (tokenRestriction(subject.auth.claims.scope)) throw new OAuthRefusal('invalid_grant', 'a restricted sign-in token cannot be exchanged');
  const actorToken = form.get('actor_token');
  if (actorToken !== undefined) {
    const actor = await state.tokens.verify(actorToken);
    if (!actor.ok || actor.auth.principal.tenantId !== subject.auth.principal.tenantId) throw new OAuthRefusal('invalid_grant', 'actor_token is not valid');
  }
  const held = [...subject.auth.scopes];
  const scopes = resolveRequestedScopes(form.get('scope'), held);
  if (!scopes.ok) throw new OAuthRefusal('invalid_scope', scopes.reason);
  const issued = await state.tokens.issue({
    principal: subject.auth.principal, scopes: scopes.scopes, authMethod: 'token_exchange',
    amr: subject.auth.claims.amr, authTime: subject.auth.claims.auth_time,
  });
  return { access_token: issued.accessToken, token_type: 'Bearer', expires_in: issued.expiresIn, scope: scopes.scopes.join(' '), issued_token_type: TOKEN_TYPE_ACCESS };
}

async function refreshTokenGrant(state: FloeState, req: FastifyRequest, form: TokenForm): Promise<TokenResponse> {
  const presentedToken = form.get('refresh_token');
  if (!presentedToken) throw new OAuthRefusal('invalid_request', 'refresh_token is required');
  const presented = presentedClient(req, form);
  const authenticated = presented ? await authenticate(state, req, presented) : undefined;
  const redeemed = await state.refreshTokens.redeem(presentedToken);
  if (!redeemed.ok) throw new OAuthRefusal('invalid_grant', redeemed.reason);
  const grant = redeemed.grant;
  // A refresh token issued to a client is bound to it (RFC 6749 §6): that client must authenticate.
  if (grant.clientId !== null && authenticated?.client.clientId !== grant.clientId) {
    throw new OAuthRefusal('invalid_grant', 'refresh token was issued to another client or the client did not authenticate');
  }
  const principal = await loadPrincipalAuthState(state.store, grant.tenantId, grant.principalId);
  if (!principal || !canAuthenticate(principal) || principal.sessionEpoch > grant.sessionEpoch) throw new OAuthRefusal('invalid_grant', 'the session of this refresh token has ended');
  const held: Scope[] = parseScopeClaim(grant.scope);
  const scopes = resolveRequestedScopes(form.get('scope'), held);
  if (!scopes.ok) throw new OAuthRefusal('invalid_scope', scopes.reason);
  const issued = await state.tokens.issue({ principal, scopes: scopes.scopes, authMethod: grant.authMethod as AuthMethod, amr: grant.amr, authTime: grant.authTime });
  return { access_token: issued.accessToken, token_type: 'Bearer', expires_in: issued.expiresIn, scope: scopes.scopes.join(' '), refresh_token: redeemed.next };
}

/** Refuses when the address has failed too often; records a failure otherwise on refusal. */
function checkAddress(state: FloeState, req: FastifyRequest): string {
  const addressKey = `address:${req.ip}`;
  const wait = state.failuresByAddress.retryAfterSeconds(addressKey);
  if (wait > 0) throw new OAuthRefusal('invalid_grant', `too many failed attempts; retry in ${wait} s`, 429, wait);
  return addressKey;
}

async function patGrant(state: FloeState, req: FastifyRequest, form: TokenForm): Promise<TokenResponse> {
  const pat = form.get('pat');
  if (!pat) throw new OAuthRefusal('invalid_request', 'pat is required');
  const addressKey = checkAddress(state, req);
  const checked = await authenticatePat(state.store, state.authStates, pat, state.clock.now());
  if (!checked.ok) {
    state.failuresByAddress.recordFailure(addressKey);
    throw new OAuthRefusal('invalid_grant', 'the personal access token is not valid');
  }
  const scopes = resolveRequestedScopes(form.get('scope'), checked.value.scopes);
  if (!scopes.ok) throw new OAuthRefusal('invalid_scope', scopes.reason);
  const issued = await state.tokens.issue({ principal: checked.value.principal, scopes: scopes.scopes, authMethod: 'pat', amr: ['pat'] });
  return { access_token: issued.accessToken, token_type: 'Bearer', expires_in: issued.expiresIn, scope: scopes.scopes.join(' ') };
}

async function jwtBearerGrant(state: FloeState, req: FastifyRequest, form: TokenForm): Promise<TokenResponse> {
  const assertion = form.get('assertion');
  if (!assertion) throw new OAuthRefusal('invalid_request', 'assertion is required');
  const addressKey = checkAddress(state, req);
  const endpoint = `${req.protocol}://${req.host}/v1/oauth/tokens`;
  const checked = await verifyKeypairAssertion(state.store, assertion, {
    audiences: [state.config.auth.issuer, state.config.auth.audience, endpoint], nowMs: state.clock.now(), defaultTenant: DEFAULT_TENANT,
  });
  if (!checked.ok) {
    state.failuresByAddress.recordFailure(addressKey);
    throw new OAuthRefusal('invalid_grant', checked.reason);
  }
  const scopes = resolveRequestedScopes(form.get('scope'), ALL_SCOPES);
  if (!scopes.ok) throw new OAuthRefusal('invalid_scope', scopes.reason);
  const issued = await state.tokens.issue({ principal: checked.value, scopes: scopes.scopes, authMethod: 'keypair', amr: ['swk'] });
  return { access_token: issued.accessToken, token_type: 'Bearer', expires_in: issued.expiresIn, scope: scopes.scopes.join(' ') };
}
