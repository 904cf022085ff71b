/**
 * Tables: `/v1/{prefix}/namespaces/{namespace}/tables[/{table}[/metrics]]`, `/register`,
 * `/v1/{prefix}/tables/rename`. Loads carry an `ETag` (the metadata location and snapshot mode)
 * and answer 304 to a matching `If-None-Match`; their bodies are cached per metadata file, which
 * never changes once written.
 */
import { createHash } from 'node:crypto';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { stringifyJson, type JsonValue } from '../../../catalog/iceberg/json.js';
import { badRequest } from '../../../catalog/rest/errors.js';
import type { LoadedTable } from '../../../catalog/rest/loaded.js';
import {
  identifiersPageToJson, loadTableResultToJson, parseCommitTable, parseCreateTable, parseRegisterTable, parseRename, parseReportMetrics, type SnapshotsMode,
} from '../../../catalog/rest/wire.js';
import type { FloeState } from '../../state.js';
import { CredentialVending, delegationOf, registerCredentialRoutes } from './credentials.js';
import { catalogContext, entityOf, namespaceOf, pageOf, prefixOf, queryBoolean, queryString, sendJson, sendNoContent } from './http.js';

const NS = '/v1/:prefix/namespaces/:namespace';
const TABLE = `${NS}/tables/:table`;

export function etagOf(metadataLocation: string, mode: SnapshotsMode): string {
  return `"${createHash('sha256').update(`${mode}\n${metadataLocation}`).digest('base64url').slice(0, 32)}"`;
}

/** Whether `If-None-Match` names `etag` (or `*`); weak validators compare equal, as RFC 9110 says for GET. */
export function ifNoneMatchHits(header: string | undefined, etag: string): boolean {
  if (header === undefined) return false;
  return header.split(',').some((t) => {
    const tag = t.trim();
    return tag === '*' || tag.replace(/^W\//, '') === etag;
  });
}

function snapshotsMode(req: FastifyRequest): SnapshotsMode {
  const v = queryString(req, 'snapshots');
  if (v === undefined || v === '' || v === 'all') return 'all';
  if (v === 'refs') return 'refs';
  throw badRequest(`Invalid snapshots: ${v} (expected all or refs)`);
}

/** The LoadTableResult text, from the cache when this metadata file was served before. */
export function loadTableBody(state: FloeState, t: LoadedTable, mode: SnapshotsMode): string {
  if (t.metadataLocation === undefined) return stringifyJson(loadTableResultToJson(t, mode));
  const key = `${t.catalogId} ${mode} ${t.metadataLocation}`;
  const cache = state.catalog.deps.files.responses;
  const hit = cache.get(key);
  if (hit !== undefined) return hit;
  const text = stringifyJson(loadTableResultToJson(t, mode));
  cache.set(key, text, text.length);
  return text;
}

function sendTable(state: FloeState, reply: FastifyReply, t: LoadedTable, mode: SnapshotsMode = 'all'): FastifyReply {
  if (t.metadataLocation !== undefined) reply.header('etag', etagOf(t.metadataLocation, mode));
  return sendJson(reply, 200, loadTableBody(state, t, mode));
}

/**
 * A load result with the caller's `storage-credentials` when it asked for vended credentials and
 * got some; such a body is never cached nor answered 304 (the keys are per caller and expire).
 */
async function sendTableFor(state: FloeState, vending: CredentialVending, req: FastifyRequest, reply: FastifyReply, loaded: LoadedTable, mode: SnapshotsMode = 'all'): Promise<FastifyReply> {
  // Every load of a table on an object store says where the store is (region, endpoint, path style).
  const storage = await vending.storageConfig(catalogContext(req), prefixOf(req), loaded);
  const t: LoadedTable = storage.size === 0 ? loaded : { ...loaded, config: new Map([...storage, ...loaded.config]) };
  const delegation = delegationOf(req);
  if (delegation.vendedCredentials) {
    const credentials = await vending.forLoaded(req, catalogContext(req), prefixOf(req), t);
    if (credentials.length > 0) {
      if (t.metadataLocation !== undefined) reply.header('etag', etagOf(t.metadataLocation, mode));
      reply.header('cache-control', 'no-store');
      // The cached LoadTableResult text with the caller's credentials spliced in (made once per session).
      return sendJson(reply, 200, vending.withCredentials(loadTableBody(state, t, mode), credentials));
    }
  }
  if (delegation.remoteSigning) {
    // No credentials (none asked, or none mintable): the client signs through Floe instead.
    const signing = await vending.signingConfig(req, catalogContext(req), prefixOf(req), t);
    if (signing !== undefined) {
      reply.header('cache-control', 'no-store');
      // `remote-signing-config` (Iceberg 1.11): its presence says signing is on; Floe needs no
      // static properties or headers echoed, the table is in the signing URL.
      return sendJson(reply, 200, { ...loadTableResultToJson(t, mode), config: Object.fromEntries([...t.config, ...signing]), 'remote-signing-config': { properties: {}, headers: {} } });
    }
  }
  return sendTable(state, reply, t, mode);
}

export function registerTableRoutes(app: FastifyInstance, state: FloeState): void {
  const vending = new CredentialVending(state, (e) => app.log.warn({ err: e }, 'vend and sign audit rows not written'));
  app.addHook('onClose', async () => vending.close());
  registerCredentialRoutes(app, state, vending);
  app.get(`${NS}/tables`, async (req, reply) => {
    const { page, paged } = pageOf(req);
    const result = await state.catalog.listTables(catalogContext(req), prefixOf(req), namespaceOf(req), page);
    return sendJson(reply, 200, identifiersPageToJson(result, paged));
  });
  app.post(`${NS}/tables`, async (req, reply) => {
    const request = parseCreateTable(req.body as JsonValue | undefined);
    const t = await state.catalog.createTable(catalogContext(req), prefixOf(req), namespaceOf(req), request);
    return sendTableFor(state, vending, req, reply, t);
  });
  app.get(TABLE, async (req, reply) => {
    const mode = snapshotsMode(req);
    const t = await state.catalog.loadTable(catalogContext(req), prefixOf(req), entityOf(req));
    if (t.metadataLocation !== undefined && !delegationOf(req).vendedCredentials && !delegationOf(req).remoteSigning && ifNoneMatchHits(req.headers['if-none-match'], etagOf(t.metadataLocation, mode))) {
      return reply.code(304).header('etag', etagOf(t.metadataLocation, mode)).send();
    }
    return sendTableFor(state, vending, req, reply, t, mode);
  });
  app.head(TABLE, async (req, reply) => {
    const exists = await state.catalog.tableExists(catalogContext(req), prefixOf(req), entityOf(req));
    return reply.code(exists ? 204 : 404).send();
  });
  app.post(TABLE, async (req, reply) => {
    const ident = entityOf(req);
    const change = parseCommitTable(req.body as JsonValue | undefined, ident);
    const t = await state.catalog.commitTable(catalogContext(req), prefixOf(req), ident, change.requirements, change.updates);
    // CommitTableResponse: metadata-location and metadata (both required).
    reply.header('etag', etagOf(t.metadataLocation as string, 'all'));
    const metadataLocation = stringifyJson(t.metadataLocation);
    // The metadata text just written to the file is valid JSON for the body: no second serialization.
    const body = t.metadataJson !== undefined ? `{"metadata-location":${metadataLocation},"metadata":${t.metadataJson}}` : { 'metadata-location': t.metadataLocation, metadata: loadTableResultToJson(t).metadata };
    return sendJson(reply, 200, body);
  });
  app.delete(TABLE, async (req, reply) => {
    await state.catalog.dropTable(catalogContext(req), prefixOf(req), entityOf(req), { purge: queryBoolean(req, 'purgeRequested') });
    return sendNoContent(reply);
  });
  app.post('/v1/:prefix/tables/rename', async (req, reply) => {
    const r = parseRename(req.body as JsonValue | undefined);
    await state.catalog.renameTable(catalogContext(req), prefixOf(req), r.source, r.destination);
    return sendNoContent(reply);
  });
  app.post(`${NS}/register`, async (req, reply) => {
    const request = parseRegisterTable(req.body as JsonValue | undefined);
    const t = await state.catalog.registerTable(catalogContext(req), prefixOf(req), namespaceOf(req), request);
    return sendTableFor(state, vending, req, reply, t);
  });
  app.post(`${TABLE}/metrics`, async (req, reply) => {
    const r = parseReportMetrics(req.body as JsonValue | undefined);
    await state.catalog.reportMetrics(catalogContext(req), prefixOf(req), entityOf(req), r.reportType, r.report);
    return sendNoContent(reply);
  });
}
