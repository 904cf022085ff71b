/**
 * Remote signing of S3 requests (Iceberg's `RemoteSignRequest` → `RemoteSignResult`): the client
 * holds no key and asks Floe to sign each request; Floe signs with the catalog's own keys (SigV4
 * through `@smithy/signature-v4`) only what lies inside the table's prefixes, in the caller's mode.
 *
 * What is refused (before anything is signed): a URI on another host or bucket, a key outside
 * the table's prefixes, `.`/`..` segments, encoded slashes or backslashes (a store or proxy could
 * read them as separators), a write for a read-only caller, a listing whose prefix is outside the
 * table, a `DeleteObjects` body naming a key outside the table, and any other bucket-level call;
 * a sub-resource other than the multipart calls' (`?acl`, `?tagging`, `?restore`, `?select`…), and
 * headers that reach beyond the table or widen who may read it (`x-amz-copy-source*`: a server-side
 * copy reads its source with the catalog's keys; `x-amz-acl`, `x-amz-grant-*`, `x-amz-tagging`,
 * object-lock headers). A `DeleteObjects` is signed over its body's SHA-256, so the store refuses
 * any body but the one checked. What is signed is thus never more than a vended session could do.
 */
import { createHash, createHmac } from 'node:crypto';
import { ALGORITHM_IDENTIFIER, SignatureV4, SignatureV4Base, createScope, getCanonicalHeaders, getSigningKey } from '@smithy/signature-v4';
import type { S3Credentials } from './s3-file-io.js';
import type { AccessMode, S3Prefix } from './s3-vending.js';

/** SigV4 requests are accepted by S3 for 15 minutes after their `X-Amz-Date`. */
export const SIGNATURE_VALIDITY_MS = 15 * 60_000;

export interface SignTarget {
  /** The store's endpoint (`http://127.0.0.1:7480`), or null for AWS (`s3.<region>.amazonaws.com`). */
  readonly endpoint: string | null;
  readonly region: string;
  /** The host (and port) requests to the store go to: the endpoint's, or AWS's for the region. */
  readonly host: string;
}

/** The sign target of a store: its endpoint parsed once, not on every signature. */
export function signTargetOf(endpoint: string | null, region: string): SignTarget {
  return { endpoint, region, host: (endpoint !== null ? new URL(endpoint) : new URL(`https://s3.${region}.amazonaws.com`)).host };
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

/**
 * Query parameters of the object requests Floe signs: Get/Head/Put/DeleteObject, the multipart
 * calls (`uploads`, `uploadId`, `partNumber`), GetObject's response overrides, and `x-id`, which
 * the AWS SDK for JavaScript adds to every request. Any other one is a sub-resource (`acl`,
 * `tagging`, `retention`, `legal-hold`, `restore`, `select`, `torrent`, `attributes`…) whose
 * action a vended session would not have either.
 */
const OBJECT_PARAMS: ReadonlySet<string> = new Set([
  'x-id', 'versionId', 'partNumber', 'uploadId', 'uploads', 'response-cache-control', 'response-content-disposition',
  'response-content-encoding', 'response-content-language', 'response-content-type', 'response-expires',
]);
/** ListObjectsV2's parameters. */
const LIST_PARAMS: ReadonlySet<string> = new Set(['x-id', 'list-type', 'prefix', 'continuation-token', 'start-after', 'delimiter', 'max-keys', 'encoding-type', 'fetch-owner']);
/** DeleteObjects' parameters. */
const DELETE_OBJECTS_PARAMS: ReadonlySet<string> = new Set(['x-id', 'delete']);

/**
 * Headers that make a request reach beyond the key it names or change who may read it: a copy
 * (`x-amz-copy-source` on PutObject or UploadPartCopy) reads its source with the catalog's keys,
 * wherever it is; ACLs and grants can make a table's files public; tags feed tag-based policies;
 * object locks keep files from being deleted. Vended sessions are not granted any of these.
 */
function refusedHeader(name: string): boolean {
  return name.startsWith('x-amz-copy-source') || name === 'x-amz-acl' || name.startsWith('x-amz-grant-') || name === 'x-amz-tagging'
    || name.startsWith('x-amz-object-lock-') || name === 'x-amz-bypass-governance-retention';
}

function checkParams(request: RemoteSignRequest, url: URL, allowed: ReadonlySet<string>): void {
  for (const name of url.searchParams.keys()) {
    if (!allowed.has(name)) throw new SignRefusedError(`Refused to sign ${request.method.toUpperCase()} ${request.uri}: the sub-resource or parameter '${name}' is not signed`);
  }
}

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
  // Most keys have nothing encoded: then no segment needs decoding, and only a literal `.`/`..` is a dot segment.
  const encoded = rawPath.includes('%') || rawPath.includes('\\');
  if (rawSegments.some((s) => s === '..' || s === '.' || (encoded && /^%2e%2e$|^%2e$|^\.%2e$|^%2e\.$/i.test(s)))) throw new SignRefusedError(`Refused to sign ${uri}: '.' or '..' in the path`);
  const segments = encoded ? rawSegments.map((s) => decodeSegment(s, uri)) : rawSegments;
  if (url.host === target.host) {
    const [bucket = '', ...rest] = segments;
    if (bucket === '') throw new SignRefusedError(`Refused to sign ${uri}: no bucket`);
    return { url, bucket, key: rest.join('/') };
  }
  if (url.host.endsWith(`.${target.host}`)) {
    return { url, bucket: url.host.slice(0, -(target.host.length + 1)), key: segments.join('/') };
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
 * naming the URI when it reaches anything else. Pure. Returns the URI parsed, for the signer.
 */
export function authorizeSign(request: RemoteSignRequest, target: SignTarget, prefixes: readonly S3Prefix[], mode: AccessMode): URL {
  const method = request.method.toUpperCase();
  const { url, bucket, key } = addressOf(request.uri, target);
  const write = WRITE_METHODS.has(method);
  if (!write && !READ_METHODS.has(method)) throw new SignRefusedError(`Refused to sign ${request.uri}: method ${method} is not signed`);
  if (write && mode !== 'read-write') throw new SignRefusedError(`Refused to sign ${method} ${request.uri}: the caller may only read this table`);
  for (const name of request.headers.keys()) {
    const lower = name.toLowerCase();
    if (refusedHeader(lower)) throw new SignRefusedError(`Refused to sign ${method} ${request.uri}: header ${lower} is not signed (it would reach beyond the table or change who may read it)`);
  }
  if (key === '') {
    // Bucket-level calls: listing inside the table (ListObjectsV2), or a DeleteObjects of its keys.
    if (method === 'GET' && url.searchParams.get('list-type') === '2') {
      checkParams(request, url, LIST_PARAMS);
      const prefix = url.searchParams.get('prefix') ?? '';
      if (!inside(prefix, prefixes, bucket)) throw new SignRefusedError(`Refused to sign ${request.uri}: the listing's prefix is outside the table`);
      return url;
    }
    if (method === 'POST' && url.searchParams.has('delete')) {
      checkParams(request, url, DELETE_OBJECTS_PARAMS);
      const keys = deleteKeys(request.body ?? '');
      if (keys.length === 0) throw new SignRefusedError(`Refused to sign ${request.uri}: DeleteObjects needs its body to check the keys`);
      const outside = keys.find((k) => !inside(k, prefixes, bucket));
      if (outside !== undefined) throw new SignRefusedError(`Refused to sign ${request.uri}: DeleteObjects names ${outside}, outside the table`);
      return url;
    }
    throw new SignRefusedError(`Refused to sign ${method} ${request.uri}: bucket-level request`);
  }
  if (!inside(key, prefixes, bucket)) throw new SignRefusedError(`Refused to sign ${request.uri}: outside the table's locations`);
  checkParams(request, url, OBJECT_PARAMS);
  return url;
}

/** Headers the signer makes itself: what a client sent under these names is dropped, never signed over. */
const GENERATED_HEADERS: ReadonlySet<string> = new Set(['authorization', 'x-amz-date', 'date', 'x-amz-security-token']);

/** The request shape of the SDK's signer and canonicalization. */
type SdkRequest = Parameters<typeof getCanonicalHeaders>[0];

/**
 * What is signed of `request` (Floe's policy, whichever signer runs): the client's headers in
 * lower case without the generated ones, the host, the payload hash (UNSIGNED-PAYLOAD unless the
 * client sent one; a DeleteObjects' body hash), the method and the URI's path and query.
 */
function toSign(request: RemoteSignRequest, url: URL): SdkRequest & { headers: Record<string, string> } {
  const headers: Record<string, string> = {};
  for (const [name, values] of request.headers) {
    const lower = name.toLowerCase();
    // What the client sent as a signature (or a stale date) is replaced, never passed through.
    if (GENERATED_HEADERS.has(lower)) continue;
    headers[lower] = values.join(',');
  }
  headers.host = url.host;
  headers['x-amz-content-sha256'] ??= 'UNSIGNED-PAYLOAD';
  const method = request.method.toUpperCase();
  // A DeleteObjects was authorized for the keys in its body: sign over that body's hash, so the
  // store refuses any other body (with UNSIGNED-PAYLOAD a client could swap it after signing).
  if (request.body !== undefined && method === 'POST' && url.searchParams.has('delete')) {
    headers['x-amz-content-sha256'] = createHash('sha256').update(request.body, 'utf8').digest('hex');
  }
  const query: Record<string, string | string[]> = {};
  for (const [k, v] of url.searchParams) {
    const prev = query[k];
    query[k] = prev === undefined ? v : [...(Array.isArray(prev) ? prev : [prev]), v];
  }
  return {
    method, protocol: url.protocol, hostname: url.hostname, ...(url.port !== '' ? { port: Number(url.port) } : {}),
    path: url.pathname, query, headers,
  };
}

function resultOf(request: RemoteSignRequest, headers: Record<string, string>, now: number): RemoteSignResult {
  const out = new Map<string, readonly string[]>();
  for (const [k, v] of Object.entries(headers)) out.set(k, [v]);
  return { uri: request.uri, headers: out, expiresAtMs: now + SIGNATURE_VALIDITY_MS };
}

/**
 * Signs requests (already authorized) for one store with one set of keys, SigV4 header auth. One
 * per catalog (its keys never change). The SDK's `SignatureV4Base` writes the canonical request
 * and its `getSigningKey` derives the signing key; this class keeps that key for the day (the
 * SDK's `SignatureV4.sign` computes an HMAC of the keys on every call to look its cache up) and
 * computes the two hashes left per request with node:crypto, without the SDK's per-call request
 * copies and awaits: about a third of the SDK's cost. It signs exactly as `SignatureV4.sign` does
 * (`signWithSdk`, compared in s3-signing.test.ts), and RGW checks its signatures in the tests.
 */
export class S3RequestSigner extends SignatureV4Base {
  #day: { readonly shortDate: string; readonly key: Promise<Uint8Array> } | undefined;
  /** The SDK's date strings of the last second signed in (thousands of signatures share one). */
  #second: { readonly second: number; readonly longDate: string; readonly shortDate: string } | undefined;

  constructor(private readonly target: SignTarget, private readonly credentials: S3Credentials) {
    super({ service: 's3', region: target.region, credentials, sha256: NodeSha256, uriEscapePath: false, applyChecksum: false });
  }

  /** The signing key of `shortDate` (YYYYMMDD), derived once per day. */
  private signingKey(shortDate: string): Promise<Uint8Array> {
    if (this.#day?.shortDate !== shortDate) this.#day = { shortDate, key: getSigningKey(NodeSha256, this.credentials, shortDate, this.target.region, 's3') };
    return this.#day.key;
  }

  private datesOf(now: number): { readonly longDate: string; readonly shortDate: string } {
    const second = Math.floor(now / 1000);
    if (this.#second?.second !== second) this.#second = { second, ...this.formatDate(new Date(second * 1000)) };
    return this.#second;
  }

  /** Signs `request`; `url` is its URI parsed (as `authorizeSign` returns it). */
  async sign(request: RemoteSignRequest, now: number, url: URL = new URL(request.uri)): Promise<RemoteSignResult> {
    const signing = toSign(request, url);
    const { longDate, shortDate } = this.datesOf(now);
    signing.headers['x-amz-date'] = longDate;
    if (this.credentials.sessionToken) signing.headers['x-amz-security-token'] = this.credentials.sessionToken;
    const canonicalHeaders = getCanonicalHeaders(signing);
    const canonicalRequest = this.createCanonicalRequest(signing, canonicalHeaders, signing.headers['x-amz-content-sha256']!);
    const scope = createScope(shortDate, this.target.region, 's3');
    const stringToSign = `${ALGORITHM_IDENTIFIER}\n${longDate}\n${scope}\n${createHash('sha256').update(canonicalRequest).digest('hex')}`;
    const signature = createHmac('sha256', await this.signingKey(shortDate)).update(stringToSign).digest('hex');
    signing.headers.authorization = `${ALGORITHM_IDENTIFIER} Credential=${this.credentials.accessKeyId}/${scope}, SignedHeaders=${this.getCanonicalHeaderList(canonicalHeaders)}, Signature=${signature}`;
    return resultOf(request, signing.headers, now);
  }
}

/**
 * Signs `request` with the SDK's own `SignatureV4.sign`, a new signer per call: the reference
 * `S3RequestSigner` is held to (s3-signing.test.ts).
 */
export async function signWithSdk(request: RemoteSignRequest, target: SignTarget, credentials: S3Credentials, now: number): Promise<RemoteSignResult> {
  const signer = new SignatureV4({ service: 's3', region: target.region, credentials, sha256: NodeSha256, uriEscapePath: false, applyChecksum: false });
  const signed = await signer.sign(toSign(request, new URL(request.uri)), { signingDate: new Date(now), signingRegion: target.region });
  return resultOf(request, signed.headers, now);
}
