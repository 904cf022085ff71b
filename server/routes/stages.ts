/**
 * The stage endpoints (docs/loading.md, "Uploads"): `POST /v1/stages/presign`,
 * `POST /v1/stages/presign/multipart/{init,complete,abort}` with the caller's bearer token (on S3,
 * Azure and GCS warehouses they answer the store's own presigned URLs), and the URLs they hand
 * out on `file://` warehouses, `PUT|GET /v1/stages/files?token=…`, whose signed token is the
 * credential. Errors speak Iceberg's model, as everything under /v1.
 */
import type { FastifyError, FastifyInstance, FastifyRequest } from 'fastify';
import { createReadStream } from 'node:fs';
import type { Readable } from 'node:stream';
import { floeError, isFloeError } from '../../grammar/errors.js';
import { isStoreUnavailable } from '../../catalog/store/meta-store.js';
import { StorageError } from '../../storage-creds/file-io.js';
import { parseStageRef, type StageRef } from '../../engine/stages/stage-path.js';
import type { StageUploads } from '../../engine/stages/uploads.js';
import { catalogContext } from './iceberg/http.js';
import { sendWireError } from '../wire-errors.js';

type Body = Record<string, unknown>;

function bodyOf(req: FastifyRequest): Body {
  const b = req.body;
  if (typeof b !== 'object' || b === null || Array.isArray(b)) throw floeError('INVALID_REQUEST', { detail: 'expected a JSON object body' });
  return b as Body;
}

function str(b: Body, name: string, fallback?: string): string {
  const v = b[name] ?? fallback;
  if (typeof v !== 'string' || v === '') throw floeError('INVALID_PARAMETER', { name, detail: 'a non-empty string is required' });
  return v;
}

function int(b: Body, name: string): number | undefined {
  const v = b[name];
  if (v === undefined) return undefined;
  if (typeof v !== 'number' || !Number.isSafeInteger(v)) throw floeError('INVALID_PARAMETER', { name, detail: 'must be an integer' });
  return v;
}

/** `stage`: a stage name or `~`; a `/` in it would be a path, which goes in `path`. */
function stageOf(b: Body): StageRef {
  const name = str(b, 'stage');
  if (name.includes('/')) throw floeError('INVALID_PARAMETER', { name: 'stage', detail: 'a stage name or ~ (the path goes in "path")' });
  return parseStageRef(name);
}

function tokenOf(req: FastifyRequest): string {
  const t = (req.query as { token?: unknown }).token;
  if (typeof t !== 'string') throw floeError('PERMISSION_DENIED', { detail: 'the URL carries no upload token' });
  return t;
}

function baseUrl(req: FastifyRequest): string {
  return `${req.protocol}://${req.host}`;
}

export function registerStageRoutes(app: FastifyInstance, uploads: StageUploads, defaultCatalog: string): void {
  void app.register(async (scope) => {
    // Upload bodies are streamed to disk by the handler, whatever their content type.
    scope.addContentTypeParser('*', (_req, payload, done) => done(null, payload));
    scope.setErrorHandler((error: FastifyError, req, reply) => {
      if (isFloeError(error)) {
        const typeByCode: Record<string, string> = { NOT_FOUND: 'NoSuchResourceException', PERMISSION_DENIED: 'ForbiddenException' };
        return sendWireError(reply, 'iceberg', { status: error.httpStatus, message: error.message, ...(typeByCode[error.code] ? { icebergType: typeByCode[error.code]! } : {}) });
      }
      if (isStoreUnavailable(error)) throw error;
      if (error instanceof StorageError) {
        // The warehouse's store failed after retries (503, the client may retry) or refused Floe's
        // own keys (500, the operator fixes the profile); as on the catalog routes, never a key.
        req.log.error({ err: error }, 'object storage failed');
        return error.failure === 'unavailable'
          ? sendWireError(reply, 'iceberg', { status: 503, icebergType: 'ServiceUnavailableException', message: error.message })
          : sendWireError(reply, 'iceberg', { status: 500, icebergType: 'InternalServerError', message: error.message });
      }
      const status = error.statusCode;
      if (status !== undefined && status >= 400 && status < 500) return sendWireError(reply, 'iceberg', { status, message: error.message });
      req.log.error({ err: error }, 'stage request failed');
      throw error;
    });

    scope.post('/v1/stages/presign', async (req) => {
      const b = bodyOf(req);
      const method = (b['method'] ?? 'PUT') as unknown;
      if (method !== 'PUT' && method !== 'GET') throw floeError('INVALID_PARAMETER', { name: 'method', detail: 'PUT or GET' });
      const size = int(b, 'size');
      const ttl = int(b, 'expires_in_seconds');
      return uploads.presign(catalogContext(req), {
        catalog: str(b, 'catalog', defaultCatalog), stage: stageOf(b), path: str(b, 'path'), method,
        ...(size !== undefined ? { size } : {}), ...(ttl !== undefined ? { expiresInSeconds: ttl } : {}),
      }, baseUrl(req));
    });

    scope.post('/v1/stages/presign/multipart/init', async (req) => {
      const b = bodyOf(req);
      const ttl = int(b, 'expires_in_seconds');
      const parts = int(b, 'parts');
      const size = int(b, 'size');
      const partSize = int(b, 'part_size');
      return uploads.initMultipart(catalogContext(req), {
        catalog: str(b, 'catalog', defaultCatalog), stage: stageOf(b), path: str(b, 'path'),
        ...(parts !== undefined ? { parts } : {}), ...(size !== undefined ? { size } : {}), ...(partSize !== undefined ? { partSize } : {}),
        ...(ttl !== undefined ? { expiresInSeconds: ttl } : {}),
      }, baseUrl(req));
    });

    scope.post('/v1/stages/presign/multipart/complete', async (req) => {
      const b = bodyOf(req);
      const parts = b['parts'];
      // Absent for a resumable upload (GCS), which has no parts to list.
      if (parts !== undefined && !Array.isArray(parts)) throw floeError('INVALID_PARAMETER', { name: 'parts', detail: 'an array of {part_number, etag}' });
      return uploads.completeMultipart(catalogContext(req), {
        catalog: str(b, 'catalog', defaultCatalog), stage: stageOf(b), uploadId: str(b, 'upload_id'),
        ...(parts !== undefined ? {
          parts: parts.map((p: unknown) => {
            if (typeof p !== 'object' || p === null) throw floeError('INVALID_PARAMETER', { name: 'parts', detail: 'an array of {part_number, etag}' });
            const o = p as Body;
            // Azure's Put Block answers no ETag: there a part is its number alone.
            return { partNumber: int(o, 'part_number') ?? 0, ...(o['etag'] !== undefined ? { etag: str(o, 'etag') } : {}) };
          }),
        } : {}),
      });
    });

    scope.post('/v1/stages/presign/multipart/abort', async (req) => {
      const b = bodyOf(req);
      return uploads.abortMultipart(catalogContext(req), { catalog: str(b, 'catalog', defaultCatalog), stage: stageOf(b), uploadId: str(b, 'upload_id') });
    });

    scope.put('/v1/stages/files', async (req, reply) => {
      const claims = uploads.verify(tokenOf(req), ['put', 'part']);
      const length = req.headers['content-length'] === undefined ? undefined : Number(req.headers['content-length']);
      const body = req.body as Readable | undefined;
      if (body === undefined || typeof (body as { pipe?: unknown }).pipe !== 'function') throw floeError('INVALID_REQUEST', { detail: 'an upload needs a body' });
      const r = await uploads.receive(claims, body, length);
      reply.header('etag', r.etag);
      return { etag: r.etag, size: r.size };
    });

    scope.get('/v1/stages/files', async (req, reply) => {
      const claims = uploads.verify(tokenOf(req), ['get']);
      const f = await uploads.fileOf(claims);
      reply.header('content-type', 'application/octet-stream').header('content-length', String(f.size));
      return reply.send(createReadStream(f.path));
    });
  });
}
