/**
 * The tenant's SCIM provisioning token: the bearer secret an identity provider (Okta, Entra ID)
 * presents on every `/scim/v2` request. One live token per tenant, created and rotated by the
 * operator (`floe admin scim-token create|rotate|revoke`). Like PATs and client secrets it is shown
 * once and only its SHA-256 is stored.
 *
 * Format: `floe_scim_` + 43 base62 characters (256 random bits) + 6 base62 characters of CRC-32 of
 * the body: the prefix makes a leaked token findable by secret scanners, the checksum rejects
 * typos without a lookup. The first 12 body characters (with the prefix) are the row's lookup key
 * and display prefix; the stored digest of the whole token is then compared in constant time.
 */
import { randomBytes, randomUUID, timingSafeEqual } from 'node:crypto';
import { crc32 } from 'node:zlib';
import type { MetaStore, SqlExecutor } from '../../catalog/store/meta-store.js';
import { base62 } from '../principals/token-format.js';
import { sha256 } from '../principals/secrets.js';

export const SCIM_TOKEN_PREFIX = 'floe_scim_';
const BODY_LENGTH = 43;
const CHECKSUM_LENGTH = 6;
/** Body characters that, with the prefix, find the row (and are shown to tell tokens apart). */
const LOOKUP_LENGTH = 12;

function checksum(body: string): string {
  const c = crc32(body) >>> 0;
  return base62(new Uint8Array([c >>> 24, (c >>> 16) & 255, (c >>> 8) & 255, c & 255]), CHECKSUM_LENGTH);
}

export function newScimToken(): string {
  const body = base62(randomBytes(32), BODY_LENGTH);
  return `${SCIM_TOKEN_PREFIX}${body}${checksum(body)}`;
}

/** Prefix, length, alphabet and checksum; says nothing about whether the token exists. */
export function isWellFormedScimToken(token: string): boolean {
  if (!token.startsWith(SCIM_TOKEN_PREFIX) || token.length !== SCIM_TOKEN_PREFIX.length + BODY_LENGTH + CHECKSUM_LENGTH) return false;
  const rest = token.slice(SCIM_TOKEN_PREFIX.length);
  return /^[0-9A-Za-z]+$/.test(rest) && checksum(rest.slice(0, BODY_LENGTH)) === rest.slice(BODY_LENGTH);
}

/** The non-secret head: lookup key and what `floe admin scim-token show` prints. */
export function scimTokenPrefix(token: string): string {
  return token.slice(0, SCIM_TOKEN_PREFIX.length + LOOKUP_LENGTH);
}

/** A token just created or rotated: the plaintext exists only in this value. */
export interface IssuedScimToken {
  readonly tenantId: string;
  readonly token: string;
  readonly prefix: string;
  readonly createdAt: Date;
}

/** Who presented a live token: the tenant, and the token's row (the audit log's actor). */
export interface ScimCaller {
  readonly tenantId: string;
  readonly tokenId: string;
  readonly tokenPrefix: string;
}

export class ScimTokenError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'ScimTokenError';
  }
}

async function insertToken(tx: SqlExecutor, tenantId: string, now: Date): Promise<IssuedScimToken> {
  const token = newScimToken();
  const prefix = scimTokenPrefix(token);
  await tx.query('INSERT INTO scim_tokens (id, tenant_id, token_sha256, token_prefix, created_at) VALUES ($1, $2, $3, $4, $5)',
    [randomUUID(), tenantId, sha256(token), prefix, now]);
  return { tenantId, token, prefix, createdAt: now };
}

async function requireTenant(tx: SqlExecutor, tenantId: string): Promise<void> {
  if ((await tx.query('SELECT 1 FROM tenants WHERE id = $1', [tenantId])).rows.length === 0) throw new ScimTokenError(`no tenant ${tenantId}`);
}

/** The tenant's first token; refused while one is live (rotate replaces it). */
export function createScimToken(store: MetaStore, tenantId: string, now: Date): Promise<IssuedScimToken> {
  return store.transaction(async (tx) => {
    await requireTenant(tx, tenantId);
    const live = await tx.query('SELECT 1 FROM scim_tokens WHERE tenant_id = $1 AND revoked_at IS NULL FOR UPDATE', [tenantId]);
    if (live.rows.length > 0) throw new ScimTokenError(`tenant ${tenantId} already has a SCIM token; rotate it to get a new one`);
    return insertToken(tx, tenantId, now);
  });
}

/** A new token; the previous one (if any) stops working in the same transaction. */
export function rotateScimToken(store: MetaStore, tenantId: string, now: Date): Promise<IssuedScimToken> {
  return store.transaction(async (tx) => {
    await requireTenant(tx, tenantId);
    await tx.query('UPDATE scim_tokens SET revoked_at = $2 WHERE tenant_id = $1 AND revoked_at IS NULL', [tenantId, now]);
    return insertToken(tx, tenantId, now);
  });
}

/** The tenant's token stops working; provisioning stops until a new one is created. */
export async function revokeScimToken(db: SqlExecutor, tenantId: string, now: Date): Promise<void> {
  const r = await db.query('UPDATE scim_tokens SET revoked_at = $2 WHERE tenant_id = $1 AND revoked_at IS NULL', [tenantId, now]);
  if (r.rowCount === 0) throw new ScimTokenError(`tenant ${tenantId} has no live SCIM token`);
}

/** What an operator may see of the live token: never more than its prefix. */
export async function describeScimToken(db: SqlExecutor, tenantId: string): Promise<{ prefix: string; createdAt: Date; lastUsedAt: Date | null } | undefined> {
  const row = (await db.query<{ token_prefix: string; created_at: Date; last_used_at: Date | null }>(
    'SELECT token_prefix, created_at, last_used_at FROM scim_tokens WHERE tenant_id = $1 AND revoked_at IS NULL', [tenantId])).rows[0];
  return row && { prefix: row.token_prefix, createdAt: row.created_at, lastUsedAt: row.last_used_at };
}

/** `last_used_at` is written at most this often per token. */
const LAST_USED_RESOLUTION_MS = 60_000;

/**
 * The caller a presented token stands for, or undefined. The well-formedness check runs first (no
 * lookup for garbage); rows are found by the non-secret prefix and the digest of the whole token is
 * compared with `timingSafeEqual`, so the comparison's time says nothing about the stored digest.
 */
export async function authenticateScimToken(db: SqlExecutor, presented: string, now: Date): Promise<ScimCaller | undefined> {
  if (!isWellFormedScimToken(presented)) return undefined;
  const rows = (await db.query<{ id: string; tenant_id: string; token_sha256: Uint8Array; token_prefix: string; last_used_at: Date | null }>(
    'SELECT id, tenant_id, token_sha256, token_prefix, last_used_at FROM scim_tokens WHERE token_prefix = $1 AND revoked_at IS NULL',
    [scimTokenPrefix(presented)])).rows;
  const digest = sha256(presented);
  let found: (typeof rows)[number] | undefined;
  for (const row of rows) {
    const stored = Buffer.from(row.token_sha256);
    if (stored.length === digest.length && timingSafeEqual(stored, digest)) found = row;
  }
  if (!found) return undefined;
  if (found.last_used_at === null || now.getTime() - found.last_used_at.getTime() >= LAST_USED_RESOLUTION_MS) {
    await db.query('UPDATE scim_tokens SET last_used_at = $2 WHERE id = $1', [found.id, now]);
  }
  return { tenantId: found.tenant_id, tokenId: found.id, tokenPrefix: found.token_prefix };
}
