/**
 * The upload and download URLs Floe serves itself for stages on `file://` warehouses, with the
 * contract of an object store's presigned URLs: the URL is the credential (no bearer token), it
 * names one file and one operation, it expires, and an upload is size-capped. A token is
 * `base64url(JSON claims) "." base64url(HMAC-SHA256(claims))` under a key every replica derives
 * from the server key, so any replica accepts a URL another one signed.
 */
import { createHmac, timingSafeEqual } from 'node:crypto';

export type UploadOperation = 'put' | 'get' | 'part';

export interface UploadClaims {
  readonly op: UploadOperation;
  readonly tenant: string;
  readonly principal: string;
  /** The stage folder (location ending in '/'), or for a part the upload's folder. */
  readonly root: string;
  /** The file's key under `root` (for a part: its part number as 5 digits). */
  readonly key: string;
  /** Most bytes accepted (uploads). */
  readonly maxBytes: number;
  /** Expiry, ms since the epoch. */
  readonly exp: number;
}

export type TokenCheck = { readonly ok: true; readonly claims: UploadClaims } | { readonly ok: false; readonly reason: string };

export class UploadTokens {
  constructor(private readonly key: Uint8Array) {}

  sign(claims: UploadClaims): string {
    const body = Buffer.from(JSON.stringify(claims), 'utf8').toString('base64url');
    return `${body}.${this.mac(body)}`;
  }

  /** The claims of a well-signed, unexpired token for one of `ops`; why not otherwise. */
  verify(token: string, now: number, ops: readonly UploadOperation[]): TokenCheck {
    const dot = token.indexOf('.');
    if (dot <= 0 || token.length > 8192) return { ok: false, reason: 'malformed upload URL' };
    const body = token.slice(0, dot);
    const given = Buffer.from(token.slice(dot + 1), 'base64url');
    const expected = Buffer.from(this.mac(body), 'base64url');
    if (given.length !== expected.length || !timingSafeEqual(given, expected)) return { ok: false, reason: 'the URL signature does not match' };
    let claims: UploadClaims;
    try {
      claims = JSON.parse(Buffer.from(body, 'base64url').toString('utf8')) as UploadClaims;
    } catch {
      return { ok: false, reason: 'malformed upload URL' };
    }
    if (!ops.includes(claims.op)) return { ok: false, reason: `the URL is not for this operation (it is for ${claims.op})` };
    if (!(claims.exp > now)) return { ok: false, reason: 'the URL has expired' };
    return { ok: true, claims };
  }

  private mac(body: string): string {
    return createHmac('sha256', this.key).update(body).digest('base64url');
  }
}
