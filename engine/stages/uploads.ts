/**
 * Presigned uploads to stages (`POST /v1/stages/presign`, `…/multipart/init|complete|abort`;
 * docs/loading.md, "Uploads"). Every request resolves the stage with the caller's USAGE checked,
 * and every path passes `checkStageKey`. On a `file://` warehouse Floe serves the URLs itself
 * (`/v1/stages/files?token=…`, upload-tokens.ts): a PUT streams to a temporary file beside its
 * target and is renamed into place, so a reader never sees half a file and an over-size body
 * leaves nothing behind. Multipart uploads keep their parts in `<warehouse>/stages/_uploads/<id>/`
 * (outside every stage) with a manifest naming the owner, stage folder and key; completion checks
 * that the parts are 1…n, each present with the ETag the client got, and assembles them in order.
 */
import { createHash, randomBytes } from 'node:crypto';
import { createReadStream, createWriteStream, promises as fs } from 'node:fs';
import * as path from 'node:path';
import type { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { floeError } from '../../grammar/errors.js';
import type { CatalogContext } from '../../catalog/rest/context.js';
import { resolveLocalPath } from '../../storage-creds/local-file-io.js';
import { checkStageKey, type StageRef } from './stage-path.js';
import { stagesRoot, type ResolvedStage, type StageService } from './stages.js';
import { UploadTokens, type UploadClaims, type UploadOperation } from './upload-tokens.js';

/** Most parts of one multipart upload (as S3). */
export const MAX_PARTS = 10_000;
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
}

interface UploadManifest {
  readonly principal: string;
  readonly tenant: string;
  readonly root: string;
  readonly key: string;
  readonly exp: number;
}

export class StageUploads {
  constructor(
    private readonly stages: StageService,
    private readonly tokens: UploadTokens,
    private readonly limits: UploadLimits,
    private readonly clock: { now(): number },
  ) {}

  private ttl(requested: number | undefined): number {
    const seconds = requested ?? this.limits.ttlSeconds;
    if (!Number.isInteger(seconds) || seconds < 1 || seconds > this.limits.maxTtlSeconds) {
      throw floeError('INVALID_PARAMETER', { name: 'expires_in_seconds', detail: `must be an integer from 1 to ${this.limits.maxTtlSeconds}` });
    }
    return seconds * 1000;
  }

  private async localStage(cc: CatalogContext, r: StageFileRequest): Promise<ResolvedStage> {
    const stage = await this.stages.resolve(cc, r.catalog, r.stage);
    if (!isLocal(stage.files.root)) throw floeError('UNSUPPORTED_STATEMENT', { what: 'presigned URLs for a stage on object storage (not yet: file:// warehouses only)' });
    return stage;
  }

  private url(baseUrl: string, claims: UploadClaims): string {
    return `${baseUrl}/v1/stages/files?token=${this.tokens.sign(claims)}`;
  }

  /** A URL to PUT one file (at most `size` bytes when given, never more than the cap) or to GET it. */
  async presign(cc: CatalogContext, r: StageFileRequest & { path: string; method: 'PUT' | 'GET'; size?: number; expiresInSeconds?: number }, baseUrl: string): Promise<PresignAnswer> {
    const key = checkStageKey(r.path, {}, 'path');
    const stage = await this.localStage(cc, r);
    const ttl = this.ttl(r.expiresInSeconds);
    const exp = this.clock.now() + ttl;
    const maxBytes = this.cap(r.size, this.limits.maxUploadBytes, 'size');
    const claims: UploadClaims = { op: r.method === 'PUT' ? 'put' : 'get', tenant: cc.tenantId, principal: cc.principalId, root: stage.files.root, key, maxBytes, exp };
    return { url: this.url(baseUrl, claims), method: r.method, path: key, expires_at: new Date(exp).toISOString(), ...(r.method === 'PUT' ? { max_bytes: maxBytes } : {}) };
  }

  private cap(requested: number | undefined, limit: number, name: string): number {
    if (requested === undefined) return limit;
    if (!Number.isSafeInteger(requested) || requested < 0) throw floeError('INVALID_PARAMETER', { name, detail: 'must be a non-negative integer' });
    if (requested > limit) throw floeError('INVALID_PARAMETER', { name, detail: `${requested} bytes is over the limit of ${limit}` });
    return requested;
  }

  async initMultipart(cc: CatalogContext, r: StageFileRequest & { path: string; parts: number; expiresInSeconds?: number }, baseUrl: string) {
    const key = checkStageKey(r.path, {}, 'path');
    if (!Number.isInteger(r.parts) || r.parts < 1 || r.parts > MAX_PARTS) throw floeError('INVALID_PARAMETER', { name: 'parts', detail: `must be an integer from 1 to ${MAX_PARTS}` });
    const stage = await this.localStage(cc, r);
    const exp = this.clock.now() + this.ttl(r.expiresInSeconds);
    const uploadId = randomBytes(16).toString('hex');
    const folder = uploadFolder(stage, uploadId);
    const manifest: UploadManifest = { principal: cc.principalId, tenant: cc.tenantId, root: stage.files.root, key, exp };
    await fs.mkdir(resolveLocalPath(folder), { recursive: true });
    await fs.writeFile(path.join(resolveLocalPath(folder), 'upload.json'), JSON.stringify(manifest));
    const partUrls = Array.from({ length: r.parts }, (_, i) => ({
      part_number: i + 1,
      url: this.url(baseUrl, { op: 'part', tenant: cc.tenantId, principal: cc.principalId, root: folder, key: partName(i + 1), maxBytes: this.limits.maxUploadBytes, exp }),
    }));
    return { upload_id: uploadId, path: key, expires_at: new Date(exp).toISOString(), max_part_bytes: this.limits.maxUploadBytes, part_urls: partUrls };
  }

  private async openUpload(cc: CatalogContext, r: StageFileRequest & { uploadId: string }): Promise<{ stage: ResolvedStage; folder: string; manifest: UploadManifest }> {
    if (!UPLOAD_ID.test(r.uploadId)) throw floeError('INVALID_PARAMETER', { name: 'upload_id', detail: 'not an upload id' });
    const stage = await this.localStage(cc, r);
    const folder = uploadFolder(stage, r.uploadId);
    let manifest: UploadManifest;
    try {
      manifest = JSON.parse(await fs.readFile(path.join(resolveLocalPath(folder), 'upload.json'), 'utf8')) as UploadManifest;
    } catch {
      throw floeError('NOT_FOUND', { what: `upload ${r.uploadId}` });
    }
    // Someone else's upload, or one for another stage, is the same as none.
    if (manifest.principal !== cc.principalId || manifest.tenant !== cc.tenantId || manifest.root !== stage.files.root) throw floeError('NOT_FOUND', { what: `upload ${r.uploadId}` });
    return { stage, folder, manifest };
  }

  /** Checks the parts the client lists against those received and assembles the file. */
  async completeMultipart(cc: CatalogContext, r: StageFileRequest & { uploadId: string; parts: readonly { partNumber: number; etag: string }[] }) {
    const { stage, folder, manifest } = await this.openUpload(cc, r);
    if (r.parts.length === 0 || r.parts.length > MAX_PARTS) throw floeError('INVALID_PARAMETER', { name: 'parts', detail: `must list 1 to ${MAX_PARTS} parts` });
    r.parts.forEach((p, i) => {
      if (p.partNumber !== i + 1) throw floeError('INVALID_PARAMETER', { name: 'parts', detail: `part ${i + 1} expected in position ${i + 1} (parts are numbered 1…n, in order, none missing)` });
    });
    const dir = resolveLocalPath(folder);
    let total = 0;
    for (const p of r.parts) {
      const st = await fs.stat(path.join(dir, partName(p.partNumber))).catch(() => undefined);
      if (st === undefined) throw floeError('INVALID_PARAMETER', { name: 'parts', detail: `part ${p.partNumber} was not uploaded` });
      total += st.size;
    }
    if (total > this.limits.maxMultipartBytes) throw floeError('INVALID_PARAMETER', { name: 'parts', detail: `${total} bytes is over the limit of ${this.limits.maxMultipartBytes}` });
    const target = resolveLocalPath(stage.files.location(manifest.key));
    await fs.mkdir(path.dirname(target), { recursive: true });
    const temporary = `${target}.floe-upload-${randomBytes(6).toString('hex')}`;
    const whole = createHash('md5');
    try {
      const out = createWriteStream(temporary);
      for (const p of r.parts) {
        const md5 = createHash('md5');
        const input = createReadStream(path.join(dir, partName(p.partNumber)));
        input.on('data', (chunk) => md5.update(chunk));
        await pipeline(input, out, { end: false });
        const etag = md5.digest('hex');
        if (p.etag.replaceAll('"', '') !== etag) throw floeError('INVALID_PARAMETER', { name: 'parts', detail: `the ETag of part ${p.partNumber} does not match the part received` });
        whole.update(etag);
      }
      await new Promise<void>((resolve, reject) => out.end((e?: Error | null) => (e ? reject(e) : resolve())));
      await fs.rename(temporary, target);
    } catch (e) {
      await fs.rm(temporary, { force: true });
      throw e;
    }
    await fs.rm(dir, { recursive: true, force: true });
    return { path: manifest.key, size: total, etag: `${whole.digest('hex')}-${r.parts.length}` };
  }

  async abortMultipart(cc: CatalogContext, r: StageFileRequest & { uploadId: string }) {
    const { folder } = await this.openUpload(cc, r);
    await fs.rm(resolveLocalPath(folder), { recursive: true, force: true });
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
