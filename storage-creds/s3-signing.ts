/**
 * Remote signing of S3 requests (Iceberg's `RemoteSignRequest` → `RemoteSignResult`): the client
 * holds no key and asks Floe to sign each request; Floe signs with the catalog's own keys (SigV4
 * through `@smithy/signature-v4`) only what lies inside the table's prefixes, in the caller's mode.
 *
 * What is refused (before anything is signed): a URI on another host or bucket, a key outside
 * the table's prefixes, `.`/`..` segments, encoded slashes or backslashes (a store or proxy could
 * read them as separators), a write for a read-only caller, a listing whose prefix is outside the
 * table, a `DeleteObjects` body naming a key outside the table, and any other bucket-level call.
 */
import { createHash, createHmac } from 'node:crypto';
import { SignatureV4 } from '@smithy/signature-v4';
import type { S3Credentials } from './s3-file-io.js';
import type { AccessMode, S3Prefix } from './s3-vending.js';

/** SigV4 requests are accepted by S3 for 15 minutes after their `X-Amz-Date`. */
export const SIGNATURE_VALIDITY_MS = 15 * 60_000;

export interface SignTarget {
  /** The store's endpoint (`http://127.0.0.1:7480`), or null for AWS (`s3.<region>.amazonaws.com`). */
  readonly endpoint: string | null;
  readonly region: string;
}

export interface RemoteSignRequest {
  readonly region: string;
  readonly uri: string;
  readonly method: string;
  readonly headers: ReadonlyMap<string, readonly string[]>;
  readonly body?: string;
}

export interface RemoteSignResult {
  readonly uri: string;
  readonly headers: ReadonlyMap<string, readonly string[]>;
  readonly expiresAtMs: number;
}

/** Floe refuses to sign: the message names the URI (never a key). */
export class SignRefusedError extends Error {
  readonly kind = 'sign-refused';
  constructor(message: string) {
    super(message);
    this.name = 'SignRefusedError';
  }
}

function bytes(d: string | ArrayBuffer | ArrayBufferView): string | Uint8Array {
  if (typeof d === 'string') return d;
  if (d instanceof ArrayBuffer) return new Uint8Array(d);
  return new Uint8Array(d.buffer, d.byteOffset, d.byteLength);
}

/** SHA-256 / HMAC-SHA-256 in the shape `SignatureV4` asks for, over node:crypto. */
class NodeSha256 {
  private readonly hash: ReturnType<typeof createHash> | ReturnType<typeof createHmac>;
  constructor(secret?: string | ArrayBuffer | ArrayBufferView) {
    this.hash = secret === undefined ? createHash('sha256') : createHmac('sha256', bytes(secret));
  }
  update(data: string | ArrayBuffer | ArrayBufferView): void {
    this.hash.update(bytes(data));
  }
  async digest(): Promise<Uint8Array> {
    return new Uint8Array(this.hash.digest());
  }
}

const READ_METHODS = new Set(['GET', 'HEAD']);
const WRITE_METHODS = new Set(['PUT', 'POST', 'DELETE']);

function decodeSegment(seg: string, uri: string): string {
  if (/%2f|%5c/i.test(seg) || seg.includes('\\')) throw new SignRefusedError(`Refused to sign ${uri}: encoded separators in the path`);
  try {
    return decodeURIComponent(seg);
  } catch {
    throw new SignRefusedError(`Refused to sign ${uri}: invalid percent-encoding`);
  }
}

/** The bucket and key a URI addresses, path-style (`host/bucket/key`) or virtual-host (`bucket.host/key`). */
export function addressOf(uri: string, target: SignTarget): { readonly url: URL; readonly bucket: string; readonly key: string } {
  let url: URL;
  try {
    url = new URL(uri);
  } catch {
    throw new SignRefusedError(`Refused to sign ${uri}: not a URL`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new SignRefusedError(`Refused to sign ${uri}: not an http(s) URL`);
  if (url.username !== '' || url.password !== '') throw new SignRefusedError(`Refused to sign ${uri}: credentials in the URL`);
  // `new URL` already resolved `..`; look at the raw path too, so a traversal is refused, not followed.
  const rawPath = uri.slice(uri.indexOf(url.host) + url.host.length).split(/[?#]/)[0] ?? '';
  const rawSegments = rawPath.split('/').slice(1);
  if (rawSegments.some((s) => s === '..' || s === '.' || /^%2e%2e$|^%2e$|^\.%2e$|^%2e\.$/i.test(s))) throw new SignRefusedError(`Refused to sign ${uri}: '.' or '..' in the path`);
  const endpoint = target.endpoint !== null ? new URL(target.endpoint) : new URL(`https://s3.${target.region}.amazonaws.com`);
  const segments = rawSegments.map((s) => decodeSegment(s, uri));
  if (url.host === endpoint.host) {
    const [bucket = '', ...rest] = segments;
    if (bucket === '') throw new SignRefusedError(`Refused to sign ${uri}: no bucket`);
    return { url, bucket, key: rest.join('/') };
  }
  if (url.host.endsWith(`.${endpoint.host}`)) {
    return { url, bucket: url.host.slice(0, -(endpoint.host.length + 1)), key: segments.join('/') };
  }
  throw new SignRefusedError(`Refused to sign ${uri}: not the catalog's storage endpoint`);
}

const inside = (key: string, prefixes: readonly S3Prefix[], bucket: string): boolean =>
  prefixes.some((p) => p.bucket === bucket && (p.keyPrefix === '' || key.startsWith(p.keyPrefix)));

/** The keys of a `DeleteObjects` XML body. */
function deleteKeys(body: string): readonly string[] {
  const decode = (s: string): string => s.replace(/&(lt|gt|amp|quot|apos|#(\d+)|#x([0-9a-f]+));/gi, (_m, name: string, dec?: string, hex?: string) => {
    if (dec !== undefined) return String.fromCodePoint(Number(dec));
    if (hex !== undefined) return String.fromCodePoint(parseInt(hex, 16));
    return ({ lt: '<', gt: '>', amp: '&', quot: '"', apos: "'" } as Record<string, string>)[name.toLowerCase()] ?? '';
  });
  return [...body.matchAll(/<Key>([\s\S]*?)<\/Key>/g)].map((m) => decode(m[1] ?? ''));
}

/**
 * Checks `request` against the table's prefixes and the caller's mode; throws `SignRefusedError`
 * naming the URI when it reaches anything else. Pure.
 */
export function authorizeSign(request: RemoteSignRequest, target: SignTarget, prefixes: readonly S3Prefix[], mode: AccessMode): void {
  const method = request.method.toUpperCase();
  const { url, bucket, key } = addressOf(request.uri, target);
  const write = WRITE_METHODS.has(method);
  if (!write && !READ_METHODS.has(method)) throw new SignRefusedError(`Refused to sign ${request.uri}: method ${method} is not signed`);
  if (write && mode !== 'read-write') throw new SignRefusedError(`Refused to sign ${method} ${request.uri}: the caller may only read this table`);
  if (key === '') {
    // Bucket-level calls: listing inside the table (ListObjectsV2), or a DeleteObjects of its keys.
    if (method === 'GET' && url.searchParams.get('list-type') === '2') {
      const prefix = url.searchParams.get('prefix') ?? '';
      if (!inside(prefix, prefixes, bucket)) throw new SignRefusedError(`Refused to sign ${request.uri}: the listing's prefix is outside the table`);
      return;
    }
    if (method === 'POST' && url.searchParams.has('delete')) {
      const keys = deleteKeys(request.body ?? '');
      if (keys.length === 0) throw new SignRefusedError(`Refused to sign ${request.uri}: DeleteObjects needs its body to check the keys`);
      const outside = keys.find((k) => !inside(k, prefixes, bucket));
      if (outside !== undefined) throw new SignRefusedError(`Refused to sign ${request.uri}: DeleteObjects names ${outside}, outside the table`);
      return;
    }
    throw new SignRefusedError(`Refused to sign ${method} ${request.uri}: bucket-level request`);
  }
  if (!inside(key, prefixes, bucket)) throw new SignRefusedError(`Refused to sign ${request.uri}: outside the table's locations`);
}

/** Signs `request` (already authorized) with `credentials`, SigV4 header auth. */
export async function signS3Request(request: RemoteSignRequest, target: SignTarget, credentials: S3Credentials, now: number): Promise<RemoteSignResult> {
  const url = new URL(request.uri);
  const headers: Record<string, string> = {};
  for (const [name, values] of request.headers) {
    const lower = name.toLowerCase();
    // What the client sent as a signature (or a stale date) is replaced, never passed through.
    if (lower === 'authorization' || lower === 'x-amz-date' || lower === 'x-amz-security-token') continue;
    headers[lower] = values.join(',');
  }
  headers.host = url.host;
  if (headers['x-amz-content-sha256'] === undefined) headers['x-amz-content-sha256'] = 'UNSIGNED-PAYLOAD';
  const query: Record<string, string | string[]> = {};
  for (const [k, v] of url.searchParams) {
    const prev = query[k];
    query[k] = prev === undefined ? v : [...(Array.isArray(prev) ? prev : [prev]), v];
  }
  const signer = new SignatureV4({ service: 's3', region: target.region, credentials, sha256: NodeSha256, uriEscapePath: false, applyChecksum: false });
  const signed = await signer.sign({
    method: request.method.toUpperCase(), protocol: url.protocol, hostname: url.hostname, ...(url.port !== '' ? { port: Number(url.port) } : {}),
    path: url.pathname, query, headers,
  }, { signingDate: new Date(now) });
  const out = new Map<string, readonly string[]>();
  for (const [k, v] of Object.entries(signed.headers)) out.set(k, [v]);
  return { uri: request.uri, headers: out, expiresAtMs: now + SIGNATURE_VALIDITY_MS };
}
