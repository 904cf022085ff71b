/**
 * S3 credential vending: short-lived keys that reach exactly one table's files, minted with STS
 * `AssumeRole` and an inline session policy. The effective permissions of such a session are the
 * intersection of the role's own policy and the session policy, so however wide the role is, the
 * keys handed to a client cover only the prefixes named here.
 *
 * - Read: `s3:GetObject`, `s3:GetObjectVersion` on `<prefix>/*`, and `s3:ListBucket` on the bucket
 *   conditioned on `s3:prefix` being the table's prefix (`<prefix>/` or below), so a sibling that
 *   shares the name's start (`orders` vs `orders_old`) and the bucket root are not listable.
 *   `s3:GetBucketLocation` is in a statement of its own (clients ask it before anything else and it
 *   takes no prefix).
 * - Write adds `s3:PutObject`, `s3:DeleteObject` and the multipart actions.
 * - IAM treats `*`, `?` and `${…}` in resources and `StringLike` values as globs and variables; a
 *   table named `a*` would otherwise widen the grant to every table starting with `a` (one of
 *   Polaris's advisories). They are written as IAM's escapes `${*}`, `${?}`, `${$}`. A store that
 *   does not know the escapes (RGW 16.2) then refuses such a table's own files: never wider.
 *
 * Sessions are cached per (locations, access mode) and shared by concurrent callers (one STS call in
 * flight per key), and minted again once less than `refreshMarginMs` of their life is left.
 */
import { AssumeRoleCommand, STSClient } from '@aws-sdk/client-sts';
import { parseS3Location } from './s3-file-io.js';
import type { S3Credentials } from './s3-file-io.js';
import type { S3StorageProfile } from './storage-profile.js';
import { entriesSharing, type TableCredentialVendor, type TableVendorOptions, type VendedEntry } from './table-vendor.js';

/** Entry sets kept per session (a session is per set of locations; each table name has one set). */
const MAX_ENTRY_SETS_PER_SESSION = 64;

/** What the caller may do with the table's files. */
export type AccessMode = 'read' | 'read-write';

/** How a profile mints vended credentials (its `vended-credentials` object). */
export interface S3VendingConfig {
  /** The role assumed (its permission policy bounds every session; the session policy narrows it). */
  readonly roleArn: string;
  /** The STS endpoint; the profile's S3 endpoint when null (RGW serves STS there), AWS's otherwise. */
  readonly stsEndpoint: string | null;
  /** Lifetime asked of STS, seconds (AWS: 900–43200 bounded by the role's maximum). */
  readonly durationSeconds: number;
  /** `ExternalId` of the trust policy, when the role demands one. */
  readonly externalId: string | null;
}

export const DEFAULT_VENDED_DURATION_SECONDS = 3600;
export const MIN_VENDED_DURATION_SECONDS = 900;
export const MAX_VENDED_DURATION_SECONDS = 43_200;

/** An STS session's keys and when they stop working. */
export interface VendedS3Credentials extends Required<S3Credentials> {
  readonly expiresAtMs: number;
}

/** A bucket and key prefix (no leading `/`, ending in `/` unless empty). */
export interface S3Prefix {
  readonly bucket: string;
  readonly keyPrefix: string;
}

/**
 * The S3 prefix of a table location: `s3://b/wh/t` → `{bucket: b, keyPrefix: 'wh/t/'}`. The
 * trailing `/` is what keeps `wh/t` from covering `wh/t_old`.
 */
export function s3PrefixOf(location: string): S3Prefix {
  const { bucket, key } = parseS3Location(location);
  const trimmed = key.replace(/\/+$/, '');
  return { bucket, keyPrefix: trimmed === '' ? '' : `${trimmed}/` };
}

/**
 * IAM's escapes for its wildcard and variable characters, so a name matches only itself: `*`, `?`
 * and the `$` that would open a `${variable}`. (A lone `$` is literal to IAM and stays as it is,
 * because stores that do not know the escapes, such as RGW 16.2, then still match it.)
 */
export function escapeIamPattern(s: string): string {
  return s.replace(/[*?]|\$(?=\{)/g, (c) => `\${${c}}`);
}

type PolicyStatement = Readonly<Record<string, unknown>>;

const READ_OBJECT_ACTIONS = ['s3:GetObject', 's3:GetObjectVersion'] as const;
const WRITE_OBJECT_ACTIONS = ['s3:PutObject', 's3:DeleteObject', 's3:AbortMultipartUpload', 's3:ListMultipartUploadParts'] as const;
const WRITE_BUCKET_ACTIONS = ['s3:ListBucketMultipartUploads'] as const;

/** The inline session policy granting `mode` on `prefixes` and nothing else. Pure. */
export function s3SessionPolicy(prefixes: readonly S3Prefix[], mode: AccessMode): { readonly Version: string; readonly Statement: readonly PolicyStatement[] } {
  if (prefixes.length === 0) throw new Error('a session policy needs at least one prefix');
  const objectActions = mode === 'read-write' ? [...READ_OBJECT_ACTIONS, ...WRITE_OBJECT_ACTIONS] : [...READ_OBJECT_ACTIONS];
  const objectResources = prefixes.map((p) => `arn:aws:s3:::${escapeIamPattern(p.bucket)}/${escapeIamPattern(p.keyPrefix)}*`);
  const buckets = [...new Set(prefixes.map((p) => p.bucket))];
  const statements: PolicyStatement[] = [{ Sid: 'TableObjects', Effect: 'Allow', Action: objectActions, Resource: objectResources }];
  for (const [i, bucket] of buckets.entries()) {
    const keyPrefixes = prefixes.filter((p) => p.bucket === bucket).map((p) => escapeIamPattern(p.keyPrefix));
    statements.push({
      Sid: `TableList${i}`,
      Effect: 'Allow',
      Action: ['s3:ListBucket'],
      Resource: [`arn:aws:s3:::${escapeIamPattern(bucket)}`],
      // `<prefix>` exactly and anything below it; an empty key prefix is the whole bucket.
      Condition: { StringLike: { 's3:prefix': keyPrefixes.flatMap((k) => (k === '' ? ['*'] : [k, `${k}*`])) } },
    });
    if (mode === 'read-write') statements.push({ Sid: `TableUploads${i}`, Effect: 'Allow', Action: [...WRITE_BUCKET_ACTIONS], Resource: [`arn:aws:s3:::${escapeIamPattern(bucket)}`] });
  }
  statements.push({ Sid: 'BucketLocation', Effect: 'Allow', Action: ['s3:GetBucketLocation'], Resource: buckets.map((b) => `arn:aws:s3:::${escapeIamPattern(b)}`) });
  return { Version: '2012-10-17', Statement: statements };
}

/** Calls STS; injectable so the cache can be tested without a store. */
export type AssumeRole = (request: {
  readonly roleArn: string;
  readonly sessionName: string;
  readonly durationSeconds: number;
  readonly policy: string;
  readonly externalId: string | null;
}) => Promise<VendedS3Credentials>;

/** The SDK's `AssumeRole` against `endpoint` with the server's own keys (or its default chain). */
export function stsAssumeRole(options: { readonly region: string; readonly endpoint: string | null; readonly credentials: S3Credentials | undefined }): { readonly assumeRole: AssumeRole; readonly destroy: () => void } {
  const client = new STSClient({
    region: options.region,
    ...(options.endpoint !== null ? { endpoint: options.endpoint } : {}),
    ...(options.credentials !== undefined ? { credentials: options.credentials } : {}),
    maxAttempts: 3,
  });
  return {
    async assumeRole(r) {
      const out = await client.send(new AssumeRoleCommand({
        RoleArn: r.roleArn, RoleSessionName: r.sessionName, DurationSeconds: r.durationSeconds, Policy: r.policy,
        ...(r.externalId !== null ? { ExternalId: r.externalId } : {}),
      }));
      const c = out.Credentials;
      if (c?.AccessKeyId === undefined || c.SecretAccessKey === undefined || c.SessionToken === undefined || c.Expiration === undefined) {
        throw new Error('STS AssumeRole answered without credentials');
      }
      return { accessKeyId: c.AccessKeyId, secretAccessKey: c.SecretAccessKey, sessionToken: c.SessionToken, expiresAtMs: c.Expiration.getTime() };
    },
    destroy: () => client.destroy(),
  };
}

/** Why STS refused or failed, without anything secret (the SDK's messages carry none; ours neither). */
export class VendingError extends Error {
  readonly kind = 'vending';
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'VendingError';
  }
}

/** Sessions by (prefixes, mode), minted once per key at a time and reused until close to expiry. */
export class S3CredentialVendor {
  private readonly sessions = new Map<string, Promise<VendedS3Credentials>>();
  /** Sessions minted by STS (not served from the cache): what a test or a metric counts. */
  minted = 0;

  constructor(
    private readonly config: S3VendingConfig,
    private readonly assumeRole: AssumeRole,
    private readonly now: () => number = Date.now,
    /** Re-mint when less than this is left, so a client never gets keys about to die. */
    private readonly refreshMarginMs = 5 * 60_000,
    private readonly maxEntries = 10_000,
    /** Off: every call mints (server setting `storage.vending.cache_sessions`). */
    private readonly cacheSessions = true,
  ) {}

  /** Keys for `locations` (S3 URIs) in `mode`. */
  async vend(locations: readonly string[], mode: AccessMode): Promise<VendedS3Credentials> {
    const prefixes = locations.length === 1 ? [s3PrefixOf(locations[0]!)] : [...new Map(locations.map((l) => s3PrefixOf(l)).map((p) => [`${p.bucket}/${p.keyPrefix}`, p])).values()]
      .sort((a, b) => `${a.bucket}/${a.keyPrefix}`.localeCompare(`${b.bucket}/${b.keyPrefix}`));
    if (!this.cacheSessions) return this.mint(prefixes, mode);
    const key = `${mode}\n${prefixes.map((p) => `${p.bucket}/${p.keyPrefix}`).join('\n')}`;
    const cached = this.sessions.get(key);
    if (cached !== undefined) {
      const fresh = await cached.then((c) => (c.expiresAtMs - this.now() > this.refreshMarginMs ? c : undefined), () => undefined);
      if (fresh !== undefined) return fresh;
      // A failed or stale session: whoever sees it first replaces it; the others share the new one.
      if (this.sessions.get(key) === cached) this.sessions.delete(key);
      else return this.vend(locations, mode);
    }
    const minting = this.mint(prefixes, mode);
    if (this.sessions.size >= this.maxEntries) this.sessions.delete(this.sessions.keys().next().value as string);
    this.sessions.set(key, minting);
    minting.catch(() => {
      if (this.sessions.get(key) === minting) this.sessions.delete(key);
    });
    return minting;
  }

  private async mint(prefixes: readonly S3Prefix[], mode: AccessMode): Promise<VendedS3Credentials> {
    this.minted += 1;
    try {
      return await this.assumeRole({
        roleArn: this.config.roleArn,
        // Shows in the store's logs; names no table (a name may hold characters STS refuses).
        sessionName: `floe-${mode}-${Date.now().toString(36)}`,
        durationSeconds: this.config.durationSeconds,
        policy: JSON.stringify(s3SessionPolicy(prefixes, mode)),
        externalId: this.config.externalId,
      });
    } catch (e) {
      const name = (e as { name?: string }).name ?? 'Error';
      const status = (e as { $metadata?: { httpStatusCode?: number } }).$metadata?.httpStatusCode;
      throw new VendingError(`STS AssumeRole of ${this.config.roleArn} failed: ${name}${status !== undefined ? ` (HTTP ${status})` : ''}`, { cause: e });
    }
  }
}

/**
 * The `config` of a `storage-credentials` entry: the service spec's keys plus what real clients
 * read (`client.region`, `s3.endpoint`, `s3.path-style-access`, the refresh endpoint).
 */
export function s3CredentialConfig(c: VendedS3Credentials, store: { readonly region: string; readonly endpoint: string | null; readonly pathStyleAccess: boolean }, refreshEndpoint: string): ReadonlyMap<string, string> {
  return new Map<string, string>([
    ['s3.access-key-id', c.accessKeyId],
    ['s3.secret-access-key', c.secretAccessKey],
    ['s3.session-token', c.sessionToken],
    ['s3.region', store.region],
    ['s3.session-token-expires-at-ms', String(c.expiresAtMs)],
    ['client.region', store.region],
    ...(store.endpoint !== null ? [['s3.endpoint', store.endpoint] as [string, string]] : []),
    ['s3.path-style-access', String(store.pathStyleAccess)],
    ['client.refresh-credentials-endpoint', refreshEndpoint],
  ]);
}

/**
 * A catalog's S3 vendor: sessions of the profile's role, assumed with the server's own keys (`own`,
 * undefined for the SDK's default chain) at the vending STS endpoint or else the store's. One
 * session serves all of a table's locations, so every entry carries the same keys.
 */
export function s3TableVendor(profile: S3StorageProfile, config: S3VendingConfig, own: S3Credentials | undefined, options: TableVendorOptions): TableCredentialVendor {
  const sts = stsAssumeRole({ region: profile.region, endpoint: config.stsEndpoint ?? profile.endpoint, credentials: own });
  const vendor = new S3CredentialVendor(config, sts.assumeRole, options.now, undefined, undefined, options.cacheSessions);
  // A cached session serves every load of its tables for most of its life: its entries (the same
  // for the same locations and refresh endpoint) are made once per session, not per load.
  const entriesOf = new WeakMap<VendedS3Credentials, Map<string, readonly VendedEntry[]>>();
  return {
    store: 's3',
    async vend(locations, mode, refreshEndpoint) {
      const session = await vendor.vend(locations, mode);
      let made = entriesOf.get(session);
      if (made === undefined) entriesOf.set(session, made = new Map());
      const key = `${refreshEndpoint}\n${locations.join('\n')}`;
      let entries = made.get(key);
      if (entries === undefined) {
        entries = entriesSharing(locations, s3CredentialConfig(session, profile, refreshEndpoint));
        if (made.size < MAX_ENTRY_SETS_PER_SESSION) made.set(key, entries);
      }
      return entries;
    },
    isVendingFailure: (e): e is VendingError => e instanceof VendingError,
    close: sts.destroy,
  };
}
