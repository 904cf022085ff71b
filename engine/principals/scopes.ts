/**
 * OAuth2 scopes. The seven catalog scopes are the service spec's (Authentication §4); `sql` is
 * Floe's own scope for the query interface (/api), whose scope mapping the spec leaves open.
 */

export const CATALOG_SCOPES = [
  'catalog:read',
  'catalog:write',
  'namespace:read',
  'namespace:write',
  'table:read',
  'table:write',
  'table:data',
] as const;

export const ALL_SCOPES = [...CATALOG_SCOPES, 'sql'] as const;

export type Scope = (typeof ALL_SCOPES)[number];

/** Asks the token endpoint for a refresh token; never appears in an access token. */
export const OFFLINE_ACCESS = 'offline_access';

const KNOWN = new Set<string>(ALL_SCOPES);

export function isScope(s: string): s is Scope {
  return KNOWN.has(s);
}

export type ScopeRequest =
  | { readonly ok: true; readonly scopes: readonly Scope[]; readonly offlineAccess: boolean }
  | { readonly ok: false; readonly reason: string };

/**
 * Resolves a requested scope string against what the principal may hold.
 * - absent or empty: everything allowed;
 * - `catalog` (the Iceberg clients' default): the catalog scopes among those allowed;
 * - `PRINCIPAL_ROLE:ALL` (Apache Polaris clients' default): everything allowed;
 * - any other name must be a known scope and allowed, else the request is refused as a whole.
 */
export function resolveRequestedScopes(requested: string | undefined, allowed: readonly Scope[]): ScopeRequest {
  const allowedSet = new Set(allowed);
  const words = (requested ?? '').split(' ').filter((w) => w.length > 0);
  if (words.length === 0) return { ok: true, scopes: sortScopes(allowed), offlineAccess: false };
  const granted = new Set<Scope>();
  let offlineAccess = false;
  for (const word of words) {
    if (word === OFFLINE_ACCESS) {
      offlineAccess = true;
    } else if (word === 'catalog') {
      for (const s of CATALOG_SCOPES) if (allowedSet.has(s)) granted.add(s);
    } else if (word === 'PRINCIPAL_ROLE:ALL') {
      for (const s of allowed) granted.add(s);
    } else if (!isScope(word)) {
      return { ok: false, reason: `unknown scope ${word}` };
    } else if (!allowedSet.has(word)) {
      return { ok: false, reason: `scope ${word} is not allowed for this client` };
    } else {
      granted.add(word);
    }
  }
  if (granted.size === 0) return { ok: false, reason: 'no requested scope is allowed for this client' };
  return { ok: true, scopes: sortScopes([...granted]), offlineAccess };
}

/** Scopes in their canonical order, so a token's `scope` claim is stable. */
export function sortScopes(scopes: Iterable<Scope>): Scope[] {
  const set = new Set(scopes);
  return ALL_SCOPES.filter((s) => set.has(s));
}

/** Parses a `scope` claim; unknown words are dropped (they grant nothing). */
export function parseScopeClaim(claim: unknown): Scope[] {
  if (typeof claim !== 'string') return [];
  return sortScopes(claim.split(' ').filter(isScope));
}
