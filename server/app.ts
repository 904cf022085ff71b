/**
 * The HTTP server: Fastify wiring only. Routes validate, authorize (through the route access
 * table and the auth hook), call one function and map the result to the wire.
 */
import Fastify, { LogController, type FastifyError, type FastifyInstance } from 'fastify';
import { isStoreUnavailable, StoreUnavailableError } from '../catalog/store/meta-store.js';
import { createAuthHook } from './auth-hook.js';
import { ROUTE_ACCESS, routeAccessKey } from './route-access.js';
import { registerCatalogConfigRoute } from './routes/catalog-config.js';
import { registerIcebergRoutes } from './routes/iceberg/index.js';
import { withDefaultCatalogPrefix } from './routes/iceberg/default-prefix.js';
import { parseTokenForm, registerOAuthRoutes } from './routes/oauth.js';
import { registerJwksRoute, registerOperationRoutes } from './routes/operations.js';
import { registerCatalogInfoRoutes, registerQueryRoutes } from './routes/query.js';
import { registerScimRoutes } from './routes/scim.js';
import { registerConsoleRoutes } from './routes/console.js';
import { registerSecondFactorRoutes } from './routes/second-factors.js';
import { registerStageRoutes } from './routes/stages.js';
import { registerPasskeyRoutes } from './routes/passkeys.js';
import { isScimError } from '../engine/scim/errors.js';
import type { FloeState } from './state.js';
import { readTlsMaterial } from './tls.js';
import { sendWireError, wireFormatOf } from './wire-errors.js';

export interface BuildServerOptions {
  /** Fastify/pino logging; false in tests. */
  readonly logger?: boolean;
}

/**
 * Makes registering a route without a row in the access table throw, so the server cannot start
 * with an unguarded route; records the `METHOD /pattern` keys it registers in `served`.
 */
export function requireAccessRules(app: FastifyInstance, served: string[] = []): void {
  app.addHook('onRoute', (route) => {
    for (const method of [route.method].flat()) {
      const key = routeAccessKey(method, route.url);
      if (!ROUTE_ACCESS.has(key)) throw new Error(`route ${key} is registered without an access rule in server/route-access.ts`);
      served.push(key);
    }
  });
}

export async function buildServer(state: FloeState, options: BuildServerOptions = {}): Promise<FastifyInstance> {
  // HTTPS when a certificate is configured (server/tls.ts); plain HTTP only without one.
  const tls = state.config.server.tls ? readTlsMaterial(state.config.server.tls) : null;
  const app = Fastify({
    ...(tls ? { https: { cert: tls.cert, key: tls.key } } : {}),
    logger: options.logger === false ? false : {
      level: state.config.logging.level,
      redact: ['req.headers.authorization', 'req.headers.cookie'],
    },
    bodyLimit: state.config.server.body_limit_bytes,
    trustProxy: state.config.server.trust_proxy,
    exposeHeadRoutes: false,
    return503OnClosing: true,
    // A client without a warehouse calls `/v1/namespaces…`: the default catalog's routes answer.
    rewriteUrl: (req) => withDefaultCatalogPrefix(req.url ?? '/'),
    // Undecodable URLs and similar errors raised before routing answer in the URL's wire format.
    frameworkErrors: (error, req, reply) => void sendWireError(reply, wireFormatOf(req.url), { status: 400, message: error.message }),
    // Access logs are left to the proxy in front; errors are logged by the error handler.
    logController: new LogController({ disableRequestLogging: true }),
  }) as unknown as FastifyInstance;
  // The state's operator warnings go to the server's log from now on.
  state.warnings.attach((fields, message) => app.log.warn(fields, message));
  const served: string[] = [];

  app.decorateRequest('auth', null);
  requireAccessRules(app, served);

  app.addContentTypeParser('application/x-www-form-urlencoded', { parseAs: 'string' }, (_req, body, done) => {
    const form = parseTokenForm(body as string);
    if (form instanceof Error) done(Object.assign(form, { statusCode: 400 }), undefined);
    else done(null, form);
  });

  app.addHook('onRequest', createAuthHook(state));
  // A callback hook, not an async one: it is on every request's path and has nothing to await.
  app.addHook('onResponse', (req, reply, done) => {
    state.metrics.observeHttp(req.method, req.routeOptions.url ?? 'unmatched', reply.statusCode, reply.elapsedTime / 1000);
    done();
  });

  app.setNotFoundHandler((req, reply) =>
    sendWireError(reply, wireFormatOf(req.url), { status: 404, icebergType: 'NoSuchResourceException', apiCode: 'NOT_FOUND', message: `no route ${req.method} ${req.url.split('?')[0]}` }));

  app.setErrorHandler((error: FastifyError, req, reply) => {
    if (isStoreUnavailable(error)) {
      return sendWireError(reply, wireFormatOf(req.url), { status: 503, apiCode: 'SERVICE_UNAVAILABLE', icebergType: 'ServiceUnavailableException', message: new StoreUnavailableError(error).message });
    }
    const status = error.statusCode && error.statusCode >= 400 && error.statusCode < 600 ? error.statusCode : 500;
    if (status >= 500) req.log.error({ err: error }, 'request failed');
    const message = status >= 500 ? 'internal error' : error.message;
    // A body that does not parse (Fastify's content-type parsers) is SCIM's invalidSyntax.
    const scimType = isScimError(error) ? error.scimType : status === 400 && error.code?.startsWith('FST_ERR_CTP') ? 'invalidSyntax' : undefined;
    return sendWireError(reply, wireFormatOf(req.url), { status, message, ...(scimType ? { scimType } : {}) });
  });

  registerOAuthRoutes(app, state);
  registerCatalogConfigRoute(app, () => served, state);
  registerIcebergRoutes(app, state);
  registerJwksRoute(app, state);
  registerOperationRoutes(app, state);
  registerQueryRoutes(app, state);
  registerCatalogInfoRoutes(app, state);
  registerScimRoutes(app, state);
  registerConsoleRoutes(app, state);
  registerSecondFactorRoutes(app, state);
  registerStageRoutes(app, state.uploads, 'default');
  registerPasskeyRoutes(app, state);
  await app.ready();
  return app;
}

/** The operator's management listener: health and metrics without a token, nothing else. */
export async function buildManagementServer(state: FloeState): Promise<FastifyInstance> {
  const app = Fastify({ logger: false, exposeHeadRoutes: false });
  registerOperationRoutes(app, state);
  await app.ready();
  return app;
}
