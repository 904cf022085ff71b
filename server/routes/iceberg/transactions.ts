/**
 * `POST /v1/transactions/commit` and `POST /v1/{prefix}/transactions/commit`: atomic commit across
 * tables. Without a prefix the caller's catalog `default` is meant (the path carries no catalog).
 */
import type { FastifyInstance } from 'fastify';
import type { JsonValue } from '../../../catalog/iceberg/json.js';
import { parseCommitTransaction } from '../../../catalog/rest/wire.js';
import type { FloeState } from '../../state.js';
import { catalogContext, prefixOf, sendNoContent } from './http.js';

/** The catalog an unprefixed transaction commits to. */
export const DEFAULT_CATALOG = 'default';

export function registerTransactionRoutes(app: FastifyInstance, state: FloeState): void {
  app.post('/v1/transactions/commit', async (req, reply) => {
    const changes = parseCommitTransaction(req.body as JsonValue | undefined);
    await state.catalog.commitTransaction(catalogContext(req), DEFAULT_CATALOG, changes);
    return sendNoContent(reply);
  });
  app.post('/v1/:prefix/transactions/commit', async (req, reply) => {
    const changes = parseCommitTransaction(req.body as JsonValue | undefined);
    await state.catalog.commitTransaction(catalogContext(req), prefixOf(req), changes);
    return sendNoContent(reply);
  });
}
