/**
 * Presigned uploads to stages (`POST /v1/stages/presign`, `…/multipart/init|complete|abort`;
 * docs/loading.md, "Uploads"). Every request resolves the stage with the caller's USAGE checked,
 * and every path passes `checkStageKey`. On a `file://` warehouse Floe serves the URLs itself
 * (`/v1/stages/files?token=…`, upload-tokens.ts): a PUT streams to a temporary file beside its
 * target and is renamed into place, so a reader never sees half a file and an over-size body
 * leaves nothing behind. Multipart uploads keep their parts in `<warehouse>/stages/_uploads/<id>/`
 * (outside every stage) with a manifest naming the owner, stage folder and key; completion checks
 * that the parts are 1…n, each present with the ETag the client got, and assembles them in order.
 *
 * On object storage the URLs are the store's own, signed with the catalog's credentials
 * (storage-creds/presign.ts), and the upload's manifest object sits at the same `_uploads/<id>/`
 * place in the bucket:
 * - S3: SigV4 presigned URLs (s3-presign.ts); the store enforces key, expiry and size (Content-Length
 *   is signed, so a PUT needs its `size` declared). A multipart upload is the store's
 *   (CreateMultipartUpload, presigned UploadPart URLs of exact sizes); completion checks the store's
 *   ListParts (count, sizes, ETags) before CompleteMultipartUpload.
 * - Azure (ADLS / Blob): a blob SAS (`sr=b`, `cw`) for the one blob (adls-presign.ts); Azure cannot
 *   sign a size, so the cap is Floe's check of the declared size, of each block at completion, and
 *   COPY's of the file. A multipart upload is Put Block to the same SAS with Floe's block ids;
 *   completion checks the uncommitted blocks (count, sizes) and commits them with Put Block List.
 * - GCS: a V4 signed URL with `x-goog-content-length-range` (gcs-presign.ts). A multipart upload is
 *   a resumable session Floe starts with `X-Upload-Content-Length`; the client PUTs chunks to its
 *   URI, and completion asks the session whether it finished.
 */
import { createHash, randomBytes } from 'node:crypto';
import { createReadStream, createWriteStream, promises as fs } from 'node:fs';
import * as path from 'node:path';
import type { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { once } from 'node:events';
import { floeError } from '../../grammar/errors.js';
import type { CatalogContext } from '../../catalog/rest/context.js';
import { storageSecretPurpose, type SecretSealer } from '../../catalog/rest/deps.js';
import type { CatalogRecord } from '../../catalog/rest/store.js';
import { remapLocation, StorageError } from '../../storage-creds/file-io.js';
import { resolveLocalPath } from '../../storage-creds/local-file-io.js';
import { isS3Location } from '../../storage-creds/s3-file-io.js';
import { isAdlsLocation } from '../../storage-creds/adls-file-io.js';
import { isGcsLocation } from '../../storage-creds/gcs-file-io.js';
import { bareEtag, MAX_S3_PART_BYTES, MIN_S3_PART_BYTES, type S3Presigner } from '../../storage-creds/s3-presign.js';
import { AdlsPresigner, MAX_AZURE_BLOCK_BYTES, MAX_AZURE_PUT_BLOB_BYTES } from '../../storage-creds/adls-presign.js';
import { GCS_CHUNK_QUANTUM, GCS_SESSION_LIFETIME_MS, type GcsPresigner } from '../../storage-creds/gcs-presign.js';
import { presignerForProfile, type PresignTime, type StorePresigner } from '../../storage-creds/presign.js';
import type { StorageProfile, StorageSecret } from '../../storage-creds/storage-profile.js';
import { checkStageKey, type StageRef } from './stage-path.js';
import { stagesRoot, type ResolvedStage, type StageService } from './stages.js';
import { UploadTokens, type UploadClaims, type UploadOperation } from './upload-tokens.js';

/** Most parts of one multipart upload (as S3). */
export const MAX_PARTS = 10_000;
/** Part size when a client declares the total size only. */
export const DEFAULT_PART_BYTES = 16 * 1024 * 1024;
const UPLOAD_ID = /^[0-9a-f]{32}$/;

export interface UploadLimits {
  readonly maxUploadBytes: number;
  readonly maxMultipartBytes: number;
  readonly ttlSeconds: number;
  readonly maxTtlSeconds: number;
}

export interface StageFileRequest {
  readonly catalog: string;
  readonly stage: StageRef;
}

export interface PresignAnswer {
  readonly url: string;
  readonly method: 'PUT' | 'GET';
  readonly path: string;
  readonly expires_at: string;
  readonly max_bytes?: number;
  /** Headers the client must send with the request (as signed, where the store signs them). */
  readonly headers?: Readonly<Record<string, string>>;
}

/**
 * How a multipart upload is cut: `parts` parts, and when the client declared its total `size`,
 * every part `partSize` bytes except the last (the rest). Each part URL then takes exactly its
 * part's bytes, and completion checks them.
 */
export interface PartPlan {
  readonly parts: number;
  readonly size?: number;
  readonly partSize?: number;
}

/** The bytes part `n` (1-based) must have, when the plan says. */
export function partLength(plan: PartPlan, n: number): number | undefined {
  if (plan.size === undefined || plan.partSize === undefined) return undefined;
  return n < plan.parts ? plan.partSize : plan.size - (plan.parts - 1) * plan.partSize;
}

/**
 * The plan for a multipart init: from `size` and `part_size` (or `size` and `parts`, or `size`
 * alone with 16 MiB parts), or `parts` alone where the store allows parts of any size (file://).
 * Pure; bad combinations are INVALID_PARAMETER naming the field.
 */
export function planParts(r: { readonly parts?: number; readonly size?: number; readonly partSize?: number },
  limits: { readonly maxPartBytes: number; readonly maxTotalBytes: number; readonly minPartBytes: number; readonly sizeRequired: boolean; readonly partMultipleOf?: number }): PartPlan {
  const positive = (v: number | undefined, name: string): void => {
    if (v !== undefined && (!Number.isSafeInteger(v) || v < 1)) throw floeError('INVALID_PARAMETER', { name, detail: 'must be a positive integer' });
  };
  positive(r.parts, 'parts');
  positive(r.size, 'size');
  positive(r.partSize, 'part_size');
  if (r.parts !== undefined && r.parts > MAX_PARTS) throw floeError('INVALID_PARAMETER', { name: 'parts', detail: `must be an integer from 1 to ${MAX_PARTS}` });
  if (r.size === undefined) {
    if (limits.sizeRequired) throw floeError('INVALID_PARAMETER', { name: 'size', detail: "the upload's total bytes are required on object storage (the store enforces each part's length)" });
    if (r.partSize !== undefined) throw floeError('INVALID_PARAMETER', { name: 'part_size', detail: 'needs the total size' });
    if (r.parts === undefined) throw floeError('INVALID_PARAMETER', { name: 'parts', detail: `must be an integer from 1 to ${MAX_PARTS} (or give size)` });
    return { parts: r.parts };
  }
  if (r.size > limits.maxTotalBytes) throw floeError('INVALID_PARAMETER', { name: 'size', detail: `${r.size} bytes is over the limit of ${limits.maxTotalBytes}` });
  const partSize = r.partSize ?? (r.parts !== undefined ? Math.ceil(r.size / r.parts) : Math.min(r.size, DEFAULT_PART_BYTES));
  const parts = Math.ceil(r.size / partSize);
  if (r.parts !== undefined && parts !== r.parts) throw floeError('INVALID_PARAMETER', { name: 'parts', detail: `${r.size} bytes in parts of ${partSize} bytes make ${parts} parts, not ${r.parts}` });
  if (parts > MAX_PARTS) throw floeError('INVALID_PARAMETER', { name: 'part_size', detail: `${r.size} bytes in parts of ${partSize} bytes make ${parts} parts, over ${MAX_PARTS}` });
  if (partSize > limits.maxPartBytes) throw floeError('INVALID_PARAMETER', { name: 'part_size', detail: `${partSize} bytes is over the part limit of ${limits.maxPartBytes}` });
  if (parts > 1 && partSize < limits.minPartBytes) throw floeError('INVALID_PARAMETER', { name: 'part_size', detail: `parts other than the last need at least ${limits.minPartBytes} bytes on this store` });
  if (parts > 1 && limits.partMultipleOf !== undefined && partSize % limits.partMultipleOf !== 0) throw floeError('INVALID_PARAMETER', { name: 'part_size', detail: `parts other than the last must be a multiple of ${limits.partMultipleOf} bytes on this store` });
  return { parts, size: r.size, partSize };
}

/** A part as the client lists it at completion: its number and the ETag its PUT answered (none on Azure). */
export interface UploadedPart {
  readonly partNumber: number;
  readonly etag?: string;
}

interface UploadManifest {
  readonly principal: string;
  readonly tenant: string;
  readonly root: string;
  readonly key: string;
  readonly exp: number;
  /** The plan declared at init (absent in uploads started before plans existed: any part count). */
  readonly plan?: PartPlan;
  /** The object store's own upload id (S3 warehouses). */
  readonly storeUploadId?: string;
  /** The resumable session's URI (GCS warehouses): a credential, kept only here, in Floe's own bucket. */
  readonly sessionUri?: string;
}

/** Where a stage's files are: local folders Floe serves, or a bucket whose store presigns. */
type StageStore =
  | { readonly kind: 'local' }
  | { readonly kind: 's3'; readonly presigner: S3Presigner }
  | { readonly kind: 'adls'; readonly presigner: AdlsPresigner }
  | { readonly kind: 'gcs'; readonly presigner: GcsPresigner };

/** An upload found by its id, with the caller's rights checked. */
interface OpenedUpload {
  readonly stage: ResolvedStage;
  readonly store: StageStore;
  readonly folder: string;
  readonly manifest: UploadManifest;
}

/** The presigners of catalogs on object storage, one per catalog (its profile never changes). */
export interface StagePresigners {
  presignerFor(catalog: CatalogRecord): StorePresigner;
  close(): void;
}

/** Presigners from the catalogs' storage profiles, signing with the keys sealed under the server key. */
export class ProfilePresigners implements StagePresigners {
  private readonly known = new Map<string, StorePresigner>();

  constructor(
    private readonly secrets: SecretSealer | undefined,
    private readonly factory: (profile: StorageProfile, secret: StorageSecret | null) => StorePresigner = presignerForProfile,
  ) {}

  presignerFor(catalog: CatalogRecord): StorePresigner {
    const known = this.known.get(catalog.id);
    if (known !== undefined) return known;
    const profile = catalog.storageProfile;
    if (profile === null) throw floeError('UNSUPPORTED_STATEMENT', { what: `presigned URLs for catalog ${catalog.name}: its warehouse is on object storage without a storage profile to sign with` });
    let secret: StorageSecret | null = null;
    if (catalog.storageSecretSealed !== null) {
      if (this.secrets === undefined) throw new Error('catalog storage secrets cannot be opened: no server key');
      secret = JSON.parse(this.secrets.open(catalog.storageSecretSealed, storageSecretPurpose(catalog.id))) as StorageSecret;
    }
    const presigner = this.factory(profile, secret);
    this.known.set(catalog.id, presigner);
    return presigner;
  }

  close(): void {
    for (const p of this.known.values()) p.destroy();
    this.known.clear();
  }
}

/** A store's own limit on a URL's life, below `loading.presign_max_ttl_seconds`: a user-delegation SAS dies with its key. */
function checkStoreTtl(store: StageStore, ttlMs: number): void {
  const max = store.kind === 'adls' ? store.presigner.maxExpiresInSeconds : undefined;
  if (max !== undefined && ttlMs / 1000 > max) {
    throw floeError('INVALID_PARAMETER', { name: 'expires_in_seconds', detail: `must be at most ${max} on this catalog: its URLs are signed with a user delegation key, which Azure gives at most 7 days` });
  }
}

export class StageUploads {
  constructor(
    private readonly stages: StageService,
    private readonly tokens: UploadTokens,
    private readonly limits: UploadLimits,
    private readonly clock: { now(): number },
    private readonly presigners?: StagePresigners,
  ) {}

  /** Closes the object-store clients of the presigners. */
  close(): void {
    this.presigners?.close();
  }

  private ttl(requested: number | undefined): number {
    const seconds = requested ?? this.limits.ttlSeconds;
    if (!Number.isInteger(seconds) || seconds < 1 || seconds > this.limits.maxTtlSeconds) {
      throw floeError('INVALID_PARAMETER', { name: 'expires_in_seconds', detail: `must be an integer from 1 to ${this.limits.maxTtlSeconds}` });
    }
    return seconds * 1000;
  }

  private storeOf(stage: ResolvedStage): StageStore {
    if (isLocal(stage.files.root)) return { kind: 'local' };
    const unsupported = () => floeError('UNSUPPORTED_STATEMENT', { what: `presigned URLs for a stage at ${stage.files.root} (file://, s3://, abfss:// and gs:// warehouses with a storage profile)` });
    if (this.presigners === undefined) throw unsupported();
    const root = this.located(stage, stage.files.root);
    const presigner = this.presigners.presignerFor(stage.catalog);
    // The stage root must be in the store the profile signs for (a remapped location could point elsewhere).
    switch (presigner.kind) {
      case 's3':
        if (isS3Location(root)) return { kind: 's3', presigner };
        break;
      case 'adls':
        if (isAdlsLocation(root)) return { kind: 'adls', presigner };
        break;
      case 'gcs':
        if (isGcsLocation(root)) return { kind: 'gcs', presigner };
        break;
    }
    throw unsupported();
  }

  /** A location as the store names it (the catalog's location remappings applied). */
  private located(stage: ResolvedStage, location: string): string {
    return remapLocation(location, stage.catalog.locationMappings);
  }

  private url(baseUrl: string, claims: UploadClaims): string {
    return `${baseUrl}/v1/stages/files?token=${this.tokens.sign(claims)}`;
  }

  /** A URL to PUT one file (at most `size` bytes when given, never more than the cap) or to GET it. */
  async presign(cc: CatalogContext, r: StageFileRequest & { path: string; method: 'PUT' | 'GET'; size?: number; expiresInSeconds?: number }, baseUrl: string): Promise<PresignAnswer> {
    const key = checkStageKey(r.path, {}, 'path');
    const ttl = this.ttl(r.expiresInSeconds);
    const maxBytes = this.cap(r.size, this.limits.maxUploadBytes, 'size');
    const stage = await this.stages.resolve(cc, r.catalog, r.stage);
    const store = this.storeOf(stage);
    checkStoreTtl(store, ttl);
    const now = this.clock.now();
    const exp = now + ttl;
    const answer = { method: r.method, path: key, expires_at: new Date(exp).toISOString() } as const;
    switch (store.kind) {
      case 'local': {
        const claims: UploadClaims = { op: r.method === 'PUT' ? 'put' : 'get', tenant: cc.tenantId, principal: cc.principalId, root: stage.files.root, key, maxBytes, exp };
        return { url: this.url(baseUrl, claims), ...answer, ...(r.method === 'PUT' ? { max_bytes: maxBytes } : {}) };
      }
      case 's3': {
        const location = this.located(stage, stage.files.location(key));
        const time: PresignTime = { now, expiresInSeconds: ttl / 1000 };
        if (r.method === 'GET') return { url: await store.presigner.presignGet(location, time), ...answer };
        if (r.size === undefined) throw floeError('INVALID_PARAMETER', { name: 'size', detail: 'the number of bytes to upload is required on S3 (the store accepts exactly that many)' });
        if (r.size > MAX_S3_PART_BYTES) throw floeError('INVALID_PARAMETER', { name: 'size', detail: `a single PUT takes at most ${MAX_S3_PART_BYTES} bytes on S3; use a multipart upload` });
        return { url: await store.presigner.presignPut(location, r.size, time), ...answer, max_bytes: r.size };
      }
      case 'adls': {
        const location = this.located(stage, stage.files.location(key));
        const time: PresignTime = { now, expiresInSeconds: ttl / 1000 };
        if (r.method === 'GET') return { url: await store.presigner.presignGet(location, time), ...answer };
        // Azure signs no size: `max_bytes` is Floe's word, checked here and by COPY, not by the store.
        if (maxBytes > MAX_AZURE_PUT_BLOB_BYTES && r.size !== undefined) throw floeError('INVALID_PARAMETER', { name: 'size', detail: `a single PUT takes at most ${MAX_AZURE_PUT_BLOB_BYTES} bytes on Azure; use a multipart upload` });
        const put = await store.presigner.presignPut(location, time);
        return { url: put.url, ...answer, max_bytes: Math.min(maxBytes, MAX_AZURE_PUT_BLOB_BYTES), headers: put.headers };
      }
      case 'gcs': {
        const location = this.located(stage, stage.files.location(key));
        const time: PresignTime = { now, expiresInSeconds: ttl / 1000 };
        if (r.method === 'GET') return { url: await store.presigner.presignGet(location, time), ...answer };
        const put = await store.presigner.presignPut(location, maxBytes, time);
        return { url: put.url, ...answer, max_bytes: maxBytes, headers: put.headers };
      }
    }
  }

  private cap(requested: number | undefined, limit: number, name: string): number {
    if (requested === undefined) return limit;
    if (!Number.isSafeInteger(requested) || requested < 0) throw floeError('INVALID_PARAMETER', { name, detail: 'must be a non-negative integer' });
    if (requested > limit) throw floeError('INVALID_PARAMETER', { name, detail: `${requested} bytes is over the limit of ${limit}` });
    return requested;
  }

  async initMultipart(cc: CatalogContext, r: StageFileRequest & { path: string; parts?: number; size?: number; partSize?: number; expiresInSeconds?: number }, baseUrl: string) {
    const key = checkStageKey(r.path, {}, 'path');
    const ttl = this.ttl(r.expiresInSeconds);
    const stage = await this.stages.resolve(cc, r.catalog, r.stage);
    const store = this.storeOf(stage);
    checkStoreTtl(store, ttl);
    const plan = planParts(r, this.partLimits(store));
    const now = this.clock.now();
    const exp = now + ttl;
    const uploadId = randomBytes(16).toString('hex');
    const folder = uploadFolder(stage, uploadId);
    const base = { principal: cc.principalId, tenant: cc.tenantId, root: stage.files.root, key, exp, plan };
    const numbers = Array.from({ length: plan.parts }, (_, i) => i + 1);
    const time: PresignTime = { now, expiresInSeconds: ttl / 1000 };
    let partUrls: { part_number: number; url: string; size?: number }[];
    switch (store.kind) {
      case 'local': {
        await fs.mkdir(resolveLocalPath(folder), { recursive: true });
        await fs.writeFile(path.join(resolveLocalPath(folder), 'upload.json'), JSON.stringify(base satisfies UploadManifest));
        partUrls = numbers.map((n) => {
          const length = partLength(plan, n);
          return { part_number: n, url: this.url(baseUrl, { op: 'part', tenant: cc.tenantId, principal: cc.principalId, root: folder, key: partName(n), maxBytes: length ?? this.limits.maxUploadBytes, exp }), ...(length !== undefined ? { size: length } : {}) };
        });
        break;
      }
      case 's3': {
        const location = this.located(stage, stage.files.location(key));
        const storeUploadId = await store.presigner.createMultipart(location);
        try {
          const manifest: UploadManifest = { ...base, storeUploadId };
          await stage.files.io.write(`${folder}upload.json`, Buffer.from(JSON.stringify(manifest)), { overwrite: false });
          partUrls = await Promise.all(numbers.map(async (n) => {
            const length = partLength(plan, n)!;
            return { part_number: n, url: await store.presigner.presignPart(location, storeUploadId, n, length, time), size: length };
          }));
        } catch (e) {
          await store.presigner.abortMultipart(location, storeUploadId).catch(() => undefined);
          throw e;
        }
        break;
      }
      case 'adls': {
        // Put Block to the blob's upload SAS, with Floe's block ids; nothing exists in the store until Floe commits them.
        const location = this.located(stage, stage.files.location(key));
        const urls = await store.presigner.presignBlocks(location, uploadId, plan.parts, time);
        await stage.files.io.write(`${folder}upload.json`, Buffer.from(JSON.stringify(base satisfies UploadManifest)), { overwrite: false });
        partUrls = numbers.map((n) => ({ part_number: n, url: urls[n - 1]!, size: partLength(plan, n)! }));
        break;
      }
      case 'gcs': {
        // One resumable session for the whole file, of exactly the declared size; the client sends its chunks in order.
        const location = this.located(stage, stage.files.location(key));
        const sessionUri = await store.presigner.startResumable(location, plan.size!);
        const sessionExp = now + GCS_SESSION_LIFETIME_MS;
        try {
          const manifest: UploadManifest = { ...base, exp: sessionExp, sessionUri };
          await stage.files.io.write(`${folder}upload.json`, Buffer.from(JSON.stringify(manifest)), { overwrite: false });
        } catch (e) {
          await store.presigner.cancelResumable(location, sessionUri).catch(() => undefined);
          throw e;
        }
        return {
          upload_id: uploadId, path: key, expires_at: new Date(sessionExp).toISOString(), protocol: 'resumable' as const,
          max_part_bytes: plan.partSize!, size: plan.size!, part_size: plan.partSize!, session_url: sessionUri,
        };
      }
    }
    return {
      upload_id: uploadId, path: key, expires_at: new Date(exp).toISOString(), protocol: 'parts' as const,
      max_part_bytes: plan.partSize ?? this.limits.maxUploadBytes,
      ...(plan.size !== undefined ? { size: plan.size, part_size: plan.partSize } : {}),
      part_urls: partUrls,
    };
  }

  /** How a multipart upload may be cut on this store. */
  private partLimits(store: StageStore): Parameters<typeof planParts>[1] {
    const common = { maxTotalBytes: this.limits.maxMultipartBytes };
    switch (store.kind) {
      case 'local':
        return { ...common, maxPartBytes: this.limits.maxUploadBytes, minPartBytes: 1, sizeRequired: false };
      case 's3':
        return { ...common, maxPartBytes: Math.min(this.limits.maxUploadBytes, MAX_S3_PART_BYTES), minPartBytes: MIN_S3_PART_BYTES, sizeRequired: true };
      case 'adls':
        return { ...common, maxPartBytes: Math.min(this.limits.maxUploadBytes, MAX_AZURE_BLOCK_BYTES), minPartBytes: 1, sizeRequired: true };
      case 'gcs':
        return { ...common, maxPartBytes: this.limits.maxUploadBytes, minPartBytes: GCS_CHUNK_QUANTUM, partMultipleOf: GCS_CHUNK_QUANTUM, sizeRequired: true };
    }
  }

  private async openUpload(cc: CatalogContext, r: StageFileRequest & { uploadId: string }): Promise<OpenedUpload> {
    if (!UPLOAD_ID.test(r.uploadId)) throw floeError('INVALID_PARAMETER', { name: 'upload_id', detail: 'not an upload id' });
    const stage = await this.stages.resolve(cc, r.catalog, r.stage);
    const store = this.storeOf(stage);
    const folder = uploadFolder(stage, r.uploadId);
    let manifest: UploadManifest;
    try {
      const text = store.kind === 'local'
        ? await fs.readFile(path.join(resolveLocalPath(folder), 'upload.json'), 'utf8')
        : (await stage.files.io.read(`${folder}upload.json`)).toString('utf8');
      manifest = JSON.parse(text) as UploadManifest;
    } catch (e) {
      if (e instanceof StorageError) throw e;
      throw floeError('NOT_FOUND', { what: `upload ${r.uploadId}` });
    }
    // Someone else's upload, or one for another stage, is the same as none.
    if (manifest.principal !== cc.principalId || manifest.tenant !== cc.tenantId || manifest.root !== stage.files.root) throw floeError('NOT_FOUND', { what: `upload ${r.uploadId}` });
    return { stage, store, folder, manifest };
  }

  /**
   * Checks the parts the client lists (count, order, sizes, ETags) against those received, then
   * assembles the file; a resumable upload (GCS) lists none: the session says whether it finished.
   */
  async completeMultipart(cc: CatalogContext, r: StageFileRequest & { uploadId: string; parts?: readonly UploadedPart[] }) {
    const opened = await this.openUpload(cc, r);
    const { manifest, store } = opened;
    if (store.kind === 'gcs') {
      if (r.parts !== undefined && r.parts.length > 0) throw floeError('INVALID_PARAMETER', { name: 'parts', detail: 'a resumable upload has no parts to list (the store assembles the chunks as they arrive)' });
      return this.completeGcs(opened, store.presigner);
    }
    const parts = r.parts ?? [];
    if (parts.length === 0 || parts.length > MAX_PARTS) throw floeError('INVALID_PARAMETER', { name: 'parts', detail: `must list 1 to ${MAX_PARTS} parts` });
    parts.forEach((p, i) => {
      if (p.partNumber !== i + 1) throw floeError('INVALID_PARAMETER', { name: 'parts', detail: `part ${i + 1} expected in position ${i + 1} (parts are numbered 1…n, in order, none missing)` });
    });
    if (manifest.plan !== undefined && parts.length > manifest.plan.parts) throw floeError('INVALID_PARAMETER', { name: 'parts', detail: `part ${manifest.plan.parts + 1} was not uploaded (the upload has ${manifest.plan.parts} parts)` });
    if (manifest.plan !== undefined && parts.length < manifest.plan.parts) throw floeError('INVALID_PARAMETER', { name: 'parts', detail: `the upload has ${manifest.plan.parts} parts; ${parts.length} listed` });
    switch (store.kind) {
      case 'local':
        return this.completeLocal(opened, parts);
      case 's3':
        return this.completeS3(opened, store.presigner, parts);
      case 'adls':
        return this.completeAdls(opened, store.presigner, parts, r.uploadId);
    }
  }

  private checkPartSize(manifest: UploadManifest, n: number, size: number): void {
    const expected = manifest.plan === undefined ? undefined : partLength(manifest.plan, n);
    if (expected !== undefined && size !== expected) throw floeError('INVALID_PARAMETER', { name: 'parts', detail: `part ${n} has ${size} bytes; the upload's plan says ${expected}` });
  }

  private async completeLocal({ stage, folder, manifest }: OpenedUpload, parts: readonly UploadedPart[]) {
    const dir = resolveLocalPath(folder);
    let total = 0;
    for (const p of parts) {
      const st = await fs.stat(path.join(dir, partName(p.partNumber))).catch(() => undefined);
      if (st === undefined) throw floeError('INVALID_PARAMETER', { name: 'parts', detail: `part ${p.partNumber} was not uploaded` });
      this.checkPartSize(manifest, p.partNumber, st.size);
      total += st.size;
    }
    if (total > this.limits.maxMultipartBytes) throw floeError('INVALID_PARAMETER', { name: 'parts', detail: `${total} bytes is over the limit of ${this.limits.maxMultipartBytes}` });
    const target = resolveLocalPath(stage.files.location(manifest.key));
    await fs.mkdir(path.dirname(target), { recursive: true });
    const temporary = `${target}.floe-upload-${randomBytes(6).toString('hex')}`;
    const whole = createHash('md5');
    try {
      const out = createWriteStream(temporary);
      for (const p of parts) {
        const md5 = createHash('md5');
        // Chunk by chunk with backpressure: one pipeline per part into the same stream would add
        // listeners to it per part (Node warns past ten).
        for await (const chunk of createReadStream(path.join(dir, partName(p.partNumber)))) {
          md5.update(chunk as Buffer);
          if (!out.write(chunk)) await once(out, 'drain');
        }
        const etag = md5.digest('hex');
        if (p.etag === undefined || bareEtag(p.etag) !== etag) throw floeError('INVALID_PARAMETER', { name: 'parts', detail: `the ETag of part ${p.partNumber} does not match the part received` });
        whole.update(etag);
      }
      await new Promise<void>((resolve, reject) => out.end((e?: Error | null) => (e ? reject(e) : resolve())));
      await fs.rename(temporary, target);
    } catch (e) {
      await fs.rm(temporary, { force: true });
      throw e;
    }
    await fs.rm(dir, { recursive: true, force: true });
    return { path: manifest.key, size: total, etag: `${whole.digest('hex')}-${parts.length}` };
  }

  private async completeS3({ stage, folder, manifest }: OpenedUpload, presigner: S3Presigner, parts: readonly UploadedPart[]) {
    const location = this.located(stage, stage.files.location(manifest.key));
    const storeUploadId = manifest.storeUploadId ?? '';
    const stored = await presigner.listParts(location, storeUploadId);
    if (stored === undefined) {
      await stage.files.io.delete(`${folder}upload.json`);
      throw floeError('NOT_FOUND', { what: 'the upload in the store (it was completed or aborted)' });
    }
    const byNumber = new Map(stored.map((p) => [p.partNumber, p]));
    let total = 0;
    for (const p of parts) {
      const s = byNumber.get(p.partNumber);
      if (s === undefined) throw floeError('INVALID_PARAMETER', { name: 'parts', detail: `part ${p.partNumber} was not uploaded` });
      if (p.etag === undefined || bareEtag(p.etag) !== s.etag) throw floeError('INVALID_PARAMETER', { name: 'parts', detail: `the ETag of part ${p.partNumber} does not match the part received` });
      this.checkPartSize(manifest, p.partNumber, s.size);
      total += s.size;
    }
    if (total > this.limits.maxMultipartBytes) throw floeError('INVALID_PARAMETER', { name: 'parts', detail: `${total} bytes is over the limit of ${this.limits.maxMultipartBytes}` });
    let etag: string;
    try {
      etag = await presigner.completeMultipart(location, storeUploadId, parts.map((p) => ({ partNumber: p.partNumber, etag: p.etag ?? '' })));
    } catch (e) {
      // The store's own refusal of a list that passed the checks above (a part too small, …) is the client's to fix.
      if (e instanceof StorageError && e.failure === 'rejected') throw floeError('INVALID_PARAMETER', { name: 'parts', detail: `the store refused the parts: ${e.detail}` });
      throw e;
    }
    await stage.files.io.delete(`${folder}upload.json`);
    return { path: manifest.key, size: total, etag };
  }

  /**
   * Azure's blocks carry no ETag Floe could compare (Get Block List names ids and sizes), so a
   * part's `etag` is not checked here: each planned block must be there with its planned size.
   */
  private async completeAdls({ stage, folder, manifest }: OpenedUpload, presigner: AdlsPresigner, parts: readonly UploadedPart[], uploadId: string) {
    const location = this.located(stage, stage.files.location(manifest.key));
    const stored = new Map((await presigner.uncommittedBlocks(location)).map((b) => [b.id, b.size]));
    const ids: string[] = [];
    let total = 0;
    for (const p of parts) {
      const id = AdlsPresigner.blockId(uploadId, p.partNumber);
      const size = stored.get(id);
      if (size === undefined) throw floeError('INVALID_PARAMETER', { name: 'parts', detail: `part ${p.partNumber} was not uploaded` });
      this.checkPartSize(manifest, p.partNumber, size);
      ids.push(id);
      total += size;
    }
    if (total > this.limits.maxMultipartBytes) throw floeError('INVALID_PARAMETER', { name: 'parts', detail: `${total} bytes is over the limit of ${this.limits.maxMultipartBytes}` });
    const etag = await presigner.commitBlocks(location, ids);
    await stage.files.io.delete(`${folder}upload.json`);
    return { path: manifest.key, size: total, etag };
  }

  /** Asks the session whether the client sent every byte; the store finalized the object when it did. */
  private async completeGcs({ stage, folder, manifest }: OpenedUpload, presigner: GcsPresigner) {
    const location = this.located(stage, stage.files.location(manifest.key));
    const size = manifest.plan?.size;
    if (manifest.sessionUri === undefined || size === undefined) throw floeError('NOT_FOUND', { what: 'the upload in the store' });
    const state = await presigner.sessionState(location, manifest.sessionUri, size);
    switch (state.state) {
      case 'incomplete':
        throw floeError('INVALID_PARAMETER', { name: 'upload_id', detail: `the store has received ${state.received} of ${size} bytes; send the rest to the session URL, then complete` });
      case 'gone':
        await stage.files.io.delete(`${folder}upload.json`);
        throw floeError('NOT_FOUND', { what: 'the upload in the store (it was cancelled or expired)' });
      case 'complete':
        await stage.files.io.delete(`${folder}upload.json`);
        // X-Upload-Content-Length made the store refuse any other total; checked all the same.
        if (state.size !== size) throw floeError('INVALID_PARAMETER', { name: 'upload_id', detail: `the store holds ${state.size} bytes; the upload declared ${size}` });
        return { path: manifest.key, size, etag: state.etag };
    }
  }

  async abortMultipart(cc: CatalogContext, r: StageFileRequest & { uploadId: string }) {
    const { stage, store, folder, manifest } = await this.openUpload(cc, r);
    switch (store.kind) {
      case 'local':
        await fs.rm(resolveLocalPath(folder), { recursive: true, force: true });
        break;
      case 's3':
        await store.presigner.abortMultipart(this.located(stage, stage.files.location(manifest.key)), manifest.storeUploadId ?? '');
        await stage.files.io.delete(`${folder}upload.json`);
        break;
      case 'adls':
        // Azure has no call to drop uncommitted blocks of a blob; it discards them after a week
        // (or when the blob is next committed). Nothing Floe wrote becomes a file.
        await stage.files.io.delete(`${folder}upload.json`);
        break;
      case 'gcs':
        if (manifest.sessionUri !== undefined) await store.presigner.cancelResumable(this.located(stage, stage.files.location(manifest.key)), manifest.sessionUri);
        await stage.files.io.delete(`${folder}upload.json`);
        break;
    }
    return { upload_id: r.uploadId, aborted: true };
  }

  /** Checks an upload or download URL's token. */
  verify(token: string, ops: readonly UploadOperation[]): UploadClaims {
    const check = this.tokens.verify(token, this.clock.now(), ops);
    if (!check.ok) throw floeError('PERMISSION_DENIED', { detail: check.reason });
    // Belt and braces: a signed key is still checked before it becomes a path.
    checkStageKey(check.claims.key, {}, 'path');
    return check.claims;
  }

  /**
   * Receives a PUT body into the token's file: at most `maxBytes` (a declared Content-Length above
   * it is refused before reading), written beside the target and renamed into place. Returns the
   * MD5 ETag (quoted, as S3 does).
   */
  async receive(claims: UploadClaims, body: Readable, contentLength: number | undefined): Promise<{ etag: string; size: number }> {
    if (contentLength !== undefined && contentLength > claims.maxBytes) {
      body.resume();
      throw floeError('UPLOAD_TOO_LARGE', { limit: claims.maxBytes });
    }
    const target = resolveLocalPath(claims.root + claims.key);
    if (!target.startsWith(resolveLocalPath(claims.root))) throw floeError('PERMISSION_DENIED', { detail: 'the path leaves the stage' });
    await fs.mkdir(path.dirname(target), { recursive: true });
    const temporary = `${target}.floe-upload-${randomBytes(6).toString('hex')}`;
    const md5 = createHash('md5');
    let size = 0;
    try {
      body.on('data', (chunk: Buffer) => {
        size += chunk.length;
        md5.update(chunk);
        if (size > claims.maxBytes) body.destroy(floeError('UPLOAD_TOO_LARGE', { limit: claims.maxBytes }));
      });
      await pipeline(body, createWriteStream(temporary));
      await fs.rename(temporary, target);
    } catch (e) {
      await fs.rm(temporary, { force: true });
      throw e;
    }
    return { etag: `"${md5.digest('hex')}"`, size };
  }

  /** The local path and size of a GET token's file. */
  async fileOf(claims: UploadClaims): Promise<{ path: string; size: number }> {
    const p = resolveLocalPath(claims.root + claims.key);
    const st = await fs.stat(p).catch(() => undefined);
    if (st === undefined || !st.isFile()) throw floeError('NOT_FOUND', { what: `file ${claims.key}` });
    return { path: p, size: st.size };
  }
}

function uploadFolder(stage: ResolvedStage, uploadId: string): string {
  return `${stagesRoot(stage.catalog)}_uploads/${uploadId}/`;
}

function partName(n: number): string {
  return `part-${String(n).padStart(5, '0')}`;
}

function isLocal(location: string): boolean {
  try {
    resolveLocalPath(location);
    return true;
  } catch {
    return false;
  }
}
