/**
 * Idempotency-Key replay (Iceberg REST `idempotency-key` parameter): the final response of a
 * mutating request (2xx and deterministic 4xx, never 5xx) is kept per tenant and key for the
 * advertised lifetime and replayed for a retry of the same request. A key reused for a different
 * request is refused (400) rather than answered with another operation's result.
 */
import { createHash } from 'node:crypto';
import type { SqlExecutor } from '../store/meta-store.js';

/** The lifetime advertised in /v1/config (ISO 8601 duration) and enforced here. */
export const IDEMPOTENCY_KEY_LIFETIME = 'PT30M';
export const IDEMPOTENCY_KEY_LIFETIME_MS = 30 * 60 * 1000;

export interface StoredResponse {
  readonly requestHash: string;
  readonly status: number;
  readonly body: string | null;
  readonly headers: Readonly<Record<string, string>>;
}

export function requestHash(method: string, url: string, body: string): string {
  return createHash('sha256').update(`${method}\n${url}\n${body}`).digest('hex');
}

/** Whether a response is final and may be replayed: 2xx, and 4xx other than auth and rate limits. */
export function isFinalStatus(status: number): boolean {
  if (status >= 200 && status < 300) return true;
  return status >= 400 && status < 500 && ![401, 403, 408, 419, 429].includes(status);
}

export async function findStoredResponse(db: SqlExecutor, tenantId: string, key: string, nowMs: number): Promise<StoredResponse | undefined> {
  const r = await db.query<{ request_hash: string; status: number; response_body: string | null; response_headers: Record<string, string> | string }>(
    'SELECT request_hash, status, response_body, response_headers FROM catalog_idempotency_keys WHERE tenant_id = $1 AND idempotency_key = $2 AND expires_at > $3',
    [tenantId, key, new Date(nowMs)],
  );
  const row = r.rows[0];
  if (row === undefined) return undefined;
  const headers = typeof row.response_headers === 'string' ? (JSON.parse(row.response_headers) as Record<string, string>) : row.response_headers;
  return { requestHash: row.request_hash, status: row.status, body: row.response_body, headers };
}

/** Stores a final response; the first one stored for a key wins. */
export async function storeResponse(db: SqlExecutor, tenantId: string, key: string, response: StoredResponse, nowMs: number): Promise<void> {
  await db.query(
    `INSERT INTO catalog_idempotency_keys (tenant_id, idempotency_key, request_hash, status, response_body, response_headers, expires_at)
     VALUES ($1, $2, $3, $4, $5, $6::jsonb, $7)
     ON CONFLICT (tenant_id, idempotency_key) DO UPDATE SET request_hash = EXCLUDED.request_hash, status = EXCLUDED.status,
       response_body = EXCLUDED.response_body, response_headers = EXCLUDED.response_headers, created_at = now(), expires_at = EXCLUDED.expires_at
     WHERE catalog_idempotency_keys.expires_at <= now()`,
    [tenantId, key, response.requestHash, response.status, response.body, JSON.stringify(response.headers), new Date(nowMs + IDEMPOTENCY_KEY_LIFETIME_MS)],
  );
}

/** Deletes expired keys (run by a server timer). */
export async function expireIdempotencyKeys(db: SqlExecutor, nowMs: number): Promise<number> {
  const r = await db.query('DELETE FROM catalog_idempotency_keys WHERE expires_at <= $1', [new Date(nowMs)]);
  return r.rowCount;
}
