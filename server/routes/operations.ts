/** /health, /health/ready, /metrics and the JWKS. */
import type { FastifyInstance } from 'fastify';
import type { FloeState } from '../state.js';

/**
 * Readiness: the store must answer `SELECT 1` within this long. Readiness says whether the store is
 * reachable, not how fast it is: a store that answers slowly because the host or its pool is busy
 * still serves, and calling the instance unready then takes it out of rotation exactly when load is
 * high (1 s before, which a loaded machine exceeded). An unreachable store fails the ping at once or
 * at the pool's connect timeout; a probe that wants an answer sooner has its own timeout.
 */
export const READINESS_TIMEOUT_MS = 10_000;

export function registerOperationRoutes(app: FastifyInstance, state: FloeState): void {
  app.get('/health', async () => ({ status: 'ok' }));

  app.get('/health/ready', async (_req, reply) => {
    try {
      await state.store.ping(READINESS_TIMEOUT_MS);
      return { status: 'ready', store: state.store.backend };
    } catch (e) {
      return reply.code(503).send({ status: 'unavailable', store: state.store.backend, reason: `metadata store unreachable: ${(e as Error).message}` });
    }
  });

  app.get('/metrics', async (_req, reply) => {
    const body = await state.metrics.registry.metrics();
    return reply.type(state.metrics.registry.contentType).send(body);
  });
}

export function registerJwksRoute(app: FastifyInstance, state: FloeState): void {
  app.get('/.well-known/jwks.json', async (_req, reply) => {
    reply.header('cache-control', 'public, max-age=300');
    return state.keys.jwks();
  });
}
