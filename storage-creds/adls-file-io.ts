/**
 * FileIO over Azure Blob Storage and ADLS Gen2 for `abfss://` / `abfs://`
 * (`<scheme>://<filesystem>@<account>.dfs.<suffix>/<path>`) and `wasbs://` / `wasb://`
 * (`<scheme>://<container>@<account>.blob.<suffix>/<path>`) locations, through
 * `@azure/storage-blob`. Both spellings name the same blobs: an ADLS Gen2 filesystem is a blob
 * container and its paths are blob names, and the Blob API works on accounts with or without a
 * hierarchical namespace, so every request goes to the account's blob endpoint (Azurite, the test
 * store, serves only that one).
 *
 * - Create-if-absent writes are Put Blob (or Put Block List) with `If-None-Match: *`, which Azure
 *   makes atomic: of two racing writers one gets 201, the other 409 `BlobAlreadyExists` (or 412).
 * - Objects above `blockThresholdBytes` go up as blocks (`blockSizeBytes`, a few in flight) and a
 *   conditional Put Block List; uncommitted blocks of a failed upload are invisible and Azure drops
 *   them after a week, so nothing needs aborting.
 * - Listing pages through List Blobs with a prefix (flat); `deletePrefix` deletes in parallel
 *   (`deleteConcurrency` at once).
 * - 500/503 (Azure's `ServerBusy` throttling), 408/429 and dropped connections are retried here,
 *   with exponential backoff and jitter (`maxAttempts`), not by the SDK's pipeline: a conditional
 *   write must know whether an earlier attempt may have landed (as the S3 FileIO does).
 * - What still fails is a typed `StorageError` naming the operation, location and cause, never
 *   the key, a client secret or a SAS. With client credentials, a refusal by Entra ID (entra-auth.ts)
 *   is an `access-denied` failure quoting Entra's reason, and is not retried.
 */
import { randomBytes } from 'node:crypto';
import {
  BlobServiceClient, RestError, StorageSharedKeyCredential, type BlockBlobClient, type ContainerClient,
} from '@azure/storage-blob';
import type { TokenCredential } from '@azure/core-auth';
import { FileAlreadyExistsError, FileNotFoundError, StorageError, UnsupportedLocationError, schemeOf } from './file-io.js';
import { EntraSignInError } from './entra-auth.js';
import type { FileIO, FileInfo, StorageFailure, VersionedBytes, WriteOptions } from './file-io.js';

/** The URI schemes this FileIO serves. */
export const ADLS_SCHEMES: ReadonlySet<string> = new Set(['abfss', 'abfs', 'wasbs', 'wasb']);

export function isAdlsLocation(location: string): boolean {
  const scheme = schemeOf(location);
  return scheme !== undefined && ADLS_SCHEMES.has(scheme);
}

/** The parts of an ADLS / Blob location. */
export interface AdlsLocation {
  readonly scheme: string;
  /** Filesystem (container) name. */
  readonly container: string;
  /** Storage account name (the first label of the host). */
  readonly account: string;
  /** The whole host as written (`acct.dfs.core.windows.net`). */
  readonly host: string;
  /** Blob name (path inside the container, no leading `/`; '' for the container root). */
  readonly path: string;
}

export function parseAdlsLocation(location: string): AdlsLocation {
  const scheme = schemeOf(location);
  if (scheme === undefined || !ADLS_SCHEMES.has(scheme)) throw new UnsupportedLocationError(location, scheme ?? 'plain path');
  if (!location.slice(scheme.length).startsWith('://')) throw new UnsupportedLocationError(location, `${scheme} (malformed)`);
  const rest = location.slice(scheme.length + 3);
  const slash = rest.indexOf('/');
  const authority = slash === -1 ? rest : rest.slice(0, slash);
  const at = authority.indexOf('@');
  if (at <= 0) throw new UnsupportedLocationError(location, `${scheme} (expected ${scheme}://<container>@<account>.<host>/path)`);
  const container = authority.slice(0, at);
  const host = authority.slice(at + 1).toLowerCase();
  const account = host.split('.')[0] ?? '';
  if (account === '' || !/^[a-z0-9-]+(\.[a-z0-9-]+)*$/.test(host) || /[?#]/.test(container)) {
    throw new UnsupportedLocationError(location, `${scheme} (expected ${scheme}://<container>@<account>.<host>/path)`);
  }
  return { scheme, container, account, host, path: slash === -1 ? '' : rest.slice(slash + 1) };
}

/**
 * Whether a parsed location names `account` (and, given the suffix, one of its two hosts,
 * `<account>.dfs.<suffix>` or `<account>.blob.<suffix>`).
 */
export function adlsHostServed(l: AdlsLocation, account: string, endpointSuffix?: string): boolean {
  if (l.account !== account) return false;
  return endpointSuffix === undefined || l.host === `${account}.dfs.${endpointSuffix}` || l.host === `${account}.blob.${endpointSuffix}`;
}

/** How the FileIO authenticates: the account key, or an Entra ID token credential. */
export type AdlsAuth =
  | { readonly type: 'shared-key'; readonly accountKey: string }
  | { readonly type: 'token'; readonly credential: TokenCredential };

export interface AdlsFileIOOptions {
  readonly accountName: string;
  /** The account's blob service URL (`https://<account>.blob.core.windows.net`, or Azurite's `http://127.0.0.1:10000/<account>`). */
  readonly endpoint: string;
  readonly auth: AdlsAuth;
  /**
   * The DNS suffix of the account's hosts (`core.windows.net`): when given, a location must name
   * `<account>.dfs.<suffix>` or `<account>.blob.<suffix>`, not merely the account (a client handed
   * such a location would send its requests, and any SAS, to that other host).
   */
  readonly endpointSuffix?: string;
  /** Attempts per request including the first. Default 5. */
  readonly maxAttempts?: number;
  /** First backoff delay; doubled per attempt with jitter, at most 10 s. Default 200 ms. */
  readonly retryBaseDelayMs?: number;
  /** Writes larger than this are staged as blocks. Default 32 MiB. */
  readonly blockThresholdBytes?: number;
  /** Block size for staged uploads. Default 16 MiB. */
  readonly blockSizeBytes?: number;
  /** Blocks uploaded at once. Default 4. */
  readonly blockConcurrency?: number;
  /** Blobs per List Blobs page (the store's default, 5000, when absent). */
  readonly listPageSize?: number;
  /** Deletes in flight at once in `deletePrefix`. Default 16. */
  readonly deleteConcurrency?: number;
  /** Milliseconds one attempt may take (the SDK's per-try timeout). Default 120 s. */
  readonly requestTimeoutMs?: number;
}

const MIB = 1024 * 1024;
const RETRYABLE_STATUS: ReadonlySet<number> = new Set([408, 429, 500, 502, 503, 504]);

function statusOf(e: unknown): number | undefined {
  return e instanceof RestError ? e.statusCode : (e as { statusCode?: number } | null)?.statusCode;
}

function codeOf(e: unknown): string | undefined {
  const err = e as { code?: string; details?: { errorCode?: string } } | null;
  return err?.details?.errorCode ?? err?.code;
}

function retryable(e: unknown): boolean {
  // The identity library has retried the token endpoint already; a refusal stays a refusal.
  if (e instanceof EntraSignInError) return false;
  const status = statusOf(e);
  if (status === undefined) return !(e instanceof UnsupportedLocationError) && e instanceof Error && e.name !== 'AbortError';
  return RETRYABLE_STATUS.has(status);
}

/** The store's own words for a refusal (Azure's `Message`, e.g. the `AuthenticationErrorDetail` of a refused token), first line. */
function storeMessage(e: unknown): string {
  const message = (e as { details?: { message?: string; authenticationErrorDetail?: string; AuthenticationErrorDetail?: string } } | null)?.details;
  const detail = message?.authenticationErrorDetail ?? message?.AuthenticationErrorDetail;
  const text = (detail ?? message?.message ?? '').split(/\r?\n/)[0]?.trim() ?? '';
  // Azure quotes a refused Shared Key request's signature (and the string it signed): never repeated.
  return /MAC signature/i.test(text) ? 'the Shared Key signature does not match' : text;
}

/** What went wrong, in the words an operator acts on. */
export function describeAdlsFailure(e: unknown): { failure: StorageFailure; detail: string } {
  if (e instanceof EntraSignInError) return { failure: e.failure === 'refused' ? 'access-denied' : 'unavailable', detail: e.detail };
  const status = statusOf(e);
  const code = codeOf(e) ?? 'Error';
  const said = storeMessage(e);
  switch (code) {
    case 'ContainerNotFound':
      return { failure: 'no-such-bucket', detail: 'the container (filesystem) does not exist' };
    case 'AuthenticationFailed':
    case 'InvalidAuthenticationInfo':
      return { failure: 'access-denied', detail: `the request signature does not match (wrong account key) or the token was refused (${code}${said !== '' ? `: ${said}` : ''})` };
    case 'AuthorizationPermissionMismatch':
    case 'AuthorizationResourceTypeMismatch':
      // What Azure answers a service principal without a data role on the container.
      return { failure: 'access-denied', detail: `access denied (${code}): the credential has no permission for this operation on the filesystem; a service principal needs a data role on it, such as Storage Blob Data Contributor` };
    case 'AuthorizationFailure': // also Azurite's answer to a bad Shared Key signature
    case 'InsufficientAccountPermissions':
      return { failure: 'access-denied', detail: `access denied (${code}: check the account key, or the credential's role assignments)` };
    case 'AccountIsDisabled':
    case 'ResourceNotFound':
    case 'InvalidUri':
    case 'InvalidResourceName':
      return { failure: 'wrong-region', detail: `the account or endpoint is wrong (${code}); check account-name, endpoint and endpoint-suffix` };
    case 'ENOTFOUND':
    case 'EAI_AGAIN':
      return { failure: 'wrong-region', detail: `the endpoint's host name does not resolve (${code}); check account-name, endpoint and endpoint-suffix` };
    default:
      break;
  }
  if (status === 401 || status === 403) return { failure: 'access-denied', detail: `access denied (${code})` };
  if (status === undefined || status >= 500 || RETRYABLE_STATUS.has(status)) {
    const message = (e as Error | null)?.message;
    return { failure: 'unavailable', detail: `the store did not answer successfully (${status ?? code}${message ? `: ${message.split('\n')[0]}` : ''})` };
  }
  return { failure: 'rejected', detail: `${code} (HTTP ${status})` };
}

function isNotFound(e: unknown): boolean {
  return statusOf(e) === 404 && codeOf(e) !== 'ContainerNotFound';
}

function isConflict(e: unknown): boolean {
  const status = statusOf(e);
  return status === 412 || (status === 409 && codeOf(e) === 'BlobAlreadyExists');
}

async function drain(stream: NodeJS.ReadableStream | undefined): Promise<Buffer> {
  if (stream === undefined) return Buffer.alloc(0);
  const chunks: Buffer[] = [];
  for await (const chunk of stream) chunks.push(typeof chunk === 'string' ? Buffer.from(chunk) : Buffer.from(chunk));
  return Buffer.concat(chunks);
}

function compareLocations(a: FileInfo, b: FileInfo): number {
  return a.location < b.location ? -1 : a.location > b.location ? 1 : 0;
}

export class AdlsFileIO implements FileIO {
  private readonly service: BlobServiceClient;
  private readonly containers = new Map<string, ContainerClient>();
  private readonly maxAttempts: number;
  private readonly baseDelayMs: number;
  private readonly blockThreshold: number;
  private readonly blockSize: number;
  private readonly blockConcurrency: number;
  private readonly listPageSize: number | undefined;
  private readonly deleteConcurrency: number;

  constructor(private readonly options: AdlsFileIOOptions) {
    const credential = options.auth.type === 'shared-key' ? new StorageSharedKeyCredential(options.accountName, options.auth.accountKey) : options.auth.credential;
    // The SDK's own retries are off: `attempt` retries, so that a conditional write knows it was retried.
    this.service = new BlobServiceClient(options.endpoint.replace(/\/+$/, ''), credential, { retryOptions: { maxTries: 1, tryTimeoutInMs: options.requestTimeoutMs ?? 120_000 } });
    this.maxAttempts = Math.max(1, options.maxAttempts ?? 5);
    this.baseDelayMs = options.retryBaseDelayMs ?? 200;
    this.blockThreshold = options.blockThresholdBytes ?? 32 * MIB;
    this.blockSize = Math.max(1, options.blockSizeBytes ?? 16 * MIB);
    this.blockConcurrency = Math.max(1, options.blockConcurrency ?? 4);
    this.listPageSize = options.listPageSize;
    this.deleteConcurrency = Math.max(1, options.deleteConcurrency ?? 16);
  }

  /** Nothing to close: the SDK's HTTP client keeps no state worth tearing down. */
  destroy(): void {}

  private target(location: string): { readonly parsed: AdlsLocation; readonly container: ContainerClient } {
    const parsed = parseAdlsLocation(location);
    if (!adlsHostServed(parsed, this.options.accountName, this.options.endpointSuffix)) {
      throw new UnsupportedLocationError(location, `${parsed.scheme} (host ${parsed.host} is not the storage account ${this.options.accountName}${this.options.endpointSuffix !== undefined ? `.dfs.${this.options.endpointSuffix}` : ''})`);
    }
    let container = this.containers.get(parsed.container);
    if (container === undefined) {
      container = this.service.getContainerClient(parsed.container);
      this.containers.set(parsed.container, container);
    }
    return { parsed, container };
  }

  private blob(location: string): BlockBlobClient {
    const { parsed, container } = this.target(location);
    if (parsed.path === '') throw new UnsupportedLocationError(location, `${parsed.scheme} (no blob name)`);
    return container.getBlockBlobClient(parsed.path);
  }

  /**
   * Runs `op` up to `maxAttempts` times while it fails with a retryable error (throttling, 5xx,
   * timeouts, dropped connections), backing off exponentially with full jitter. `op` gets the
   * attempt number (1-based).
   */
  private async attempt<T>(op: (attempt: number) => Promise<T>): Promise<T> {
    for (let attempt = 1; ; attempt++) {
      try {
        return await op(attempt);
      } catch (e) {
        if (attempt >= this.maxAttempts || !retryable(e)) throw e;
        const cap = Math.min(10_000, this.baseDelayMs * 2 ** (attempt - 1));
        await new Promise((r) => setTimeout(r, cap / 2 + Math.random() * (cap / 2)));
      }
    }
  }

  private fail(operation: string, location: string, e: unknown): never {
    if (e instanceof StorageError || e instanceof UnsupportedLocationError || e instanceof FileAlreadyExistsError || e instanceof FileNotFoundError) throw e;
    const { failure, detail } = describeAdlsFailure(e);
    throw new StorageError(location, operation, failure, detail);
  }

  async read(location: string): Promise<Buffer> {
    return (await this.readVersioned(location)).bytes;
  }

  async readVersioned(location: string): Promise<VersionedBytes> {
    const blob = this.blob(location);
    try {
      return await this.attempt(async () => {
        const r = await blob.download(0, undefined, {});
        return { bytes: await drain(r.readableStreamBody), version: r.etag };
      });
    } catch (e) {
      if (isNotFound(e)) throw new FileNotFoundError(location);
      this.fail('read', location, e);
    }
  }

  async version(location: string): Promise<string | undefined> {
    const blob = this.blob(location);
    try {
      return (await this.attempt(() => blob.getProperties())).etag;
    } catch (e) {
      if (isNotFound(e)) throw new FileNotFoundError(location);
      this.fail('version', location, e);
    }
  }

  async readRange(location: string, offset: number, length: number): Promise<Buffer> {
    if (length <= 0) {
      // A zero-length range is not expressible; still report a missing object as such.
      if (!(await this.exists(location))) throw new FileNotFoundError(location);
      return Buffer.alloc(0);
    }
    const blob = this.blob(location);
    try {
      return await this.attempt(async () => drain((await blob.download(offset, length, {})).readableStreamBody));
    } catch (e) {
      if (isNotFound(e)) throw new FileNotFoundError(location);
      // 416: the range starts at or past the end; the contract is "the bytes that exist".
      if (statusOf(e) === 416) return Buffer.alloc(0);
      this.fail('read', location, e);
    }
  }

  async write(location: string, bytes: Uint8Array, options: WriteOptions = {}): Promise<void> {
    const blob = this.blob(location);
    const createOnly = options.overwrite !== true;
    const conditions = createOnly ? { ifNoneMatch: '*' } : {};
    let attempts = 0;
    try {
      if (bytes.length > this.blockThreshold) {
        await this.writeBlocks(location, blob, bytes, createOnly);
        return;
      }
      await this.attempt((n) => {
        attempts = n;
        return blob.upload(bytes, bytes.length, { conditions });
      });
    } catch (e) {
      if (createOnly && isConflict(e)) {
        // A retried write whose first attempt landed (its answer lost) finds its own blob: same
        // bytes means the write is ours. Metadata files carry unique ids, so nobody else writes
        // byte-identical content under the same name.
        if (attempts > 1 && (await this.sameBytes(location, bytes))) return;
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
   * Blocks of `blockSize`, `blockConcurrency` at a time, then Put Block List, conditional for
   * create-if-absent (Azure checks `If-None-Match` on the commit, so the race is decided there).
   * Block ids are random per upload: two uploads of one name never mix their blocks.
   */
  private async writeBlocks(location: string, blob: BlockBlobClient, bytes: Uint8Array, createOnly: boolean): Promise<void> {
    if (createOnly && (await this.exists(location))) throw new FileAlreadyExistsError(location);
    const upload = randomBytes(12).toString('hex');
    const count = Math.ceil(bytes.length / this.blockSize);
    // Equal-length ids, as Azure requires within one blob.
    const ids = Array.from({ length: count }, (_, i) => Buffer.from(`${upload}-${String(i).padStart(6, '0')}`).toString('base64'));
    let next = 0;
    let failed = false;
    const worker = async (): Promise<void> => {
      while (next < count && !failed) {
        const i = next++;
        const body = bytes.subarray(i * this.blockSize, Math.min(bytes.length, (i + 1) * this.blockSize));
        try {
          await this.attempt(() => blob.stageBlock(ids[i] as string, body, body.length, {}));
        } catch (e) {
          failed = true;
          throw e;
        }
      }
    };
    const settled = await Promise.allSettled(Array.from({ length: Math.min(this.blockConcurrency, count) }, worker));
    const rejected = settled.find((r): r is PromiseRejectedResult => r.status === 'rejected');
    if (rejected !== undefined) throw rejected.reason;
    await this.attempt(() => blob.commitBlockList(ids, { conditions: createOnly ? { ifNoneMatch: '*' } : {} }));
  }

  async exists(location: string): Promise<boolean> {
    const blob = this.blob(location);
    try {
      await this.attempt(() => blob.getProperties());
      return true;
    } catch (e) {
      if (isNotFound(e)) return false;
      this.fail('exists', location, e);
    }
  }

  async size(location: string): Promise<number> {
    const blob = this.blob(location);
    try {
      return (await this.attempt(() => blob.getProperties())).contentLength ?? 0;
    } catch (e) {
      if (isNotFound(e)) throw new FileNotFoundError(location);
      this.fail('size', location, e);
    }
  }

  async delete(location: string): Promise<void> {
    const blob = this.blob(location);
    try {
      await this.attempt(() => blob.deleteIfExists());
    } catch (e) {
      if (isNotFound(e)) return;
      this.fail('delete', location, e);
    }
  }

  async deletePrefix(prefix: string): Promise<number> {
    const files = await this.list(prefix);
    let next = 0;
    let deleted = 0;
    const failures: { location: string; error: unknown }[] = [];
    const worker = async (): Promise<void> => {
      while (next < files.length) {
        const f = files[next++] as FileInfo;
        try {
          await this.attempt(() => this.blob(f.location).deleteIfExists());
          deleted++;
        } catch (e) {
          failures.push({ location: f.location, error: e });
        }
      }
    };
    await Promise.all(Array.from({ length: Math.min(this.deleteConcurrency, files.length) }, worker));
    if (failures.length > 0) {
      const first = failures[0] as { location: string; error: unknown };
      const { failure, detail } = describeAdlsFailure(first.error);
      throw new StorageError(prefix, 'delete', failure, `${failures.length} of ${files.length} objects were not deleted (first: ${first.location}: ${detail})`);
    }
    return deleted;
  }

  async list(prefix: string): Promise<readonly FileInfo[]> {
    const { parsed, container } = this.target(prefix);
    const base = `${parsed.scheme}://${parsed.container}@${parsed.host}/`;
    const out: FileInfo[] = [];
    let token: string | undefined;
    try {
      do {
        const page = await this.attempt(async () => {
          const pages = container.listBlobsFlat({ prefix: parsed.path }).byPage({ ...(token !== undefined ? { continuationToken: token } : {}), ...(this.listPageSize !== undefined ? { maxPageSize: this.listPageSize } : {}) });
          return (await pages.next()).value;
        });
        if (page === undefined) break;
        for (const b of page.segment.blobItems) {
          out.push({ location: `${base}${b.name}`, size: b.properties.contentLength ?? 0, lastModifiedMs: b.properties.lastModified?.getTime() ?? 0 });
        }
        token = page.continuationToken === '' ? undefined : page.continuationToken;
      } while (token !== undefined);
    } catch (e) {
      this.fail('list', prefix, e);
    }
    return out.sort(compareLocations);
  }
}
