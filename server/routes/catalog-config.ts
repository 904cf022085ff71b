/**
 * GET /v1/config: what an Iceberg client reads first. The endpoint list is derived from the
 * routes this server registered, so it can never advertise one it does not serve.
 */
import type { FastifyInstance } from 'fastify';
import { sendWireError } from '../wire-errors.js';

/** Iceberg's endpoint notation of a Fastify route pattern (`/v1/:prefix/x` → `/v1/{prefix}/x`). */
export function icebergEndpoint(method: string, pattern: string): string {
  return `${method} ${pattern.replace(/:([A-Za-z]+)/g, '{$1}')}`;
}

export function registerCatalogConfigRoute(app: FastifyInstance, servedRoutes: () => readonly string[]): void {
  app.get<{ Querystring: { warehouse?: string } }>('/v1/config', async (req, reply) => {
    const warehouse = req.query.warehouse;
    if (warehouse !== undefined) {
      // Catalogs arrive with the catalog service; until one exists no warehouse is known.
      return sendWireError(reply, 'iceberg', { status: 404, icebergType: 'NoSuchWarehouseException', message: `warehouse ${warehouse} does not exist` });
    }
    const endpoints = servedRoutes().filter((r) => / \/v1\/(:prefix|transactions)\//.test(r)).map((r) => {
      const [method, pattern] = r.split(' ') as [string, string];
      return icebergEndpoint(method, pattern);
    });
    return { defaults: {}, overrides: {}, endpoints };
  });
}
