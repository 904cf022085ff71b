/**
 * A local stand-in for Google Cloud Storage that CHECKS what Floe sends. No GCS emulator runs here
 * (docs/storage.md), so the GCS FileIO and GCS vending are tested against this server: it is not
 * GCS, it implements the subset of the JSON API that `@google-cloud/storage` uses for Floe's
 * operations and refuses anything it does not expect, so a wrong request fails a test instead of
 * passing silently.
 *
 * - Storage JSON API: objects insert (`uploadType=media`, `multipart`, `resumable` with 256 KiB
 *   chunk rules), get (metadata; `alt=media` with `Range`), list (`prefix`, `pageToken`,
 *   `maxResults`), delete; generations and `ifGenerationMatch` (0 = create-if-absent → 412).
 *   Every request needs a Bearer token this server issued and not expired, a known bucket, and only
 *   query parameters that operation takes, each well-formed.
 * - OAuth2 token endpoint (`/token`): the service-account JWT-bearer grant; the assertion's RS256
 *   signature is verified against the test key pair, its `iss`, `aud`, `scope` and lifetime checked.
 * - STS token exchange (`/sts/v1/token`, the shape of `https://sts.googleapis.com/v1/token`): the
 *   Credential Access Boundary is validated (rules, `//storage.googleapis.com/projects/_/buckets/<b>`,
 *   storage roles, and the CEL condition parsed as far as the shapes Floe emits); the downscoped
 *   token it returns is then enforced by the storage endpoints (objects outside the boundary → 403).
 * - V4 signed URLs (the XML API's `/<bucket>/<object>?X-Goog-Algorithm=GOOG4-RSA-SHA256&…`, PUT
 *   and GET): the canonical request and string to sign are rebuilt from the request received, as
 *   Google's documentation describes them ("Signature V4 signing process"), independently of the
 *   SDK that signed, and the RSA-SHA256 signature is verified with the service account's public
 *   key. Refused: another signer, a malformed credential scope, an expired URL (400
 *   `ExpiredToken`), any difference in method, path, query or signed headers (403
 *   `SignatureDoesNotMatch`), and a body outside `x-goog-content-length-range` (400). One liberty:
 *   the SDK signs the `host` header as the endpoint's host name without its port (GCS is always on
 *   the default port), so the port of the Host header received is left out of the canonical
 *   `host` here.
 * - Resumable sessions honour `X-Upload-Content-Length` (the upload fails unless its total is that),
 *   answer a status query after they finished (200 with the object), and are cancelled by DELETE
 *   (499).
 * - Every request is recorded (`requests`, `boundaries`) for assertions; `failNext` injects
 *   429/5xx answers for retry tests.
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createHash, generateKeyPairSync, randomBytes, randomUUID, verify as verifySignature, type KeyObject } from 'node:crypto';
import { jwtVerify } from 'jose';

/** The permissions a boundary rule may grant (the predefined storage roles Floe asks for). */
export type GcsRole = 'roles/storage.objectViewer' | 'roles/storage.objectCreator' | 'roles/storage.objectAdmin';
const ROLES: ReadonlySet<string> = new Set<GcsRole>(['roles/storage.objectViewer', 'roles/storage.objectCreator', 'roles/storage.objectAdmin']);

/** One alternative of a parsed availability condition. */
export type ConditionTerm =
  | { readonly kind: 'object-name-prefix'; readonly prefix: string } // resource.name.startsWith('projects/_/buckets/b/objects/<p>')
  | { readonly kind: 'list-prefix'; readonly prefix: string }; // api.getAttribute('storage.googleapis.com/objectListPrefix', '').startsWith('<p>')

export interface BoundaryRule {
  readonly bucket: string;
  readonly roles: readonly GcsRole[];
  /** null: no condition (the whole bucket). */
  readonly condition: readonly ConditionTerm[] | null;
  readonly expression: string | null;
}

/** A boundary the STS endpoint accepted, as received and as understood. */
export interface ReceivedBoundary {
  readonly raw: unknown;
  readonly rules: readonly BoundaryRule[];
  readonly token: string;
}

type TokenGrant =
  | { readonly kind: 'service-account'; readonly email: string; readonly expiresAtMs: number }
  | { readonly kind: 'downscoped'; readonly rules: readonly BoundaryRule[]; readonly expiresAtMs: number };

export interface RecordedRequest {
  readonly method: string;
  readonly path: string;
  readonly query: Readonly<Record<string, string>>;
  readonly bucket: string | null;
  readonly object: string | null;
  readonly token: 'service-account' | 'downscoped' | 'signed-url' | 'none' | 'unknown';
  status: number;
}

interface StoredObject {
  readonly bytes: Buffer;
  readonly generation: number;
  readonly updatedMs: number;
  readonly contentType: string;
}

interface ResumableSession {
  readonly bucket: string;
  readonly name: string;
  readonly ifGenerationMatch: number | undefined;
  readonly contentType: string;
  /** `X-Upload-Content-Length` of the POST that opened it: the upload must total exactly this. */
  readonly declaredLength: number | undefined;
  readonly chunks: Buffer[];
  received: number;
}

export interface GcsFault {
  readonly status: number;
  /** Only requests with this method fail (default: any). */
  readonly method?: string;
  /** Only storage requests fail (default true): token and STS endpoints are left alone. */
  readonly storageOnly?: boolean;
}

export interface GcsServiceAccountKey {
  readonly type: 'service_account';
  readonly project_id: string;
  readonly private_key_id: string;
  readonly private_key: string;
  readonly client_email: string;
  readonly client_id: string;
  readonly token_uri: string;
}

export interface GcsCheckingServer {
  /** `http://127.0.0.1:<port>`: the storage `apiEndpoint`. */
  readonly endpoint: string;
  /** The OAuth2 token endpoint (the service-account key's `token_uri`). */
  readonly tokenUri: string;
  /** The STS token-exchange endpoint. */
  readonly stsEndpoint: string;
  readonly projectId: string;
  /** A service-account JSON key whose signatures this server accepts. */
  readonly serviceAccountKey: GcsServiceAccountKey;
  readonly requests: RecordedRequest[];
  readonly boundaries: ReceivedBoundary[];
  /** JWT-bearer exchanges answered (how often the client fetched a token). */
  readonly tokenGrants: () => number;
  createBucket(name: string): void;
  /** Object names in a bucket, sorted. */
  objectNames(bucket: string): string[];
  /** A full-access token, as if exchanged by the service account (for direct checks). */
  issueToken(lifetimeMs?: number): string;
  /** Expires every token issued so far (the next request with one gets 401). */
  expireAllTokens(): void;
  /** The next `count` matching requests are answered with `fault.status`. */
  failNext(count: number, fault: GcsFault): void;
  /** Faults injected so far. */
  faults(): number;
  close(): Promise<void>;
}

const MIN_CHUNK = 256 * 1024;
const JWT_BEARER = 'urn:ietf:params:oauth:grant-type:jwt-bearer';
const TOKEN_EXCHANGE = 'urn:ietf:params:oauth:grant-type:token-exchange';
const ACCESS_TOKEN_TYPE = 'urn:ietf:params:oauth:token-type:access_token';
const STORAGE_SCOPES: ReadonlySet<string> = new Set([
  'https://www.googleapis.com/auth/devstorage.full_control',
  'https://www.googleapis.com/auth/devstorage.read_write',
  'https://www.googleapis.com/auth/cloud-platform',
]);

// ---------------------------------------------------------------------------------------------
// CRC32C (Castagnoli), for the object resources' `crc32c` and `x-goog-hash`, which the SDK checks.

const CRC32C_TABLE = (() => {
  const table = new Uint32Array(256);
  for (let i = 0; i < 256; i++) {
    let c = i;
    for (let k = 0; k < 8; k++) c = c & 1 ? 0x82f63b78 ^ (c >>> 1) : c >>> 1;
    table[i] = c >>> 0;
  }
  return table;
})();

function crc32c(bytes: Buffer): string {
  let c = 0xffffffff;
  for (const b of bytes) c = (CRC32C_TABLE[(c ^ b) & 0xff] as number) ^ (c >>> 8);
  const out = Buffer.alloc(4);
  out.writeUInt32BE((c ^ 0xffffffff) >>> 0);
  return out.toString('base64');
}

const md5 = (bytes: Buffer): string => createHash('md5').update(bytes).digest('base64');

// ---------------------------------------------------------------------------------------------
// The CEL condition, as far as the shapes Floe emits.

class BoundaryError extends Error {}

/** Reads a single-quoted CEL string literal at `i`; returns its value and the index after it. */
function readCelString(s: string, i: number): { value: string; end: number } {
  if (s[i] !== "'") throw new BoundaryError(`expected a single-quoted string at ${i}`);
  let value = '';
  let j = i + 1;
  for (;;) {
    const c = s[j];
    if (c === undefined) throw new BoundaryError('unterminated string literal');
    if (c === "'") return { value, end: j + 1 };
    if (c === '\n' || c === '\r') throw new BoundaryError('a raw line break inside a string literal');
    if (c !== '\\') {
      value += c;
      j++;
      continue;
    }
    const e = s[j + 1];
    switch (e) {
      case '\\': value += '\\'; j += 2; break;
      case "'": value += "'"; j += 2; break;
      case '"': value += '"'; j += 2; break;
      case 'n': value += '\n'; j += 2; break;
      case 'r': value += '\r'; j += 2; break;
      case 't': value += '\t'; j += 2; break;
      case 'u': {
        const hex = s.slice(j + 2, j + 6);
        if (!/^[0-9a-fA-F]{4}$/.test(hex)) throw new BoundaryError('a malformed \\u escape');
        value += String.fromCharCode(parseInt(hex, 16));
        j += 6;
        break;
      }
      default:
        throw new BoundaryError(`an unknown escape \\${e ?? ''}`);
    }
  }
}

const OBJECT_TERM = 'resource.name.startsWith(';
const LIST_TERM = "api.getAttribute('storage.googleapis.com/objectListPrefix', '').startsWith(";

/** `term (|| term)*`, nothing else; each term a startsWith over a string literal. */
export function parseCondition(expression: string, bucket: string): ConditionTerm[] {
  const terms: ConditionTerm[] = [];
  let i = 0;
  const skip = (): void => {
    while (expression[i] === ' ') i++;
  };
  const objectBase = `projects/_/buckets/${bucket}/objects/`;
  for (;;) {
    skip();
    let kind: ConditionTerm['kind'];
    if (expression.startsWith(OBJECT_TERM, i)) {
      kind = 'object-name-prefix';
      i += OBJECT_TERM.length;
    } else if (expression.startsWith(LIST_TERM, i)) {
      kind = 'list-prefix';
      i += LIST_TERM.length;
    } else {
      throw new BoundaryError(`unexpected expression at ${i}: ${JSON.stringify(expression.slice(i, i + 40))}`);
    }
    const { value, end } = readCelString(expression, i);
    i = end;
    if (expression[i] !== ')') throw new BoundaryError(`expected ')' at ${i}`);
    i++;
    if (kind === 'object-name-prefix') {
      if (!value.startsWith(objectBase)) throw new BoundaryError(`resource.name prefix ${JSON.stringify(value)} is not inside ${objectBase}`);
      terms.push({ kind, prefix: value.slice(objectBase.length) });
    } else {
      terms.push({ kind, prefix: value });
    }
    skip();
    if (i === expression.length) return terms;
    if (!expression.startsWith('||', i)) throw new BoundaryError(`expected '||' at ${i}: ${JSON.stringify(expression.slice(i, i + 40))}`);
    i += 2;
  }
}

function parseBoundary(optionsText: string): BoundaryRule[] {
  let options: unknown;
  try {
    options = JSON.parse(optionsText);
  } catch {
    throw new BoundaryError('options is not JSON');
  }
  const ab = (options as { accessBoundary?: unknown } | null)?.accessBoundary as { accessBoundaryRules?: unknown } | undefined;
  if (ab === undefined || ab === null || typeof ab !== 'object') throw new BoundaryError('options.accessBoundary is missing');
  const extraAb = Object.keys(ab).filter((k) => k !== 'accessBoundaryRules');
  if (extraAb.length > 0) throw new BoundaryError(`unknown fields in accessBoundary: ${extraAb.join(', ')}`);
  const rules = ab.accessBoundaryRules;
  if (!Array.isArray(rules) || rules.length === 0) throw new BoundaryError('accessBoundaryRules must be a non-empty array');
  if (rules.length > 10) throw new BoundaryError('at most 10 access boundary rules');
  return rules.map((r: unknown, n): BoundaryRule => {
    if (r === null || typeof r !== 'object') throw new BoundaryError(`rule ${n} is not an object`);
    const rule = r as Record<string, unknown>;
    const extra = Object.keys(rule).filter((k) => !['availableResource', 'availablePermissions', 'availabilityCondition'].includes(k));
    if (extra.length > 0) throw new BoundaryError(`unknown fields in rule ${n}: ${extra.join(', ')}`);
    const resource = rule.availableResource;
    const m = typeof resource === 'string' ? /^\/\/storage\.googleapis\.com\/projects\/_\/buckets\/([a-z0-9][a-z0-9._-]{1,220}[a-z0-9])$/.exec(resource) : null;
    if (m === null) throw new BoundaryError(`rule ${n}: availableResource must be //storage.googleapis.com/projects/_/buckets/<bucket>, got ${JSON.stringify(resource)}`);
    const bucket = m[1] as string;
    const perms = rule.availablePermissions;
    if (!Array.isArray(perms) || perms.length === 0) throw new BoundaryError(`rule ${n}: availablePermissions must be a non-empty array`);
    const roles = perms.map((p: unknown) => {
      if (typeof p !== 'string' || !p.startsWith('inRole:') || !ROLES.has(p.slice('inRole:'.length))) throw new BoundaryError(`rule ${n}: unsupported permission ${JSON.stringify(p)}`);
      return p.slice('inRole:'.length) as GcsRole;
    });
    const cond = rule.availabilityCondition;
    if (cond === undefined) return { bucket, roles, condition: null, expression: null };
    if (cond === null || typeof cond !== 'object') throw new BoundaryError(`rule ${n}: availabilityCondition must be an object`);
    const c = cond as Record<string, unknown>;
    const extraC = Object.keys(c).filter((k) => !['expression', 'title', 'description'].includes(k));
    if (extraC.length > 0) throw new BoundaryError(`unknown fields in rule ${n}'s condition: ${extraC.join(', ')}`);
    if (typeof c.expression !== 'string' || c.expression === '') throw new BoundaryError(`rule ${n}: availabilityCondition.expression must be a non-empty string`);
    return { bucket, roles, condition: parseCondition(c.expression, bucket), expression: c.expression };
  });
}

type Operation = 'get' | 'list' | 'create' | 'overwrite' | 'delete';

/** Whether a downscoped token may do `op` on `name` (or, for a list, under the listed `prefix`). */
function boundaryAllows(rules: readonly BoundaryRule[], bucket: string, op: Operation, target: string): boolean {
  const roleGrants = (role: GcsRole): boolean => {
    switch (role) {
      case 'roles/storage.objectViewer':
        return op === 'get' || op === 'list';
      case 'roles/storage.objectCreator':
        return op === 'create';
      case 'roles/storage.objectAdmin':
        return true;
    }
  };
  return rules.some((r) => {
    if (r.bucket !== bucket || !r.roles.some(roleGrants)) return false;
    if (r.condition === null) return true;
    // resource.name of a list is the bucket (no object prefix term can match it), and the list
    // prefix attribute of an object request is '' (a term with a non-empty prefix cannot match).
    const resourceName = op === 'list' ? `projects/_/buckets/${bucket}` : `projects/_/buckets/${bucket}/objects/${target}`;
    const listPrefix = op === 'list' ? target : '';
    return r.condition.some((t) => (t.kind === 'object-name-prefix' ? resourceName.startsWith(`projects/_/buckets/${bucket}/objects/${t.prefix}`) : listPrefix.startsWith(t.prefix)));
  });
}

// ---------------------------------------------------------------------------------------------

class HttpFailure extends Error {
  constructor(
    readonly status: number,
    message: string,
    readonly reason = 'invalid',
  ) {
    super(message);
  }
}

async function readBody(req: IncomingMessage): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const c of req) chunks.push(c as Buffer);
  return Buffer.concat(chunks);
}

function json(res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
  const text = JSON.stringify(body);
  res.writeHead(status, { 'content-type': 'application/json; charset=UTF-8', 'content-length': Buffer.byteLength(text), ...headers });
  res.end(text);
}

function checkParams(query: Readonly<Record<string, string>>, allowed: readonly string[], what: string): void {
  // Parameters the SDK adds to every request, harmless to any operation.
  const common = ['prettyPrint', 'userProject', 'alt', 'fields', 'projection'];
  for (const k of Object.keys(query)) {
    if (!allowed.includes(k) && !common.includes(k)) throw new HttpFailure(400, `unexpected query parameter '${k}' for ${what}`);
  }
  for (const k of ['ifGenerationMatch', 'ifGenerationNotMatch', 'ifMetagenerationMatch', 'maxResults', 'generation']) {
    const v = query[k];
    if (v !== undefined && !/^\d{1,19}$/.test(v)) throw new HttpFailure(400, `malformed ${k}=${JSON.stringify(v)}`);
  }
  if (query.projection !== undefined && !['full', 'noAcl'].includes(query.projection)) throw new HttpFailure(400, `malformed projection=${query.projection}`);
  if (query.alt !== undefined && !['json', 'media'].includes(query.alt)) throw new HttpFailure(400, `malformed alt=${query.alt}`);
}

/** Splits a `multipart/related` body into its parts' (headers, body). */
function parseMultipart(body: Buffer, contentType: string): { headers: string; body: Buffer }[] {
  const m = /boundary="?([^";]+)"?/.exec(contentType);
  if (m === null) throw new HttpFailure(400, 'multipart upload without a boundary');
  const delimiter = Buffer.from(`--${m[1]}`);
  const parts: { headers: string; body: Buffer }[] = [];
  let at = body.indexOf(delimiter);
  if (at === -1) throw new HttpFailure(400, 'multipart body without its boundary');
  for (;;) {
    const start = at + delimiter.length;
    if (body.subarray(start, start + 2).toString() === '--') break;
    const next = body.indexOf(delimiter, start);
    if (next === -1) throw new HttpFailure(400, 'multipart body not closed');
    let part = body.subarray(start, next);
    if (part.subarray(0, 2).toString() === '\r\n') part = part.subarray(2);
    if (part.subarray(part.length - 2).toString() === '\r\n') part = part.subarray(0, part.length - 2);
    const split = part.indexOf('\r\n\r\n');
    if (split === -1) throw new HttpFailure(400, 'multipart part without headers');
    parts.push({ headers: part.subarray(0, split).toString(), body: part.subarray(split + 4) });
    at = next;
  }
  return parts;
}

/** An XML API error, as GCS answers signed-URL requests. */
function xmlError(res: ServerResponse, status: number, code: string, message: string): void {
  const esc = (v: string) => v.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
  const text = `<?xml version='1.0' encoding='UTF-8'?><Error><Code>${esc(code)}</Code><Message>${esc(message)}</Message></Error>`;
  res.writeHead(status, { 'content-type': 'application/xml; charset=UTF-8', 'content-length': Buffer.byteLength(text) });
  res.end(text);
}

class XmlFailure extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
  ) {
    super(message);
  }
}

/** RFC 3986 percent-encoding of everything but unreserved characters (and `/` when `keepSlash`). */
function percentEncode(value: string, keepSlash: boolean): string {
  const encoded = encodeURIComponent(value).replace(/[!'()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`);
  return keepSlash ? encoded.replace(/%2F/g, '/') : encoded;
}

const MAX_SIGNED_URL_SECONDS = 7 * 24 * 3600;

export async function startGcsCheckingServer(options: { readonly projectId?: string } = {}): Promise<GcsCheckingServer> {
  const projectId = options.projectId ?? 'floe-test-project';
  const { privateKey, publicKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
  const keyId = randomBytes(20).toString('hex');
  const clientEmail = `floe-test@${projectId}.iam.gserviceaccount.com`;
  const buckets = new Map<string, Map<string, StoredObject>>();
  const tokens = new Map<string, TokenGrant>();
  const sessions = new Map<string, ResumableSession>();
  /** Sessions that finished: a status query answers with the object they stored. */
  const finished = new Map<string, { readonly bucket: string; readonly resource: Record<string, unknown> }>();
  /** Sessions cancelled by DELETE: their URI is known, and leads nowhere (404). */
  const cancelled = new Set<string>();
  const requests: RecordedRequest[] = [];
  const boundaries: ReceivedBoundary[] = [];
  const pendingFaults: GcsFault[] = [];
  let faultCount = 0;
  let grants = 0;
  let generation = Date.now() * 1000;
  let endpoint = '';

  const issue = (grant: TokenGrant): string => {
    const token = `ya29.test-${randomBytes(24).toString('base64url')}`;
    tokens.set(token, grant);
    return token;
  };

  const tokenEndpoint = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    const form = new URLSearchParams((await readBody(req)).toString());
    if (!(req.headers['content-type'] ?? '').startsWith('application/x-www-form-urlencoded')) throw new HttpFailure(400, 'the token request must be form-encoded');
    if (form.get('grant_type') !== JWT_BEARER) return json(res, 400, { error: 'unsupported_grant_type', error_description: `grant_type must be ${JWT_BEARER}` });
    const assertion = form.get('assertion') ?? '';
    let payload;
    try {
      ({ payload } = await jwtVerify(assertion, publicKey as KeyObject, { algorithms: ['RS256'], issuer: clientEmail, audience: `${endpoint}/token` }));
    } catch (e) {
      return json(res, 400, { error: 'invalid_grant', error_description: `Invalid JWT Signature or claims: ${(e as Error).message}` });
    }
    const { iat, exp, scope } = payload as { iat?: number; exp?: number; scope?: string };
    if (typeof iat !== 'number' || typeof exp !== 'number' || exp - iat > 3600 || exp <= iat) return json(res, 400, { error: 'invalid_grant', error_description: 'Invalid JWT: iat/exp missing or lifetime above 1 h' });
    if (typeof scope !== 'string' || !scope.split(' ').some((s) => STORAGE_SCOPES.has(s))) return json(res, 400, { error: 'invalid_scope', error_description: `no storage scope in ${JSON.stringify(scope)}` });
    grants++;
    const token = issue({ kind: 'service-account', email: clientEmail, expiresAtMs: Date.now() + 3600_000 });
    json(res, 200, { access_token: token, expires_in: 3599, token_type: 'Bearer' });
  };

  const stsEndpointHandler = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    const raw = (await readBody(req)).toString();
    const ct = req.headers['content-type'] ?? '';
    let form: URLSearchParams;
    if (ct.startsWith('application/x-www-form-urlencoded')) form = new URLSearchParams(raw);
    else if (ct.startsWith('application/json')) {
      const o = JSON.parse(raw) as Record<string, unknown>;
      form = new URLSearchParams();
      for (const [k, v] of Object.entries(o)) form.set(k.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`), typeof v === 'string' ? v : JSON.stringify(v));
    } else throw new HttpFailure(400, 'the STS request must be form-encoded or JSON');
    const bad = (description: string): void => json(res, 400, { error: 'invalid_request', error_description: description });
    if (form.get('grant_type') !== TOKEN_EXCHANGE) return bad(`grant_type must be ${TOKEN_EXCHANGE}`);
    if (form.get('subject_token_type') !== ACCESS_TOKEN_TYPE) return bad(`subject_token_type must be ${ACCESS_TOKEN_TYPE}`);
    if (form.get('requested_token_type') !== ACCESS_TOKEN_TYPE) return bad(`requested_token_type must be ${ACCESS_TOKEN_TYPE}`);
    const subject = tokens.get(form.get('subject_token') ?? '');
    if (subject === undefined || subject.expiresAtMs <= Date.now()) return json(res, 401, { error: 'invalid_grant', error_description: 'The subject token is not valid' });
    if (subject.kind !== 'service-account') return bad('a downscoped token cannot be downscoped again here');
    const optionsText = form.get('options');
    if (optionsText === null) return bad('options (the Credential Access Boundary) is missing');
    let rules: BoundaryRule[];
    try {
      rules = parseBoundary(optionsText);
    } catch (e) {
      return bad(`Invalid Credential Access Boundary: ${(e as Error).message}`);
    }
    const token = issue({ kind: 'downscoped', rules, expiresAtMs: subject.expiresAtMs });
    boundaries.push({ raw: JSON.parse(optionsText), rules, token });
    json(res, 200, { access_token: token, issued_token_type: ACCESS_TOKEN_TYPE, token_type: 'Bearer', expires_in: Math.floor((subject.expiresAtMs - Date.now()) / 1000) });
  };

  const objectResource = (bucket: string, name: string, o: StoredObject): Record<string, unknown> => ({
    kind: 'storage#object',
    id: `${bucket}/${name}/${o.generation}`,
    selfLink: `${endpoint}/storage/v1/b/${bucket}/o/${encodeURIComponent(name)}`,
    mediaLink: `${endpoint}/download/storage/v1/b/${bucket}/o/${encodeURIComponent(name)}?generation=${o.generation}&alt=media`,
    name,
    bucket,
    generation: String(o.generation),
    metageneration: '1',
    contentType: o.contentType,
    storageClass: 'STANDARD',
    size: String(o.bytes.length),
    md5Hash: md5(o.bytes),
    crc32c: crc32c(o.bytes),
    etag: Buffer.from(String(o.generation)).toString('base64'),
    timeCreated: new Date(o.updatedMs).toISOString(),
    updated: new Date(o.updatedMs).toISOString(),
  });

  const storage = async (req: IncomingMessage, res: ServerResponse, url: URL, record: RecordedRequest & { bucket: string | null; object: string | null; token: RecordedRequest['token'] }): Promise<void> => {
    const query = record.query;
    const m = /^\/(upload\/|download\/)?storage\/v1\/b\/([^/]+)(?:\/o(?:\/(.+))?)?$/.exec(url.pathname);
    if (m === null) throw new HttpFailure(404, `no such API path ${url.pathname}`, 'notFound');
    const kind = m[1] === 'upload/' ? 'upload' : m[1] === 'download/' ? 'download' : 'json';
    const bucket = decodeURIComponent(m[2] as string);
    const hasO = url.pathname.includes('/o');
    const objectName = m[3] === undefined ? null : decodeURIComponent(m[3]);
    record.bucket = bucket;
    record.object = objectName;

    // Authentication: a Bearer token this server issued, not expired.
    const auth = req.headers.authorization ?? '';
    const bearer = /^Bearer (\S+)$/.exec(auth);
    const grant = bearer === null ? undefined : tokens.get(bearer[1] as string);
    record.token = bearer === null ? 'none' : grant === undefined ? 'unknown' : grant.kind;
    // As on GCS, the session URI of a resumable upload is itself the capability: its chunks need
    // no token (the SDK sends none to a custom endpoint), the POST that opened it did.
    const sessionId = query.upload_id ?? '';
    const sessionChunk = kind === 'upload' && (req.method === 'PUT' || req.method === 'DELETE') && query.uploadType === 'resumable' && bearer === null && (sessions.has(sessionId) || finished.has(sessionId) || cancelled.has(sessionId));
    if (!sessionChunk && (grant === undefined || grant.expiresAtMs <= Date.now())) throw new HttpFailure(401, 'Invalid Credentials', 'authError');

    const objects = buckets.get(bucket);
    if (objects === undefined) throw new HttpFailure(404, 'The specified bucket does not exist.', 'notFound');
    const guard = (op: Operation, target: string): void => {
      if (grant?.kind === 'downscoped' && !boundaryAllows(grant.rules, bucket, op, target)) {
        throw new HttpFailure(403, `downscoped token does not have storage.objects.${op} access to ${bucket}/${target}`, 'forbidden');
      }
    };
    const ifGen = query.ifGenerationMatch === undefined ? undefined : Number(query.ifGenerationMatch);
    const preconditionOn = (existing: StoredObject | undefined): void => {
      if (ifGen === undefined) return;
      if (ifGen === 0 ? existing !== undefined : existing?.generation !== ifGen) throw new HttpFailure(412, 'At least one of the pre-conditions you specified did not hold.', 'conditionNotMet');
    };
    const store = (name: string, bytes: Buffer, contentType: string, precondition: number | undefined): StoredObject => {
      const existing = objects.get(name);
      guard(existing === undefined ? 'create' : 'overwrite', name);
      if (precondition !== undefined && (precondition === 0 ? existing !== undefined : existing?.generation !== precondition)) {
        throw new HttpFailure(412, 'At least one of the pre-conditions you specified did not hold.', 'conditionNotMet');
      }
      const o: StoredObject = { bytes, generation: ++generation, updatedMs: Date.now(), contentType };
      objects.set(name, o);
      return o;
    };
    const validName = (name: string | null | undefined): string => {
      if (name === null || name === undefined || name === '' || Buffer.byteLength(name) > 1024 || /[\r\n]/.test(name) || name.startsWith('.well-known/acme-challenge/')) {
        throw new HttpFailure(400, `invalid object name ${JSON.stringify(name)}`);
      }
      return name;
    };

    if (kind === 'upload') {
      if (objectName !== null || !hasO) throw new HttpFailure(404, 'uploads go to /upload/storage/v1/b/<bucket>/o', 'notFound');
      const uploadType = query.uploadType;
      if (req.method === 'POST' && uploadType === 'media') {
        checkParams(query, ['uploadType', 'name', 'ifGenerationMatch', 'predefinedAcl', 'contentEncoding'], 'objects.insert');
        const name = validName(query.name);
        const o = store(name, await readBody(req), req.headers['content-type'] ?? 'application/octet-stream', ifGen);
        return json(res, 200, objectResource(bucket, name, o));
      }
      if (req.method === 'POST' && uploadType === 'multipart') {
        checkParams(query, ['uploadType', 'name', 'ifGenerationMatch', 'predefinedAcl'], 'objects.insert');
        const parts = parseMultipart(await readBody(req), req.headers['content-type'] ?? '');
        if (parts.length !== 2) throw new HttpFailure(400, `a multipart upload has 2 parts, got ${parts.length}`);
        const meta = JSON.parse((parts[0] as { body: Buffer }).body.toString()) as { name?: string; contentType?: string; md5Hash?: string; crc32c?: string };
        const name = validName(meta.name ?? query.name);
        const media = (parts[1] as { body: Buffer }).body;
        if (meta.crc32c !== undefined && meta.crc32c !== crc32c(media)) throw new HttpFailure(400, 'Provided CRC32C does not match the data');
        if (meta.md5Hash !== undefined && meta.md5Hash !== md5(media)) throw new HttpFailure(400, 'Provided MD5 hash does not match the data');
        const o = store(name, media, meta.contentType ?? 'application/octet-stream', ifGen);
        return json(res, 200, objectResource(bucket, name, o));
      }
      if (req.method === 'POST' && uploadType === 'resumable') {
        checkParams(query, ['uploadType', 'name', 'ifGenerationMatch', 'predefinedAcl'], 'objects.insert (resumable)');
        const text = (await readBody(req)).toString();
        const meta = (text === '' ? {} : JSON.parse(text)) as { name?: string; contentType?: string };
        const name = validName(meta.name ?? query.name);
        guard(objects.has(name) ? 'overwrite' : 'create', name);
        preconditionOn(objects.get(name));
        const declared = req.headers['x-upload-content-length'];
        if (declared !== undefined && (typeof declared !== 'string' || !/^\d{1,16}$/.test(declared))) throw new HttpFailure(400, `malformed X-Upload-Content-Length ${JSON.stringify(declared)}`);
        const id = randomUUID();
        sessions.set(id, { bucket, name, ifGenerationMatch: ifGen, contentType: req.headers['x-upload-content-type']?.toString() ?? meta.contentType ?? 'application/octet-stream', declaredLength: declared === undefined ? undefined : Number(declared), chunks: [], received: 0 });
        res.writeHead(200, { location: `${endpoint}/upload/storage/v1/b/${encodeURIComponent(bucket)}/o?uploadType=resumable&upload_id=${id}`, 'content-length': 0 });
        return void res.end();
      }
      if (req.method === 'DELETE' && uploadType === 'resumable') {
        // Cancelling a session: GCS answers 499; the session URI then leads nowhere.
        checkParams(query, ['uploadType', 'upload_id', 'name'], 'cancelling a resumable upload');
        const session = sessions.get(query.upload_id ?? '');
        if (session === undefined || session.bucket !== bucket) throw new HttpFailure(404, 'no such upload session', 'notFound');
        sessions.delete(query.upload_id as string);
        cancelled.add(query.upload_id as string);
        return json(res, 499, { error: { code: 499, message: 'Client Closed Request' } });
      }
      if (req.method === 'PUT' && uploadType === 'resumable') {
        checkParams(query, ['uploadType', 'upload_id', 'name', 'ifGenerationMatch', 'predefinedAcl'], 'a resumable upload chunk');
        const done = finished.get(query.upload_id ?? '');
        const session = sessions.get(query.upload_id ?? '');
        const body = await readBody(req);
        const range = req.headers['content-range'] ?? '';
        const status = /^bytes \*\/(\d+|\*)$/.exec(range);
        const chunk = /^bytes (\d+)-(\d+|\*)\/(\d+|\*)$/.exec(range);
        if (done !== undefined && done.bucket === bucket) {
          // A finished session answers a status query (or a repeated last chunk) with its object.
          if (status === null && chunk === null) throw new HttpFailure(400, `malformed Content-Range ${JSON.stringify(range)}`);
          return json(res, 200, done.resource);
        }
        if (session === undefined || session.bucket !== bucket) throw new HttpFailure(404, 'no such upload session', 'notFound');
        if (status !== null) {
          if (body.length !== 0) throw new HttpFailure(400, 'a status query carries no body');
          const total = status[1] === '*' ? undefined : Number(status[1]);
          if (total !== undefined && total === session.received) return finish(session, res, query.upload_id as string);
          res.writeHead(308, { ...(session.received > 0 ? { range: `bytes=0-${session.received - 1}` } : {}), 'content-length': 0 });
          return void res.end();
        }
        if (chunk === null) throw new HttpFailure(400, `malformed Content-Range ${JSON.stringify(range)}`);
        const first = Number(chunk[1]);
        const total = chunk[3] === '*' ? undefined : Number(chunk[3]);
        const last = chunk[2] === '*' ? first + body.length - 1 : Number(chunk[2]);
        if (last - first + 1 !== body.length) throw new HttpFailure(400, `Content-Range ${range} does not match the ${body.length} bytes sent`);
        if (first > session.received) throw new HttpFailure(400, `chunk starts at ${first}, ${session.received} bytes received so far`);
        // A chunk re-sent after a lost answer overlaps what was kept: keep only the new tail.
        const fresh = body.subarray(session.received - first);
        if (session.declaredLength !== undefined && ((total !== undefined && total !== session.declaredLength) || session.received + fresh.length > session.declaredLength)) {
          throw new HttpFailure(400, `the upload was declared with X-Upload-Content-Length ${session.declaredLength}; this chunk (${range}) does not fit it`);
        }
        const final = total !== undefined && last + 1 === total;
        if (!final && chunk[2] !== '*' && body.length % MIN_CHUNK !== 0) throw new HttpFailure(400, `a non-final chunk must be a multiple of 256 KiB, got ${body.length}`);
        session.chunks.push(fresh);
        session.received += fresh.length;
        if (final || (chunk[2] === '*' && total === undefined && chunk[3] === '*')) {
          if (total !== undefined && session.received !== total) throw new HttpFailure(400, `upload ended at ${session.received} of ${total} bytes`);
          return finish(session, res, query.upload_id as string);
        }
        res.writeHead(308, { range: `bytes=0-${session.received - 1}`, 'content-length': 0 });
        return void res.end();
      }
      throw new HttpFailure(400, `unsupported upload ${req.method} uploadType=${uploadType ?? '(none)'}`);
    }

    if (!hasO) {
      // Bucket metadata.
      if (req.method !== 'GET') throw new HttpFailure(405, 'only GET on a bucket');
      checkParams(query, [], 'buckets.get');
      return json(res, 200, { kind: 'storage#bucket', id: bucket, name: bucket, location: 'US', storageClass: 'STANDARD' });
    }

    if (objectName === null) {
      if (req.method !== 'GET') throw new HttpFailure(405, `${req.method} on the object collection`);
      checkParams(query, ['prefix', 'pageToken', 'maxResults', 'delimiter', 'versions', 'autoPaginate'], 'objects.list');
      const prefix = query.prefix ?? '';
      guard('list', prefix);
      const max = Math.min(1000, query.maxResults === undefined ? 1000 : Math.max(1, Number(query.maxResults)));
      const names = [...objects.keys()].filter((n) => n.startsWith(prefix)).sort();
      let start = 0;
      if (query.pageToken !== undefined) {
        const after = Buffer.from(query.pageToken, 'base64url').toString();
        if (!after.startsWith('after:')) throw new HttpFailure(400, 'malformed pageToken');
        start = names.findIndex((n) => n > after.slice(6));
        if (start === -1) start = names.length;
      }
      const page = names.slice(start, start + max);
      const more = start + max < names.length;
      return json(res, 200, {
        kind: 'storage#objects',
        items: page.map((n) => objectResource(bucket, n, objects.get(n) as StoredObject)),
        ...(more ? { nextPageToken: Buffer.from(`after:${page[page.length - 1] as string}`).toString('base64url') } : {}),
      });
    }

    const name = validName(objectName);
    const existing = objects.get(name);
    if (req.method === 'GET') {
      checkParams(query, ['ifGenerationMatch', 'generation'], 'objects.get');
      guard('get', name);
      if (existing === undefined) throw new HttpFailure(404, `No such object: ${bucket}/${name}`, 'notFound');
      preconditionOn(existing);
      if (query.generation !== undefined && Number(query.generation) !== existing.generation) throw new HttpFailure(404, `No such object: ${bucket}/${name}#${query.generation}`, 'notFound');
      if (query.alt !== 'media') return json(res, 200, objectResource(bucket, name, existing));
      const hashes = { 'x-goog-hash': `crc32c=${crc32c(existing.bytes)},md5=${md5(existing.bytes)}`, 'x-goog-generation': String(existing.generation), 'x-goog-stored-content-length': String(existing.bytes.length), 'x-goog-stored-content-encoding': 'identity', etag: `"${existing.generation}"` };
      const range = req.headers.range;
      if (range !== undefined) {
        const r = /^bytes=(\d+)-(\d*)$/.exec(range);
        if (r === null) throw new HttpFailure(400, `malformed Range ${JSON.stringify(range)}`);
        const from = Number(r[1]);
        const to = r[2] === '' ? existing.bytes.length - 1 : Math.min(Number(r[2]), existing.bytes.length - 1);
        if (from >= existing.bytes.length) {
          res.writeHead(416, { 'content-range': `bytes */${existing.bytes.length}`, 'content-length': 0 });
          return void res.end();
        }
        const slice = existing.bytes.subarray(from, to + 1);
        res.writeHead(206, { ...hashes, 'content-type': existing.contentType, 'content-length': slice.length, 'content-range': `bytes ${from}-${to}/${existing.bytes.length}` });
        return void res.end(slice);
      }
      res.writeHead(200, { ...hashes, 'content-type': existing.contentType, 'content-length': existing.bytes.length });
      return void res.end(existing.bytes);
    }
    if (req.method === 'DELETE') {
      checkParams(query, ['ifGenerationMatch', 'generation'], 'objects.delete');
      guard('delete', name);
      if (existing === undefined) throw new HttpFailure(404, `No such object: ${bucket}/${name}`, 'notFound');
      preconditionOn(existing);
      objects.delete(name);
      res.writeHead(204);
      return void res.end();
    }
    throw new HttpFailure(405, `${req.method} on an object`);
  };

  const finish = (session: ResumableSession, res: ServerResponse, id: string): void => {
    if (session.declaredLength !== undefined && session.received !== session.declaredLength) {
      throw new HttpFailure(400, `the upload ended at ${session.received} bytes; X-Upload-Content-Length declared ${session.declaredLength}`);
    }
    const objects = buckets.get(session.bucket) as Map<string, StoredObject>;
    const existing = objects.get(session.name);
    if (session.ifGenerationMatch !== undefined && (session.ifGenerationMatch === 0 ? existing !== undefined : existing?.generation !== session.ifGenerationMatch)) {
      sessions.delete(id);
      throw new HttpFailure(412, 'At least one of the pre-conditions you specified did not hold.', 'conditionNotMet');
    }
    const o: StoredObject = { bytes: Buffer.concat(session.chunks), generation: ++generation, updatedMs: Date.now(), contentType: session.contentType };
    objects.set(session.name, o);
    sessions.delete(id);
    const resource = objectResource(session.bucket, session.name, o);
    finished.set(id, { bucket: session.bucket, resource });
    json(res, 200, resource);
  };

  /**
   * A V4 signed URL request (XML API, path style): the signature rebuilt and verified as Google
   * documents it, then a PUT or GET of the one object.
   */
  const signedUrl = async (req: IncomingMessage, res: ServerResponse, url: URL, record: RecordedRequest & { bucket: string | null; object: string | null; token: RecordedRequest['token'] }): Promise<void> => {
    const q = record.query;
    record.token = 'signed-url';
    const m = /^\/([^/]+)\/(.+)$/.exec(url.pathname);
    if (m === null) throw new XmlFailure(400, 'InvalidURI', 'a signed URL names /<bucket>/<object>');
    const bucket = decodeURIComponent(m[1] as string);
    const name = decodeURIComponent(m[2] as string);
    record.bucket = bucket;
    record.object = name;
    if (q['X-Goog-Algorithm'] !== 'GOOG4-RSA-SHA256') throw new XmlFailure(400, 'InvalidArgument', `X-Goog-Algorithm must be GOOG4-RSA-SHA256, got ${JSON.stringify(q['X-Goog-Algorithm'])}`);
    for (const p of ['X-Goog-Credential', 'X-Goog-Date', 'X-Goog-Expires', 'X-Goog-SignedHeaders', 'X-Goog-Signature']) {
      if (q[p] === undefined || q[p] === '') throw new XmlFailure(400, 'InvalidArgument', `the signed URL lacks ${p}`);
    }
    const date = q['X-Goog-Date'] as string;
    const d = /^(\d{4})(\d{2})(\d{2})T(\d{2})(\d{2})(\d{2})Z$/.exec(date);
    if (d === null) throw new XmlFailure(400, 'InvalidArgument', `malformed X-Goog-Date ${date}`);
    const signedAtMs = Date.UTC(Number(d[1]), Number(d[2]) - 1, Number(d[3]), Number(d[4]), Number(d[5]), Number(d[6]));
    const expires = q['X-Goog-Expires'] as string;
    if (!/^\d{1,7}$/.test(expires) || Number(expires) < 1 || Number(expires) > MAX_SIGNED_URL_SECONDS) throw new XmlFailure(400, 'InvalidArgument', `X-Goog-Expires must be 1 to ${MAX_SIGNED_URL_SECONDS} seconds`);
    const scope = (q['X-Goog-Credential'] as string).split('/');
    if (scope.length !== 5 || scope[2] !== 'auto' || scope[3] !== 'storage' || scope[4] !== 'goog4_request' || scope[1] !== date.slice(0, 8)) {
      throw new XmlFailure(400, 'InvalidArgument', 'X-Goog-Credential must be <email>/<YYYYMMDD of X-Goog-Date>/auto/storage/goog4_request');
    }
    if (scope[0] !== clientEmail) throw new XmlFailure(403, 'AccessDenied', `unknown signer ${scope[0] as string}`);
    if (!/^[0-9a-f]+$/.test(q['X-Goog-Signature'] as string)) throw new XmlFailure(400, 'InvalidArgument', 'X-Goog-Signature must be hexadecimal');
    if (Date.now() > signedAtMs + Number(expires) * 1000) throw new XmlFailure(400, 'ExpiredToken', `Request has expired: ${date} + ${expires} s`);

    // The canonical request, from what was received.
    const signedHeaders = (q['X-Goog-SignedHeaders'] as string).split(';');
    if (!signedHeaders.includes('host') || signedHeaders.some((h, i) => h === '' || h !== h.toLowerCase() || (i > 0 && (signedHeaders[i - 1] as string) >= h))) {
      throw new XmlFailure(400, 'InvalidArgument', 'X-Goog-SignedHeaders must be lowercase names, sorted, with host');
    }
    const headerValue = (h: string): string => {
      const raw = req.headers[h];
      const v = Array.isArray(raw) ? raw.join(',') : (raw ?? '');
      return (h === 'host' ? v.replace(/:\d+$/, '') : v).trim().replace(/\s+/g, ' ');
    };
    const canonicalHeaders = signedHeaders.map((h) => `${h}:${headerValue(h)}\n`).join('');
    const canonicalQuery = Object.entries(q).filter(([k]) => k !== 'X-Goog-Signature')
      .map(([k, v]) => [percentEncode(k, false), percentEncode(v, false)] as const)
      .sort((a, b) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0))
      .map(([k, v]) => `${k}=${v}`).join('&');
    const canonicalPath = `/${percentEncode(bucket, false)}/${percentEncode(name, true)}`;
    const canonicalRequest = [req.method ?? '', canonicalPath, canonicalQuery, canonicalHeaders, signedHeaders.join(';'), 'UNSIGNED-PAYLOAD'].join('\n');
    const stringToSign = ['GOOG4-RSA-SHA256', date, scope.slice(1).join('/'), createHash('sha256').update(canonicalRequest).digest('hex')].join('\n');
    if (!verifySignature('RSA-SHA256', Buffer.from(stringToSign), publicKey, Buffer.from(q['X-Goog-Signature'] as string, 'hex'))) {
      throw new XmlFailure(403, 'SignatureDoesNotMatch', 'The request signature we calculated does not match the signature you provided.');
    }

    const objects = buckets.get(bucket);
    if (objects === undefined) throw new XmlFailure(404, 'NoSuchBucket', 'The specified bucket does not exist.');
    if (req.method === 'PUT') {
      const body = await readBody(req);
      const declared = req.headers['content-length'];
      if (declared !== undefined && Number(declared) !== body.length) throw new XmlFailure(400, 'IncompleteBody', 'the body is not Content-Length bytes');
      const range = req.headers['x-goog-content-length-range'];
      if (range !== undefined) {
        const r = /^(\d+),(\d+)$/.exec(String(range).replace(/\s/g, ''));
        if (r === null) throw new XmlFailure(400, 'InvalidArgument', `malformed x-goog-content-length-range ${JSON.stringify(range)}`);
        if (body.length < Number(r[1])) throw new XmlFailure(400, 'EntityTooSmall', `the body (${body.length} bytes) is smaller than x-goog-content-length-range allows`);
        if (body.length > Number(r[2])) throw new XmlFailure(400, 'EntityTooLarge', `the body (${body.length} bytes) is larger than x-goog-content-length-range allows`);
      }
      if (name === '' || Buffer.byteLength(name) > 1024 || /[\r\n]/.test(name)) throw new XmlFailure(400, 'InvalidArgument', `invalid object name ${JSON.stringify(name)}`);
      const o: StoredObject = { bytes: body, generation: ++generation, updatedMs: Date.now(), contentType: req.headers['content-type'] ?? 'application/octet-stream' };
      objects.set(name, o);
      res.writeHead(200, { etag: `"${createHash('md5').update(body).digest('hex')}"`, 'x-goog-generation': String(o.generation), 'x-goog-hash': `crc32c=${crc32c(body)},md5=${md5(body)}`, 'content-length': 0 });
      return void res.end();
    }
    if (req.method === 'GET') {
      const o = objects.get(name);
      if (o === undefined) throw new XmlFailure(404, 'NoSuchKey', 'The specified key does not exist.');
      res.writeHead(200, { 'content-type': o.contentType, 'content-length': o.bytes.length, etag: `"${createHash('md5').update(o.bytes).digest('hex')}"`, 'x-goog-generation': String(o.generation) });
      return void res.end(o.bytes);
    }
    throw new XmlFailure(405, 'MethodNotAllowed', `${req.method ?? ''} on a signed URL`);
  };

  const server = createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://localhost');
    const query: Record<string, string> = {};
    for (const [k, v] of url.searchParams) {
      if (k in query) {
        requests.push({ method: req.method ?? '', path: url.pathname, query, bucket: null, object: null, token: 'none', status: 400 });
        return json(res, 400, { error: { code: 400, message: `repeated query parameter ${k}` } });
      }
      query[k] = v;
    }
    const record: RecordedRequest & { bucket: string | null; object: string | null; token: RecordedRequest['token'] } = { method: req.method ?? '', path: url.pathname, query, bucket: null, object: null, token: 'none', status: 0 };
    requests.push(record);
    const isStorage = url.pathname !== '/token' && url.pathname !== '/sts/v1/token';
    const faultAt = pendingFaults.findIndex((f) => (f.storageOnly === false || isStorage) && (f.method === undefined || f.method === req.method));
    const reply = (status: number, body: unknown): void => {
      record.status = status;
      if (!res.headersSent) json(res, status, body);
      else res.destroy();
    };
    if (faultAt !== -1) {
      const fault = pendingFaults.splice(faultAt, 1)[0] as GcsFault;
      faultCount++;
      // Drain the body so the client sees the answer, not a reset.
      void readBody(req).then(() => reply(fault.status, { error: { code: fault.status, message: fault.status === 429 ? 'rateLimitExceeded (injected)' : 'backendError (injected)', errors: [{ reason: fault.status === 429 ? 'rateLimitExceeded' : 'backendError', message: 'injected by the test' }] } }));
      return;
    }
    const handler = url.pathname === '/token' && req.method === 'POST' ? tokenEndpoint(req, res)
      : url.pathname === '/sts/v1/token' && req.method === 'POST' ? stsEndpointHandler(req, res)
        : url.searchParams.has('X-Goog-Algorithm') || url.searchParams.has('X-Goog-Signature') ? signedUrl(req, res, url, record)
          : storage(req, res, url, record);
    handler.then(
      () => {
        record.status = res.statusCode;
      },
      (e: unknown) => {
        if (e instanceof XmlFailure) {
          record.status = e.status;
          // Drain what is left of the body, so the client reads the answer rather than a reset.
          if (res.headersSent) res.destroy();
          else void readBody(req).catch(() => undefined).then(() => xmlError(res, e.status, e.code, e.message));
          return;
        }
        if (e instanceof HttpFailure) reply(e.status, { error: { code: e.status, message: e.message, errors: [{ reason: e.reason, message: e.message }] } });
        else reply(500, { error: { code: 500, message: `checking server bug: ${(e as Error).message}` } });
      },
    );
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  endpoint = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;

  return {
    endpoint,
    tokenUri: `${endpoint}/token`,
    stsEndpoint: `${endpoint}/sts/v1/token`,
    projectId,
    serviceAccountKey: {
      type: 'service_account',
      project_id: projectId,
      private_key_id: keyId,
      private_key: privateKey.export({ type: 'pkcs8', format: 'pem' }).toString(),
      client_email: clientEmail,
      client_id: '100000000000000000001',
      token_uri: `${endpoint}/token`,
    },
    requests,
    boundaries,
    tokenGrants: () => grants,
    createBucket(name) {
      if (!buckets.has(name)) buckets.set(name, new Map());
    },
    objectNames(bucket) {
      return [...(buckets.get(bucket)?.keys() ?? [])].sort();
    },
    issueToken(lifetimeMs = 3600_000) {
      return issue({ kind: 'service-account', email: clientEmail, expiresAtMs: Date.now() + lifetimeMs });
    },
    expireAllTokens() {
      for (const [k, g] of tokens) tokens.set(k, { ...g, expiresAtMs: 0 });
    },
    failNext(count, fault) {
      for (let i = 0; i < count; i++) pendingFaults.push(fault);
    },
    faults: () => faultCount,
    async close() {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

/** A `gcs` storage profile (wire form) for a bucket on `gcs`, with the test service-account key. */
export function gcsStorageProfile(gcs: GcsCheckingServer, bucket: string, keyPrefix = 'warehouse', overrides: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    type: 'gcs', bucket, 'key-prefix': keyPrefix, 'project-id': gcs.projectId, endpoint: gcs.endpoint,
    credentials: { type: 'service-account-key', 'service-account-key': gcs.serviceAccountKey },
    ...overrides,
  };
}
