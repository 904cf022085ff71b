/**
 * SCIM 2.0 (RFC 7643/7644) for identity providers: `/scim/v2/Users` (create, get, list with a
 * filter, replace, patch, delete) and the three discovery documents. Every request carries the
 * tenant's SCIM token (`Authorization: Bearer floe_scim_…`, engine/scim/token.ts), never a JWT:
 * the token is the tenant, and a wrong one counts against the client address like a failed
 * client authentication. Answers are `application/scim+json`; refusals are SCIM errors
 * (`wire-errors.ts`, format `scim`). The work is in engine/scim.
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { isScimError, ScimError, scimErrorBody } from '../../engine/scim/errors.js';
import { parseFilter } from '../../engine/scim/filter.js';
import { parsePatchRequest } from '../../engine/scim/patch.js';
import { LIST_RESPONSE_SCHEMA, parseUserResource, renderUser } from '../../engine/scim/resource.js';
import { authenticateScimToken, type ScimCaller } from '../../engine/scim/token.js';
import {
  createScimUser, DEFAULT_PAGE_SIZE, deleteScimUser, getScimUser, listScimUsers, MAX_PAGE_SIZE, patchScimUser, replaceScimUser, type ScimContext,
} from '../../engine/scim/users.js';
import { SCHEMA_DOCUMENTS, resourceTypes, serviceProviderConfig } from '../../engine/scim/discovery.js';
import type { FloeState } from '../state.js';

export const SCIM_BASE_PATH = '/scim/v2';
export const SCIM_CONTENT_TYPE = 'application/scim+json; charset=utf-8';

/** Absolute URL of /scim/v2 as the client addressed it (meta.location, Location). */
function baseUrl(req: FastifyRequest): string {
  return `${req.protocol}://${req.host}${SCIM_BASE_PATH}`;
}

function send(reply: FastifyReply, status: number, body: unknown): FastifyReply {
  return reply.code(status).type(SCIM_CONTENT_TYPE).send(JSON.stringify(body));
}

/** A SCIM refusal on the wire; any other error goes on to the server's error handler (500, logged). */
export function sendScimError(reply: FastifyReply, e: ScimError): FastifyReply {
  return send(reply, e.status, scimErrorBody(e.status, e.detail, e.scimType));
}

function positiveInteger(name: string, raw: unknown, fallback: number): number {
  if (raw === undefined || raw === '') return fallback;
  if (typeof raw !== 'string' || !/^-?\d{1,9}$/.test(raw)) throw new ScimError(400, `${name} must be an integer`, 'invalidValue');
  return Number(raw);
}

export function registerScimRoutes(app: FastifyInstance, state: FloeState): void {
  const ctx: ScimContext = { store: state.store, clock: state.clock, passwords: state.principals.passwords };

  app.addContentTypeParser('application/scim+json', { parseAs: 'string' }, (_req, body, done) => {
    try {
      done(null, body === '' ? undefined : JSON.parse(body as string));
    } catch {
      done(Object.assign(new ScimError(400, 'the body is not valid JSON', 'invalidSyntax'), { statusCode: 400 }), undefined);
    }
  });

  /** The caller of a request, or an answer already sent (401, 429). */
  async function authenticate(req: FastifyRequest, reply: FastifyReply): Promise<ScimCaller | undefined> {
    const address = req.ip;
    const wait = state.failuresByAddress.retryAfterSeconds(address);
    if (wait > 0) {
      reply.header('retry-after', String(wait));
      sendScimError(reply, new ScimError(429, 'too many failed authentications from this address; try again later'));
      return undefined;
    }
    const m = /^Bearer\s+(\S+)\s*$/i.exec(req.headers.authorization ?? '');
    const caller = m ? await authenticateScimToken(state.store, m[1]!, new Date(state.clock.now())) : undefined;
    if (!caller) {
      if (m) state.failuresByAddress.recordFailure(address);
      reply.header('www-authenticate', 'Bearer realm="floe-scim"');
      sendScimError(reply, new ScimError(401, m ? 'the SCIM token is not valid' : 'authentication required: send Authorization: Bearer <SCIM token>'));
      return undefined;
    }
    return caller;
  }

  /** Authenticates, runs the handler, and turns SCIM refusals into SCIM errors. */
  const handle = (fn: (caller: ScimCaller, req: FastifyRequest, reply: FastifyReply) => Promise<FastifyReply>) =>
    async (req: FastifyRequest, reply: FastifyReply): Promise<FastifyReply> => {
      const caller = await authenticate(req, reply);
      if (!caller) return reply;
      try {
        return await fn(caller, req, reply);
      } catch (e) {
        if (isScimError(e)) return sendScimError(reply, e);
        throw e;
      }
    };

  const idOf = (req: FastifyRequest): string => (req.params as { id: string }).id;

  app.post(`${SCIM_BASE_PATH}/Users`, handle(async (caller, req, reply) => {
    const created = await createScimUser(ctx, caller, parseUserResource(req.body));
    const body = renderUser(created, baseUrl(req));
    reply.header('location', (body.meta as { location: string }).location);
    return send(reply, 201, body);
  }));

  app.get(`${SCIM_BASE_PATH}/Users`, handle(async (caller, req, reply) => {
    const q = req.query as Record<string, unknown>;
    const filter = typeof q.filter === 'string' && q.filter.trim() !== '' ? parseFilter(q.filter) : [];
    // RFC 7644 §3.4.2.4: startIndex below 1 is 1, a negative count is 0.
    const startIndex = Math.max(1, positiveInteger('startIndex', q.startIndex, 1));
    const count = Math.min(MAX_PAGE_SIZE, Math.max(0, positiveInteger('count', q.count, DEFAULT_PAGE_SIZE)));
    const { total, users } = await listScimUsers(ctx, caller, filter, startIndex, count);
    const base = baseUrl(req);
    return send(reply, 200, {
      schemas: [LIST_RESPONSE_SCHEMA], totalResults: total, startIndex, itemsPerPage: users.length,
      Resources: users.map((u) => renderUser(u, base)),
    });
  }));

  app.get(`${SCIM_BASE_PATH}/Users/:id`, handle(async (caller, req, reply) =>
    send(reply, 200, renderUser(await getScimUser(ctx, caller, idOf(req)), baseUrl(req)))));

  app.put(`${SCIM_BASE_PATH}/Users/:id`, handle(async (caller, req, reply) =>
    send(reply, 200, renderUser(await replaceScimUser(ctx, caller, idOf(req), parseUserResource(req.body)), baseUrl(req)))));

  app.patch(`${SCIM_BASE_PATH}/Users/:id`, handle(async (caller, req, reply) =>
    send(reply, 200, renderUser(await patchScimUser(ctx, caller, idOf(req), parsePatchRequest(req.body)), baseUrl(req)))));

  app.delete(`${SCIM_BASE_PATH}/Users/:id`, handle(async (caller, req, reply) => {
    await deleteScimUser(ctx, caller, idOf(req));
    return reply.code(204).send();
  }));

  app.get(`${SCIM_BASE_PATH}/ServiceProviderConfig`, handle(async (_caller, req, reply) => send(reply, 200, serviceProviderConfig(baseUrl(req)))));

  app.get(`${SCIM_BASE_PATH}/Schemas`, handle(async (_caller, req, reply) => {
    const base = baseUrl(req);
    const resources = SCHEMA_DOCUMENTS.map((s) => ({ ...s, meta: { resourceType: 'Schema', location: `${base}/Schemas/${s.id}` } }));
    return send(reply, 200, { schemas: [LIST_RESPONSE_SCHEMA], totalResults: resources.length, startIndex: 1, itemsPerPage: resources.length, Resources: resources });
  }));

  app.get(`${SCIM_BASE_PATH}/Schemas/:id`, handle(async (_caller, req, reply) => {
    const s = SCHEMA_DOCUMENTS.find((d) => d.id === idOf(req));
    if (!s) throw new ScimError(404, `no schema ${idOf(req)}`);
    return send(reply, 200, { ...s, meta: { resourceType: 'Schema', location: `${baseUrl(req)}/Schemas/${s.id}` } });
  }));

  app.get(`${SCIM_BASE_PATH}/ResourceTypes`, handle(async (_caller, req, reply) => {
    const types = resourceTypes(baseUrl(req));
    return send(reply, 200, { schemas: [LIST_RESPONSE_SCHEMA], totalResults: types.length, startIndex: 1, itemsPerPage: types.length, Resources: types });
  }));

  app.get(`${SCIM_BASE_PATH}/ResourceTypes/:id`, handle(async (_caller, req, reply) => {
    const t = resourceTypes(baseUrl(req)).find((r) => r.id === idOf(req));
    if (!t) throw new ScimError(404, `no resource type ${idOf(req)}`);
    return send(reply, 200, t);
  }));
}
