/**
 * GCS credential vending: a downscoped OAuth2 token that reaches exactly one table's objects,
 * from a Credential Access Boundary (CAB) exchanged at Google's STS (`sts.googleapis.com/v1/token`,
 * configurable as `sts-endpoint`). The downscoped token's permissions are the intersection of the
 * service account's own and the boundary's, so however wide the account is, the token handed to a
 * client covers only the prefixes named here.
 *
 * - One rule per bucket: `availableResource` `//storage.googleapis.com/projects/_/buckets/<b>`,
 *   `availablePermissions` `inRole:roles/storage.objectViewer` for readers; writers add
 *   `roles/storage.objectAdmin` (objectCreator alone cannot overwrite or delete, which writers of
 *   Iceberg tables do when they abort or expire), and an `availabilityCondition` that admits only
 *   the table's objects: `resource.name.startsWith('projects/_/buckets/<b>/objects/<prefix>/')` for
 *   object operations, `api.getAttribute('storage.googleapis.com/objectListPrefix', '')
 *   .startsWith('<prefix>/')` for listings. The trailing `/` keeps `orders` from covering
 *   `orders_old`.
 * - Names are CEL string literals: every `\`, `'`, `"` and control character is escaped
 *   (`escapeCelString`), so a table named `x')||true||('` stays a string (Polaris's CEL-injection
 *   advisory).
 * - A downscoped token lives as long as the source token it came from (at most an hour; STS takes
 *   no duration for it). Tokens are cached per (prefixes, mode), shared by concurrent callers (one
 *   exchange in flight per key), and minted again once less than `refreshMarginMs` is left.
 */
import { parseGcsLocation } from './gcs-file-io.js';
import type { GcsStorageProfile } from './storage-profile.js';
import { entriesSharing, type TableCredentialVendor, type TableVendorOptions } from './table-vendor.js';

/** What the caller may do with the table's files. */
export type GcsAccessMode = 'read' | 'read-write';

export const DEFAULT_GCS_STS_ENDPOINT = 'https://sts.googleapis.com/v1/token';

/** How a profile mints vended tokens (its `vended-credentials` object). */
export interface GcsVendingConfig {
  /** The STS token-exchange endpoint; Google's when null. */
  readonly stsEndpoint: string | null;
}

/** A downscoped token and when it stops working. */
export interface VendedGcsToken {
  readonly token: string;
  readonly expiresAtMs: number;
}

/** A bucket and object-name prefix (ending in `/` unless empty). */
export interface GcsPrefix {
  readonly bucket: string;
  readonly objectPrefix: string;
}

/** `gs://b/wh/t` → `{bucket: b, objectPrefix: 'wh/t/'}`. */
export function gcsPrefixOf(location: string): GcsPrefix {
  const { bucket, name } = parseGcsLocation(location);
  const trimmed = name.replace(/\/+$/, '');
  return { bucket, objectPrefix: trimmed === '' ? '' : `${trimmed}/` };
}

/**
 * `s` as a single-quoted CEL string literal. Backslash and both quotes are escaped, line breaks
 * and tabs by name, every other control character (and the Unicode line separators) as `\uXXXX`,
 * so no input can end the literal or the line.
 */
export function escapeCelString(s: string): string {
  let out = "'";
  for (const ch of s) {
    const code = ch.codePointAt(0) as number;
    if (ch === '\\') out += '\\\\';
    else if (ch === "'") out += "\\'";
    else if (ch === '"') out += '\\"';
    else if (ch === '\n') out += '\\n';
    else if (ch === '\r') out += '\\r';
    else if (ch === '\t') out += '\\t';
    else if (code < 0x20 || code === 0x7f || code === 0x2028 || code === 0x2029) out += `\\u${code.toString(16).padStart(4, '0')}`;
    else out += ch;
  }
  return `${out}'`;
}

const LIST_PREFIX_ATTRIBUTE = "api.getAttribute('storage.googleapis.com/objectListPrefix', '')";

export interface AccessBoundaryRule {
  readonly availableResource: string;
  readonly availablePermissions: readonly string[];
  readonly availabilityCondition: { readonly title: string; readonly expression: string };
}

export interface CredentialAccessBoundary {
  readonly accessBoundary: { readonly accessBoundaryRules: readonly AccessBoundaryRule[] };
}

/** The boundary granting `mode` on `prefixes` and nothing else. Pure. */
export function credentialAccessBoundary(prefixes: readonly GcsPrefix[], mode: GcsAccessMode): CredentialAccessBoundary {
  if (prefixes.length === 0) throw new Error('an access boundary needs at least one prefix');
  const buckets = [...new Set(prefixes.map((p) => p.bucket))].sort();
  // GCS accepts at most 10 rules per boundary; one per bucket is far below for a table's locations.
  if (buckets.length > 10) throw new VendingGcsError(`a table's locations span ${buckets.length} buckets; a boundary holds at most 10`);
  const permissions = mode === 'read-write'
    ? ['inRole:roles/storage.objectViewer', 'inRole:roles/storage.objectAdmin']
    : ['inRole:roles/storage.objectViewer'];
  return {
    accessBoundary: {
      accessBoundaryRules: buckets.map((bucket) => {
        const terms = prefixes.filter((p) => p.bucket === bucket).flatMap((p) => [
          `resource.name.startsWith(${escapeCelString(`projects/_/buckets/${bucket}/objects/${p.objectPrefix}`)})`,
          `${LIST_PREFIX_ATTRIBUTE}.startsWith(${escapeCelString(p.objectPrefix)})`,
        ]);
        return {
          availableResource: `//storage.googleapis.com/projects/_/buckets/${bucket}`,
          availablePermissions: permissions,
          availabilityCondition: { title: `floe-table-${mode}`, expression: terms.join(' || ') },
        };
      }),
    },
  };
}

/** Why a token could not be minted, without anything secret. */
export class VendingGcsError extends Error {
  readonly kind = 'gcs-vending';
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'VendingGcsError';
  }
}

/** Exchanges the server's token for a downscoped one; injectable so the cache can be tested alone. */
export type DownscopeToken = (boundary: CredentialAccessBoundary) => Promise<VendedGcsToken>;

/**
 * The STS token exchange (RFC 8693 as Google serves it) with `sourceToken()` as the subject token:
 * what `google-auth-library`'s `DownscopedClient` does, but at a configurable endpoint (it always
 * calls `https://sts.<universe>/v1/token`).
 */
export function stsDownscope(stsEndpoint: string, sourceToken: () => Promise<{ readonly token: string; readonly expiresAtMs: number | undefined }>, now: () => number = Date.now): DownscopeToken {
  return async (boundary) => {
    const source = await sourceToken();
    let res: Response;
    try {
      res = await fetch(stsEndpoint, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body: new URLSearchParams({
          grant_type: 'urn:ietf:params:oauth:grant-type:token-exchange',
          subject_token_type: 'urn:ietf:params:oauth:token-type:access_token',
          requested_token_type: 'urn:ietf:params:oauth:token-type:access_token',
          subject_token: source.token,
          options: JSON.stringify(boundary),
        }).toString(),
        signal: AbortSignal.timeout(30_000),
      });
    } catch (e) {
      throw new VendingGcsError(`the STS endpoint ${stsEndpoint} is unreachable: ${(e as Error).message}`, { cause: e });
    }
    const text = await res.text();
    let body: { access_token?: unknown; expires_in?: unknown; error?: unknown; error_description?: unknown } = {};
    try {
      body = JSON.parse(text) as typeof body;
    } catch {
      body = {};
    }
    if (!res.ok || typeof body.access_token !== 'string' || body.access_token === '') {
      const why = typeof body.error === 'string' ? `${body.error}${typeof body.error_description === 'string' ? `: ${body.error_description}` : ''}` : `HTTP ${res.status}`;
      throw new VendingGcsError(`the STS token exchange at ${stsEndpoint} failed (${why})`);
    }
    // The downscoped token dies with its source; STS says how long when it knows.
    const fromSts = typeof body.expires_in === 'number' ? now() + body.expires_in * 1000 : undefined;
    const expiresAtMs = Math.min(fromSts ?? Number.POSITIVE_INFINITY, source.expiresAtMs ?? Number.POSITIVE_INFINITY);
    return { token: body.access_token, expiresAtMs: Number.isFinite(expiresAtMs) ? expiresAtMs : now() + 3600_000 };
  };
}

/** Downscoped tokens by (prefixes, mode), minted once per key at a time and reused until close to expiry. */
export class GcsCredentialVendor {
  private readonly tokens = new Map<string, Promise<VendedGcsToken>>();
  /** Tokens minted by STS (not served from the cache): what a test or a metric counts. */
  minted = 0;

  constructor(
    private readonly downscope: DownscopeToken,
    private readonly now: () => number = Date.now,
    /** Re-mint when less than this is left, so a client never gets a token about to die. */
    private readonly refreshMarginMs = 5 * 60_000,
    private readonly maxEntries = 10_000,
    /** Off: every call exchanges (server setting `storage.vending.cache_sessions`). */
    private readonly cacheTokens = true,
  ) {}

  /** A token for `locations` (`gs://` URIs) in `mode`. */
  async vend(locations: readonly string[], mode: GcsAccessMode): Promise<VendedGcsToken> {
    const prefixes = [...new Map(locations.map((l) => gcsPrefixOf(l)).map((p) => [`${p.bucket}/${p.objectPrefix}`, p])).values()]
      .sort((a, b) => `${a.bucket}/${a.objectPrefix}`.localeCompare(`${b.bucket}/${b.objectPrefix}`));
    if (!this.cacheTokens) return this.mint(prefixes, mode);
    const key = `${mode}\n${prefixes.map((p) => `${p.bucket}/${p.objectPrefix}`).join('\n')}`;
    const cached = this.tokens.get(key);
    if (cached !== undefined) {
      const fresh = await cached.then((c) => (c.expiresAtMs - this.now() > this.refreshMarginMs ? c : undefined), () => undefined);
      if (fresh !== undefined) return fresh;
      // A failed or stale token: whoever sees it first replaces it; the others share the new one.
      if (this.tokens.get(key) === cached) this.tokens.delete(key);
      else return this.vend(locations, mode);
    }
    const minting = this.mint(prefixes, mode);
    if (this.tokens.size >= this.maxEntries) this.tokens.delete(this.tokens.keys().next().value as string);
    this.tokens.set(key, minting);
    minting.catch(() => {
      if (this.tokens.get(key) === minting) this.tokens.delete(key);
    });
    return minting;
  }

  private async mint(prefixes: readonly GcsPrefix[], mode: GcsAccessMode): Promise<VendedGcsToken> {
    this.minted += 1;
    try {
      return await this.downscope(credentialAccessBoundary(prefixes, mode));
    } catch (e) {
      if (e instanceof VendingGcsError) throw e;
      throw new VendingGcsError(`could not mint a downscoped token: ${(e as Error).message}`, { cause: e });
    }
  }
}

/**
 * The `config` of a `storage-credentials` entry: the service spec's keys plus what real clients
 * read (`gcs.oauth2.token-expires-at` is Iceberg Java's name, in ms like the `-ms` one; the
 * service host when the profile names an endpoint; the refresh endpoint).
 */
export function gcsCredentialConfig(t: VendedGcsToken, store: { readonly projectId: string | null; readonly endpoint: string | null }, refreshEndpoint: string): ReadonlyMap<string, string> {
  return new Map<string, string>([
    ['gcs.oauth2.token', t.token],
    ['gcs.oauth2.token-type', 'Bearer'],
    ['gcs.oauth2.token-expires-at-ms', String(t.expiresAtMs)],
    ['gcs.oauth2.token-expires-at', String(t.expiresAtMs)],
    ...(store.projectId !== null ? [['gcs.project-id', store.projectId] as [string, string]] : []),
    ...(store.endpoint !== null ? [['gcs.service.host', store.endpoint] as [string, string]] : []),
    ['gcs.oauth2.refresh-credentials-endpoint', refreshEndpoint],
  ]);
}

/**
 * A catalog's GCS vendor: tokens downscoped from the server's own (`sourceToken`, which its auth
 * client caches and refreshes) at the vending STS endpoint or Google's. One token serves all of a
 * table's locations, so every entry carries the same token.
 */
export function gcsTableVendor(profile: GcsStorageProfile, config: GcsVendingConfig, sourceToken: () => Promise<{ readonly token: string; readonly expiresAtMs: number | undefined }>, options: TableVendorOptions): TableCredentialVendor {
  const vendor = new GcsCredentialVendor(
    stsDownscope(config.stsEndpoint ?? DEFAULT_GCS_STS_ENDPOINT, sourceToken, options.now), options.now, undefined, undefined, options.cacheSessions,
  );
  return {
    store: 'gcs',
    async vend(locations, mode, refreshEndpoint) {
      return entriesSharing(locations, gcsCredentialConfig(await vendor.vend(locations, mode), profile, refreshEndpoint));
    },
    isVendingFailure: (e): e is VendingGcsError => e instanceof VendingGcsError,
    close: () => undefined,
  };
}
