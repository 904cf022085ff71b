/**
 * Access tokens: ES256 JWTs signed by Floe. Validation checks the signature against an algorithm
 * allowlist (so `alg: none` and HS256-with-the-public-key forgeries fail), `exp`/`nbf`/`iss`/`aud`,
 * then the principal's current status and session epoch in the store: a lagging `sess_epoch`
 * or a principal that may no longer sign in makes the token worthless at once.
 */
import { KeyObject, randomUUID, sign as signDigest } from 'node:crypto';
import { jwtVerify, errors as joseErrors, type JWTPayload } from 'jose';
import type { PrincipalStates } from '../../engine/principals/auth-cache.js';
import { canAuthenticate, type PrincipalAuthState } from '../../engine/principals/principals.js';
import { parseScopeClaim, type Scope } from '../../engine/principals/scopes.js';
import { SIGNING_ALGORITHM, type Clock, type KeyRing } from './key-ring.js';

/** How the principal proved who it is, for the token that results. */
export type AuthMethod = 'password' | 'client_credentials' | 'pat' | 'keypair' | 'token_exchange';

export interface AccessTokenClaims extends JWTPayload {
  readonly sub: string;
  /** Tenant id. */
  readonly tid: string;
  /** Space-separated granted scopes. */
  readonly scope: string;
  readonly sess_epoch: number;
  readonly auth_method: AuthMethod;
  /** Authentication method references (RFC 8176), e.g. ["pwd", "otp"]. */
  readonly amr: readonly string[];
  /** When the principal authenticated (seconds since the epoch); kept across exchanges and refreshes. */
  readonly auth_time: number;
  readonly iat: number;
  readonly exp: number;
  readonly jti: string;
}

export interface IssueRequest {
  readonly principal: PrincipalAuthState;
  readonly scopes: readonly Scope[];
  readonly authMethod: AuthMethod;
  readonly amr: readonly string[];
  /** Seconds since the epoch; defaults to now. */
  readonly authTime?: number;
}

export interface IssuedToken {
  readonly accessToken: string;
  readonly expiresIn: number;
  readonly claims: AccessTokenClaims;
}

/** A validated bearer token and the principal behind it. */
export interface Authenticated {
  readonly principal: PrincipalAuthState;
  readonly scopes: ReadonlySet<Scope>;
  readonly claims: AccessTokenClaims;
}

export type Verification =
  | { readonly ok: true; readonly auth: Authenticated }
  | { readonly ok: false; readonly reason: string };

export interface TokenServiceOptions {
  readonly issuer: string;
  readonly audience: string;
  readonly accessTokenTtlSeconds: number;
}

/** Verified token texts kept (see `TokenService.#verified`). */
const VERIFIED_CACHE_SIZE = 4096;

export class TokenService {
  constructor(
    private readonly keys: KeyRing,
    private readonly principals: PrincipalStates,
    private readonly clock: Clock,
    private readonly options: TokenServiceOptions,
  ) {}

  async issue(req: IssueRequest): Promise<IssuedToken> {
    const now = Math.floor(this.clock.now() / 1000);
    const claims: AccessTokenClaims = {
      iss: this.options.issuer,
      aud: this.options.audience,
      sub: req.principal.id,
      tid: req.principal.tenantId,
      scope: req.scopes.join(' '),
      sess_epoch: req.principal.sessionEpoch,
      auth_method: req.authMethod,
      amr: req.amr,
      auth_time: req.authTime ?? now,
      iat: now,
      nbf: now,
      exp: now + this.options.accessTokenTtlSeconds,
      jti: randomUUID(),
    };
    const { kid, key } = this.keys.signingKey();
    const accessToken = signCompactJws({ alg: SIGNING_ALGORITHM, kid, typ: 'JWT' }, claims, this.nodeKey(key));
    return { accessToken, expiresIn: this.options.accessTokenTtlSeconds, claims };
  }

  /** node:crypto handles of the signing keys, by the key ring's key object. */
  readonly #nodeKeys = new WeakMap<object, KeyObject>();

  private nodeKey(key: Parameters<typeof KeyObject.from>[0] | object): KeyObject {
    let k = this.#nodeKeys.get(key);
    if (k === undefined) this.#nodeKeys.set(key, k = key instanceof KeyObject ? key : KeyObject.from(key as Parameters<typeof KeyObject.from>[0]));
    return k;
  }

  /**
   * Tokens whose signature and fixed claims (iss, aud, alg) were verified, by their exact text,
   * with the key id that verified them: an ES256 verification costs more than the rest of a small
   * query, and a client sends the same token on every request. A hit still checks the time claims
   * and that the key may still verify; the principal's status and epoch are read on every request.
   * A different (forged or altered) text never hits. Bounded; the oldest entry goes first.
   */
  readonly #verified = new Map<string, { readonly payload: JWTPayload; readonly kid: string | undefined }>();

  /** Validates a bearer token end to end (signature, claims, principal status and epoch). */
  async verify(token: string): Promise<Verification> {
    const signed = await this.signedPayload(token);
    if (!signed.ok) return signed;
    const payload = signed.payload;
    const claims = checkClaimShapes(payload);
    if (!claims) return { ok: false, reason: 'invalid token' };
    const principal = await this.principals.principal(claims.tid, claims.sub);
    if (!principal || !canAuthenticate(principal)) return { ok: false, reason: 'principal may not sign in' };
    if (claims.sess_epoch < principal.sessionEpoch) return { ok: false, reason: 'session revoked' };
    return { ok: true, auth: { principal, scopes: this.scopeSet(claims), claims } };
  }

  /** A verified payload's scopes, parsed once: the cached payload is the same object on every hit. */
  readonly #scopeSets = new WeakMap<AccessTokenClaims, ReadonlySet<Scope>>();

  private scopeSet(claims: AccessTokenClaims): ReadonlySet<Scope> {
    let scopes = this.#scopeSets.get(claims);
    if (scopes === undefined) this.#scopeSets.set(claims, scopes = new Set(parseScopeClaim(claims.scope)));
    return scopes;
  }

  /**
   * The signature, time and fixed claims only, without the store: what a public route that merely
   * wants to know the caller's tenant (GET /v1/config) may rely on. Not an authentication.
   */
  async verifySignature(token: string): Promise<{ readonly ok: true; readonly claims: AccessTokenClaims } | { readonly ok: false; readonly reason: string }> {
    const signed = await this.signedPayload(token);
    if (!signed.ok) return signed;
    const claims = checkClaimShapes(signed.payload);
    return claims ? { ok: true, claims } : { ok: false, reason: 'invalid token' };
  }

  /** The payload of a token whose signature and fixed claims hold (from `#verified` when seen before). */
  private async signedPayload(token: string): Promise<{ readonly ok: true; readonly payload: JWTPayload } | { readonly ok: false; readonly reason: string }> {
    const hit = this.#verified.get(token);
    if (hit !== undefined) {
      const now = this.clock.now() / 1000;
      if (typeof hit.payload.exp !== 'number' || hit.payload.exp <= now) {
        this.#verified.delete(token);
        return { ok: false, reason: 'token expired' };
      }
      if ((typeof hit.payload.nbf === 'number' && hit.payload.nbf > now) || (await this.keys.verificationKey(hit.kid)) === undefined) {
        this.#verified.delete(token);
        return { ok: false, reason: 'invalid token' };
      }
      return { ok: true, payload: hit.payload };
    }
    try {
      let kid: string | undefined;
      const { payload } = await jwtVerify(token, async (header) => {
        kid = header.kid;
        const key = await this.keys.verificationKey(header.kid);
        if (!key) throw new joseErrors.JWKSNoMatchingKey();
        return key;
      }, {
        algorithms: [SIGNING_ALGORITHM],
        issuer: this.options.issuer,
        audience: this.options.audience,
        currentDate: new Date(this.clock.now()),
        requiredClaims: ['sub', 'exp', 'iat', 'jti'],
      });
      if (this.#verified.size >= VERIFIED_CACHE_SIZE) this.#verified.delete(this.#verified.keys().next().value!);
      this.#verified.set(token, { payload, kid });
      return { ok: true, payload };
    } catch (e) {
      return { ok: false, reason: e instanceof joseErrors.JWTExpired ? 'token expired' : 'invalid token' };
    }
  }
}

/** The custom claims must have their types; a signed token with odd shapes is still refused. */
function checkClaimShapes(p: JWTPayload): AccessTokenClaims | undefined {
  const c = p as Record<string, unknown>;
  if (typeof c.sub !== 'string' || typeof c.tid !== 'string' || typeof c.scope !== 'string') return undefined;
  if (typeof c.sess_epoch !== 'number' || !Number.isInteger(c.sess_epoch)) return undefined;
  if (typeof c.auth_method !== 'string' || typeof c.auth_time !== 'number') return undefined;
  if (!Array.isArray(c.amr) || !c.amr.every((a) => typeof a === 'string')) return undefined;
  return p as AccessTokenClaims;
}

/**
 * A compact JWS (RFC 7515 §7.1) signed with ES256 by node:crypto: the signature in the JOSE
 * form (r || s, `ieee-p1363`). Verification stays with jose; signing is done here because it is
 * on the token endpoint's hot path and node's synchronous sign costs a third of WebCrypto's
 * asynchronous one (docs/decisions.md).
 */
export function signCompactJws(header: Readonly<Record<string, unknown>>, payload: Readonly<Record<string, unknown>>, key: KeyObject): string {
  const input = `${Buffer.from(JSON.stringify(header)).toString('base64url')}.${Buffer.from(JSON.stringify(payload)).toString('base64url')}`;
  const signature = signDigest('sha256', Buffer.from(input), { key, dsaEncoding: 'ieee-p1363' });
  return `${input}.${signature.toString('base64url')}`;
}
