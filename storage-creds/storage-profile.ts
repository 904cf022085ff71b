/**
 * Storage profiles: how Floe reaches a catalog's warehouse. A profile is a tagged union whose tag
 * is its wire `type`; `s3` (S3 and S3-compatible stores), `adls` or `gcs`. Its parts are split in
 * two: the profile proper (bucket, prefix, region, endpoint, addressing, where credentials come
 * from), which is stored as JSON and returned to clients, and the **secret** (the keys), which the
 * catalog stores sealed under the server key and never returns.
 *
 * `probeStorage` is what catalog creation runs before accepting a profile: it writes, reads,
 * lists and deletes one object under the warehouse and says which step failed and why.
 */
import { randomUUID } from 'node:crypto';
import { StorageError } from './file-io.js';
import type { FileIO } from './file-io.js';
import { S3FileIO, S3_SCHEMES, parseS3Location } from './s3-file-io.js';
import type { S3Credentials } from './s3-file-io.js';
import { assumedRoleProvider, stsAssumeRoleCall } from './s3-assumed-role.js';
import type { S3VendingConfig } from './s3-vending.js';
import { ADLS_SCHEMES, AdlsFileIO, adlsHostServed, parseAdlsLocation, type AdlsAuth } from './adls-file-io.js';
import { entraCredential, type EntraServicePrincipal } from './entra-auth.js';
import type { AdlsVendingConfig } from './adls-vending.js';
import { GCS_SCHEMES, GcsFileIO, parseGcsLocation } from './gcs-file-io.js';
import { parseServiceAccountKey, type GcsCredentials } from './gcs-auth.js';
import type { GcsVendingConfig } from './gcs-vending.js';

/** Where an S3 profile's credentials come from. */
export type S3CredentialSource =
  | 'access-key' // keys given with the profile, sealed at rest
  | 'environment' // AWS_ACCESS_KEY_ID / AWS_SECRET_ACCESS_KEY / AWS_SESSION_TOKEN of the server process
  | 'default-chain'; // the AWS SDK's default provider chain (environment, shared files, instance roles, …)

export interface S3StorageProfile {
  readonly type: 's3';
  readonly bucket: string;
  /** Key prefix of the warehouse inside the bucket, without leading or trailing `/` ('' = bucket root). */
  readonly keyPrefix: string;
  readonly region: string;
  readonly endpoint: string | null;
  readonly pathStyleAccess: boolean;
  readonly credentialSource: S3CredentialSource;
  /** How table-scoped credentials are minted for clients (docs/vending.md); absent = no vending. */
  readonly vendedCredentials?: S3VendingConfig;
  /**
   * The role the server itself assumes to reach the warehouse (the credentials above call STS
   * `AssumeRole`; sessions are refreshed before they expire: s3-assumed-role.ts).
   */
  readonly assumeRole?: { readonly roleArn: string; readonly externalId: string | null; readonly stsEndpoint: string | null };
}

/**
 * An Azure storage account (ADLS Gen2 or plain Blob): one filesystem (container) and a prefix in
 * it. Locations are `abfss://<filesystem>@<account>.dfs.<suffix>/<prefix>`; every request goes to
 * the account's blob endpoint (docs/storage.md). The server reaches it with the account key or as
 * an Entra ID service principal (`credentialSource`).
 */
export type AdlsStorageProfile = AdlsStorageFields & (
  | { readonly credentialSource: 'shared-key' } // the account key, sealed at rest
  | { readonly credentialSource: 'client-credentials'; readonly servicePrincipal: EntraServicePrincipal } // its client secret sealed at rest
);

interface AdlsStorageFields {
  readonly type: 'adls';
  readonly accountName: string;
  readonly filesystem: string;
  /** Path of the warehouse inside the filesystem, without leading or trailing `/` ('' = its root). */
  readonly keyPrefix: string;
  /** DNS suffix of the account's endpoints (`core.windows.net`; other clouds have others). */
  readonly endpointSuffix: string;
  /** The blob service URL, when not `https://<account>.blob.<suffix>` (Azurite, private endpoints). */
  readonly endpoint: string | null;
  /** Whether the account has a hierarchical namespace (ADLS Gen2): only then can a SAS be limited to a directory. */
  readonly hierarchicalNamespace: boolean;
  /** How table-scoped SAS tokens are minted (docs/vending.md); absent = no vending. */
  readonly vendedCredentials?: AdlsVendingConfig;
}

/**
 * A Google Cloud Storage bucket and a prefix in it (`gs://<bucket>/<prefix>`), reached through the
 * JSON API (docs/storage.md).
 */
export interface GcsStorageProfile {
  readonly type: 'gcs';
  readonly bucket: string;
  /** Object-name prefix of the warehouse, without leading or trailing `/` ('' = bucket root). */
  readonly keyPrefix: string;
  /** The project, handed to clients as `gcs.project-id` (and used for quota); null when not given. */
  readonly projectId: string | null;
  /** The JSON API endpoint when not `https://storage.googleapis.com` (private endpoints, tests). */
  readonly endpoint: string | null;
  /** A service-account JSON key sealed at rest, or Application Default Credentials of the server. */
  readonly credentialSource: 'service-account-key' | 'application-default';
  /** How table-scoped tokens are minted (docs/vending.md); absent = no vending. */
  readonly vendedCredentials?: GcsVendingConfig;
}

export type StorageProfile = S3StorageProfile | AdlsStorageProfile | GcsStorageProfile;

/** The secret half of an S3 profile (its keys). Only ever held in memory or sealed. */
export interface S3KeysSecret {
  readonly type: 's3-keys';
  readonly accessKeyId: string;
  readonly secretAccessKey: string;
  readonly sessionToken?: string;
}

/** The secret half of a shared-key ADLS profile: the storage account key (base64). */
export interface AdlsSharedKeySecret {
  readonly type: 'adls-shared-key';
  readonly accountKey: string;
}

/** The secret half of a client-credentials ADLS profile: the service principal's client secret. */
export interface AdlsClientSecret {
  readonly type: 'adls-client-secret';
  readonly clientSecret: string;
}

/** The secret half of a GCS profile: the service-account key as JSON text. */
export interface GcsServiceAccountSecret {
  readonly type: 'gcs-service-account-key';
  readonly key: string;
}

/** The secret half of a profile. Only ever held in memory or sealed. */
export type StorageSecret = S3KeysSecret | AdlsSharedKeySecret | AdlsClientSecret | GcsServiceAccountSecret;

/** How the server authenticates to a GCS profile's bucket. */
export function gcsCredentials(profile: GcsStorageProfile, secret: StorageSecret | null): GcsCredentials {
  switch (profile.credentialSource) {
    case 'service-account-key':
      if (secret === null || secret.type !== 'gcs-service-account-key') throw new StorageError(warehouseLocationOf(profile), 'authenticate', 'access-denied', 'the storage profile has no stored service-account key');
      return { type: 'service-account', key: parseServiceAccountKey(secret.key) };
    case 'application-default':
      return { type: 'application-default' };
  }
}

/** `https://<account>.blob.<suffix>`, or the profile's endpoint. */
export function adlsBlobEndpointOf(profile: AdlsStorageProfile): string {
  return (profile.endpoint ?? `https://${profile.accountName}.blob.${profile.endpointSuffix}`).replace(/\/+$/, '');
}

/**
 * How the server authenticates to an ADLS profile's account: its account key, or a token
 * credential signing in to Entra ID as the profile's service principal (entra-auth.ts).
 */
export function adlsAuth(profile: AdlsStorageProfile, secret: StorageSecret | null): AdlsAuth {
  switch (profile.credentialSource) {
    case 'shared-key':
      if (secret === null || secret.type !== 'adls-shared-key') throw new StorageError(warehouseLocationOf(profile), 'authenticate', 'access-denied', 'the storage profile has no stored account key');
      return { type: 'shared-key', accountKey: secret.accountKey };
    case 'client-credentials':
      if (secret === null || secret.type !== 'adls-client-secret') throw new StorageError(warehouseLocationOf(profile), 'authenticate', 'access-denied', 'the storage profile has no stored client secret');
      return { type: 'token', credential: entraCredential(profile.servicePrincipal, secret.clientSecret) };
  }
}

/** The warehouse location a profile names (`s3://bucket/prefix`). */
export function warehouseLocationOf(profile: StorageProfile): string {
  switch (profile.type) {
    case 's3':
      return `s3://${profile.bucket}${profile.keyPrefix === '' ? '' : `/${profile.keyPrefix}`}`;
    case 'gcs':
      return `gs://${profile.bucket}${profile.keyPrefix === '' ? '' : `/${profile.keyPrefix}`}`;
    case 'adls':
      return `abfss://${profile.filesystem}@${profile.accountName}.dfs.${profile.endpointSuffix}${profile.keyPrefix === '' ? '' : `/${profile.keyPrefix}`}`;
  }
}

/**
 * Whether `location` lies inside the profile's bucket (any of `s3`/`s3a`/`s3n`). Used to refuse a
 * warehouse location the profile's FileIO would not serve.
 */
export function profileServes(profile: StorageProfile, location: string): boolean {
  switch (profile.type) {
    case 's3':
      try {
        return parseS3Location(location).bucket === profile.bucket;
      } catch {
        return false;
      }
    case 'gcs':
      try {
        return parseGcsLocation(location).bucket === profile.bucket;
      } catch {
        return false;
      }
    case 'adls':
      try {
        const l = parseAdlsLocation(location);
        return adlsHostServed(l, profile.accountName, profile.endpointSuffix) && l.container === profile.filesystem;
      } catch {
        return false;
      }
  }
}

/** The server's own keys for a profile (undefined: the SDK's default chain). */
export function s3Credentials(profile: S3StorageProfile, secret: StorageSecret | null): S3Credentials | undefined {
  switch (profile.credentialSource) {
    case 'access-key':
      if (secret === null || secret.type !== 's3-keys') throw new Error('the storage profile has no stored keys');
      return { accessKeyId: secret.accessKeyId, secretAccessKey: secret.secretAccessKey, ...(secret.sessionToken !== undefined ? { sessionToken: secret.sessionToken } : {}) };
    case 'environment': {
      const accessKeyId = process.env.AWS_ACCESS_KEY_ID;
      const secretAccessKey = process.env.AWS_SECRET_ACCESS_KEY;
      if (!accessKeyId || !secretAccessKey) throw new StorageError(warehouseLocationOf(profile), 'authenticate', 'access-denied', 'credentials come from the environment, but AWS_ACCESS_KEY_ID or AWS_SECRET_ACCESS_KEY is not set');
      const sessionToken = process.env.AWS_SESSION_TOKEN;
      return { accessKeyId, secretAccessKey, ...(sessionToken ? { sessionToken } : {}) };
    }
    case 'default-chain':
      return undefined;
  }
}

/**
 * The Iceberg FileIO properties an engine beside Floe (Spark, Trino, PyIceberg) needs to reach the
 * warehouse with its own credentials: endpoint, addressing and region, never a key. Floe puts
 * them in `/v1/config` defaults, which a client's own settings override.
 */
export function clientPropertiesOf(profile: StorageProfile): ReadonlyMap<string, string> {
  switch (profile.type) {
    case 's3':
      return new Map([
        ...(profile.endpoint !== null ? [['s3.endpoint', profile.endpoint] as const] : []),
        ['s3.path-style-access', String(profile.pathStyleAccess)],
        ['s3.region', profile.region],
        ['client.region', profile.region],
      ]);
    case 'gcs':
      // Project and endpoint only: the token is the client's own or a vended one.
      return new Map([
        ...(profile.projectId !== null ? [['gcs.project-id', profile.projectId] as const] : []),
        ...(profile.endpoint !== null ? [['gcs.service.host', profile.endpoint] as const] : []),
      ]);
    case 'adls':
      // The account only: how an engine authenticates (its own key, a vended SAS) is its business.
      return new Map([['adls.account-name', profile.accountName]]);
  }
}

/** The location schemes a profile's FileIO serves (a catalog routes these to it). */
export function profileSchemes(profile: StorageProfile): ReadonlySet<string> {
  switch (profile.type) {
    case 's3':
      return S3_SCHEMES;
    case 'adls':
      return ADLS_SCHEMES;
    case 'gcs':
      return GCS_SCHEMES;
  }
}

/** Options that tests (and operators, through the profile) may tune on the FileIO. */
export interface ProfileFileIOOptions {
  readonly maxAttempts?: number;
}

/** A profile's FileIO: closed with `destroy` when its catalog goes. */
export type ProfileFileIO = FileIO & { destroy(): void };

/** The FileIO that serves a profile's warehouse. The caller closes it with `destroy` when done. */
export function fileIOForProfile(profile: StorageProfile, secret: StorageSecret | null, options: ProfileFileIOOptions = {}): ProfileFileIO {
  switch (profile.type) {
    case 'gcs':
      return new GcsFileIO({
        credentials: gcsCredentials(profile, secret),
        ...(profile.endpoint !== null ? { apiEndpoint: profile.endpoint } : {}),
        ...(profile.projectId !== null ? { projectId: profile.projectId } : {}),
        ...(options.maxAttempts !== undefined ? { maxRetries: Math.max(0, options.maxAttempts - 1), maxRetryDelaySeconds: 1 } : {}),
      });
    case 'adls':
      return new AdlsFileIO({
        accountName: profile.accountName, endpoint: adlsBlobEndpointOf(profile), endpointSuffix: profile.endpointSuffix,
        auth: adlsAuth(profile, secret),
        ...(options.maxAttempts !== undefined ? { maxAttempts: options.maxAttempts } : {}),
      });
    case 's3': {
      const base = s3Credentials(profile, secret);
      const role = profile.assumeRole;
      // With a role the profile's keys only call STS; S3 sees the session's keys.
      const sts = role === undefined ? undefined : stsAssumeRoleCall({
        region: profile.region, endpoint: role.stsEndpoint ?? profile.endpoint, base, roleArn: role.roleArn, externalId: role.externalId,
      });
      const credentials = sts === undefined ? base : assumedRoleProvider({ assumeRole: sts.call });
      return new S3FileIO({
        region: profile.region,
        ...(profile.endpoint !== null ? { endpoint: profile.endpoint } : {}),
        pathStyleAccess: profile.pathStyleAccess,
        ...(credentials !== undefined ? { credentials } : {}),
        ...(sts !== undefined ? { onDestroy: sts.destroy } : {}),
        ...(options.maxAttempts !== undefined ? { maxAttempts: options.maxAttempts } : {}),
      });
    }
  }
}

/** A profile that failed its probe: which step, and the store's reason. */
export class StorageProbeError extends Error {
  readonly kind = 'storage-probe';
  constructor(
    readonly step: 'write' | 'read' | 'list' | 'delete',
    readonly detail: string,
  ) {
    super(`Storage profile check failed: could not ${step} a probe object: ${detail}`);
    this.name = 'StorageProbeError';
  }
}

function reason(e: unknown): string {
  if (e instanceof StorageError) return `${e.detail} (${e.location})`;
  return e instanceof Error ? e.message : String(e);
}

/**
 * Writes a probe object under `warehouse`, reads it back, finds it by listing, deletes it and checks
 * it is gone. Throws `StorageProbeError` naming the step that failed.
 */
export async function probeStorage(io: FileIO, warehouse: string): Promise<void> {
  const location = `${warehouse.replace(/\/+$/, '')}/.floe-probe-${randomUUID()}`;
  const bytes = Buffer.from(`floe storage probe ${new Date().toISOString()}`);
  const step = async <T>(name: StorageProbeError['step'], op: () => Promise<T>): Promise<T> => {
    try {
      return await op();
    } catch (e) {
      if (e instanceof StorageProbeError) throw e;
      throw new StorageProbeError(name, reason(e));
    }
  };
  await step('write', () => io.write(location, bytes));
  try {
    await step('read', async () => {
      const back = await io.read(location);
      if (!back.equals(bytes)) throw new StorageProbeError('read', `the object read back differs from the one written (${location})`);
    });
    await step('list', async () => {
      const listed = await io.list(location);
      if (!listed.some((f) => f.location === location)) throw new StorageProbeError('list', `the object written is not listed (${location})`);
    });
  } catch (e) {
    // The first failure is the one to report; the probe object goes if it can.
    await io.delete(location).catch(() => undefined);
    throw e;
  }
  await step('delete', async () => {
    await io.delete(location);
    if (await io.exists(location)) throw new StorageProbeError('delete', `the object is still there after the delete (${location})`);
  });
}
