/**
 * How Floe authenticates to Google Cloud Storage: an `AuthClient` of `google-auth-library` for the
 * storage SDK, from one of the profile's credential sources.
 *
 * - `service-account`: a service-account JSON key. The access token comes from the OAuth2
 *   JWT-bearer grant (RFC 7523) at the key's own `token_uri`: `google-auth-library` 9's `JWT`
 *   always posts to Google's fixed token URL (its `gtoken` ignores `token_uri`), which would make
 *   the exchange untestable here and wrong for keys of other universes. The assertion is signed
 *   with `jose` (RS256, the key's `private_key_id` as `kid`); caching and refresh before expiry
 *   stay the library's (`OAuth2Client`).
 * - `application-default`: Application Default Credentials (`GOOGLE_APPLICATION_CREDENTIALS`,
 *   gcloud's user credentials, the metadata server), exactly as the library resolves them.
 * - `access-token`: a bearer token minted elsewhere (a vended, downscoped token), used as is.
 */
import { GoogleAuth, OAuth2Client, type AuthClient, type Credentials } from 'google-auth-library';
import { SignJWT, importPKCS8 } from 'jose';

/** The fields of a service-account JSON key Floe reads (the rest is ignored). */
export interface GcsServiceAccountKey {
  readonly client_email: string;
  readonly private_key: string;
  readonly private_key_id?: string;
  readonly project_id?: string;
  readonly token_uri?: string;
}

export const GOOGLE_TOKEN_URI = 'https://oauth2.googleapis.com/token';
export const STORAGE_SCOPE = 'https://www.googleapis.com/auth/devstorage.read_write';

/** Where a GCS client's token comes from. */
export type GcsCredentials =
  | { readonly type: 'service-account'; readonly key: GcsServiceAccountKey }
  | { readonly type: 'application-default' }
  | { readonly type: 'access-token'; readonly token: string; readonly expiresAtMs?: number };

/** Why a token could not be had; the message names the cause, never the key. */
export class GcsAuthError extends Error {
  readonly kind = 'gcs-auth';
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'GcsAuthError';
  }
}

/**
 * Parses and checks a service-account key given as JSON text or object: the fields the grant
 * needs, a PEM private key, an http(s) `token_uri`. Throws a message naming the bad field.
 */
export function parseServiceAccountKey(input: unknown): GcsServiceAccountKey {
  let o: unknown = input;
  if (typeof input === 'string') {
    try {
      o = JSON.parse(input);
    } catch {
      throw new GcsAuthError('the service-account key is not JSON');
    }
  }
  if (o === null || typeof o !== 'object' || Array.isArray(o)) throw new GcsAuthError('the service-account key must be a JSON object');
  const k = o as Record<string, unknown>;
  if (k.type !== undefined && k.type !== 'service_account') throw new GcsAuthError(`the key's type is ${JSON.stringify(k.type)}, expected "service_account"`);
  if (typeof k.client_email !== 'string' || !/^[^@\s]+@[^@\s]+$/.test(k.client_email)) throw new GcsAuthError('the service-account key has no valid client_email');
  if (typeof k.private_key !== 'string' || !k.private_key.includes('-----BEGIN PRIVATE KEY-----')) throw new GcsAuthError('the service-account key has no PEM private_key');
  for (const f of ['private_key_id', 'project_id', 'token_uri'] as const) {
    if (k[f] !== undefined && typeof k[f] !== 'string') throw new GcsAuthError(`the service-account key's ${f} must be a string`);
  }
  if (typeof k.token_uri === 'string') {
    let url: URL | undefined;
    try {
      url = new URL(k.token_uri);
    } catch {
      url = undefined;
    }
    if (url === undefined || (url.protocol !== 'https:' && url.protocol !== 'http:')) throw new GcsAuthError('the service-account key\'s token_uri is not an http(s) URL');
  }
  return {
    client_email: k.client_email,
    private_key: k.private_key,
    ...(typeof k.private_key_id === 'string' ? { private_key_id: k.private_key_id } : {}),
    ...(typeof k.project_id === 'string' ? { project_id: k.project_id } : {}),
    ...(typeof k.token_uri === 'string' ? { token_uri: k.token_uri } : {}),
  };
}

/** An `OAuth2Client` whose tokens come from the JWT-bearer grant of a service-account key. */
export class ServiceAccountClient extends OAuth2Client {
  private signingKey: Promise<Awaited<ReturnType<typeof importPKCS8>>> | undefined;

  constructor(
    private readonly key: GcsServiceAccountKey,
    private readonly scope: string = STORAGE_SCOPE,
    private readonly timeoutMs = 30_000,
  ) {
    super({ eagerRefreshThresholdMillis: 5 * 60_000 });
    // OAuth2Client refreshes only when it holds a refresh token; ours is the key itself.
    this.credentials = { refresh_token: 'service-account-key' };
  }

  get tokenUri(): string {
    return this.key.token_uri ?? GOOGLE_TOKEN_URI;
  }

  protected override async refreshTokenNoCache(): Promise<{ tokens: Credentials; res: null }> {
    this.signingKey ??= importPKCS8(this.key.private_key, 'RS256').catch((e: unknown) => {
      this.signingKey = undefined;
      throw new GcsAuthError('the service-account key\'s private_key cannot be read as an RSA key', { cause: e });
    });
    const assertion = await new SignJWT({ scope: this.scope })
      .setProtectedHeader({ alg: 'RS256', typ: 'JWT', ...(this.key.private_key_id !== undefined ? { kid: this.key.private_key_id } : {}) })
      .setIssuer(this.key.client_email)
      .setAudience(this.tokenUri)
      .setIssuedAt()
      .setExpirationTime('1h')
      .sign(await this.signingKey);
    let res: Response;
    try {
      res = await fetch(this.tokenUri, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body: new URLSearchParams({ grant_type: 'urn:ietf:params:oauth:grant-type:jwt-bearer', assertion }).toString(),
        signal: AbortSignal.timeout(this.timeoutMs),
      });
    } catch (e) {
      throw new GcsAuthError(`the token endpoint ${this.tokenUri} is unreachable: ${(e as Error).message}`, { cause: e });
    }
    const text = await res.text();
    let body: { access_token?: unknown; expires_in?: unknown; error?: unknown; error_description?: unknown } = {};
    try {
      body = JSON.parse(text) as typeof body;
    } catch {
      body = {};
    }
    if (!res.ok || typeof body.access_token !== 'string') {
      const why = typeof body.error === 'string' ? `${body.error}${typeof body.error_description === 'string' ? `: ${body.error_description}` : ''}` : `HTTP ${res.status}`;
      throw new GcsAuthError(`the token endpoint refused the service account ${this.key.client_email} (${why})`);
    }
    const expiresIn = typeof body.expires_in === 'number' ? body.expires_in : 3600;
    const tokens: Credentials = { access_token: body.access_token, token_type: 'Bearer', expiry_date: Date.now() + expiresIn * 1000, refresh_token: 'service-account-key' };
    return { tokens, res: null };
  }
}

/** The `AuthClient` (or ADC `GoogleAuth`) for `credentials`. */
export function gcsAuthClient(credentials: GcsCredentials, scope: string = STORAGE_SCOPE): AuthClient | GoogleAuth {
  switch (credentials.type) {
    case 'service-account':
      return new ServiceAccountClient(credentials.key, scope);
    case 'application-default':
      return new GoogleAuth({ scopes: [scope] });
    case 'access-token': {
      const client = new OAuth2Client();
      client.setCredentials({ access_token: credentials.token, ...(credentials.expiresAtMs !== undefined ? { expiry_date: credentials.expiresAtMs } : {}) });
      return client;
    }
  }
}

/** A current access token of `client` and, when known, when it expires (the STS subject token of vending). */
export async function sourceTokenOf(client: AuthClient | GoogleAuth): Promise<{ readonly token: string; readonly expiresAtMs: number | undefined }> {
  const token = await accessTokenOf(client);
  const c = client instanceof GoogleAuth ? await client.getClient() : client;
  const expiry = (c as { credentials?: Credentials }).credentials?.expiry_date;
  return { token, expiresAtMs: typeof expiry === 'number' ? expiry : undefined };
}

/** A current access token of `client` (for the STS exchange of vending). */
export async function accessTokenOf(client: AuthClient | GoogleAuth): Promise<string> {
  try {
    const t = await client.getAccessToken();
    const token = typeof t === 'string' ? t : t?.token;
    if (typeof token !== 'string' || token === '') throw new GcsAuthError('no access token was returned');
    return token;
  } catch (e) {
    if (e instanceof GcsAuthError) throw e;
    throw new GcsAuthError(`could not obtain an access token: ${(e as Error).message}`, { cause: e });
  }
}
