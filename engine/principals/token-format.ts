/**
 * Formats of the bearer secrets principal management hands out. PATs look like
 * `floe_pat_<43 base62 characters of 256 random bits><6 base62 characters of CRC-32>`: the prefix
 * lets secret scanners find leaked tokens, the checksum lets them (and the token endpoint) reject
 * typos and random strings without a store lookup. Invitation tokens are `floe_inv_<base62>`.
 */
import { randomBytes } from 'node:crypto';
import { crc32 } from 'node:zlib';

export const PAT_PREFIX = 'floe_pat_';
export const INVITATION_PREFIX = 'floe_inv_';
const BASE62 = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';
const BODY_LENGTH = 43;
const CHECKSUM_LENGTH = 6;

export function base62(bytes: Uint8Array, length: number): string {
  let n = 0n;
  for (const b of bytes) n = (n << 8n) | BigInt(b);
  let out = '';
  for (let i = 0; i < length; i++) {
    out = BASE62[Number(n % 62n)]! + out;
    n /= 62n;
  }
  return out;
}

function checksum(body: string): string {
  const c = crc32(body) >>> 0;
  const bytes = new Uint8Array([c >>> 24, (c >>> 16) & 255, (c >>> 8) & 255, c & 255]);
  return base62(bytes, CHECKSUM_LENGTH);
}

export function newPat(): string {
  const body = base62(randomBytes(32), BODY_LENGTH);
  return `${PAT_PREFIX}${body}${checksum(body)}`;
}

/** Prefix, length, alphabet and checksum; says nothing about whether the token exists. */
export function isWellFormedPat(token: string): boolean {
  if (!token.startsWith(PAT_PREFIX) || token.length !== PAT_PREFIX.length + BODY_LENGTH + CHECKSUM_LENGTH) return false;
  const rest = token.slice(PAT_PREFIX.length);
  if (!/^[0-9A-Za-z]+$/.test(rest)) return false;
  return checksum(rest.slice(0, BODY_LENGTH)) === rest.slice(BODY_LENGTH);
}

/** The non-secret head shown by SHOW PERSONAL ACCESS TOKENS: prefix plus four characters. */
export function patDisplayPrefix(token: string): string {
  return token.slice(0, PAT_PREFIX.length + 4);
}

export function newInvitationToken(): string {
  return INVITATION_PREFIX + base62(randomBytes(32), BODY_LENGTH);
}
