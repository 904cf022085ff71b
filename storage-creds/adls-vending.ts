/**
 * ADLS credential vending: a SAS token that reaches exactly one table's directory, for a short
 * time, signed through `@azure/storage-file-datalake` with the account key (a service SAS) when the
 * profile has a shared key, or with a **user delegation key** (a user-delegation SAS) when the
 * profile signs in as an Entra ID service principal.
 *
 * What a SAS can be limited to decides what is safe:
 * - A **directory SAS** (`sr=d`, `sdd` = the directory's depth) grants the directory and everything
 *   below it, and nothing beside it. It exists only on accounts with a hierarchical namespace
 *   (ADLS Gen2), so that is the only kind Floe vends.
 * - On a plain Blob container (no hierarchical namespace) a SAS is for the whole container or for
 *   one named blob: a container SAS would reach every table of the warehouse, and per-blob tokens
 *   cannot cover files a client is about to write. Floe refuses to vend there (the profile is
 *   refused with `vended-credentials` unless it says `hierarchical-namespace: true`).
 *
 * Permissions by mode: read `r` (read) + `l` (list); read-write adds `a` (append), `c` (create),
 * `w` (write), `d` (delete). HTTPS only unless the endpoint is plain HTTP (an emulator). The token
 * starts a few minutes in the past (clock skew between Floe and Azure) and lives
 * `durationSeconds`. Tokens are cached per (locations, mode) and shared by concurrent callers (one
 * signing in flight per key) until less than `refreshMarginMs` of their life is left.
 *
 * User delegation keys (`UserDelegationKeys`): Get User Delegation Key, called with the service
 * principal's token, returns a key valid for up to 7 days that signs any number of SAS tokens; a
 * SAS signed with it stops working when the key expires, whatever its own `se`. So one key is
 * fetched for nearly 7 days and reused; from a day before its expiry a new one is fetched in the
 * background while the old one keeps signing (a day outlives any SAS, 12 hours at most), and only
 * a key that could not cover a new token is waited for. One fetch is in flight at a time.
 */
import { BlobServiceClient, StorageSharedKeyCredential } from '@azure/storage-blob';
import type { TokenCredential } from '@azure/core-auth';
import {
  DataLakeSASPermissions, DirectorySASPermissions, SASProtocol, generateDataLakeSASQueryParameters, type UserDelegationKey,
} from '@azure/storage-file-datalake';
import { describeAdlsFailure, parseAdlsLocation } from './adls-file-io.js';
import type { AdlsSasKey } from './adls-presign.js';
import { adlsAuth, adlsBlobEndpointOf, type AdlsStorageProfile, type StorageSecret } from './storage-profile.js';
import type { AccessMode } from './s3-vending.js';
import type { TableCredentialVendor, TableVendorOptions } from './table-vendor.js';

/** How a profile mints SAS tokens (its `vended-credentials` object). */
export interface AdlsVendingConfig {
  /** Lifetime of a token, seconds. */
  readonly durationSeconds: number;
}

export const DEFAULT_ADLS_SAS_SECONDS = 3600;
export const MIN_ADLS_SAS_SECONDS = 300;
export const MAX_ADLS_SAS_SECONDS = 43_200;

/** What a SAS grants: a directory and everything below it, or (for tests on a store without directories) one blob. */
export type SasScope =
  | { readonly kind: 'directory'; readonly filesystem: string; readonly path: string }
  | { readonly kind: 'blob'; readonly filesystem: string; readonly path: string };

/** A signed token (the query string without `?`) and when it stops working. */
export interface AdlsSasToken {
  readonly token: string;
  readonly expiresAtMs: number;
}

/** `r`,`l` to read; read-write adds `a`,`c`,`w`,`d`. */
export function sasPermissionsOf(mode: AccessMode, kind: SasScope['kind']): string {
  const letters = mode === 'read-write' ? 'racwdl' : 'rl';
  // A blob SAS has no list permission; parse() validates and orders the letters as Azure wants.
  return kind === 'directory' ? DirectorySASPermissions.parse(letters).toString() : DataLakeSASPermissions.parse(letters.replace('l', '')).toString();
}

/** Number of directories from the filesystem root to `path` (`wh/db/t` → 3): the `sdd` of a directory SAS. */
export function directoryDepth(path: string): number {
  return path.split('/').filter((s) => s !== '').length;
}

/** Clock skew allowed for: tokens and keys start this long before they are made. */
const SKEW_MS = 5 * 60_000;

/**
 * A SAS for `scope` in `mode`, signed with `signer`, valid from `nowMs` − 5 min to `nowMs` +
 * `durationSeconds`. Pure but for the HMAC; `https` unless `allowHttp` (emulators). A user
 * delegation key must outlive the token (a SAS dies with its key).
 */
export function signSas(signer: AdlsSasKey, scope: SasScope, mode: AccessMode, nowMs: number, durationSeconds: number, allowHttp = false): AdlsSasToken {
  const path = scope.path.replace(/^\/+|\/+$/g, '');
  if (path === '') throw new Error('a SAS is never minted for a whole filesystem');
  if (path.split('/').some((s) => s === '.' || s === '..')) throw new Error('a SAS is never minted for a path with . or .. segments');
  const expiresAtMs = nowMs + durationSeconds * 1000;
  if (signer.kind === 'user-delegation' && signer.key.signedExpiresOn.getTime() < expiresAtMs) {
    throw new Error(`the user delegation key expires at ${signer.key.signedExpiresOn.toISOString()}, before the token would`);
  }
  const permissions = sasPermissionsOf(mode, scope.kind);
  const values = {
    fileSystemName: scope.filesystem,
    pathName: path,
    ...(scope.kind === 'directory' ? { isDirectory: true, directoryDepth: directoryDepth(path), permissions: DirectorySASPermissions.parse(permissions) } : { permissions: DataLakeSASPermissions.parse(permissions) }),
    startsOn: new Date(nowMs - SKEW_MS),
    expiresOn: new Date(expiresAtMs),
    protocol: allowHttp ? SASProtocol.HttpsAndHttp : SASProtocol.Https,
  };
  const params = signer.kind === 'shared-key'
    ? generateDataLakeSASQueryParameters(values, new StorageSharedKeyCredential(signer.accountName, signer.accountKey))
    : generateDataLakeSASQueryParameters(values, signer.key, signer.accountName);
  return { token: params.toString(), expiresAtMs };
}

/** Why a SAS could not be minted (never names the key). */
export class AdlsVendingError extends Error {
  readonly kind = 'adls-vending';
  constructor(message: string) {
    super(message);
    this.name = 'AdlsVendingError';
  }
}

/** One vended token per table location. */
export interface VendedAdlsLocation {
  readonly location: string;
  readonly sas: AdlsSasToken;
}

/** Lifetime asked of a user delegation key: Azure's limit is 7 days from now; an hour is left for clock skew. */
export const USER_DELEGATION_KEY_LIFETIME_MS = 7 * 24 * 3_600_000 - 3_600_000;
/** A key with less than this left is replaced (in the background while it still covers new tokens). */
export const USER_DELEGATION_KEY_REFRESH_MS = 24 * 3_600_000;
/**
 * The longest life of any other token signed with these keys (stage URLs): 6 days fits within a key
 * fetched less than 23 hours before, so long tokens make at most about one fetch a day.
 */
export const USER_DELEGATION_SAS_MAX_SECONDS = 6 * 24 * 3600;

/** Asks the account for a user delegation key valid from `startsOn` to `expiresOn`. */
export type FetchUserDelegationKey = (startsOn: Date, expiresOn: Date) => Promise<UserDelegationKey>;

/** Get User Delegation Key on the account's blob endpoint, with the service principal's token. */
export function userDelegationKeyFetcher(blobEndpoint: string, credential: TokenCredential, requestTimeoutMs = 60_000): FetchUserDelegationKey {
  const service = new BlobServiceClient(blobEndpoint.replace(/\/+$/, ''), credential, { retryOptions: { maxTries: 3, tryTimeoutInMs: requestTimeoutMs } });
  return async (startsOn, expiresOn) => {
    try {
      const r = await service.getUserDelegationKey(startsOn, expiresOn);
      return {
        signedObjectId: r.signedObjectId, signedTenantId: r.signedTenantId, signedStartsOn: r.signedStartsOn, signedExpiresOn: r.signedExpiresOn,
        signedService: r.signedService, signedVersion: r.signedVersion, value: r.value,
      };
    } catch (e) {
      throw new AdlsVendingError(`could not get a user delegation key: ${describeAdlsFailure(e).detail}`);
    }
  };
}

/**
 * The current user delegation key of one account, fetched for ~7 days and replaced from a day
 * before its expiry (module comment). Shared by every token the vendor signs.
 */
export class UserDelegationKeys {
  private current: UserDelegationKey | undefined;
  private inFlight: Promise<UserDelegationKey> | undefined;
  /** Keys fetched (Get User Delegation Key calls that answered): what a test counts. */
  fetched = 0;
  /** The last background refresh that failed (the old key kept signing), for diagnosis. */
  lastRefreshError: Error | undefined;

  constructor(
    private readonly fetch: FetchUserDelegationKey,
    private readonly now: () => number = Date.now,
    private readonly lifetimeMs = USER_DELEGATION_KEY_LIFETIME_MS,
    private readonly refreshMs = USER_DELEGATION_KEY_REFRESH_MS,
  ) {}

  /** A key that is valid at least until `untilMs`. */
  async keyFor(untilMs: number): Promise<UserDelegationKey> {
    const current = this.current;
    if (current !== undefined && current.signedExpiresOn.getTime() >= untilMs) {
      if (current.signedExpiresOn.getTime() - this.now() > this.refreshMs) return current;
      // Close to expiry but still covering this token: sign with it, replace it in the background.
      this.refresh().catch((e: unknown) => {
        this.lastRefreshError = e as Error;
      });
      return current;
    }
    // No key, or one that would die before this token: wait for a new one.
    const key = await this.refresh();
    if (key.signedExpiresOn.getTime() < untilMs) {
      throw new AdlsVendingError(`the user delegation key the account returned expires at ${key.signedExpiresOn.toISOString()}, before the token would`);
    }
    return key;
  }

  private refresh(): Promise<UserDelegationKey> {
    if (this.inFlight !== undefined) return this.inFlight;
    const now = this.now();
    const fetching = this.fetch(new Date(now - SKEW_MS), new Date(now + this.lifetimeMs)).then((key) => {
      this.fetched += 1;
      this.current = key;
      this.lastRefreshError = undefined;
      return key;
    });
    this.inFlight = fetching;
    const clear = (): void => {
      if (this.inFlight === fetching) this.inFlight = undefined;
    };
    fetching.then(clear, clear);
    return fetching;
  }
}

/** What a profile's SAS tokens are signed with: the account key, or the account's user delegation keys. */
export type SasKeySource =
  | { readonly type: 'account-key'; readonly accountName: string; readonly accountKey: string }
  | { readonly type: 'user-delegation'; readonly accountName: string; readonly keys: UserDelegationKeys };

/**
 * The SAS key source of an ADLS profile: its account key (service SAS), or, with client
 * credentials, user delegation keys the service principal gets from the account (user-delegation
 * SAS). Used by vending and by stage presigning; each keeps one per catalog.
 */
export function adlsSasKeySource(profile: AdlsStorageProfile, secret: StorageSecret | null, now: () => number = Date.now): SasKeySource {
  const auth = adlsAuth(profile, secret);
  switch (auth.type) {
    case 'shared-key':
      return { type: 'account-key', accountName: profile.accountName, accountKey: auth.accountKey };
    case 'token':
      return { type: 'user-delegation', accountName: profile.accountName, keys: new UserDelegationKeys(userDelegationKeyFetcher(adlsBlobEndpointOf(profile), auth.credential), now) };
  }
}

/** The key to sign a SAS valid until `untilMs` with (a user delegation key that outlives it). */
export async function sasKeyFor(source: SasKeySource, untilMs: number): Promise<AdlsSasKey> {
  switch (source.type) {
    case 'account-key':
      return { kind: 'shared-key', accountName: source.accountName, accountKey: source.accountKey };
    case 'user-delegation':
      return { kind: 'user-delegation', accountName: source.accountName, key: await source.keys.keyFor(untilMs) };
  }
}

/** Tokens by (locations, mode), minted once per key and reused until close to expiry. */
export class AdlsCredentialVendor {
  private readonly tokens = new Map<string, Promise<readonly VendedAdlsLocation[]>>();
  /** Tokens signed (not served from the cache): what a test counts. */
  minted = 0;

  private readonly accountName: string;

  constructor(
    private readonly keySource: SasKeySource,
    private readonly config: AdlsVendingConfig,
    private readonly allowHttp: boolean,
    private readonly now: () => number = Date.now,
    private readonly maxEntries = 10_000,
  ) {
    this.accountName = keySource.accountName;
  }

  /** Re-mint when less than this is left: 5 minutes, or a quarter of a short lifetime. */
  private get refreshMarginMs(): number {
    return Math.min(5 * 60_000, (this.config.durationSeconds * 1000) / 4);
  }

  /** A directory SAS for each of `locations` (table directories in the account) in `mode`. */
  async vend(locations: readonly string[], mode: AccessMode): Promise<readonly VendedAdlsLocation[]> {
    const sorted = [...new Set(locations)].sort();
    const key = `${mode}\n${sorted.join('\n')}`;
    const cached = this.tokens.get(key);
    if (cached !== undefined) {
      const fresh = await cached.then((v) => (v.every((x) => x.sas.expiresAtMs - this.now() > this.refreshMarginMs) ? v : undefined), () => undefined);
      if (fresh !== undefined) return fresh;
      if (this.tokens.get(key) === cached) this.tokens.delete(key);
      else return this.vend(locations, mode);
    }
    const minting = this.mint(sorted, mode);
    if (this.tokens.size >= this.maxEntries) this.tokens.delete(this.tokens.keys().next().value as string);
    this.tokens.set(key, minting);
    minting.catch(() => {
      if (this.tokens.get(key) === minting) this.tokens.delete(key);
    });
    return minting;
  }

  private async mint(locations: readonly string[], mode: AccessMode): Promise<readonly VendedAdlsLocation[]> {
    for (const location of locations) {
      if (parseAdlsLocation(location).account !== this.accountName) throw new AdlsVendingError(`the location ${location} is not in storage account ${this.accountName}`);
    }
    const signer = await sasKeyFor(this.keySource, this.now() + this.config.durationSeconds * 1000);
    this.minted += 1;
    const now = this.now();
    return locations.map((location) => {
      const l = parseAdlsLocation(location);
      try {
        return { location, sas: signSas(signer, { kind: 'directory', filesystem: l.container, path: l.path }, mode, now, this.config.durationSeconds, this.allowHttp) };
      } catch (e) {
        throw new AdlsVendingError(`could not sign a SAS for ${location}: ${(e as Error).message}`);
      }
    });
  }
}

/**
 * The `config` of a `storage-credentials` entry: the service spec's keys plus the per-account keys
 * real clients read (Java's `adls.sas-token.<account host>`, PyIceberg's `adls.sas-token`), and the
 * refresh endpoint.
 */
export function adlsCredentialConfig(location: string, sas: AdlsSasToken, refreshEndpoint: string): ReadonlyMap<string, string> {
  const l = parseAdlsLocation(location);
  return new Map<string, string>([
    ['adls.account-name', l.account],
    ['adls.sas-token', sas.token],
    ['adls.sas-token-expires-at-ms', String(sas.expiresAtMs)],
    [`adls.sas-token.${l.account}`, sas.token],
    [`adls.sas-token.${l.host}`, sas.token],
    ['adls.refresh-credentials-endpoint', refreshEndpoint],
  ]);
}

/**
 * A catalog's ADLS vendor: directory SASes signed with the account key or a user delegation key
 * (`adlsSasKeySource`; `allowHttp` for an http endpoint such as Azurite's). Each location gets its
 * own SAS, so each entry its own config.
 */
export function adlsTableVendor(keys: SasKeySource, config: AdlsVendingConfig, allowHttp: boolean, options: Pick<TableVendorOptions, 'now'>): TableCredentialVendor {
  const vendor = new AdlsCredentialVendor(keys, config, allowHttp, options.now);
  return {
    store: 'adls',
    async vend(locations, mode, refreshEndpoint) {
      return (await vendor.vend(locations, mode)).map((v) => ({ prefix: `${v.location}/`, config: adlsCredentialConfig(v.location, v.sas, refreshEndpoint) }));
    },
    isVendingFailure: (e): e is AdlsVendingError => e instanceof AdlsVendingError,
    close: () => undefined,
  };
}
