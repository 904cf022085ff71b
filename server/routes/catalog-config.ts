/**
 * GET /v1/config: what an Iceberg client reads first. `?warehouse=<catalog name>` selects a
 * catalog: its name becomes the `{prefix}` of later paths, in `defaults.prefix` as the service
 * spec says and in `overrides.prefix`, where Iceberg clients (Java, PyIceberg, iceberg-js) read
 * it; its properties are the other `defaults`. Without `warehouse`, catalog `default` is chosen
 * when the tenant has one. The capabilities are the `endpoints` (Iceberg REST endpoints this
 * server registered a route for, so it never advertises one it does not serve, nor a path of
 * its own that is not an Iceberg endpoint; the credentials and sign endpoints only for a catalog
 * whose store can vend or be signed for) and `idempotency-key-lifetime`.
 *
 * The route is public (the spec exempts it from bearer authentication); a valid token, when sent,
 * selects the caller's tenant, otherwise the default tenant is searched. 404
 * `NoSuchWarehouseException` for a warehouse the tenant does not have.
 */
import { clientPropertiesOf, type StorageProfile } from '../../storage-creds/storage-profile.js';
import { signingSupported, vendingSupported } from './iceberg/credentials.js';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { IDEMPOTENCY_KEY_LIFETIME } from '../../catalog/rest/idempotency.js';
import { findCatalog } from '../../catalog/rest/store.js';
import { mapToJson } from '../../catalog/rest/wire.js';
import { DEFAULT_TENANT } from '../../engine/principals/bootstrap.js';
import type { FloeState } from '../state.js';
import { sendWireError } from '../wire-errors.js';

/** The credential-vending and signing endpoints, advertised only for a catalog whose store supports them. */
const VENDING_ENDPOINTS: ReadonlySet<string> = new Set(['GET /v1/{prefix}/namespaces/{namespace}/tables/{table}/credentials']);
const SIGNING_ENDPOINTS: ReadonlySet<string> = new Set(['POST /v1/{prefix}/namespaces/{namespace}/tables/{table}/sign']);

/** `endpoints` for a catalog on `profile` (none: local files, or no catalog selected). */
export function endpointsForStore(endpoints: readonly string[], profile: StorageProfile | null): readonly string[] {
  return endpoints.filter((e) => (!VENDING_ENDPOINTS.has(e) || (profile !== null && vendingSupported(profile)))
    && (!SIGNING_ENDPOINTS.has(e) || (profile !== null && signingSupported(profile))));
}

/** Iceberg's endpoint notation of a Fastify route pattern (`/v1/:prefix/x` → `/v1/{prefix}/x`). */
export function icebergEndpoint(method: string, pattern: string): string {
  return `${method} ${pattern.replace(/:([A-Za-z]+)/g, '{$1}')}`;
}

/**
 * Every endpoint of the Iceberg REST catalog specification, in its own notation (the OpenAPI
 * document's `paths`). `endpoints` lists those among them this server serves.
 */
export const ICEBERG_REST_ENDPOINTS: ReadonlySet<string> = new Set([
  'GET /v1/config',
  'POST /v1/oauth/tokens',
  'GET /v1/{prefix}/namespaces',
  'POST /v1/{prefix}/namespaces',
  'GET /v1/{prefix}/namespaces/{namespace}',
  'HEAD /v1/{prefix}/namespaces/{namespace}',
  'DELETE /v1/{prefix}/namespaces/{namespace}',
  'POST /v1/{prefix}/namespaces/{namespace}/properties',
  'GET /v1/{prefix}/namespaces/{namespace}/tables',
  'POST /v1/{prefix}/namespaces/{namespace}/tables',
  'GET /v1/{prefix}/namespaces/{namespace}/functions',
  'GET /v1/{prefix}/namespaces/{namespace}/functions/{function}',
  'POST /v1/{prefix}/namespaces/{namespace}/tables/{table}/plan',
  'GET /v1/{prefix}/namespaces/{namespace}/tables/{table}/plan/{plan-id}',
  'DELETE /v1/{prefix}/namespaces/{namespace}/tables/{table}/plan/{plan-id}',
  'POST /v1/{prefix}/namespaces/{namespace}/tables/{table}/tasks',
  'POST /v1/{prefix}/namespaces/{namespace}/register',
  'GET /v1/{prefix}/namespaces/{namespace}/tables/{table}',
  'POST /v1/{prefix}/namespaces/{namespace}/tables/{table}',
  'DELETE /v1/{prefix}/namespaces/{namespace}/tables/{table}',
  'HEAD /v1/{prefix}/namespaces/{namespace}/tables/{table}',
  'POST /v1/{prefix}/namespaces/{namespace}/tables/{table}/unregister',
  'GET /v1/{prefix}/namespaces/{namespace}/tables/{table}/credentials',
  'POST /v1/{prefix}/namespaces/{namespace}/tables/{table}/sign',
  'POST /v1/{prefix}/tables/rename',
  'POST /v1/{prefix}/namespaces/{namespace}/tables/{table}/metrics',
  'POST /v1/{prefix}/transactions/commit',
  'GET /v1/{prefix}/namespaces/{namespace}/views',
  'POST /v1/{prefix}/namespaces/{namespace}/views',
  'GET /v1/{prefix}/namespaces/{namespace}/views/{view}',
  'POST /v1/{prefix}/namespaces/{namespace}/views/{view}',
  'DELETE /v1/{prefix}/namespaces/{namespace}/views/{view}',
  'HEAD /v1/{prefix}/namespaces/{namespace}/views/{view}',
  'POST /v1/{prefix}/views/rename',
  'POST /v1/{prefix}/namespaces/{namespace}/register-view',
]);

async function tenantOf(req: FastifyRequest, state: FloeState): Promise<string> {
  const header = req.headers.authorization;
  const match = header === undefined ? null : /^Bearer ([A-Za-z0-9_.~+/=-]+)$/i.exec(header.trim());
  if (match === null) return DEFAULT_TENANT;
  // The route is public (the spec exempts it): a token only says which tenant's catalogs to
  // describe, so its signature is enough; no store read per call.
  const signed = await state.tokens.verifySignature(match[1] as string);
  return signed.ok ? signed.claims.tid : DEFAULT_TENANT;
}

/**
 * How long a catalog looked up for `/v1/config` is reused. Clients call config at every start and
 * every refresh; a catalog created or dropped shows here within this long (the catalog routes
 * themselves always read the store).
 */
const CONFIG_CATALOG_TTL_MS = 1000;
const CONFIG_CACHE_MAX = 10_000;

export function registerCatalogConfigRoute(app: FastifyInstance, servedRoutes: () => readonly string[], state?: FloeState): void {
  const cache = new Map<string, { readonly at: number; readonly catalog: Awaited<ReturnType<typeof findCatalog>> }>();
  const catalogFor = async (tenant: string, name: string) => {
    const key = JSON.stringify([tenant, name]);
    const now = Date.now();
    const hit = cache.get(key);
    if (hit !== undefined && now - hit.at < CONFIG_CATALOG_TTL_MS) return hit.catalog;
    const catalog = await findCatalog(state!.store, tenant, name);
    if (cache.size >= CONFIG_CACHE_MAX) cache.clear();
    cache.set(key, { at: now, catalog });
    return catalog;
  };
  app.get<{ Querystring: { warehouse?: string | string[] } }>('/v1/config', async (req, reply) => {
    const warehouse = req.query.warehouse;
    if (Array.isArray(warehouse)) return sendWireError(reply, 'iceberg', { status: 400, icebergType: 'BadRequestException', message: 'warehouse given more than once' });
    const endpoints = [...new Set(servedRoutes().map((r) => {
      const [method, pattern] = r.split(' ') as [string, string];
      return icebergEndpoint(method, pattern);
    }))].filter((e) => ICEBERG_REST_ENDPOINTS.has(e));
    const name = warehouse === undefined || warehouse === '' ? 'default' : warehouse;
    const catalog = state === undefined ? undefined : await catalogFor(await tenantOf(req, state), name);
    if (catalog === undefined) {
      if (warehouse !== undefined && warehouse !== '') {
        return sendWireError(reply, 'iceberg', { status: 404, icebergType: 'NoSuchWarehouseException', message: `Warehouse does not exist: ${warehouse}` });
      }
      return { defaults: {}, overrides: {}, endpoints: endpointsForStore(endpoints, null), 'idempotency-key-lifetime': IDEMPOTENCY_KEY_LIFETIME };
    }
    return {
      defaults: {
        ...(catalog.storageProfile !== null ? mapToJson(clientPropertiesOf(catalog.storageProfile)) : {}),
        ...mapToJson(catalog.properties), prefix: encodeURIComponent(catalog.name),
      },
      overrides: { prefix: encodeURIComponent(catalog.name), warehouse: catalog.name },
      endpoints: endpointsForStore(endpoints, catalog.storageProfile),
      'idempotency-key-lifetime': IDEMPOTENCY_KEY_LIFETIME,
    };
  });
}
