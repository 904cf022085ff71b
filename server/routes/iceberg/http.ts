/**
 * HTTP plumbing shared by the Iceberg routes: the caller's catalog context, path segments decoded
 * the way Iceberg clients encode them, query parameters, and JSON written int64-safely.
 */
import type { FastifyReply, FastifyRequest } from 'fastify';
import { stringifyJson } from '../../../catalog/iceberg/json.js';
import type { CatalogContext, EntityIdent, Namespace } from '../../../catalog/rest/context.js';
import { NAMESPACE_SEPARATOR } from '../../../catalog/rest/context.js';
import { badRequest, CatalogError } from '../../../catalog/rest/errors.js';
import type { PageRequest } from '../../../catalog/rest/paging.js';

/** The authenticated caller as the catalog sees it (the auth hook has run on every catalog route). */
export function catalogContext(req: FastifyRequest): CatalogContext {
  const auth = req.auth;
  if (auth === null) throw new CatalogError('NotAuthorizedException', 'authentication required');
  return { tenantId: auth.principal.tenantId, principalId: auth.principal.id, roles: auth.principal.roles };
}

/**
 * One path segment decoded from the raw URL. Java clients encode with `URLEncoder` (space → `+`,
 * `+` → `%2B`), other clients with `encodeURIComponent` (space → `%20`, `+` → `%2B`): a literal `+`
 * therefore always means a space, as Java's own `RESTUtil.decodeString` reads it. Fastify's
 * decoded params cannot tell `+` from `%2B`, hence the raw URL.
 */
export function rawSegment(req: FastifyRequest, index: number): string {
  const path = req.url.split('?')[0] as string;
  const seg = path.split('/')[index];
  if (seg === undefined) throw badRequest('Invalid path');
  if (!seg.includes('%') && !seg.includes('+')) return seg; // nothing encoded (most names)
  try {
    return decodeURIComponent(seg.replaceAll('+', ' '));
  } catch {
    throw badRequest(`Invalid percent-encoding in path segment ${JSON.stringify(seg)}`);
  }
}

/** `/v1/{prefix}/...`: the catalog name. */
export function prefixOf(req: FastifyRequest): string {
  return rawSegment(req, 2);
}

/** `/v1/{prefix}/namespaces/{namespace}`: levels separated by 0x1F (`%1F`). */
export function namespaceOf(req: FastifyRequest): Namespace {
  return rawSegment(req, 4).split(NAMESPACE_SEPARATOR);
}

/** `/v1/{prefix}/namespaces/{namespace}/tables/{table}` (or `/views/{view}`). */
export function entityOf(req: FastifyRequest): EntityIdent {
  return { namespace: namespaceOf(req), name: rawSegment(req, 6) };
}

type Query = Readonly<Record<string, string | string[] | undefined>>;

export function queryString(req: FastifyRequest, name: string): string | undefined {
  const v = (req.query as Query)[name];
  if (Array.isArray(v)) throw badRequest(`Query parameter ${name} given more than once`);
  return v;
}

/** `pageToken` and `pageSize`; a missing or empty token starts at the beginning. */
export function pageOf(req: FastifyRequest): { readonly page: PageRequest; readonly paged: boolean } {
  const token = queryString(req, 'pageToken');
  const sizeText = queryString(req, 'pageSize');
  let pageSize: number | undefined;
  if (sizeText !== undefined) {
    if (!/^\d{1,9}$/.test(sizeText) || Number(sizeText) < 1) throw badRequest(`Invalid pageSize: ${sizeText} (expected a positive integer)`);
    pageSize = Number(sizeText);
  }
  return {
    page: { ...(token !== undefined && token !== '' ? { pageToken: token } : {}), ...(pageSize !== undefined ? { pageSize } : {}) },
    paged: token !== undefined || pageSize !== undefined,
  };
}

export function queryBoolean(req: FastifyRequest, name: string): boolean {
  const v = queryString(req, name);
  if (v === undefined || v === '') return false;
  if (v === 'true' || v === 'false') return v === 'true';
  throw badRequest(`Invalid ${name}: ${v} (expected true or false)`);
}

/** Sends a JSON body written with the int64-safe serializer. */
export function sendJson(reply: FastifyReply, status: number, body: unknown): FastifyReply {
  return reply.code(status).type('application/json; charset=utf-8').send(typeof body === 'string' ? body : stringifyJson(body));
}

export function sendNoContent(reply: FastifyReply): FastifyReply {
  return reply.code(204).send();
}
