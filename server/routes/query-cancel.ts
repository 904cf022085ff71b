/**
 * `POST /api/query-history/:queryId/cancel`: cancels a queued or running query that the caller
 * may see in history (their own; any in the tenant for an administrator), as a client that goes
 * away cancels its own. 200 `{query_id, cancelled: true}`; 404 for a query the caller cannot see;
 * 409 INVALID_STATE when it is not queued or running on this server (it ended, or another
 * replica runs it).
 */
import type { FastifyInstance } from 'fastify';
import { floeError, isFloeError } from '../../grammar/errors.js';
import { viewerOf } from '../../engine/session/query-service.js';
import type { FloeState } from '../state.js';
import { queryPrincipalOf } from './query.js';
import { sendApiError } from './second-factors.js';

export function registerQueryCancelRoute(app: FastifyInstance, state: FloeState): void {
  app.post('/api/query-history/:queryId/cancel', async (req, reply) => {
    const { queryId } = req.params as { queryId: string };
    try {
      const principal = queryPrincipalOf(req);
      const row = await state.history.get(viewerOf(principal), queryId);
      if (!row) throw floeError('NOT_FOUND', { what: `query ${queryId}` });
      if (!state.wlm.cancelQuery(queryId, `cancelled by ${principal.name}`)) {
        throw floeError('INVALID_STATE', { detail: `query ${queryId} is not queued or running on this server` });
      }
      return { query_id: queryId, cancelled: true };
    } catch (e) {
      if (isFloeError(e)) return sendApiError(reply, e);
      throw e;
    }
  });
}
