/** Views: `/v1/{prefix}/namespaces/{namespace}/views[/{view}]`, `/v1/{prefix}/views/rename`. */
import type { FastifyInstance } from 'fastify';
import type { JsonValue } from '../../../catalog/iceberg/json.js';
import { identifiersPageToJson, loadViewResultToJson, parseCommitView, parseCreateView, parseRename } from '../../../catalog/rest/wire.js';
import type { FloeState } from '../../state.js';
import { catalogContext, entityOf, namespaceOf, pageOf, prefixOf, sendJson, sendNoContent } from './http.js';

const NS = '/v1/:prefix/namespaces/:namespace';
const VIEW = `${NS}/views/:view`;

export function registerViewRoutes(app: FastifyInstance, state: FloeState): void {
  app.get(`${NS}/views`, async (req, reply) => {
    const { page, paged } = pageOf(req);
    const result = await state.catalog.listViews(catalogContext(req), prefixOf(req), namespaceOf(req), page);
    return sendJson(reply, 200, identifiersPageToJson(result, paged));
  });
  app.post(`${NS}/views`, async (req, reply) => {
    const request = parseCreateView(req.body as JsonValue | undefined);
    const v = await state.catalog.createView(catalogContext(req), prefixOf(req), namespaceOf(req), request);
    return sendJson(reply, 200, loadViewResultToJson(v));
  });
  app.get(VIEW, async (req, reply) => {
    const v = await state.catalog.loadView(catalogContext(req), prefixOf(req), entityOf(req));
    return sendJson(reply, 200, loadViewResultToJson(v));
  });
  app.head(VIEW, async (req, reply) => {
    const exists = await state.catalog.viewExists(catalogContext(req), prefixOf(req), entityOf(req));
    return reply.code(exists ? 204 : 404).send();
  });
  app.post(VIEW, async (req, reply) => {
    const r = parseCommitView(req.body as JsonValue | undefined);
    const v = await state.catalog.replaceView(catalogContext(req), prefixOf(req), entityOf(req), r.requirements, r.updates);
    return sendJson(reply, 200, loadViewResultToJson(v));
  });
  app.delete(VIEW, async (req, reply) => {
    await state.catalog.dropView(catalogContext(req), prefixOf(req), entityOf(req));
    return sendNoContent(reply);
  });
  app.post('/v1/:prefix/views/rename', async (req, reply) => {
    const r = parseRename(req.body as JsonValue | undefined);
    await state.catalog.renameView(catalogContext(req), prefixOf(req), r.source, r.destination);
    return sendNoContent(reply);
  });
}
