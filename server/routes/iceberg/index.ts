/**
 * The Iceberg REST catalog routes (`/v1/catalogs`, `/v1/{prefix}/...`, `/v1/transactions/commit`),
 * registered as one encapsulated Fastify plugin so that they share, apart from the rest of the
 * server:
 * - a JSON body parser that keeps int64 values exact (snapshot ids exceed 2^53);
 * - an error handler speaking Iceberg's `{"error": {"message", "type", "code"}}`, with malformed
 *   JSON and wrong types as 400 `BadRequestException`, oversized bodies as 413;
 * - Idempotency-Key replay on mutating requests.
 * Each resource's routes are in their own file; each route parses, calls one service operation,
 * and writes the result.
 */
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { JsonSyntaxError, parseJson } from '../../../catalog/iceberg/json.js';
import { toCatalogError } from '../../../catalog/rest/errors.js';
import { findStoredResponse, isFinalStatus, requestHash, storeResponse } from '../../../catalog/rest/idempotency.js';
import { isStoreUnavailable } from '../../../catalog/store/meta-store.js';
import { StorageError } from '../../../storage-creds/file-io.js';
import type { FloeState } from '../../state.js';
import { sendWireError } from '../../wire-errors.js';
import { registerCatalogRoutes } from './catalogs.js';
import { registerNamespaceRoutes } from './namespaces.js';
import { registerTableRoutes } from './tables.js';
import { registerTransactionRoutes } from './transactions.js';
import { registerViewRoutes } from './views.js';

const IDEMPOTENCY_KEY = /^[0-9A-Fa-f]{8}-[0-9A-Fa-f]{4}-[0-9A-Fa-f]{4}-[0-9A-Fa-f]{4}-[0-9A-Fa-f]{12}$/;

interface PendingIdempotency {
  readonly key: string;
  readonly hash: string;
  readonly tenantId: string;
}

/** Registers every Iceberg catalog route on `app` (one line in `buildServer`). */
export function registerIcebergRoutes(app: FastifyInstance, state: FloeState): void {
  void app.register(async (scope) => {
    // Raw request bodies (for the idempotency fingerprint) and pending keys, per request.
    const rawBodies = new WeakMap<FastifyRequest, string>();
    const pending = new WeakMap<FastifyRequest, PendingIdempotency>();

    scope.removeContentTypeParser('application/json');
    scope.addContentTypeParser('application/json', { parseAs: 'string' }, (req, text, done) => {
      const body = text as string;
      rawBodies.set(req, body);
      if (body.trim() === '') return done(null, undefined);
      try {
        done(null, parseJson(body));
      } catch (e) {
        const message = e instanceof JsonSyntaxError ? `Malformed JSON request body: ${e.message}` : 'Malformed JSON request body';
        done(Object.assign(new Error(message), { statusCode: 400 }), undefined);
      }
    });

    scope.setErrorHandler((error: FastifyError, req, reply) => {
      const known = toCatalogError(error);
      if (known !== undefined) {
        if (known.status >= 500) req.log.error({ err: error }, 'catalog operation failed');
        return sendWireError(reply, 'iceberg', { status: known.status, icebergType: known.type, message: known.message });
      }
      if (isStoreUnavailable(error)) throw error; // the server's handler answers 503
      if (error instanceof StorageError) {
        // The warehouse's object store failed after retries: 503 while it is unavailable (the
        // client may retry), 500 for a store that refuses (the operator fixes the profile). The
        // message names the operation, location and cause, never a credential.
        req.log.error({ err: error }, 'object storage failed');
        return error.failure === 'unavailable'
          ? sendWireError(reply, 'iceberg', { status: 503, icebergType: 'ServiceUnavailableException', message: error.message })
          : sendWireError(reply, 'iceberg', { status: 500, icebergType: 'InternalServerError', message: error.message });
      }
      if ((error as { kind?: unknown }).kind === 'unsupported-location') {
        // A location this server's FileIO cannot reach (s3:// before object stores, a relative path).
        return sendWireError(reply, 'iceberg', { status: 400, icebergType: 'BadRequestException', message: error.message });
      }
      if (error.code === 'FST_ERR_CTP_BODY_TOO_LARGE') {
        // 413 as on /api, so a client tells "too big" from "malformed"; the type stays a bad request.
        return sendWireError(reply, 'iceberg', { status: 413, icebergType: 'BadRequestException', message: `Request body too large (limit ${state.config.server.body_limit_bytes} bytes)` });
      }
      const status = error.statusCode;
      if (status !== undefined && status >= 400 && status < 500) {
        // Framework-level client errors (malformed JSON, bad media type, …) are bad requests; an
        // oversized body keeps its 413.
        const code = status === 415 ? 400 : status;
        return sendWireError(reply, 'iceberg', { status: code, message: error.message });
      }
      throw error;
    });

    scope.addHook('preHandler', async (req: FastifyRequest, reply: FastifyReply) => {
      if (req.method !== 'POST' && req.method !== 'DELETE') return;
      const header = req.headers['idempotency-key'];
      if (header === undefined || req.auth === null) return;
      const key = Array.isArray(header) ? header[0] ?? '' : header;
      if (!IDEMPOTENCY_KEY.test(key)) {
        await sendWireError(reply, 'iceberg', { status: 400, icebergType: 'BadRequestException', message: 'Invalid Idempotency-Key: expected a UUID (36 characters)' });
        return reply;
      }
      const tenantId = req.auth.principal.tenantId;
      const hash = requestHash(req.method, req.url, rawBodies.get(req) ?? '');
      const stored = await findStoredResponse(state.store, tenantId, key.toLowerCase(), state.clock.now());
      if (stored !== undefined) {
        if (stored.requestHash !== hash) {
          await sendWireError(reply, 'iceberg', { status: 400, icebergType: 'BadRequestException', message: 'Idempotency-Key was already used for a different request' });
          return reply;
        }
        reply.code(stored.status).headers({ ...stored.headers, 'idempotency-replayed': 'true' });
        await reply.send(stored.body ?? undefined);
        return reply;
      }
      pending.set(req, { key: key.toLowerCase(), hash, tenantId });
      return;
    });

    scope.addHook('onSend', async (req, reply, payload) => {
      const p = pending.get(req);
      if (p === undefined || !isFinalStatus(reply.statusCode)) return payload;
      pending.delete(req);
      const contentType = reply.getHeader('content-type');
      const etag = reply.getHeader('etag');
      await storeResponse(state.store, p.tenantId, p.key, {
        requestHash: p.hash,
        status: reply.statusCode,
        body: typeof payload === 'string' ? payload : null,
        headers: { ...(typeof contentType === 'string' ? { 'content-type': contentType } : {}), ...(typeof etag === 'string' ? { etag } : {}) },
      }, state.clock.now()).catch((e: unknown) => req.log.warn({ err: e }, 'idempotency key not stored'));
      return payload;
    });

    registerCatalogRoutes(scope, state);
    registerNamespaceRoutes(scope, state);
    registerTableRoutes(scope, state);
    registerViewRoutes(scope, state);
    registerTransactionRoutes(scope, state);
  });
}
