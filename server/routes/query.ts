/**
 * The query interface: `POST /api/query` and the history endpoints. Validation and mapping only;
 * the work is `engine/session` and `engine/history`.
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { FloeError, floeError, isFloeError } from '../../grammar/errors.js';
import { QUERY_STATUSES, HISTORY_MAX_LIMIT, type QueryStatus } from '../../engine/history/query-history.js';
import { viewerOf, type QueryPrincipal, type QueryRequest } from '../../engine/session/query-service.js';
import { camelCaseKeys } from '../../engine/system/provider.js';
import { tableMetadataAnswer } from '../../engine/system/catalog-tables.js';
import { qosStats } from '../../engine/wlm/stats.js';
import { CancellationSource } from '../../engine/wlm/cancellation.js';
import { sqlErrorOf } from '../../engine/session/catalog-statements.js';
import { TENANT_ADMIN_ROLE } from '../../engine/principals/principals.js';
import type { FloeState } from '../state.js';

export const ARROW_STREAM = 'application/vnd.apache.arrow.stream';
/** Header naming where a query comes from (a dashboard, an ETL job); routing rules match it. */
export const SOURCE_HEADER = 'x-floe-source';

/** The query-interface principal of an authenticated request. */
export function queryPrincipalOf(req: FastifyRequest): QueryPrincipal {
  const auth = req.auth;
  if (!auth) throw floeError('NOT_AUTHENTICATED', { detail: 'no token' });
  const p = auth.principal;
  return {
    tenantId: p.tenantId, principalId: p.id, name: p.name, roles: p.roles, kind: p.kind,
    authMethod: auth.claims.auth_method, scopeClaim: auth.claims.scope,
    isTenantAdmin: p.roles.includes(TENANT_ADMIN_ROLE),
    amr: auth.claims.amr, authTime: auth.claims.auth_time, defaultWarehouse: null,
  };
}

function sendApiError(reply: FastifyReply, e: FloeError): FastifyReply {
  const queryId = (e as FloeError & { queryId?: string }).queryId;
  return reply.code(e.httpStatus).send({ ...e.toJSON(), ...(queryId ? { query_id: queryId } : {}) });
}

/**
 * The request's `session`: the object an answer returned, `{catalog, schema, settings: {…}}`,
 * sent back as it came; or, the older form, settings as the object's own keys
 * (`{"svc.workload_class": "batch"}`). Both may be mixed; a setting given twice must agree.
 */
function parseSessionField(value: unknown): { catalog?: string; schema?: string; settings: Record<string, string> } {
  const malformed = (detail: string) => floeError('INVALID_REQUEST', { detail: `"session" ${detail}` });
  if (typeof value !== 'object' || value === null || Array.isArray(value)) throw malformed('must be an object (the "session" of an earlier answer)');
  const settings: Record<string, string> = Object.create(null) as Record<string, string>;
  const setting = (name: string, v: unknown) => {
    if (typeof v !== 'string') throw malformed(`setting ${JSON.stringify(name)} must be a string`);
    if (Object.hasOwn(settings, name) && settings[name] !== v) throw malformed(`gives setting ${JSON.stringify(name)} twice with different values`);
    settings[name] = v;
  };
  let catalog: string | undefined;
  let schema: string | undefined;
  for (const [k, v] of Object.entries(value)) {
    if (k === 'catalog' || k === 'schema') {
      if (typeof v !== 'string' || v.length === 0) throw malformed(`"${k}" must be a non-empty string`);
      if (k === 'catalog') catalog = v;
      else schema = v;
    } else if (k === 'settings') {
      if (typeof v !== 'object' || v === null || Array.isArray(v)) throw malformed('"settings" must be an object of strings');
      for (const [name, sv] of Object.entries(v)) setting(name, sv);
    } else setting(k, v);
  }
  return { ...(catalog !== undefined ? { catalog } : {}), ...(schema !== undefined ? { schema } : {}), settings: { ...settings } };
}

/** `catalog` or `schema` from the body's top level and from its `session`: one, or both agreeing. */
function agreeing(name: 'catalog' | 'schema', top: string | undefined, carried: string | undefined): string | undefined {
  if (top !== undefined && carried !== undefined && top !== carried) {
    throw floeError('INVALID_REQUEST', { detail: `"${name}" (${JSON.stringify(top)}) and "session.${name}" (${JSON.stringify(carried)}) differ; send one` });
  }
  return top ?? carried;
}

function parseQueryBody(body: unknown, req: FastifyRequest): QueryRequest {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) throw floeError('INVALID_REQUEST', { detail: 'the body must be a JSON object with "sql"' });
  const b = body as Record<string, unknown>;
  const known = new Set(['sql', 'timeout_ms', 'catalog', 'schema', 'session']);
  const unknown = Object.keys(b).filter((k) => !known.has(k));
  if (unknown.length > 0) throw floeError('INVALID_REQUEST', { detail: `unknown field ${unknown.join(', ')}` });
  if (typeof b.sql !== 'string' || b.sql.trim() === '') throw floeError('INVALID_REQUEST', { detail: '"sql" must be a non-empty string' });
  if (b.timeout_ms !== undefined && (typeof b.timeout_ms !== 'number' || !Number.isInteger(b.timeout_ms))) throw floeError('INVALID_REQUEST', { detail: '"timeout_ms" must be an integer' });
  for (const k of ['catalog', 'schema'] as const) {
    if (b[k] !== undefined && (typeof b[k] !== 'string' || (b[k] as string).length === 0)) throw floeError('INVALID_REQUEST', { detail: `"${k}" must be a non-empty string` });
  }
  const carried = b.session === undefined ? undefined : parseSessionField(b.session);
  const catalog = agreeing('catalog', b.catalog as string | undefined, carried?.catalog);
  const schema = agreeing('schema', b.schema as string | undefined, carried?.schema);
  const session = carried?.settings;
  const source = req.headers[SOURCE_HEADER];
  return {
    sql: b.sql,
    ...(b.timeout_ms !== undefined ? { timeoutMs: b.timeout_ms as number } : {}),
    ...(catalog !== undefined ? { catalog } : {}),
    ...(schema !== undefined ? { schema } : {}),
    ...(session ? { session } : {}),
    ...(typeof source === 'string' && source.length > 0 ? { source: source.slice(0, 256) } : {}),
  };
}

function intParam(q: Record<string, unknown>, name: string, min: number, max: number): number | undefined {
  const v = q[name];
  if (v === undefined) return undefined;
  const n = typeof v === 'string' && /^\d+$/.test(v) ? Number(v) : Number.NaN;
  if (!Number.isSafeInteger(n) || n < min || n > max) throw floeError('INVALID_PARAMETER', { name, detail: `must be an integer from ${min} to ${max}` });
  return n;
}

export function registerQueryRoutes(app: FastifyInstance, state: FloeState): void {
  app.post('/api/query', async (req, reply) => {
    try {
      let request: QueryRequest;
      try {
        request = parseQueryBody(req.body, req);
      } catch (e) {
        // Without a token, say nothing about the body: authenticate first.
        if (!req.auth) {
          reply.header('www-authenticate', 'Bearer realm="floe"');
          throw floeError('NOT_AUTHENTICATED', { detail: 'send Authorization: Bearer <access token>' });
        }
        throw e;
      }
      // A client that goes away cancels its statement. (The request stream's own 'close' fires as
      // soon as the body has been read; the response's fires when the connection goes, or after
      // the answer was written: only the first case means the client left.)
      const cancellation = new CancellationSource();
      const onClose = () => {
        if (reply.raw.writableFinished) return;
        // In a socket's 'close' handler a throw would take the process down: log it instead.
        try {
          cancellation.abort();
        } catch (e) {
          req.log.error({ err: e }, 'cancelling a statement whose client left failed');
        }
      };
      reply.raw.once('close', onClose);
      // Arrow is built only for a client that asks for it (it costs as much as the JSON answer).
      const wantsArrow = (req.headers.accept ?? '').includes(ARROW_STREAM);
      try {
        const answer = req.auth
          ? await state.queries.execute(queryPrincipalOf(req), { ...request, cancellation, arrow: wantsArrow })
          : await state.queries.executeAnonymous(request);
        if (!answer) {
          reply.header('www-authenticate', 'Bearer realm="floe"');
          throw floeError('NOT_AUTHENTICATED', { detail: 'send Authorization: Bearer <access token> (only REDEEM INVITATION runs without one)' });
        }
        if (wantsArrow && answer.arrow) {
          return reply.type(ARROW_STREAM).header('x-floe-query-id', answer.queryId).send(Buffer.from(answer.arrow));
        }
        if (wantsArrow) throw floeError('UNSUPPORTED_STATEMENT', { what: 'an Arrow answer for this statement; ask for application/json' });
        return reply.header('x-floe-query-id', answer.queryId).send({
          query_id: answer.queryId, columns: answer.columns, types: answer.types, rows: answer.rows,
          row_count: answer.rowCount, elapsed_ms: answer.elapsedMs, ...(answer.session ? { session: answer.session } : {}),
        });
      } finally {
        reply.raw.off('close', onClose);
      }
    } catch (e) {
      if (isFloeError(e)) return sendApiError(reply, e);
      throw e;
    }
  });

  app.get('/api/query-history', async (req, reply) => {
    try {
      const q = req.query as Record<string, unknown>;
      const status = q.status;
      if (status !== undefined && !(typeof status === 'string' && (QUERY_STATUSES as readonly string[]).includes(status))) {
        throw floeError('INVALID_PARAMETER', { name: 'status', detail: `one of ${QUERY_STATUSES.join(', ')}` });
      }
      for (const k of ['user_id', 'query_type'] as const) {
        if (q[k] !== undefined && (typeof q[k] !== 'string' || (q[k] as string).length === 0 || (q[k] as string).length > 128)) throw floeError('INVALID_PARAMETER', { name: k, detail: 'a non-empty string' });
      }
      const limit = intParam(q, 'limit', 0, HISTORY_MAX_LIMIT);
      const offset = intParam(q, 'offset', 0, Number.MAX_SAFE_INTEGER);
      const rows = await state.history.list(viewerOf(queryPrincipalOf(req)), {
        ...(limit !== undefined ? { limit } : {}),
        ...(offset !== undefined ? { offset } : {}),
        ...(status !== undefined ? { status: status as QueryStatus } : {}),
        ...(typeof q.user_id === 'string' ? { userId: q.user_id } : {}),
        ...(typeof q.query_type === 'string' ? { queryType: q.query_type } : {}),
      });
      return rows.map(camelCaseKeys);
    } catch (e) {
      if (isFloeError(e)) return sendApiError(reply, e);
      throw e;
    }
  });

  app.get('/api/query-history/:queryId', async (req, reply) => {
    const { queryId } = req.params as { queryId: string };
    const row = await state.history.get(viewerOf(queryPrincipalOf(req)), queryId);
    if (!row) return sendApiError(reply, floeError('NOT_FOUND', { what: `query ${queryId}` }));
    return camelCaseKeys(row);
  });
}

/** `GET /api/tables`, the table metadata endpoint and `GET /api/qos/stats`: the system providers' rows. */
export function registerCatalogInfoRoutes(app: FastifyInstance, state: FloeState): void {
  const fail = (reply: FastifyReply, e: unknown, what: string) => {
    const mapped = sqlErrorOf(e, what);
    if (isFloeError(mapped)) return sendApiError(reply, mapped);
    throw e;
  };

  app.get('/api/tables', async (req, reply) => {
    const q = req.query as Record<string, unknown>;
    const catalog = typeof q.catalog === 'string' && q.catalog.length > 0 ? q.catalog : 'default';
    try {
      return { tables: await state.tables.names(viewerOf(queryPrincipalOf(req)), catalog) };
    } catch (e) {
      return fail(reply, e, catalog);
    }
  });

  app.get('/api/catalogs/:catalog/namespaces/:namespace/tables/:table', async (req, reply) => {
    const p = req.params as { catalog: string; namespace: string; table: string };
    // Multi-level namespaces as in the Iceberg routes: levels joined by the unit separator (or '.').
    const namespace = p.namespace.includes('\u001f') ? p.namespace.split('\u001f') : p.namespace.split('.');
    try {
      const m = await state.tables.describe(viewerOf(queryPrincipalOf(req)), p.catalog, namespace, p.table);
      return tableMetadataAnswer(p.table, m);
    } catch (e) {
      return fail(reply, e, `${p.catalog}.${namespace.join('.')}.${p.table}`);
    }
  });

  app.get('/api/qos/stats', async () => qosStats(state.wlm));
}
