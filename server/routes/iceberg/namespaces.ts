/** `/v1/{prefix}/namespaces[/{namespace}[/properties]]`. */
import type { FastifyInstance } from 'fastify';
import type { JsonValue } from '../../../catalog/iceberg/json.js';
import { NAMESPACE_SEPARATOR } from '../../../catalog/rest/context.js';
import { mapToJson, namespacesPageToJson, parseCreateNamespace, parseUpdateNamespaceProperties } from '../../../catalog/rest/wire.js';
import type { FloeState } from '../../state.js';
import { catalogContext, namespaceOf, pageOf, prefixOf, queryString, sendJson, sendNoContent } from './http.js';

const NS = '/v1/:prefix/namespaces/:namespace';

export function registerNamespaceRoutes(app: FastifyInstance, state: FloeState): void {
  app.get('/v1/:prefix/namespaces', async (req, reply) => {
    const parentText = queryString(req, 'parent');
    const parent = parentText === undefined || parentText === '' ? undefined : parentText.split(NAMESPACE_SEPARATOR);
    const { page, paged } = pageOf(req);
    const result = await state.catalog.listNamespaces(catalogContext(req), prefixOf(req), parent, page);
    return sendJson(reply, 200, namespacesPageToJson(result, paged));
  });
  app.post('/v1/:prefix/namespaces', async (req, reply) => {
    const request = parseCreateNamespace(req.body as JsonValue | undefined);
    const created = await state.catalog.createNamespace(catalogContext(req), prefixOf(req), request.namespace, request.properties);
    return sendJson(reply, 200, { namespace: [...created.namespace], properties: mapToJson(created.properties) });
  });
  app.get(NS, async (req, reply) => {
    const ns = await state.catalog.loadNamespace(catalogContext(req), prefixOf(req), namespaceOf(req));
    return sendJson(reply, 200, { namespace: [...ns.namespace], properties: mapToJson(ns.properties) });
  });
  app.head(NS, async (req, reply) => {
    const exists = await state.catalog.namespaceExists(catalogContext(req), prefixOf(req), namespaceOf(req));
    return reply.code(exists ? 204 : 404).send();
  });
  app.delete(NS, async (req, reply) => {
    await state.catalog.dropNamespace(catalogContext(req), prefixOf(req), namespaceOf(req));
    return sendNoContent(reply);
  });
  app.post(`${NS}/properties`, async (req, reply) => {
    const request = parseUpdateNamespaceProperties(req.body as JsonValue | undefined);
    const r = await state.catalog.updateNamespaceProperties(catalogContext(req), prefixOf(req), namespaceOf(req), request.removals, request.updates);
    return sendJson(reply, 200, { updated: r.updated, removed: r.removed, missing: r.missing });
  });
}
