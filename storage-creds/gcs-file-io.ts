/**
 * FileIO over Google Cloud Storage for `gs://<bucket>/<object>` locations, through
 * `@google-cloud/storage` (the JSON API).
 *
 * - Create-if-absent writes carry `ifGenerationMatch=0`: GCS creates the object only if no live
 *   generation exists, atomically, so of two racing writers exactly one gets 200 and the other 412.
 *   That is what makes a metadata-file commit safe on a store without rename.
 * - Objects above `resumableThresholdBytes` go up as a resumable upload in `chunkSizeBytes` chunks
 *   (a multiple of 256 KiB, GCS's rule); smaller ones in one multipart request.
 * - Ranged reads send `Range`; whole reads are checked by the SDK against the CRC32C/MD5 the store
 *   reports. `readVersioned` pins the generation it read, so the engine's file cache notices an
 *   object rewritten in place.
 * - Listing pages through `objects.list`; `deletePrefix` deletes `deleteConcurrency` objects at a
 *   time (the JSON API has no multi-object delete outside batch requests).
 * - 429, 408 and 5xx are retried by the SDK with exponential backoff (`maxRetries`,
 *   `maxRetryDelaySeconds`), conditional writes included (their precondition makes a retry safe);
 *   what still fails becomes a typed `StorageError` whose message names the operation, the location
 *   and the cause, never a credential.
 */
import { IdempotencyStrategy, Storage, type File } from '@google-cloud/storage';
import { FileAlreadyExistsError, FileNotFoundError, StorageError, UnsupportedLocationError, schemeOf } from './file-io.js';
import type { FileIO, FileInfo, StorageFailure, VersionedBytes, VersionedRange, WriteOptions } from './file-io.js';
import { GcsAuthError, gcsAuthClient, type GcsCredentials } from './gcs-auth.js';

/** The URI schemes this FileIO serves. */
export const GCS_SCHEMES: ReadonlySet<string> = new Set(['gs']);

export interface GcsFileIOOptions {
  readonly credentials: GcsCredentials;
  /** The JSON API's endpoint (`https://storage.googleapis.com` when absent). */
  readonly apiEndpoint?: string;
  /** Billing/quota project; only needed for requester-pays buckets. */
  readonly projectId?: string;
  /** Retries after the first attempt (SDK strategy). Default 4. */
  readonly maxRetries?: number;
  /** Longest wait between two attempts, seconds (at least 1). Default 16. */
  readonly maxRetryDelaySeconds?: number;
  /** Writes larger than this use a resumable upload. Default 16 MiB. */
  readonly resumableThresholdBytes?: number;
  /** Chunk size of resumable uploads, rounded down to a multiple of 256 KiB. Default 8 MiB. */
  readonly chunkSizeBytes?: number;
  /** Objects per `objects.list` page (at most 1000). */
  readonly listPageSize?: number;
  /** Objects deleted at once by `deletePrefix`. Default 16. */
  readonly deleteConcurrency?: number;
}

const MIB = 1024 * 1024;
const CHUNK_QUANTUM = 256 * 1024;

export interface GcsLocation {
  readonly bucket: string;
  /** The object name (may be empty for a bucket-wide prefix). */
  readonly name: string;
}

export function parseGcsLocation(location: string): GcsLocation {
  const scheme = schemeOf(location);
  if (scheme === undefined || !GCS_SCHEMES.has(scheme)) throw new UnsupportedLocationError(location, scheme ?? 'plain path');
  if (!location.slice(scheme.length).startsWith('://')) throw new UnsupportedLocationError(location, `${scheme} (malformed)`);
  const rest = location.slice(scheme.length + 3);
  const slash = rest.indexOf('/');
  const bucket = slash === -1 ? rest : rest.slice(0, slash);
  if (bucket === '') throw new UnsupportedLocationError(location, `${scheme} (no bucket)`);
  return { bucket, name: slash === -1 ? '' : rest.slice(slash + 1) };
}

/**
 * A location GCS cannot store: object names are at most 1024 bytes of UTF-8 without carriage
 * returns or line feeds. Its `kind` is the one callers already answer with 400 (a location this
 * FileIO cannot serve), never a store failure.
 */
export class InvalidGcsObjectNameError extends Error {
  readonly kind = 'unsupported-location';
  constructor(readonly location: string, why: string) {
    super(`Invalid GCS location ${JSON.stringify(location)}: ${why}`);
    this.name = 'InvalidGcsObjectNameError';
  }
}

function checkObjectName(location: string, name: string): void {
  if (/[\r\n]/.test(name)) throw new InvalidGcsObjectNameError(location, 'object names cannot contain carriage returns or line feeds');
  if (Buffer.byteLength(name) > 1024) throw new InvalidGcsObjectNameError(location, 'object names are at most 1024 bytes');
}

export function isGcsLocation(location: string): boolean {
  const scheme = schemeOf(location);
  return scheme !== undefined && GCS_SCHEMES.has(scheme);
}

interface ApiErrorLike {
  readonly code?: number | string;
  readonly message?: string;
  readonly errors?: readonly { readonly reason?: string }[];
}

function statusOf(e: unknown): number | undefined {
  const code = (e as ApiErrorLike | null)?.code;
  return typeof code === 'number' ? code : undefined;
}

/** What went wrong, in the words an operator acts on. */
function classify(e: unknown): { failure: StorageFailure; detail: string } {
  if (e instanceof GcsAuthError) return { failure: 'access-denied', detail: e.message };
  const err = (e ?? {}) as ApiErrorLike;
  const status = statusOf(e);
  const message = err.message ?? String(e);
  if (status === 404 && /bucket does not exist/i.test(message)) return { failure: 'no-such-bucket', detail: 'the bucket does not exist' };
  if (status === 401) return { failure: 'access-denied', detail: 'the store refused the credentials (401: invalid or expired token)' };
  if (status === 403) return { failure: 'access-denied', detail: `access denied (403${err.errors?.[0]?.reason !== undefined ? ` ${err.errors[0].reason}` : ''}; check the service account's roles on the bucket)` };
  if (status === undefined || status >= 500 || status === 429 || status === 408) {
    // Token errors from google-auth-library arrive without a status; say so rather than "unavailable".
    if (status === undefined && /refresh token|access token|invalid_grant|credentials/i.test(message)) return { failure: 'access-denied', detail: `could not authenticate: ${message}` };
    return { failure: 'unavailable', detail: `the store did not answer successfully (${status ?? (typeof err.code === 'string' ? err.code : 'no response')}: ${message})` };
  }
  return { failure: 'rejected', detail: `${message} (HTTP ${status})` };
}

function compareLocations(a: FileInfo, b: FileInfo): number {
  return a.location < b.location ? -1 : a.location > b.location ? 1 : 0;
}

export class GcsFileIO implements FileIO {
  private readonly storage: Storage;
  private readonly resumableThreshold: number;
  private readonly chunkSize: number;
  private readonly listPageSize: number | undefined;
  private readonly deleteConcurrency: number;

  constructor(options: GcsFileIOOptions) {
    this.storage = new Storage({
      authClient: gcsAuthClient(options.credentials),
      ...(options.apiEndpoint !== undefined ? { apiEndpoint: options.apiEndpoint, useAuthWithCustomEndpoint: true } : {}),
      ...(options.projectId !== undefined ? { projectId: options.projectId } : {}),
      retryOptions: {
        autoRetry: true,
        maxRetries: options.maxRetries ?? 4,
        retryDelayMultiplier: 2,
        // The SDK's upload retries start at 1 s and refuse a smaller ceiling.
        maxRetryDelay: Math.max(1, options.maxRetryDelaySeconds ?? 16),
        totalTimeout: 300,
        // Conditional writes are retried (the precondition makes a repeat harmless); plain
        // overwrites too: Floe overwrites only objects whose bytes a repeat writes again.
        idempotencyStrategy: IdempotencyStrategy.RetryAlways,
      },
    });
    this.resumableThreshold = options.resumableThresholdBytes ?? 16 * MIB;
    this.chunkSize = Math.max(CHUNK_QUANTUM, Math.floor((options.chunkSizeBytes ?? 8 * MIB) / CHUNK_QUANTUM) * CHUNK_QUANTUM);
    this.listPageSize = options.listPageSize;
    this.deleteConcurrency = Math.max(1, options.deleteConcurrency ?? 16);
  }

  /** Nothing to close: the SDK's connections are pooled by the process's agent. */
  destroy(): void {}

  private file(location: string): File {
    const { bucket, name } = parseGcsLocation(location);
    if (name === '') throw new UnsupportedLocationError(location, 'gs (no object name)');
    checkObjectName(location, name);
    return this.storage.bucket(bucket).file(name);
  }

  private fail(operation: string, location: string, e: unknown): never {
    const { failure, detail } = classify(e);
    throw new StorageError(location, operation, failure, detail);
  }

  async read(location: string): Promise<Buffer> {
    const file = this.file(location);
    try {
      return (await file.download())[0];
    } catch (e) {
      if (statusOf(e) === 404 && !/bucket does not exist/i.test((e as Error).message)) throw new FileNotFoundError(location);
      this.fail('read', location, e);
    }
  }

  async readVersioned(location: string): Promise<VersionedBytes> {
    const file = this.file(location);
    try {
      // The generation first, then exactly that generation's bytes: never bytes of one version
      // tagged with another's generation.
      const [meta] = await file.getMetadata();
      const generation = meta.generation === undefined ? undefined : String(meta.generation);
      const pinned = generation === undefined ? file : this.storage.bucket(file.bucket.name).file(file.name, { generation });
      return { bytes: (await pinned.download())[0], version: generation };
    } catch (e) {
      if (statusOf(e) === 404 && !/bucket does not exist/i.test((e as Error).message)) throw new FileNotFoundError(location);
      this.fail('read', location, e);
    }
  }

  async version(location: string): Promise<string | undefined> {
    const file = this.file(location);
    try {
      const [meta] = await file.getMetadata();
      return meta.generation === undefined ? undefined : String(meta.generation);
    } catch (e) {
      if (statusOf(e) === 404 && !/bucket does not exist/i.test((e as Error).message)) throw new FileNotFoundError(location);
      this.fail('version', location, e);
    }
  }

  async readRange(location: string, offset: number, length: number): Promise<Buffer> {
    if (length <= 0) {
      if (!(await this.exists(location))) throw new FileNotFoundError(location);
      return Buffer.alloc(0);
    }
    const file = this.file(location);
    try {
      // Validation covers whole objects only; a range is checked by its length.
      return (await file.download({ start: offset, end: offset + length - 1, validation: false }))[0];
    } catch (e) {
      const status = statusOf(e);
      if (status === 404 && !/bucket does not exist/i.test((e as Error).message)) throw new FileNotFoundError(location);
      // 416: the range starts at or past the end; the contract is "the bytes that exist".
      if (status === 416) return Buffer.alloc(0);
      this.fail('read', location, e);
    }
  }

  /**
   * A range with the generation that served it and the object's size (from `Content-Range`), in
   * one request: the file cache fetches a large file in parallel ranges and trusts them only when
   * every range names the same generation.
   */
  async readRangeVersioned(location: string, offset: number, length: number): Promise<VersionedRange> {
    if (length <= 0) {
      const file = this.file(location);
      try {
        const [meta] = await file.getMetadata();
        return { bytes: Buffer.alloc(0), version: meta.generation === undefined ? undefined : String(meta.generation), objectSize: Number(meta.size ?? 0) };
      } catch (e) {
        if (statusOf(e) === 404 && !/bucket does not exist/i.test((e as Error).message)) throw new FileNotFoundError(location);
        this.fail('read', location, e);
      }
    }
    const file = this.file(location);
    let headers: Record<string, unknown> = {};
    try {
      const stream = file.createReadStream({ start: offset, end: offset + length - 1, validation: false });
      stream.on('response', (res: { headers?: Record<string, unknown> }) => {
        headers = res.headers ?? {};
      });
      const chunks: Buffer[] = [];
      for await (const chunk of stream) chunks.push(chunk as Buffer);
      const generation = headers['x-goog-generation'];
      const range = /\/(\d+)$/.exec(String(headers['content-range'] ?? ''));
      return {
        bytes: Buffer.concat(chunks),
        version: typeof generation === 'string' && generation !== '' ? generation : undefined,
        objectSize: range !== null ? Number(range[1]) : undefined,
      };
    } catch (e) {
      const status = statusOf(e);
      if (status === 404 && !/bucket does not exist/i.test((e as Error).message)) throw new FileNotFoundError(location);
      if (status === 416) return { bytes: Buffer.alloc(0), version: undefined, objectSize: undefined };
      this.fail('read', location, e);
    }
  }

  async write(location: string, bytes: Uint8Array, options: WriteOptions = {}): Promise<void> {
    const file = this.file(location);
    const createOnly = options.overwrite !== true;
    const started = Date.now();
    const body = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
    const resumable = body.length > this.resumableThreshold;
    const precondition = createOnly ? { preconditionOpts: { ifGenerationMatch: 0 } } : {};
    try {
      if (resumable) {
        // The session is opened first and its URI handed to the upload: the SDK (7.22) forgets
        // `useAuthWithCustomEndpoint` when it opens the session itself, and a session URI needs no
        // token anyway. The precondition travels with the session.
        const [uri] = await file.createResumableUpload({ ...precondition, metadata: { contentType: 'application/octet-stream' } });
        await file.save(body, { resumable: true, uri, chunkSize: this.chunkSize, contentType: 'application/octet-stream', ...precondition });
      } else {
        await file.save(body, { resumable: false, contentType: 'application/octet-stream', ...precondition });
      }
    } catch (e) {
      if (createOnly && statusOf(e) === 412) {
        // A retried create whose first attempt landed (its answer lost) finds its own object:
        // the same bytes, created since this write began. Metadata files carry unique ids, so
        // nobody else writes byte-identical content under the same name.
        if (await this.createdByUs(file, body, started)) return;
        throw new FileAlreadyExistsError(location);
      }
      this.fail('write', location, e);
    }
  }

  private async createdByUs(file: File, body: Buffer, startedMs: number): Promise<boolean> {
    try {
      const [meta] = await file.getMetadata();
      const created = meta.timeCreated === undefined ? 0 : Date.parse(meta.timeCreated);
      if (Number(meta.size) !== body.length || created < startedMs - 1000) return false;
      const [back] = await file.download();
      return back.equals(body);
    } catch {
      return false;
    }
  }

  async exists(location: string): Promise<boolean> {
    const file = this.file(location);
    try {
      return (await file.exists())[0];
    } catch (e) {
      this.fail('exists', location, e);
    }
  }

  async size(location: string): Promise<number> {
    const file = this.file(location);
    try {
      return Number((await file.getMetadata())[0].size ?? 0);
    } catch (e) {
      if (statusOf(e) === 404 && !/bucket does not exist/i.test((e as Error).message)) throw new FileNotFoundError(location);
      this.fail('size', location, e);
    }
  }

  async delete(location: string): Promise<void> {
    const file = this.file(location);
    try {
      await file.delete();
    } catch (e) {
      if (statusOf(e) === 404 && !/bucket does not exist/i.test((e as Error).message)) return;
      this.fail('delete', location, e);
    }
  }

  async deletePrefix(prefix: string): Promise<number> {
    const files = await this.list(prefix);
    let next = 0;
    let deleted = 0;
    const worker = async (): Promise<void> => {
      while (next < files.length) {
        const f = files[next++] as FileInfo;
        await this.delete(f.location);
        deleted++;
      }
    };
    // Every delete in flight settles before the first failure is reported.
    const settled = await Promise.allSettled(Array.from({ length: Math.min(this.deleteConcurrency, files.length) }, worker));
    const rejected = settled.find((r): r is PromiseRejectedResult => r.status === 'rejected');
    if (rejected !== undefined) throw rejected.reason;
    return deleted;
  }

  async list(prefix: string): Promise<readonly FileInfo[]> {
    const { bucket, name } = parseGcsLocation(prefix);
    const out: FileInfo[] = [];
    let pageToken: string | undefined;
    do {
      let files: File[];
      let nextQuery: { pageToken?: string } | null | undefined;
      try {
        [files, nextQuery] = (await this.storage.bucket(bucket).getFiles({
          prefix: name, autoPaginate: false,
          ...(this.listPageSize !== undefined ? { maxResults: this.listPageSize } : {}),
          ...(pageToken !== undefined ? { pageToken } : {}),
        })) as unknown as [File[], { pageToken?: string } | null | undefined];
      } catch (e) {
        this.fail('list', prefix, e);
      }
      for (const f of files) {
        const updated = f.metadata.updated ?? f.metadata.timeCreated;
        out.push({ location: `gs://${bucket}/${f.name}`, size: Number(f.metadata.size ?? 0), lastModifiedMs: updated === undefined ? 0 : Date.parse(updated) });
      }
      pageToken = nextQuery?.pageToken ?? undefined;
    } while (pageToken !== undefined);
    return out.sort(compareLocations);
  }
}
