/**
 * Presigned S3 URLs for stage uploads and downloads (docs/loading.md, "Uploads"), through
 * `@aws-sdk/s3-request-presigner` (SigV4 query-string auth), plus the multipart calls Floe makes
 * itself with the catalog's keys (create, list parts, complete, abort). The client that PUTs to a
 * URL holds no key: the URL is the credential, and the store enforces all of it:
 *
 * - the key and the operation: they are in the signed canonical request, so an edited URL fails
 *   (403 `SignatureDoesNotMatch`);
 * - the expiry: `X-Amz-Expires` is signed, and the store refuses the URL after it (403);
 * - the size: `Content-Length` is a signed header, so the store accepts a body of exactly the
 *   declared length and nothing else (a longer or shorter body, or a chunked one without a
 *   length, no longer matches the signature). A presigned PUT has no "at most N bytes" form;
 *   "exactly N bytes, N at most the cap" is the cap.
 *
 * Checksums only when required (as the S3 FileIO): the SDK would otherwise add a CRC32 of an
 * empty body to every presigned PUT, which no real upload matches.
 */
import {
  AbortMultipartUploadCommand, CompleteMultipartUploadCommand, CreateMultipartUploadCommand, GetObjectCommand, HeadObjectCommand,
  ListPartsCommand, PutObjectCommand, S3Client, UploadPartCommand,
} from '@aws-sdk/client-s3';
import { getSignedUrl } from '@aws-sdk/s3-request-presigner';
import { StorageError } from './file-io.js';
import { classifyS3Error, parseS3Location, type S3Credentials } from './s3-file-io.js';
import { s3Credentials, type S3StorageProfile, type StorageSecret } from './storage-profile.js';
import { checkPresignTime, type PresignTime } from './presign.js';

export interface S3PresignerOptions {
  readonly region: string;
  readonly endpoint?: string;
  readonly pathStyleAccess?: boolean;
  readonly credentials?: S3Credentials;
}

/** One part as the store holds it. */
export interface StoredPart {
  readonly partNumber: number;
  readonly etag: string;
  readonly size: number;
}

/** Smallest part S3 accepts, except the last. */
export const MIN_S3_PART_BYTES = 5 * 1024 * 1024;
/** Largest part (and largest single PUT) S3 accepts. */
export const MAX_S3_PART_BYTES = 5 * 1024 * 1024 * 1024;

/** The store's ETag without its quotes, for comparing. */
export function bareEtag(etag: string | undefined): string {
  return (etag ?? '').replaceAll('"', '');
}

function isNoSuchUpload(e: unknown): boolean {
  const err = e as { name?: string; $metadata?: { httpStatusCode?: number } } | null;
  return err?.name === 'NoSuchUpload' || err?.$metadata?.httpStatusCode === 404;
}

export class S3Presigner {
  readonly kind = 's3';
  private readonly client: S3Client;
  /** The region URLs are signed for, named beside the bucket's when AWS says they differ. */
  private readonly region: string;

  constructor(options: S3PresignerOptions) {
    this.region = options.region;
    this.client = new S3Client({
      region: options.region,
      ...(options.endpoint !== undefined ? { endpoint: options.endpoint } : {}),
      forcePathStyle: options.pathStyleAccess === true,
      ...(options.credentials !== undefined ? { credentials: { ...options.credentials } } : {}),
      maxAttempts: 5,
      retryMode: 'standard',
      requestChecksumCalculation: 'WHEN_REQUIRED',
      responseChecksumValidation: 'WHEN_REQUIRED',
    });
  }

  destroy(): void {
    this.client.destroy();
  }

  private fail(operation: string, location: string, e: unknown): never {
    const { failure, detail } = classifyS3Error(e, this.region);
    throw new StorageError(location, operation, failure, detail);
  }

  private options(time: PresignTime, signLength: boolean) {
    checkPresignTime(time);
    return { expiresIn: time.expiresInSeconds, signingDate: new Date(time.now), ...(signLength ? { signableHeaders: new Set(['content-length']) } : {}) };
  }

  /** A URL that PUTs exactly `bytes` bytes to `location` until it expires. */
  async presignPut(location: string, bytes: number, time: PresignTime): Promise<string> {
    const { bucket, key } = parseS3Location(location);
    return getSignedUrl(this.client, new PutObjectCommand({ Bucket: bucket, Key: key, ContentLength: bytes }), this.options(time, true));
  }

  /** A URL that GETs `location` until it expires. */
  async presignGet(location: string, time: PresignTime): Promise<string> {
    const { bucket, key } = parseS3Location(location);
    return getSignedUrl(this.client, new GetObjectCommand({ Bucket: bucket, Key: key }), this.options(time, false));
  }

  /** Starts a multipart upload to `location`; returns the store's upload id. */
  async createMultipart(location: string): Promise<string> {
    const { bucket, key } = parseS3Location(location);
    try {
      const r = await this.client.send(new CreateMultipartUploadCommand({ Bucket: bucket, Key: key }));
      if (r.UploadId === undefined) throw new StorageError(location, 'start a multipart upload', 'rejected', 'the store returned no upload id');
      return r.UploadId;
    } catch (e) {
      if (e instanceof StorageError) throw e;
      this.fail('start a multipart upload', location, e);
    }
  }

  /** A URL that uploads part `partNumber` of exactly `bytes` bytes. */
  async presignPart(location: string, uploadId: string, partNumber: number, bytes: number, time: PresignTime): Promise<string> {
    const { bucket, key } = parseS3Location(location);
    return getSignedUrl(this.client, new UploadPartCommand({ Bucket: bucket, Key: key, UploadId: uploadId, PartNumber: partNumber, ContentLength: bytes }), this.options(time, true));
  }

  /** The parts the store holds for an upload, by number; undefined when the upload is gone. */
  async listParts(location: string, uploadId: string): Promise<StoredPart[] | undefined> {
    const { bucket, key } = parseS3Location(location);
    const out: StoredPart[] = [];
    let marker: string | undefined;
    try {
      do {
        const r = await this.client.send(new ListPartsCommand({ Bucket: bucket, Key: key, UploadId: uploadId, ...(marker !== undefined ? { PartNumberMarker: marker } : {}) }));
        for (const p of r.Parts ?? []) {
          if (p.PartNumber !== undefined) out.push({ partNumber: p.PartNumber, etag: bareEtag(p.ETag), size: p.Size ?? 0 });
        }
        marker = r.IsTruncated === true ? r.NextPartNumberMarker : undefined;
      } while (marker !== undefined);
    } catch (e) {
      if (isNoSuchUpload(e)) return undefined;
      this.fail('list the parts of an upload', location, e);
    }
    return out.sort((a, b) => a.partNumber - b.partNumber);
  }

  /** Assembles the parts (already checked) into the object; returns its ETag without quotes. */
  async completeMultipart(location: string, uploadId: string, parts: readonly { partNumber: number; etag: string }[]): Promise<string> {
    const { bucket, key } = parseS3Location(location);
    try {
      const r = await this.client.send(new CompleteMultipartUploadCommand({
        Bucket: bucket, Key: key, UploadId: uploadId, MultipartUpload: { Parts: parts.map((p) => ({ PartNumber: p.partNumber, ETag: `"${bareEtag(p.etag)}"` })) },
      }));
      if (r.ETag !== undefined && r.ETag !== '') return bareEtag(r.ETag);
      // RGW answers the completion without an ETag element; the object has one.
      return bareEtag((await this.client.send(new HeadObjectCommand({ Bucket: bucket, Key: key }))).ETag);
    } catch (e) {
      this.fail('complete a multipart upload', location, e);
    }
  }

  /** Aborts an upload, freeing its parts; an upload already gone is not an error. */
  async abortMultipart(location: string, uploadId: string): Promise<void> {
    const { bucket, key } = parseS3Location(location);
    try {
      await this.client.send(new AbortMultipartUploadCommand({ Bucket: bucket, Key: key, UploadId: uploadId }));
    } catch (e) {
      if (isNoSuchUpload(e)) return;
      this.fail('abort a multipart upload', location, e);
    }
  }
}

/** The presigner of an S3 profile's bucket, signing with the catalog's own keys. The caller destroys it. */
export function s3PresignerForProfile(profile: S3StorageProfile, secret: StorageSecret | null): S3Presigner {
  const credentials = s3Credentials(profile, secret);
  return new S3Presigner({
    region: profile.region, pathStyleAccess: profile.pathStyleAccess,
    ...(profile.endpoint !== null ? { endpoint: profile.endpoint } : {}),
    ...(credentials !== undefined ? { credentials } : {}),
  });
}
