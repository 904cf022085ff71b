/**
 * Iceberg clients configured without a warehouse call the catalog routes without a prefix
 * (iceberg-js 1.0: `GET /v1/namespaces`): they mean the default catalog, the first one, named
 * `default`. Such URLs are rewritten to `/v1/default/...` before routing, so that the auth hook,
 * the route-access table, the handlers and idempotency see one route, not two.
 */
import { DEFAULT_CATALOG } from './transactions.js';

/** `/v1/namespaces[/…]`, `/v1/tables/rename`, `/v1/views/rename`, with or without a query. */
const UNPREFIXED_CATALOG_PATH = /^\/v1\/(?=namespaces(?:[/?]|$)|(?:tables|views)\/rename(?:\?|$))/;

/** The URL an unprefixed catalog request means (`/v1/namespaces` → `/v1/default/namespaces`); others unchanged. */
export function withDefaultCatalogPrefix(url: string): string {
  return UNPREFIXED_CATALOG_PATH.test(url) ? `/v1/${DEFAULT_CATALOG}/${url.slice('/v1/'.length)}` : url;
}
