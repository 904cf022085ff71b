/**
 * A local stand-in for the Microsoft Entra ID v2 endpoints that `@azure/identity`'s
 * `ClientSecretCredential` (through MSAL) calls, which CHECKS what it is sent. There is no Entra ID
 * emulator; this server answers the way Entra ID does for the client-credentials flow, and refuses
 * anything else with Entra's error JSON, so a wrong request fails a test instead of passing.
 *
 * - `GET /<tenant>/v2.0/.well-known/openid-configuration`: the tenant's OpenID configuration
 *   (MSAL reads the token endpoint from it, and checks that its `issuer` is on this host). An
 *   unknown tenant gets 400 `invalid_tenant` / `AADSTS90002`, as from Entra ID.
 * - `POST /<tenant>/oauth2/v2.0/token`: `grant_type=client_credentials` only (else
 *   `AADSTS70003`), a registered `client_id` (else `AADSTS700016`), its `client_secret` (absent:
 *   `AADSTS7000216`; wrong: 401 `invalid_client` / `AADSTS7000215`), and
 *   `scope=https://storage.azure.com/.default` (else `AADSTS70011`). The access token is a JWT as
 *   Entra ID issues for Azure Storage (a v1 token: `iss` = `https://sts.windows.net/<tenant>/`,
 *   `aud` = `https://storage.azure.com`, `oid`/`tid`/`appid`, an hour's lifetime), signed RS256
 *   with a key published at `/<tenant>/discovery/v2.0/keys`. Azurite (`--oauth basic`) checks its
 *   issuer, audience and lifetime, not its signature.
 * - HTTPS only, with the certificate and key given (MSAL refuses an `http://` authority).
 * - Every request is recorded (`requests`): path, tenant, grant type, client id, scope and the
 *   answer, never the client secret.
 */
import { createServer, type Server } from 'node:https';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { randomUUID } from 'node:crypto';
import { SignJWT, exportJWK, generateKeyPair } from 'jose';

/** The scope a token for Azure Storage is asked for (what the storage SDKs send). */
export const STORAGE_SCOPE = 'https://storage.azure.com/.default';

/** An application registered in a tenant, with its service principal's object id. */
export interface EntraApp {
  readonly clientId: string;
  readonly clientSecret: string;
  readonly objectId: string;
}

export interface EntraTenant {
  readonly tenantId: string;
  readonly apps: readonly EntraApp[];
}

export interface EntraRequest {
  readonly method: string;
  readonly path: string;
  readonly tenant: string;
  readonly grantType: string | null;
  readonly clientId: string | null;
  readonly scope: string | null;
  /** `issued`, `openid-configuration`, `keys`, or the AADSTS error code of a refusal. */
  readonly outcome: string;
  readonly status: number;
}

export interface EntraTokenServer {
  /** `https://127.0.0.1:<port>`: what a profile's `authority-host` names. */
  readonly authorityHost: string;
  readonly requests: readonly EntraRequest[];
  /** Access tokens issued. */
  tokensIssued(): number;
  close(): Promise<void>;
}

export interface EntraTokenServerOptions {
  readonly tenants: readonly EntraTenant[];
  /** PEM certificate and key the server presents (a client must trust the certificate). */
  readonly tls: { readonly cert: string; readonly key: string };
  /** Lifetime of the access tokens issued. Default 3600 s (Entra's is 60-90 minutes). */
  readonly tokenLifetimeSeconds?: number;
}

interface EntraError {
  readonly status: number;
  readonly error: string;
  readonly code: number;
  readonly description: string;
}

function entraErrorBody(e: EntraError): Record<string, unknown> {
  const traceId = randomUUID();
  const correlationId = randomUUID();
  const timestamp = new Date().toISOString().replace('T', ' ').replace(/\.\d+Z$/, 'Z');
  return {
    error: e.error,
    error_description: `AADSTS${e.code}: ${e.description} Trace ID: ${traceId} Correlation ID: ${correlationId} Timestamp: ${timestamp}`,
    error_codes: [e.code], timestamp, trace_id: traceId, correlation_id: correlationId,
    error_uri: `https://login.microsoftonline.com/error?code=${e.code}`,
  };
}

async function readBody(req: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const c of req) chunks.push(c as Buffer);
  return Buffer.concat(chunks).toString('utf8');
}

export async function startEntraTokenServer(options: EntraTokenServerOptions): Promise<EntraTokenServer> {
  const tenants = new Map(options.tenants.map((t) => [t.tenantId, t]));
  const lifetime = options.tokenLifetimeSeconds ?? 3600;
  const { privateKey, publicKey } = await generateKeyPair('RS256');
  const kid = randomUUID();
  const jwk = { ...(await exportJWK(publicKey)), kid, use: 'sig', alg: 'RS256' };
  const requests: EntraRequest[] = [];
  let issued = 0;
  let base = '';

  const send = (res: ServerResponse, status: number, body: unknown): void => {
    const text = JSON.stringify(body);
    res.writeHead(status, { 'content-type': 'application/json; charset=utf-8', 'content-length': Buffer.byteLength(text), 'cache-control': 'no-store' });
    res.end(text);
  };

  const unknownTenant = (tenant: string): EntraError => ({
    status: 400, error: 'invalid_tenant', code: 90002,
    description: `Tenant '${tenant}' not found. Check to make sure you have the correct tenant ID and are signing into the correct cloud.`,
  });

  /** The token endpoint's decision, or the access token. */
  const token = async (tenant: EntraTenant | undefined, tenantName: string, form: URLSearchParams): Promise<EntraError | string> => {
    if (tenant === undefined) return { ...unknownTenant(tenantName), error: 'invalid_request' };
    if (form.get('grant_type') !== 'client_credentials') {
      return { status: 400, error: 'unsupported_grant_type', code: 70003, description: `The app requested an unsupported grant type '${form.get('grant_type') ?? ''}'.` };
    }
    const clientId = form.get('client_id') ?? '';
    const app = tenant.apps.find((a) => a.clientId === clientId);
    if (app === undefined) {
      return {
        status: 400, error: 'unauthorized_client', code: 700016,
        description: `Application with identifier '${clientId}' was not found in the directory '${tenant.tenantId}'. This can happen if the application has not been installed by the administrator of the tenant or consented to by any user in the tenant.`,
      };
    }
    const secret = form.get('client_secret');
    if (secret === null || secret === '') {
      return { status: 401, error: 'invalid_client', code: 7000216, description: "'client_assertion', 'client_secret' or 'request' is required for the 'client_credentials' grant type." };
    }
    if (secret !== app.clientSecret) {
      return {
        status: 401, error: 'invalid_client', code: 7000215,
        description: `Invalid client secret provided. Ensure the secret being sent in the request is the client secret value, not the client secret ID, for a secret added to app '${app.clientId}'.`,
      };
    }
    if (form.get('scope') !== STORAGE_SCOPE) {
      return { status: 400, error: 'invalid_scope', code: 70011, description: `The provided request must include a 'scope' input parameter. The provided value for the input parameter 'scope' is not valid. The scope ${form.get('scope') ?? ''} is not valid.` };
    }
    const now = Math.floor(Date.now() / 1000);
    issued += 1;
    return new SignJWT({
      aud: 'https://storage.azure.com', iss: `https://sts.windows.net/${tenant.tenantId}/`,
      appid: app.clientId, appidacr: '1', idtyp: 'app', oid: app.objectId, sub: app.objectId, tid: tenant.tenantId, ver: '1.0', uti: randomUUID(),
    }).setProtectedHeader({ alg: 'RS256', typ: 'JWT', kid })
      .setIssuedAt(now - 60).setNotBefore(now - 60).setExpirationTime(now + lifetime)
      .sign(privateKey);
  };

  const handle = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    const url = new URL(req.url ?? '/', 'https://localhost');
    const parts = url.pathname.split('/').filter((p) => p !== '');
    const tenantName = decodeURIComponent(parts[0] ?? '');
    const tenant = tenants.get(tenantName);
    const rest = parts.slice(1).join('/');
    const record = (r: Omit<EntraRequest, 'method' | 'path' | 'tenant'>): void => {
      requests.push({ method: req.method ?? '', path: url.pathname, tenant: tenantName, ...r });
    };
    const none = { grantType: null, clientId: null, scope: null };
    if (req.method === 'GET' && rest === 'v2.0/.well-known/openid-configuration') {
      if (tenant === undefined) {
        const e = unknownTenant(tenantName);
        record({ ...none, outcome: `AADSTS${e.code}`, status: e.status });
        send(res, e.status, entraErrorBody(e));
        return;
      }
      record({ ...none, outcome: 'openid-configuration', status: 200 });
      const t = `${base}/${tenant.tenantId}`;
      send(res, 200, {
        token_endpoint: `${t}/oauth2/v2.0/token`, token_endpoint_auth_methods_supported: ['client_secret_post', 'private_key_jwt', 'client_secret_basic'],
        jwks_uri: `${t}/discovery/v2.0/keys`, response_modes_supported: ['query', 'fragment', 'form_post'], subject_types_supported: ['pairwise'],
        id_token_signing_alg_values_supported: ['RS256'], response_types_supported: ['code', 'id_token', 'code id_token', 'id_token token'],
        scopes_supported: ['openid', 'profile', 'email', 'offline_access'], issuer: `${t}/v2.0`, request_uri_parameter_supported: false,
        authorization_endpoint: `${t}/oauth2/v2.0/authorize`, device_authorization_endpoint: `${t}/oauth2/v2.0/devicecode`,
        end_session_endpoint: `${t}/oauth2/v2.0/logout`, tenant_region_scope: 'EU', cloud_instance_name: 'microsoftonline.com',
      });
      return;
    }
    if (req.method === 'GET' && rest === 'discovery/v2.0/keys' && tenant !== undefined) {
      record({ ...none, outcome: 'keys', status: 200 });
      send(res, 200, { keys: [jwk] });
      return;
    }
    if (req.method === 'POST' && rest === 'oauth2/v2.0/token') {
      const type = (req.headers['content-type'] ?? '').split(';')[0]?.trim().toLowerCase();
      const form = new URLSearchParams(await readBody(req));
      const seen = { grantType: form.get('grant_type'), clientId: form.get('client_id'), scope: form.get('scope') };
      if (type !== 'application/x-www-form-urlencoded') {
        const e: EntraError = { status: 400, error: 'invalid_request', code: 900144, description: "The request body must contain the following parameter: 'grant_type'." };
        record({ ...seen, outcome: `AADSTS${e.code}`, status: e.status });
        send(res, e.status, entraErrorBody(e));
        return;
      }
      const answer = await token(tenant, tenantName, form);
      if (typeof answer !== 'string') {
        record({ ...seen, outcome: `AADSTS${answer.code}`, status: answer.status });
        send(res, answer.status, entraErrorBody(answer));
        return;
      }
      record({ ...seen, outcome: 'issued', status: 200 });
      send(res, 200, { token_type: 'Bearer', expires_in: lifetime, ext_expires_in: lifetime, access_token: answer });
      return;
    }
    record({ ...none, outcome: 'not-found', status: 404 });
    send(res, 404, { error: 'not_found' });
  };

  const server: Server = createServer({ cert: options.tls.cert, key: options.tls.key }, (req, res) => {
    handle(req, res).catch((e: unknown) => {
      if (!res.headersSent) send(res, 500, { error: 'server_error', error_description: String(e) });
      else res.destroy();
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve());
  });
  base = `https://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    authorityHost: base,
    requests,
    tokensIssued: () => issued,
    close: () => new Promise<void>((resolve) => {
      server.closeAllConnections();
      server.close(() => resolve());
    }),
  };
}
