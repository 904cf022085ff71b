/**
 * Presigned stage uploads and downloads on an Azure Blob / ADLS warehouse (docs/loading.md,
 * "Uploads"): a blob-scoped service SAS (`sr=b`) for exactly the staged file's blob, signed by
 * `generateBlobSASQueryParameters` of `@azure/storage-blob`, plus the calls Floe makes itself with
 * its own credentials to finish a block upload (Get Block List, Put Block List).
 *
 * What the SAS binds, and so what Azure enforces for a client that holds only the URL:
 * - the blob: the container and blob name are in the string to sign, so an edited URL fails
 *   (403 `AuthenticationFailed`);
 * - the operations: an upload SAS grants `c` (create) and `w` (write) only, which is Put Blob, Put
 *   Block and Put Block List on that blob; a read, a delete or a listing with it is refused (403
 *   `AuthorizationPermissionMismatch`); a download SAS grants `r` only;
 * - the time: `st` (a few minutes back, for clock skew) to `se`, checked by the store;
 * - the protocol: `spr=https`, unless the profile's endpoint is plain http (an emulator).
 *
 * What a SAS cannot bind is the size: Azure has no signed Content-Length or length range, so a
 * holder of the upload URL may write a blob of any size Azure allows until the SAS expires. Floe
 * refuses a declared size over the cap before signing, checks every block's size against the plan
 * before it commits a block upload, and COPY refuses a file over `loading.max_file_bytes` by its
 * listed size without fetching it (docs/loading.md says so).
 *
 * The signing key is a parameter: the account key, or a user-delegation key (a profile with Entra
 * ID client credentials) — then the SAS is a user-delegation SAS and must expire before the key
 * does.
 */
import { BlobSASPermissions, BlobServiceClient, RestError, SASProtocol, StorageSharedKeyCredential, generateBlobSASQueryParameters, type UserDelegationKey } from '@azure/storage-blob';
import type { TokenCredential } from '@azure/core-auth';
import { StorageError, type StorageFailure } from './file-io.js';
import { parseAdlsLocation } from './adls-file-io.js';
import { checkPresignTime, type PresignedRequest, type PresignTime } from './presign.js';

/** The largest Put Blob Azure takes in one request (API version 2019-12-12 and later). */
export const MAX_AZURE_PUT_BLOB_BYTES = 5000 * 1024 * 1024;
/** The largest block of a Put Block. */
export const MAX_AZURE_BLOCK_BYTES = 4000 * 1024 * 1024;
/** Most blocks of one blob. */
export const MAX_AZURE_BLOCKS = 50_000;
/**
 * The service version a user-delegation blob SAS is signed for: 2026-02-06, the one the DataLake
 * SDK signs vending's directory SAS with. The Blob SDK's default (2026-04-06) adds signed request
 * headers and query parameters to the user-delegation string-to-sign, which Floe does not use and
 * which Azurite 3.35.0 (the last for Node 20) cannot verify; Azure accepts both versions.
 */
export const USER_DELEGATION_SAS_VERSION = '2026-02-06';
/** How far back a SAS starts, for clock skew between Floe and Azure. */
const START_SKEW_MS = 5 * 60_000;

/** The key a SAS is signed with: the account key (service SAS) or a user-delegation key (user-delegation SAS). */
export type AdlsSasKey =
  | { readonly kind: 'shared-key'; readonly accountName: string; readonly accountKey: string }
  | { readonly kind: 'user-delegation'; readonly accountName: string; readonly key: UserDelegationKey };

/** What a stage URL is for: writing the blob (`cw`) or reading it (`r`). */
export type BlobSasGrant = 'upload' | 'download';

/** The blob a SAS is for. */
export interface BlobRef {
  readonly container: string;
  readonly name: string;
}

/** `cw` to upload, `r` to download, in Azure's canonical order. */
export function blobSasPermissions(grant: BlobSasGrant): string {
  switch (grant) {
    case 'upload':
      return BlobSASPermissions.parse('cw').toString();
    case 'download':
      return BlobSASPermissions.parse('r').toString();
  }
}

/**
 * A blob SAS (the query string without `?`) for `blob` and `grant`, valid from `time.now` − 5 min
 * to `time.now` + `time.expiresInSeconds`; `https` only unless `allowHttp`. Pure but for the HMAC.
 */
export function signBlobSas(key: AdlsSasKey, blob: BlobRef, grant: BlobSasGrant, time: PresignTime, allowHttp: boolean): string {
  checkPresignTime(time);
  if (blob.container === '' || blob.name === '' || blob.name.endsWith('/')) throw new Error('a blob SAS names one blob');
  if (blob.name.split('/').some((s) => s === '.' || s === '..')) throw new Error('a blob SAS is never signed for a name with . or .. segments');
  const expiresOn = new Date(time.now + time.expiresInSeconds * 1000);
  const values = {
    containerName: blob.container,
    blobName: blob.name,
    permissions: BlobSASPermissions.parse(blobSasPermissions(grant)),
    startsOn: new Date(time.now - START_SKEW_MS),
    expiresOn,
    protocol: allowHttp ? SASProtocol.HttpsAndHttp : SASProtocol.Https,
  };
  switch (key.kind) {
    case 'shared-key':
      return generateBlobSASQueryParameters(values, new StorageSharedKeyCredential(key.accountName, key.accountKey)).toString();
    case 'user-delegation':
      if (new Date(key.key.signedExpiresOn).getTime() < expiresOn.getTime()) throw new Error('a user-delegation SAS cannot outlive its delegation key');
      return generateBlobSASQueryParameters({ ...values, version: USER_DELEGATION_SAS_VERSION }, key.key, key.accountName).toString();
  }
}

/** One block of a blob as Azure lists it. */
export interface StoredBlock {
  readonly id: string;
  readonly size: number;
}

function classify(e: unknown): { failure: StorageFailure; detail: string } {
  const status = e instanceof RestError ? e.statusCode : undefined;
  const code = (e as { details?: { errorCode?: string }; code?: string } | null)?.details?.errorCode ?? (e as { code?: string } | null)?.code ?? 'Error';
  if (status === 401 || status === 403) return { failure: 'access-denied', detail: `access denied (${code})` };
  if (status === undefined || status >= 500 || status === 408 || status === 429) return { failure: 'unavailable', detail: `the store did not answer successfully (${status ?? code})` };
  return { failure: 'rejected', detail: `${code} (HTTP ${status})` };
}

export interface AdlsPresignerOptions {
  readonly accountName: string;
  /** The account's blob service URL (`https://<account>.blob.core.windows.net`, or Azurite's `http://127.0.0.1:<port>/<account>`). */
  readonly endpoint: string;
  /** Floe's own credential for the calls it makes (Get Block List, Put Block List). */
  readonly credential: StorageSharedKeyCredential | TokenCredential;
  /** The key a SAS valid until `untilMs` is signed with (asked for each signing: a delegation key is replaced before it expires). */
  readonly sasKey: (untilMs: number) => Promise<AdlsSasKey>;
  /** The longest life a URL may be asked for, when the key source limits it (user delegation keys); else undefined. */
  readonly maxExpiresInSeconds?: number;
}

export class AdlsPresigner {
  readonly kind = 'adls';
  private readonly service: BlobServiceClient;
  /** A plain-http endpoint is an emulator's: its SAS must allow http. */
  private readonly allowHttp: boolean;

  /** The longest life a URL may be given (undefined: only the general presign limit). */
  readonly maxExpiresInSeconds: number | undefined;

  constructor(private readonly options: AdlsPresignerOptions) {
    this.maxExpiresInSeconds = options.maxExpiresInSeconds;
    const endpoint = options.endpoint.replace(/\/+$/, '');
    this.service = new BlobServiceClient(endpoint, options.credential, { retryOptions: { maxTries: 4 } });
    this.allowHttp = endpoint.startsWith('http:');
  }

  /** Nothing to close: the SDK pools its connections in the process's agent. */
  destroy(): void {}

  /** The container and blob of a location in this account. */
  private blobOf(location: string): BlobRef {
    const l = parseAdlsLocation(location);
    if (l.account !== this.options.accountName) throw new StorageError(location, 'presign', 'rejected', `the location is not in storage account ${this.options.accountName}`);
    return { container: l.container, name: l.path };
  }

  private async signed(blob: BlobRef, grant: BlobSasGrant, time: PresignTime): Promise<string> {
    const sas = signBlobSas(await this.options.sasKey(time.now + time.expiresInSeconds * 1000), blob, grant, time, this.allowHttp);
    // The SDK's URL encodes the blob name as Azure expects it in the string to sign.
    return `${this.service.getContainerClient(blob.container).getBlockBlobClient(blob.name).url}?${sas}`;
  }

  /**
   * A Put Blob URL for `location`: the client sends its bytes with `x-ms-blob-type: BlockBlob`
   * (Azure answers 201). The size is not part of the SAS (see the file's comment).
   */
  async presignPut(location: string, time: PresignTime): Promise<PresignedRequest> {
    return { url: await this.signed(this.blobOf(location), 'upload', time), headers: { 'x-ms-blob-type': 'BlockBlob' } };
  }

  /** A URL that GETs `location` until it expires. */
  async presignGet(location: string, time: PresignTime): Promise<string> {
    return this.signed(this.blobOf(location), 'download', time);
  }

  /**
   * The block id of part `n` of upload `uploadId`: Floe's, so that completion commits exactly the
   * planned blocks in order. Azure wants every block id of a blob the same length (before base64).
   */
  static blockId(uploadId: string, n: number): string {
    return Buffer.from(`floe-${uploadId}-${String(n).padStart(5, '0')}`).toString('base64');
  }

  /** Put Block URLs for parts 1…`parts` of `uploadId`, all under one upload SAS of the blob. */
  async presignBlocks(location: string, uploadId: string, parts: number, time: PresignTime): Promise<string[]> {
    const base = await this.signed(this.blobOf(location), 'upload', time);
    return Array.from({ length: parts }, (_, i) => `${base}&comp=block&blockid=${encodeURIComponent(AdlsPresigner.blockId(uploadId, i + 1))}`);
  }

  /** The blocks uploaded to `location` and not yet committed (empty when there are none). */
  async uncommittedBlocks(location: string): Promise<StoredBlock[]> {
    const blob = this.blobOf(location);
    try {
      const r = await this.service.getContainerClient(blob.container).getBlockBlobClient(blob.name).getBlockList('uncommitted');
      return (r.uncommittedBlocks ?? []).map((b) => ({ id: b.name, size: b.size }));
    } catch (e) {
      // No blob and no uncommitted block: Azure answers 404 BlobNotFound.
      if (e instanceof RestError && e.statusCode === 404 && (e.details as { errorCode?: string } | undefined)?.errorCode !== 'ContainerNotFound') return [];
      const { failure, detail } = classify(e);
      throw new StorageError(location, 'list the blocks of an upload', failure, detail);
    }
  }

  /** Commits `ids` in order as the blob's content (Put Block List); returns its ETag without quotes. */
  async commitBlocks(location: string, ids: readonly string[]): Promise<string> {
    const blob = this.blobOf(location);
    try {
      const r = await this.service.getContainerClient(blob.container).getBlockBlobClient(blob.name).commitBlockList([...ids]);
      return (r.etag ?? '').replaceAll('"', '');
    } catch (e) {
      const { failure, detail } = classify(e);
      throw new StorageError(location, 'commit the blocks of an upload', failure, detail);
    }
  }
}
