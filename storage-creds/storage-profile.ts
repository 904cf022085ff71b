/**
 * Storage profiles: how Floe reaches a catalog's warehouse. A profile is a tagged union whose tag
 * is its wire `type`; only `s3` exists so far (S3 and S3-compatible stores). Its parts are split in
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
import { S3FileIO, parseS3Location } from './s3-file-io.js';
import type { S3Credentials } from './s3-file-io.js';
import type { S3VendingConfig } from './s3-vending.js';

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
}

export type StorageProfile = S3StorageProfile;

/** The secret half of a profile (S3 keys). Only ever held in memory or sealed. */
export interface StorageSecret {
  readonly type: 's3-keys';
  readonly accessKeyId: string;
  readonly secretAccessKey: string;
  readonly sessionToken?: string;
}

/** The warehouse location a profile names (`s3://bucket/prefix`). */
export function warehouseLocationOf(profile: StorageProfile): string {
  switch (profile.type) {
    case 's3':
      return `s3://${profile.bucket}${profile.keyPrefix === '' ? '' : `/${profile.keyPrefix}`}`;
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
  }
}

/** The server's own keys for a profile (undefined: the SDK's default chain). */
export function s3Credentials(profile: S3StorageProfile, secret: StorageSecret | null): S3Credentials | undefined {
  switch (profile.credentialSource) {
    case 'access-key':
      if (secret === null) throw new Error('the storage profile has no stored keys');
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
  }
}

/** Options that tests (and operators, through the profile) may tune on the FileIO. */
export interface ProfileFileIOOptions {
  readonly maxAttempts?: number;
}

/** The FileIO that serves a profile's warehouse. The caller closes it with `destroy` when done. */
export function fileIOForProfile(profile: StorageProfile, secret: StorageSecret | null, options: ProfileFileIOOptions = {}): S3FileIO {
  switch (profile.type) {
    case 's3': {
      const credentials = s3Credentials(profile, secret);
      return new S3FileIO({
        region: profile.region,
        ...(profile.endpoint !== null ? { endpoint: profile.endpoint } : {}),
        pathStyleAccess: profile.pathStyleAccess,
        ...(credentials !== undefined ? { credentials } : {}),
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
