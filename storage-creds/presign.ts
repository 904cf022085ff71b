/**
 * The presigners of stage uploads, one per object store (docs/loading.md, "Uploads"): S3 SigV4
 * URLs (s3-presign.ts), Azure blob SAS URLs (adls-presign.ts) and GCS V4 signed URLs and
 * resumable sessions (gcs-presign.ts). A presigner signs with the catalog's own credentials from
 * its storage profile; the URLs it hands out are the only credential a client gets.
 */
import { AdlsPresigner } from './adls-presign.js';
import { GcsPresigner } from './gcs-presign.js';
import { S3Presigner, s3PresignerForProfile } from './s3-presign.js';
import { adlsAuth, adlsBlobEndpointOf, gcsCredentials, type AdlsStorageProfile, type StorageProfile, type StorageSecret } from './storage-profile.js';
import { USER_DELEGATION_SAS_MAX_SECONDS, adlsSasKeySource, sasKeyFor } from './adls-vending.js';
import { StorageSharedKeyCredential } from '@azure/storage-blob';

/** When a URL is signed and for how long. */
export interface PresignTime {
  readonly now: number;
  readonly expiresInSeconds: number;
}

/** A URL and the headers the client must send with it (as signed, where the store signs them). */
export interface PresignedRequest {
  readonly url: string;
  readonly headers: Readonly<Record<string, string>>;
}

/** SigV4 and GCS V4 refuse longer lifetimes; Floe holds Azure SAS tokens to the same. */
export const MAX_PRESIGN_SECONDS = 7 * 24 * 3600;

export function checkPresignTime(time: PresignTime): void {
  if (!Number.isInteger(time.expiresInSeconds) || time.expiresInSeconds < 1 || time.expiresInSeconds > MAX_PRESIGN_SECONDS) {
    throw new RangeError(`a presigned URL lives 1 to ${MAX_PRESIGN_SECONDS} seconds`);
  }
}

/** A catalog's presigner, by its store. */
export type StorePresigner = S3Presigner | AdlsPresigner | GcsPresigner;

/** The presigner of a profile's store, signing with the catalog's own credentials. The caller destroys it. */
export function presignerForProfile(profile: StorageProfile, secret: StorageSecret | null): StorePresigner {
  switch (profile.type) {
    case 's3':
      return s3PresignerForProfile(profile, secret);
    case 'adls':
      return adlsPresignerForProfile(profile, secret);
    case 'gcs':
      return new GcsPresigner({
        credentials: gcsCredentials(profile, secret),
        ...(profile.endpoint !== null ? { apiEndpoint: profile.endpoint } : {}),
        ...(profile.projectId !== null ? { projectId: profile.projectId } : {}),
      });
  }
}

/**
 * An ADLS profile's presigner: SAS tokens signed with the account key (a service SAS), or with a
 * user delegation key the profile's Entra ID service principal gets from the account (a
 * user-delegation SAS; the presigner keeps the key for days, as vending does).
 */
function adlsPresignerForProfile(profile: AdlsStorageProfile, secret: StorageSecret | null): AdlsPresigner {
  const auth = adlsAuth(profile, secret);
  const keys = adlsSasKeySource(profile, secret);
  return new AdlsPresigner({
    accountName: profile.accountName, endpoint: adlsBlobEndpointOf(profile),
    credential: auth.type === 'shared-key' ? new StorageSharedKeyCredential(profile.accountName, auth.accountKey) : auth.credential,
    sasKey: (untilMs) => sasKeyFor(keys, untilMs),
    // A key is asked for 7 days less an hour; a URL of at most 6 days fits one fetched within the last 23 hours.
    ...(keys.type === 'user-delegation' ? { maxExpiresInSeconds: USER_DELEGATION_SAS_MAX_SECONDS } : {}),
  });
}
