/**
 * Who may call which route: the one table of the spec's scopes (Authentication §4) per method and
 * route. The auth hook reads it for every request, and the server refuses to start when a route is
 * registered without a row here, so no route can be left open by accident.
 *
 * Only GET /v1/config and POST /v1/oauth/tokens are open, as the spec says; the JWKS is open too
 * because it holds only public keys and verifiers elsewhere must read it. On the main listener,
 * health and metrics need a valid token of any scope (liveness settles for a well-signed one while
 * the store is down); the optional management listener serves them without one.
 */
import type { Scope } from '../engine/principals/scopes.js';

export type RouteAccess =
  | { readonly kind: 'public' }
  | { readonly kind: 'authenticated' }
  | { readonly kind: 'scope'; readonly scope: Scope }
  /**
   * Like `scope` with a token; without an Authorization header the request goes on anonymously and
   * the handler accepts only what carries its own credential (REDEEM INVITATION on /api/query).
   */
  | { readonly kind: 'scope-or-invitation'; readonly scope: Scope }
  /**
   * Liveness (`GET /health`): a valid token as for `authenticated` while the store answers; while
   * it does not, a token whose signature, times and claims hold, because the process being alive
   * does not depend on the store (the spec: liveness "returns 200").
   */
  | { readonly kind: 'liveness' }
  /**
   * SCIM provisioning: the tenant's SCIM token (not a JWT), checked by the SCIM routes themselves
   * (server/routes/scim.ts); the hook lets the request through to them.
   */
  | { readonly kind: 'scim-token' };

const open: RouteAccess = { kind: 'public' };
const anyToken: RouteAccess = { kind: 'authenticated' };
const needs = (scope: Scope): RouteAccess => ({ kind: 'scope', scope });
const scimToken: RouteAccess = { kind: 'scim-token' };

const NS = '/v1/:prefix/namespaces/:namespace';
const TABLE = `${NS}/tables/:table`;
const VIEW = `${NS}/views/:view`;

/** Key: `${METHOD} ${fastify route pattern}`. */
export const ROUTE_ACCESS: ReadonlyMap<string, RouteAccess> = new Map<string, RouteAccess>([
  // Authentication and discovery
  ['GET /v1/config', open],
  ['POST /v1/oauth/tokens', open],
  // Password sign-in: public like the token endpoint (engine/principals/sign-in.ts)
  ['POST /api/auth/sign-in', open],
  // The console's second-factor changes (server/routes/second-factors.ts): the caller's own account
  ['POST /api/auth/mfa/totp/verify', needs('sql')],
  ['POST /api/auth/recovery-codes', needs('sql')],
  ['GET /api/auth/passkeys', needs('sql')],
  ['POST /api/auth/passkeys/registration-options', needs('sql')],
  ['POST /api/auth/passkeys', needs('sql')],
  ['DELETE /api/auth/passkeys/:id', needs('sql')],
  ['GET /.well-known/jwks.json', open],
  // Operations (main listener)
  ['GET /health', { kind: 'liveness' }],
  ['GET /health/ready', anyToken],
  ['GET /metrics', anyToken],
  // Catalogs
  ['GET /v1/catalogs', needs('catalog:read')],
  ['POST /v1/catalogs', needs('catalog:write')],
  ['GET /v1/catalogs/:catalog', needs('catalog:read')],
  ['DELETE /v1/catalogs/:catalog', needs('catalog:write')],
  // Namespaces
  ['GET /v1/:prefix/namespaces', needs('namespace:read')],
  ['POST /v1/:prefix/namespaces', needs('namespace:write')],
  [`GET ${NS}`, needs('namespace:read')],
  [`HEAD ${NS}`, needs('namespace:read')],
  [`DELETE ${NS}`, needs('namespace:write')],
  [`POST ${NS}/properties`, needs('namespace:write')],
  // Tables
  [`GET ${NS}/tables`, needs('table:read')],
  [`POST ${NS}/tables`, needs('table:write')],
  [`GET ${TABLE}`, needs('table:read')],
  [`HEAD ${TABLE}`, needs('table:read')],
  [`POST ${TABLE}`, needs('table:write')],
  [`DELETE ${TABLE}`, needs('table:write')],
  ['POST /v1/:prefix/tables/rename', needs('table:write')],
  [`POST ${NS}/register`, needs('table:write')],
  [`POST ${TABLE}/metrics`, needs('table:read')],
  // Credentials and signing
  [`GET ${TABLE}/credentials`, needs('table:data')],
  [`POST ${TABLE}/credentials`, needs('table:data')],
  ['POST /v1/:prefix/tables/credentials/batch', needs('table:data')],
  [`POST ${TABLE}/sign`, needs('table:data')],
  [`POST ${TABLE}/v1/aws/s3/sign`, needs('table:data')], // the legacy signer path under the table's signer URI
  ['POST /v1/aws/s3/sign', needs('table:data')],
  // Views
  [`GET ${NS}/views`, needs('table:read')],
  [`POST ${NS}/views`, needs('table:write')],
  [`GET ${VIEW}`, needs('table:read')],
  [`HEAD ${VIEW}`, needs('table:read')],
  [`POST ${VIEW}`, needs('table:write')],
  [`DELETE ${VIEW}`, needs('table:write')],
  ['POST /v1/:prefix/views/rename', needs('table:write')],
  // Transactions
  ['POST /v1/transactions/commit', needs('table:write')],
  ['POST /v1/:prefix/transactions/commit', needs('table:write')],
  // Stages (bulk loading)
  ['POST /v1/stages/presign', needs('table:write')],
  ['POST /v1/stages/presign/multipart/init', needs('table:write')],
  ['POST /v1/stages/presign/multipart/complete', needs('table:write')],
  ['POST /v1/stages/presign/multipart/abort', needs('table:write')],
  // The URLs the presign endpoints hand out on file:// warehouses: the signed token is the credential.
  ['PUT /v1/stages/files', open],
  ['GET /v1/stages/files', open],
  // Query interface
  ['POST /api/query', { kind: 'scope-or-invitation', scope: 'sql' }],
  ['GET /api/tables', needs('sql')],
  ['GET /api/catalogs/:catalog/namespaces/:namespace/tables/:table', needs('sql')],
  ['GET /api/query-history', needs('sql')],
  ['GET /api/query-history/:queryId', needs('sql')],
  ['GET /api/qos/stats', needs('sql')],
  // SCIM 2.0 provisioning (identity providers, with the tenant's SCIM token)
  ['GET /scim/v2/Users', scimToken],
  ['POST /scim/v2/Users', scimToken],
  ['GET /scim/v2/Users/:id', scimToken],
  ['PUT /scim/v2/Users/:id', scimToken],
  ['PATCH /scim/v2/Users/:id', scimToken],
  ['DELETE /scim/v2/Users/:id', scimToken],
  ['GET /scim/v2/ServiceProviderConfig', scimToken],
  ['GET /scim/v2/Schemas', scimToken],
  ['GET /scim/v2/Schemas/:id', scimToken],
  ['GET /scim/v2/ResourceTypes', scimToken],
  ['GET /scim/v2/ResourceTypes/:id', scimToken],
  // The web console's static page and assets (server/routes/console.ts): no secret in them; every
  // call the console makes goes to the routes above with its bearer token.
  ['GET /console', open],
  ['GET /console/', open],
  ['GET /console/assets/:file', open],
  ['GET /invite', open],
]);

export function routeAccessKey(method: string, url: string): string {
  return `${method.toUpperCase()} ${url}`;
}
