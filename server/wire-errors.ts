/**
 * The error wire formats and which URL speaks which:
 * - the token endpoint answers RFC 6749 `{error, error_description}`;
 * - the Iceberg catalog (`/v1/...`) answers `{"error": {"message", "type", "code"}}` with Java
 *   exception names, as Iceberg clients parse it;
 * - SCIM (`/scim/...`) answers RFC 7644's `{schemas: [Error URN], status, scimType?, detail}` as
 *   `application/scim+json`, which identity providers parse;
 * - everything else (`/api`, health, metrics) answers `{error, message, sql_state}` from the
 *   query interface's registry.
 */
import type { FastifyReply } from 'fastify';
import { ERRORS, type ErrorCode } from '../grammar/errors.js';
import { scimErrorBody, type ScimType } from '../engine/scim/errors.js';

export type WireFormat = 'oauth' | 'iceberg' | 'scim' | 'api';

export function wireFormatOf(url: string): WireFormat {
  if (url === '/v1/oauth/tokens' || url.startsWith('/v1/oauth/tokens?')) return 'oauth';
  if (url.startsWith('/v1/')) return 'iceberg';
  if (url.startsWith('/scim/')) return 'scim';
  return 'api';
}

/** Iceberg's exception type names by HTTP status, for errors that have no more specific type. */
const ICEBERG_TYPE_BY_STATUS: ReadonlyMap<number, string> = new Map([
  [400, 'BadRequestException'],
  [401, 'NotAuthorizedException'],
  [403, 'ForbiddenException'],
  [404, 'NoSuchResourceException'],
  [405, 'MethodNotAllowedException'],
  [406, 'NotAcceptableException'],
  [409, 'AlreadyExistsException'],
  [413, 'BadRequestException'],
  [415, 'UnsupportedMediaTypeException'],
  [419, 'AuthenticationTimeoutException'],
  [422, 'UnprocessableEntityException'],
  [429, 'TooManyRequestsException'],
  [500, 'InternalServerError'],
  [503, 'ServiceUnavailableException'],
]);

/** Query-interface registry codes by HTTP status, for framework-level errors. */
const API_CODE_BY_STATUS: ReadonlyMap<number, ErrorCode> = new Map([
  [401, 'NOT_AUTHENTICATED'],
  [403, 'PERMISSION_DENIED'],
]);

export interface WireError {
  readonly status: number;
  readonly message: string;
  /** Iceberg exception name; defaults from the status. */
  readonly icebergType?: string;
  /** Query-interface code; defaults from the status. */
  readonly apiCode?: ErrorCode;
  /** RFC 6749 error code for the token endpoint; defaults to invalid_request (server_error on 5xx). */
  readonly oauthError?: string;
  /** RFC 7644 scimType for SCIM answers (a body that does not parse is `invalidSyntax`). */
  readonly scimType?: ScimType;
}

export function sendWireError(reply: FastifyReply, format: WireFormat, e: WireError): FastifyReply {
  reply.code(e.status);
  switch (format) {
    case 'oauth':
      reply.header('cache-control', 'no-store').header('pragma', 'no-cache');
      return reply.send({ error: e.oauthError ?? (e.status >= 500 ? 'server_error' : 'invalid_request'), error_description: e.message });
    case 'iceberg':
      return reply.send({ error: { message: e.message, type: e.icebergType ?? ICEBERG_TYPE_BY_STATUS.get(e.status) ?? (e.status >= 500 ? 'InternalServerError' : 'BadRequestException'), code: e.status } });
    case 'scim':
      return reply.type('application/scim+json; charset=utf-8').send(JSON.stringify(scimErrorBody(e.status, e.message, e.scimType)));
    case 'api': {
      const code: ErrorCode = e.apiCode ?? API_CODE_BY_STATUS.get(e.status) ?? (e.status >= 500 ? 'INTERNAL_ERROR' : 'INVALID_REQUEST');
      return reply.send({ error: code, message: e.message, sql_state: ERRORS[code].sqlState });
    }
  }
}
