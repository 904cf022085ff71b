/**
 * FileIO over Amazon S3 and S3-compatible stores (Ceph RGW, MinIO, …) for `s3://`, `s3a://` and
 * `s3n://` locations (`<scheme>://<bucket>/<key>`), through `@aws-sdk/client-s3`.
 *
 * - Create-if-absent writes are `PutObject` with `If-None-Match: *`, which S3 (since 2024) and RGW
 *   (tested on 16.2) make atomic: of two racing writers exactly one gets 200, the other 412. That
 *   is what makes a metadata-file commit safe on a store without rename.
 * - Objects above `multipartThresholdBytes` go up in parts (`partSizeBytes`, a few in flight); an
 *   upload that fails is aborted so no parts are billed or left behind.
 * - Listing pages through `ListObjectsV2`; `deletePrefix` deletes in `DeleteObjects` batches of 1000.
 * - Throttling (503 SlowDown), 5xx and dropped connections are retried by the SDK's standard
 *   strategy (exponential backoff with jitter, `maxAttempts`); what still fails becomes a typed
 *   `StorageError`, whose message names the operation and location and never a credential.
 */
import {
  AbortMultipartUploadCommand, CompleteMultipartUploadCommand, CreateMultipartUploadCommand, DeleteObjectCommand,
  DeleteObjectsCommand, GetObjectCommand, HeadObjectCommand, ListObjectsV2Command, PutObjectCommand, S3Client,
  UploadPartCommand,
} from '@aws-sdk/client-s3';
import type { CompletedPart } from '@aws-sdk/client-s3';
import { FileAlreadyExistsError, FileNotFoundError, StorageError, UnsupportedLocationError, schemeOf } from './file-io.js';
import type { FileIO, FileInfo, StorageFailure, VersionedBytes, VersionedRange, WriteOptions } from './file-io.js';

/** The URI schemes this FileIO serves (Hadoop's `s3a`/`s3n` spellings are the same objects). */
export const S3_SCHEMES: ReadonlySet<string> = new Set(['s3', 's3a', 's3n']);

/** Static keys (a profile's, or an STS session's). Without them the SDK's default chain is used. */
export interface S3Credentials {
  readonly accessKeyId: string;
  readonly secretAccessKey: string;
  readonly sessionToken?: string;
}

export interface S3FileIOOptions {
  readonly region: string;
  /** An S3-compatible endpoint (`http://127.0.0.1:7480`); AWS's regional endpoint when absent. */
  readonly endpoint?: string;
  /** `https://endpoint/bucket/key` instead of `https://bucket.endpoint/key` (most non-AWS stores). */
  readonly pathStyleAccess?: boolean;
  /** Fixed keys, or a provider of expiring ones (an assumed role: s3-assumed-role.ts). */
  readonly credentials?: S3Credentials | (() => Promise<S3Credentials & { readonly expiration?: Date }>);
  /** Called by `destroy` (the assumed role's STS client). */
  readonly onDestroy?: () => void;
  /** Attempts per request including the first (SDK standard retry strategy). Default 5. */
  readonly maxAttempts?: number;
  /** Writes larger than this use multipart upload. Default 32 MiB. */
  readonly multipartThresholdBytes?: number;
  /** Part size for multipart uploads (S3's minimum is 5 MiB except the last). Default 16 MiB. */
  readonly partSizeBytes?: number;
  /** Parts uploaded at once. Default 4. */
  readonly partConcurrency?: number;
  /** Keys per `ListObjectsV2` page (the store's default, 1000, when absent). */
  readonly listPageSize?: number;
  /** Keys per `DeleteObjects` request (at most 1000, S3's limit). Default 1000. */
  readonly deleteBatchSize?: number;
  /** Milliseconds to establish a connection / to wait for a response. Defaults 5 s / 120 s. */
  readonly connectionTimeoutMs?: number;
  readonly requestTimeoutMs?: number;
}

const MIB = 1024 * 1024;
const MAX_DELETE_BATCH = 1000;

/** Bucket and key of an `s3://bucket/key` location (key may be empty for a bucket-wide prefix). */
export interface S3Location {
  readonly scheme: string;
  readonly bucket: string;
  readonly key: string;
}

export function parseS3Location(location: string): S3Location {
  const scheme = schemeOf(location);
  if (scheme === undefined || !S3_SCHEMES.has(scheme)) throw new UnsupportedLocationError(location, scheme ?? 'plain path');
  const rest = location.slice(scheme.length + 3);
  if (!location.slice(scheme.length).startsWith('://')) throw new UnsupportedLocationError(location, `${scheme} (malformed)`);
  const slash = rest.indexOf('/');
  const bucket = slash === -1 ? rest : rest.slice(0, slash);
  if (bucket === '') throw new UnsupportedLocationError(location, `${scheme} (no bucket)`);
  return { scheme, bucket, key: slash === -1 ? '' : rest.slice(slash + 1) };
}

export function isS3Location(location: string): boolean {
  const scheme = schemeOf(location);
  return scheme !== undefined && S3_SCHEMES.has(scheme);
}

interface SdkError {
  readonly name?: string;
  readonly code?: string;
  readonly message?: string;
  /** The host name a failed DNS lookup (`ENOTFOUND`) asked for. */
  readonly hostname?: string;
  readonly $metadata?: { readonly httpStatusCode?: number; readonly attempts?: number };
  /** The raw answer (the SDK keeps it on service errors): its headers carry `x-amz-bucket-region`. */
  readonly $response?: { readonly headers?: Readonly<Record<string, string | undefined>> };
  /** `<Region>` of an `AuthorizationHeaderMalformed` body: the region the request should have been signed for. */
  readonly Region?: string;
  /** `<Endpoint>` of a `PermanentRedirect` body: `bucket.s3.<region>.amazonaws.com`. */
  readonly Endpoint?: string;
}

function httpStatus(e: unknown): number | undefined {
  return (e as SdkError | null)?.$metadata?.httpStatusCode;
}

/**
 * The region AWS says the bucket is in: its `x-amz-bucket-region` header (on redirects and on
 * HEAD answers, which have no body), else the error body's `<Region>` or the region in its
 * `<Endpoint>`. Undefined when the answer names none (most S3-compatible stores).
 */
function bucketRegionOf(err: SdkError): string | undefined {
  const header = err.$response?.headers?.['x-amz-bucket-region'];
  if (header !== undefined && header !== '') return header;
  if (err.Region !== undefined && err.Region !== '') return err.Region;
  return /\.s3[.-]([a-z0-9-]+)\.amazonaws\.com(\.cn)?$/.exec(err.Endpoint ?? '')?.[1];
}

/**
 * The words for a request that reached the wrong region: the bucket's region when AWS named it,
 * and the profile's when it differs, so the operator sees what to write in `region`.
 */
function wrongRegion(name: string, bucketRegion: string | undefined, configuredRegion: string | undefined, fallback: string): { failure: StorageFailure; detail: string } {
  if (bucketRegion === undefined) return { failure: 'wrong-region', detail: fallback };
  if (configuredRegion !== undefined && configuredRegion !== bucketRegion) {
    return { failure: 'wrong-region', detail: `the bucket is in region ${bucketRegion}, not ${configuredRegion} (${name}); set region: ${bucketRegion}` };
  }
  return { failure: 'wrong-region', detail: `the bucket is in region ${bucketRegion} and is not served through this endpoint (${name}); check endpoint and path-style access` };
}

/**
 * What went wrong, in the words an operator acts on. `configuredRegion` is the region requests
 * were signed for (the profile's), to name beside the bucket's when AWS says they differ.
 */
function classify(e: unknown, configuredRegion?: string): { failure: StorageFailure; detail: string } {
  const err = (e ?? {}) as SdkError;
  const status = httpStatus(e);
  const name = err.name ?? err.code ?? 'Error';
  // A HEAD answer has no body: the SDK names the error `Unknown`, and only the status is left.
  const said = name === 'Unknown' && status !== undefined ? `HTTP ${status}` : name;
  const bucketRegion = bucketRegionOf(err);
  switch (name) {
    case 'NoSuchBucket':
      return { failure: 'no-such-bucket', detail: 'the bucket does not exist' };
    case 'InvalidAccessKeyId':
      return { failure: 'access-denied', detail: 'the access key is not known to the store' };
    case 'SignatureDoesNotMatch':
      return { failure: 'access-denied', detail: 'the request signature does not match (wrong secret key)' };
    case 'AccessDenied':
      return { failure: 'access-denied', detail: 'access denied (check the access key, the secret key and the bucket policy)' };
    case 'PermanentRedirect':
    case 'AuthorizationHeaderMalformed':
    case 'IllegalLocationConstraintException':
      return wrongRegion(name, bucketRegion, configuredRegion, `the bucket is in another region or needs another endpoint (${name})`);
    default:
      break;
  }
  if (status === undefined && err.code === 'ENOTFOUND') {
    // Virtual-host addressing puts the bucket in the host name (`bucket.endpoint`): most
    // S3-compatible stores serve no such names, so the usual cause is a missing path-style-access.
    // Still `unavailable` (503, retryable): a name that resolved yesterday may be a DNS outage.
    const host = err.hostname ?? /ENOTFOUND (\S+)/.exec(err.message ?? '')?.[1] ?? 'the store';
    return {
      failure: 'unavailable',
      detail: `the host name ${host} does not resolve (ENOTFOUND); check the endpoint and region, and set path-style-access: true for a store that does not serve buckets as host names`,
    };
  }
  if (status === 403) return { failure: 'access-denied', detail: `access denied (${name})` };
  if (status === 301 || status === 307) return wrongRegion(said, bucketRegion, configuredRegion, `the store redirected the request (${said}); check region, endpoint and path-style access`);
  // A HEAD signed for another region gets a bare 400 from AWS, with the bucket's region in a header.
  if (status === 400 && bucketRegion !== undefined && configuredRegion !== undefined && bucketRegion !== configuredRegion) {
    return wrongRegion(said, bucketRegion, configuredRegion, `the store refused the request (${said})`);
  }
  if (status === undefined || status >= 500) return { failure: 'unavailable', detail: `the store did not answer successfully (${status ?? err.code ?? name}${err.message ? `: ${err.message}` : ''})` };
  return { failure: 'rejected', detail: `${name} (HTTP ${status})` };
}

/** `classify` for the other S3 modules (presigning): the same words for the same failures. */
export { classify as classifyS3Error };

function isNotFound(e: unknown): boolean {
  const name = (e as SdkError | null)?.name;
  return name === 'NoSuchKey' || name === 'NotFound' || (httpStatus(e) === 404 && name !== 'NoSuchBucket');
}

function isPreconditionFailed(e: unknown): boolean {
  // 409 ConditionalRequestConflict: S3's answer to a conditional write racing another on the same key.
  return httpStatus(e) === 412 || (e as SdkError | null)?.name === 'ConditionalRequestConflict';
}

function compareLocations(a: FileInfo, b: FileInfo): number {
  return a.location < b.location ? -1 : a.location > b.location ? 1 : 0;
}

export class S3FileIO implements FileIO {
  private readonly client: S3Client;
  private readonly multipartThreshold: number;
  private readonly partSize: number;
  private readonly partConcurrency: number;
  private readonly listPageSize: number | undefined;
  private readonly deleteBatch: number;

  private readonly onDestroy: (() => void) | undefined;
  /** The region requests are signed for, named beside the bucket's when AWS says they differ. */
  private readonly region: string;

  constructor(options: S3FileIOOptions) {
    this.onDestroy = options.onDestroy;
    this.region = options.region;
    this.client = new S3Client({
      region: options.region,
      ...(options.endpoint !== undefined ? { endpoint: options.endpoint } : {}),
      forcePathStyle: options.pathStyleAccess === true,
      ...(options.credentials !== undefined ? { credentials: typeof options.credentials === 'function' ? options.credentials : { ...options.credentials } } : {}),
      maxAttempts: options.maxAttempts ?? 5,
      retryMode: 'standard',
      // Checksums only where S3 requires them: S3-compatible stores (RGW 16) reject or ignore the
      // newer flexible-checksum trailers the SDK would otherwise add to every upload.
      requestChecksumCalculation: 'WHEN_REQUIRED',
      responseChecksumValidation: 'WHEN_REQUIRED',
      requestHandler: { connectionTimeout: options.connectionTimeoutMs ?? 5000, requestTimeout: options.requestTimeoutMs ?? 120_000 },
    });
    this.multipartThreshold = options.multipartThresholdBytes ?? 32 * MIB;
    this.partSize = Math.max(options.partSizeBytes ?? 16 * MIB, 5 * MIB);
    this.partConcurrency = Math.max(1, options.partConcurrency ?? 4);
    this.listPageSize = options.listPageSize;
    this.deleteBatch = Math.min(MAX_DELETE_BATCH, Math.max(1, options.deleteBatchSize ?? MAX_DELETE_BATCH));
  }

  /** Closes the client's connections. */
  destroy(): void {
    this.client.destroy();
    this.onDestroy?.();
  }

  private fail(operation: string, location: string, e: unknown): never {
    const { failure, detail } = classify(e, this.region);
    throw new StorageError(location, operation, failure, detail);
  }

  async read(location: string): Promise<Buffer> {
    const { bucket, key } = parseS3Location(location);
    try {
      const r = await this.client.send(new GetObjectCommand({ Bucket: bucket, Key: key }));
      return Buffer.from(await (r.Body as { transformToByteArray(): Promise<Uint8Array> }).transformToByteArray());
    } catch (e) {
      if (isNotFound(e)) throw new FileNotFoundError(location);
      this.fail('read', location, e);
    }
  }

  async readVersioned(location: string): Promise<VersionedBytes> {
    const { bucket, key } = parseS3Location(location);
    try {
      const r = await this.client.send(new GetObjectCommand({ Bucket: bucket, Key: key }));
      return { bytes: Buffer.from(await (r.Body as { transformToByteArray(): Promise<Uint8Array> }).transformToByteArray()), version: r.ETag };
    } catch (e) {
      if (isNotFound(e)) throw new FileNotFoundError(location);
      this.fail('read', location, e);
    }
  }

  async version(location: string): Promise<string | undefined> {
    const { bucket, key } = parseS3Location(location);
    try {
      return (await this.client.send(new HeadObjectCommand({ Bucket: bucket, Key: key }))).ETag;
    } catch (e) {
      if (isNotFound(e)) throw new FileNotFoundError(location);
      this.fail('version', location, e);
    }
  }

  async readRangeVersioned(location: string, offset: number, length: number): Promise<VersionedRange> {
    const { bucket, key } = parseS3Location(location);
    try {
      const r = await this.client.send(new GetObjectCommand({ Bucket: bucket, Key: key, Range: `bytes=${offset}-${offset + Math.max(1, length) - 1}` }));
      const bytes = await (r.Body as { transformToByteArray(): Promise<Uint8Array> }).transformToByteArray();
      // `bytes a-b/total`: the whole object's size, which a ranged read alone would not tell.
      const total = /\/(\d+)$/.exec(r.ContentRange ?? '')?.[1];
      return { bytes: Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength), version: r.ETag, objectSize: total === undefined ? undefined : Number(total) };
    } catch (e) {
      if (isNotFound(e)) throw new FileNotFoundError(location);
      this.fail('read', location, e);
    }
  }

  async readRange(location: string, offset: number, length: number): Promise<Buffer> {
    if (length <= 0) {
      // A zero-length Range is not expressible; still report a missing object as such.
      if (!(await this.exists(location))) throw new FileNotFoundError(location);
      return Buffer.alloc(0);
    }
    const { bucket, key } = parseS3Location(location);
    try {
      const r = await this.client.send(new GetObjectCommand({ Bucket: bucket, Key: key, Range: `bytes=${offset}-${offset + length - 1}` }));
      return Buffer.from(await (r.Body as { transformToByteArray(): Promise<Uint8Array> }).transformToByteArray());
    } catch (e) {
      if (isNotFound(e)) throw new FileNotFoundError(location);
      // 416: the range starts at or past the end; the contract is "the bytes that exist".
      if (httpStatus(e) === 416) return Buffer.alloc(0);
      this.fail('read', location, e);
    }
  }

  async write(location: string, bytes: Uint8Array, options: WriteOptions = {}): Promise<void> {
    const { bucket, key } = parseS3Location(location);
    const createOnly = options.overwrite !== true;
    if (bytes.length > this.multipartThreshold) return this.writeMultipart(location, bucket, key, bytes, createOnly);
    try {
      await this.client.send(new PutObjectCommand({ Bucket: bucket, Key: key, Body: bytes, ContentLength: bytes.length, ...(createOnly ? { IfNoneMatch: '*' } : {}) }));
    } catch (e) {
      if (createOnly && isPreconditionFailed(e)) {
        // A retried PUT whose first attempt landed (its answer lost) finds its own object: same
        // bytes means the write is ours. Metadata files carry unique ids, so nobody else writes
        // byte-identical content under the same name.
        if (((e as SdkError).$metadata?.attempts ?? 1) > 1 && (await this.sameBytes(location, bytes))) return;
        throw new FileAlreadyExistsError(location);
      }
      this.fail('write', location, e);
    }
  }

  private async sameBytes(location: string, bytes: Uint8Array): Promise<boolean> {
    try {
      return Buffer.from(bytes).equals(await this.read(location));
    } catch {
      return false;
    }
  }

  /**
   * Parts of `partSize`, `partConcurrency` at a time, then Complete. For create-if-absent the
   * Complete carries `If-None-Match: *` (S3 honours it); a HEAD first refuses early on stores that
   * ignore it (RGW 16), which leaves a race window only between two writers of one new data-file
   * name — names Floe generates are unique, metadata files are small and never take this path.
   */
  private async writeMultipart(location: string, bucket: string, key: string, bytes: Uint8Array, createOnly: boolean): Promise<void> {
    if (createOnly && (await this.exists(location))) throw new FileAlreadyExistsError(location);
    let uploadId: string | undefined;
    try {
      uploadId = (await this.client.send(new CreateMultipartUploadCommand({ Bucket: bucket, Key: key }))).UploadId;
      if (uploadId === undefined) throw new Error('the store returned no upload id');
      const id = uploadId;
      const count = Math.ceil(bytes.length / this.partSize);
      const parts: CompletedPart[] = new Array<CompletedPart>(count);
      let next = 0;
      let failed = false;
      const worker = async (): Promise<void> => {
        while (next < count && !failed) {
          const i = next++;
          const body = bytes.subarray(i * this.partSize, Math.min(bytes.length, (i + 1) * this.partSize));
          try {
            const r = await this.client.send(new UploadPartCommand({ Bucket: bucket, Key: key, UploadId: id, PartNumber: i + 1, Body: body, ContentLength: body.length }));
            parts[i] = { PartNumber: i + 1, ETag: r.ETag };
          } catch (e) {
            failed = true;
            throw e;
          }
        }
      };
      // Every part in flight settles before the abort below: a part landing after the abort
      // would otherwise stay behind in the store.
      const settled = await Promise.allSettled(Array.from({ length: Math.min(this.partConcurrency, count) }, worker));
      const rejected = settled.find((r): r is PromiseRejectedResult => r.status === 'rejected');
      if (rejected !== undefined) throw rejected.reason;
      await this.client.send(new CompleteMultipartUploadCommand({
        Bucket: bucket, Key: key, UploadId: id, MultipartUpload: { Parts: parts }, ...(createOnly ? { IfNoneMatch: '*' } : {}),
      }));
      uploadId = undefined;
    } catch (e) {
      if (createOnly && isPreconditionFailed(e)) throw new FileAlreadyExistsError(location);
      this.fail('write', location, e);
    } finally {
      if (uploadId !== undefined) {
        await this.client.send(new AbortMultipartUploadCommand({ Bucket: bucket, Key: key, UploadId: uploadId })).catch(() => undefined);
      }
    }
  }

  async exists(location: string): Promise<boolean> {
    const { bucket, key } = parseS3Location(location);
    try {
      await this.client.send(new HeadObjectCommand({ Bucket: bucket, Key: key }));
      return true;
    } catch (e) {
      if (isNotFound(e)) return false;
      this.fail('exists', location, e);
    }
  }

  async size(location: string): Promise<number> {
    const { bucket, key } = parseS3Location(location);
    try {
      return (await this.client.send(new HeadObjectCommand({ Bucket: bucket, Key: key }))).ContentLength ?? 0;
    } catch (e) {
      if (isNotFound(e)) throw new FileNotFoundError(location);
      this.fail('size', location, e);
    }
  }

  async delete(location: string): Promise<void> {
    const { bucket, key } = parseS3Location(location);
    try {
      await this.client.send(new DeleteObjectCommand({ Bucket: bucket, Key: key }));
    } catch (e) {
      if (isNotFound(e)) return;
      this.fail('delete', location, e);
    }
  }

  async deletePrefix(prefix: string): Promise<number> {
    const { bucket } = parseS3Location(prefix);
    const files = await this.list(prefix);
    let deleted = 0;
    for (let i = 0; i < files.length; i += this.deleteBatch) {
      const batch = files.slice(i, i + this.deleteBatch).map((f) => parseS3Location(f.location).key);
      let r;
      try {
        r = await this.client.send(new DeleteObjectsCommand({ Bucket: bucket, Delete: { Objects: batch.map((Key) => ({ Key })), Quiet: true } }));
      } catch (e) {
        this.fail('delete', prefix, e);
      }
      const errors = (r.Errors ?? []).filter((x) => x.Code !== 'NoSuchKey');
      if (errors.length > 0) {
        const first = errors[0];
        throw new StorageError(prefix, 'delete', first?.Code === 'AccessDenied' ? 'access-denied' : 'rejected', `${errors.length} of ${batch.length} objects were not deleted (first: ${first?.Key ?? '?'}: ${first?.Code ?? '?'})`);
      }
      deleted += batch.length;
    }
    return deleted;
  }

  async list(prefix: string): Promise<readonly FileInfo[]> {
    const { scheme, bucket, key } = parseS3Location(prefix);
    const out: FileInfo[] = [];
    let token: string | undefined;
    do {
      let r;
      try {
        r = await this.client.send(new ListObjectsV2Command({ Bucket: bucket, Prefix: key, ...(this.listPageSize !== undefined ? { MaxKeys: this.listPageSize } : {}), ...(token !== undefined ? { ContinuationToken: token } : {}) }));
      } catch (e) {
        this.fail('list', prefix, e);
      }
      for (const o of r.Contents ?? []) {
        if (o.Key === undefined) continue;
        out.push({ location: `${scheme}://${bucket}/${o.Key}`, size: o.Size ?? 0, lastModifiedMs: o.LastModified?.getTime() ?? 0 });
      }
      token = r.IsTruncated === true ? r.NextContinuationToken : undefined;
    } while (token !== undefined);
    return out.sort(compareLocations);
  }
}
