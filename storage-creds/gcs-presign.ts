/**
 * Presigned stage uploads and downloads on a GCS warehouse (docs/loading.md, "Uploads").
 *
 * - One file: a V4 signed URL (`X-Goog-Algorithm=GOOG4-RSA-SHA256`) for a PUT (or GET) of exactly
 *   that object, signed by `@google-cloud/storage`'s `getSignedUrl` with the profile's
 *   service-account key (google-auth-library signs locally with the key's RSA private key; Floe
 *   writes no RSA code). A PUT URL signs `x-goog-content-length-range: 0,<max>` as an extension
 *   header: the client must send that header as signed (or the signature fails), and GCS refuses a
 *   body whose length falls outside the range.
 * - A large file: a resumable-upload session that Floe starts with its own credentials (the SDK's
 *   `createResumableUpload`, a POST with `uploadType=resumable` and `X-Upload-Content-Length`,
 *   which makes GCS refuse to finalize an object of any other size), whose session URI the client
 *   then PUTs its chunks to (`Content-Range`, multiples of 256 KiB but the last). The session URI
 *   is the credential: it names one object, needs no other authentication, and lives a week
 *   (GCS's rule: it cannot be shortened; Floe's abort cancels it). This is the upload every GCS
 *   client library and gcloud speaks, and Google's documented way to let a client without
 *   credentials upload a large object.
 *
 * Floe asks the session itself whether it finished (`Content-Range: bytes *\/<size>`) and cancels
 * it (DELETE) on abort; those are plain requests to the session URI, which needs no signature.
 * A session URI is a credential: it never appears in an error or a log line here.
 */
import { GoogleAuth } from 'google-auth-library';
import { IdempotencyStrategy, Storage, type File } from '@google-cloud/storage';
import { StorageError } from './file-io.js';
import { gcsAuthClient, type GcsCredentials } from './gcs-auth.js';
import { parseGcsLocation } from './gcs-file-io.js';
import { checkPresignTime, type PresignedRequest, type PresignTime } from './presign.js';

/** Non-final chunks of a resumable upload are multiples of this (GCS's rule). */
export const GCS_CHUNK_QUANTUM = 256 * 1024;
/** How long GCS keeps a resumable session (it cannot be shortened). */
export const GCS_SESSION_LIFETIME_MS = 7 * 24 * 3600 * 1000;

/** Where a resumable session stands. */
export type SessionState =
  | { readonly state: 'complete'; readonly size: number; readonly etag: string }
  | { readonly state: 'incomplete'; readonly received: number }
  | { readonly state: 'gone' };

export interface GcsPresignerOptions {
  readonly credentials: GcsCredentials;
  /** The storage endpoint when not `https://storage.googleapis.com` (it serves the XML and JSON APIs). */
  readonly apiEndpoint?: string;
  readonly projectId?: string;
  /** Milliseconds one session request may take. Default 60 s. */
  readonly requestTimeoutMs?: number;
}

export class GcsPresigner {
  readonly kind = 'gcs';
  /** Signs URLs with the key, locally. */
  private readonly signer: Storage;
  /** Floe's own requests (starting sessions), with the token of `gcsAuthClient`. */
  private readonly api: Storage;
  private readonly timeoutMs: number;

  constructor(options: GcsPresignerOptions) {
    const endpoint = options.apiEndpoint !== undefined ? { apiEndpoint: options.apiEndpoint, useAuthWithCustomEndpoint: true } : {};
    const project = options.projectId !== undefined ? { projectId: options.projectId } : {};
    this.signer = new Storage({ authClient: signingAuth(options.credentials), ...endpoint, ...project });
    this.api = new Storage({
      authClient: gcsAuthClient(options.credentials), ...endpoint, ...project,
      // Starting a session has no precondition; a repeat only opens a second, unused session.
      retryOptions: { autoRetry: true, maxRetries: 3, retryDelayMultiplier: 2, maxRetryDelay: 8, totalTimeout: 120, idempotencyStrategy: IdempotencyStrategy.RetryAlways },
    });
    this.timeoutMs = options.requestTimeoutMs ?? 60_000;
  }

  /** Nothing to close: the SDK pools its connections in the process's agent. */
  destroy(): void {}

  private file(storage: Storage, location: string): File {
    const { bucket, name } = parseGcsLocation(location);
    if (name === '' || name.endsWith('/')) throw new StorageError(location, 'presign', 'rejected', 'a signed URL names one object');
    return storage.bucket(bucket).file(name);
  }

  private async sign(location: string, action: 'read' | 'write', time: PresignTime, extensionHeaders: Record<string, string>): Promise<string> {
    checkPresignTime(time);
    try {
      const [url] = await this.file(this.signer, location).getSignedUrl({
        version: 'v4', action, accessibleAt: new Date(time.now), expires: time.now + time.expiresInSeconds * 1000, extensionHeaders,
      });
      return url;
    } catch (e) {
      if (e instanceof StorageError) throw e;
      // A signing failure names the cause (no key material is in google-auth-library's messages).
      throw new StorageError(location, 'sign a URL', 'access-denied', (e as Error).message);
    }
  }

  /** A URL that PUTs at most `maxBytes` bytes to `location` until it expires; the range header is part of the signature. */
  async presignPut(location: string, maxBytes: number, time: PresignTime): Promise<PresignedRequest> {
    const headers = { 'x-goog-content-length-range': `0,${maxBytes}` };
    return { url: await this.sign(location, 'write', time, headers), headers };
  }

  /** A URL that GETs `location` until it expires. */
  async presignGet(location: string, time: PresignTime): Promise<string> {
    return this.sign(location, 'read', time, {});
  }

  /** Starts a resumable upload of exactly `size` bytes to `location`; returns the session URI. */
  async startResumable(location: string, size: number): Promise<string> {
    try {
      const [uri] = await this.file(this.api, location).createResumableUpload({ metadata: { contentLength: size, contentType: 'application/octet-stream' } as never });
      if (typeof uri !== 'string' || uri === '') throw new StorageError(location, 'start a resumable upload', 'rejected', 'the store returned no session URI');
      return uri;
    } catch (e) {
      if (e instanceof StorageError) throw e;
      const status = (e as { code?: unknown }).code;
      const failure = status === 401 || status === 403 ? 'access-denied' : typeof status === 'number' && status < 500 && status !== 429 && status !== 408 ? 'rejected' : 'unavailable';
      throw new StorageError(location, 'start a resumable upload', failure, `${(e as Error).message}${typeof status === 'number' ? ` (HTTP ${status})` : ''}`);
    }
  }

  /** Asks the session whether the upload of `size` bytes finished (GCS's status query). */
  async sessionState(location: string, sessionUri: string, size: number): Promise<SessionState> {
    const r = await this.session(location, 'query a resumable upload', sessionUri, { method: 'PUT', headers: { 'content-range': `bytes */${size}` } });
    const text = await r.text();
    if (r.status === 200 || r.status === 201) {
      let o: { size?: unknown; etag?: unknown; md5Hash?: unknown } = {};
      try {
        o = JSON.parse(text) as typeof o;
      } catch {
        throw new StorageError(location, 'query a resumable upload', 'rejected', 'the store answered a finished upload without the object');
      }
      return { state: 'complete', size: Number(o.size), etag: typeof o.etag === 'string' ? o.etag : '' };
    }
    if (r.status === 308) {
      const range = /^bytes=0-(\d+)$/.exec(r.headers.get('range') ?? '');
      return { state: 'incomplete', received: range === null ? 0 : Number(range[1]) + 1 };
    }
    if (r.status === 404 || r.status === 410 || r.status === 499) return { state: 'gone' };
    throw new StorageError(location, 'query a resumable upload', r.status >= 500 || r.status === 429 ? 'unavailable' : 'rejected', `HTTP ${r.status}`);
  }

  /** Cancels a session (GCS answers 499); one already gone is not an error. */
  async cancelResumable(location: string, sessionUri: string): Promise<void> {
    const r = await this.session(location, 'cancel a resumable upload', sessionUri, { method: 'DELETE', headers: {} });
    await r.arrayBuffer();
    if (r.status === 499 || r.status === 404 || r.status === 410 || (r.status >= 200 && r.status < 300)) return;
    throw new StorageError(location, 'cancel a resumable upload', r.status >= 500 || r.status === 429 ? 'unavailable' : 'rejected', `HTTP ${r.status}`);
  }

  private async session(location: string, operation: string, sessionUri: string, init: { method: string; headers: Record<string, string> }): Promise<Response> {
    try {
      return await fetch(sessionUri, { ...init, signal: AbortSignal.timeout(this.timeoutMs) });
    } catch (e) {
      // The URI is a credential: the message names the location only.
      throw new StorageError(location, operation, 'unavailable', `the store did not answer (${(e as Error).name})`);
    }
  }
}

/**
 * The `GoogleAuth` whose `sign` the SDK's URL signer calls: with a service-account key it signs
 * locally (RSA-SHA256 with the key); with Application Default Credentials it is the library's own
 * choice (a key file signs locally, other credentials call the IAM `signBlob` API). A bare access
 * token cannot sign.
 */
function signingAuth(credentials: GcsCredentials): GoogleAuth {
  switch (credentials.type) {
    case 'service-account':
      return new GoogleAuth({ credentials: { client_email: credentials.key.client_email, private_key: credentials.key.private_key } });
    case 'application-default':
      return new GoogleAuth();
    case 'access-token':
      throw new Error('an access token cannot sign URLs; presigning needs a service-account key or Application Default Credentials');
  }
}
