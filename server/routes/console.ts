/**
 * The web console (console/, built into dist/console by `npm run build`), served by this process
 * at `/console`: the page shell, one bundled ES module and one style sheet. The console calls the
 * same `/api` endpoints as any client with a bearer token it keeps in memory; it sets no cookie,
 * so there is no ambient credential for another site to ride (no CSRF surface).
 *
 * Every console answer carries a strict Content-Security-Policy: scripts and styles only from this
 * origin, no inline script or style, no eval, no framing, fetches only to this origin. The assets
 * are read once when the server starts and kept with their gzip form; a client that accepts gzip
 * gets that.
 */
import { existsSync, readFileSync } from 'node:fs';
import { gzipSync } from 'node:zlib';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { FloeState } from '../state.js';
import { sendWireError } from '../wire-errors.js';

export const CONSOLE_PATH = '/console';

/** The console's Content-Security-Policy (also checked by tests/console). */
export const CONSOLE_CSP = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self' data:",
  "connect-src 'self'",
  "font-src 'self'",
  "manifest-src 'self'",
  "base-uri 'none'",
  "form-action 'none'",
  "frame-ancestors 'none'",
].join('; ');

interface Asset { readonly body: Buffer; readonly gzip: Buffer; readonly type: string }

const ASSET_TYPES: ReadonlyMap<string, string> = new Map([
  ['.js', 'text/javascript; charset=utf-8'],
  ['.css', 'text/css; charset=utf-8'],
  ['.html', 'text/html; charset=utf-8'],
  ['.svg', 'image/svg+xml'],
  ['.png', 'image/png'],
]);

/** dist/console beside the compiled server (dist/server/routes → dist/console). */
const CONSOLE_DIR = new URL('../../console/', import.meta.url);

function loadAsset(name: string): Asset | undefined {
  const url = new URL(name, CONSOLE_DIR);
  if (!existsSync(url)) return undefined;
  const body = readFileSync(url);
  const ext = name.slice(name.lastIndexOf('.'));
  return { body, gzip: gzipSync(body, { level: 9 }), type: ASSET_TYPES.get(ext) ?? 'application/octet-stream' };
}

function securityHeaders(reply: FastifyReply): FastifyReply {
  return reply
    .header('content-security-policy', CONSOLE_CSP)
    .header('x-content-type-options', 'nosniff')
    .header('referrer-policy', 'no-referrer')
    .header('x-frame-options', 'DENY')
    .header('cross-origin-opener-policy', 'same-origin')
    .header('cross-origin-resource-policy', 'same-origin')
    .header('permissions-policy', 'camera=(), microphone=(), geolocation=(), publickey-credentials-get=(self), publickey-credentials-create=(self)');
}

function sendAsset(req: FastifyRequest, reply: FastifyReply, asset: Asset, cacheControl: string): FastifyReply {
  securityHeaders(reply).header('cache-control', cacheControl).header('vary', 'accept-encoding').type(asset.type);
  if (/\bgzip\b/.test(String(req.headers['accept-encoding'] ?? ''))) return reply.header('content-encoding', 'gzip').send(asset.gzip);
  return reply.send(asset.body);
}

export function registerConsoleRoutes(app: FastifyInstance, _state: FloeState): void {
  const assets = new Map<string, Asset>();
  for (const name of ['assets/app.js', 'assets/console.css']) {
    const a = loadAsset(name);
    if (a) assets.set(name.slice('assets/'.length), a);
  }
  const page = loadAsset('index.html');
  const notBuilt = (reply: FastifyReply) =>
    sendWireError(reply, 'api', { status: 404, apiCode: 'NOT_FOUND', message: 'the console is not built: run `npm run build`' });

  const servePage = async (req: FastifyRequest, reply: FastifyReply) => (page ? sendAsset(req, reply, page, 'no-store') : notBuilt(reply));
  app.get(CONSOLE_PATH, servePage);
  app.get(`${CONSOLE_PATH}/`, servePage);
  // An invitation URL (`principals.invitation_url_base`, default …/invite#token=…) opens the
  // console's set-password page: a Location without a fragment keeps the request's (RFC 9110
  // §10.2.2), so the token never reaches the server and the console reads it from `#token=`.
  app.get('/invite', async (_req, reply) => securityHeaders(reply).redirect(CONSOLE_PATH, 302));
  app.get(`${CONSOLE_PATH}/assets/:file`, async (req, reply) => {
    const { file } = req.params as { file: string };
    const asset = assets.get(file);
    if (!asset) return page ? sendWireError(reply, 'api', { status: 404, apiCode: 'NOT_FOUND', message: `no console asset ${file}` }) : notBuilt(reply);
    // Not content-hashed names, so revalidate rather than cache for long.
    return sendAsset(req, reply, asset, 'no-cache');
  });
}
