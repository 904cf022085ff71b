/**
 * Keyset pagination for list operations. A page token is the last key of the previous page,
 * base64url-encoded (opaque to clients, stable under concurrent inserts and deletes: nothing is
 * skipped or repeated that existed for the whole listing). No `pageSize` means everything.
 */
import { badRequest } from './errors.js';

export interface PageRequest {
  /** Token from the previous page's `nextPageToken`. */
  readonly pageToken?: string;
  /** Largest number of items wanted; absent = all. */
  readonly pageSize?: number;
}

export interface Page<T> {
  readonly items: readonly T[];
  /** Present when more items may follow. */
  readonly nextPageToken?: string;
}

/** Upper bound on one page, whatever the client asks. */
export const MAX_PAGE_SIZE = 1000;

/** Marks a token as ours (and keeps the token of an empty key from being the empty string). */
const TOKEN_MARK = 'k:';

export function encodePageToken(lastKey: string): string {
  return Buffer.from(TOKEN_MARK + lastKey, 'utf8').toString('base64url');
}

export function decodePageToken(token: string | undefined): string | undefined {
  if (token === undefined || token === '') return undefined;
  const text = /^[A-Za-z0-9_-]+$/.test(token) ? Buffer.from(token, 'base64url').toString('utf8') : '';
  if (!text.startsWith(TOKEN_MARK)) throw badRequest(`Invalid page token: ${token}`);
  return text.slice(TOKEN_MARK.length);
}

/**
 * Runs a keyset query page by page. Without a page size, fetches every row in chunks; with one,
 * asks for one row more than the page to know whether a next page exists.
 */
export async function keysetPage<T>(
  page: PageRequest,
  fetch: (after: string | undefined, limit: number) => Promise<readonly T[]>,
  keyOf: (item: T) => string,
): Promise<Page<T>> {
  const after = decodePageToken(page.pageToken);
  if (page.pageSize === undefined) {
    const all: T[] = [];
    let cursor = after;
    for (;;) {
      const chunk = await fetch(cursor, MAX_PAGE_SIZE);
      all.push(...chunk);
      if (chunk.length < MAX_PAGE_SIZE) return { items: all };
      cursor = keyOf(chunk[chunk.length - 1] as T);
    }
  }
  const size = Math.min(Math.max(1, page.pageSize), MAX_PAGE_SIZE);
  const rows = await fetch(after, size + 1);
  if (rows.length <= size) return { items: rows };
  const items = rows.slice(0, size);
  return { items, nextPageToken: encodePageToken(keyOf(items[items.length - 1] as T)) };
}
