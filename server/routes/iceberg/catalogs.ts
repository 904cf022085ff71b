/** `/v1/catalogs`: list, create (201), load, drop (204; 409 while not empty). */
import type { FastifyInstance } from 'fastify';
import type { JsonValue } from '../../../catalog/iceberg/json.js';
import { catalogToJson, parseCreateCatalog } from '../../../catalog/rest/wire.js';
import type { FloeState } from '../../state.js';
import { catalogContext, rawSegment, sendJson, sendNoContent } from './http.js';

export function registerCatalogRoutes(app: FastifyInstance, state: FloeState): void {
  app.get('/v1/catalogs', async (req, reply) => {
    const list = await state.catalog.listCatalogs(catalogContext(req));
    return sendJson(reply, 200, { catalogs: list.map(catalogToJson) });
  });
  app.post('/v1/catalogs', async (req, reply) => {
    const created = await state.catalog.createCatalog(catalogContext(req), parseCreateCatalog(req.body as JsonValue | undefined));
    return sendJson(reply, 201, catalogToJson(created));
  });
  app.get('/v1/catalogs/:catalog', async (req, reply) => {
    const c = await state.catalog.loadCatalog(catalogContext(req), rawSegment(req, 3));
    return sendJson(reply, 200, catalogToJson(c));
  });
  app.delete('/v1/catalogs/:catalog', async (req, reply) => {
    await state.catalog.dropCatalog(catalogContext(req), rawSegment(req, 3));
    return sendNoContent(reply);
  });
}
