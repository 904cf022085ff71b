/**
 * What authentication reads on every request, kept in memory and kept true: a principal's auth
 * state (status, session epoch, roles) by id, a client with its principal by client id, and a live
 * personal access token by its SHA-256.
 *
 * Every authenticated request reads the principal's status and epoch, and every client-credentials
 * token reads the client: one store round trip each, which on embedded PGlite runs on the event
 * loop and costs more than the rest of the request. The store announces every change to those rows
 * (migrations 0006 and 0007: a trigger calls `pg_notify('floe_auth', <principal id>)`, for a PAT its
 * owner's id), whoever makes it, and
 * the store delivers this process's own announcements before the changing statement resolves
 * (catalog/store/meta-store.ts, `StoreNotifications`). So:
 *
 * - a change made through this process is seen by the very next request, as without a cache;
 * - a change made by another process on the same PostgreSQL is seen once its announcement arrives
 *   on the listening connection (a round trip, milliseconds);
 * - while no connection listens (PostgreSQL unreachable, reconnecting), the cache is bypassed and
 *   emptied, so nothing stale outlives an outage.
 *
 * A load that races an announcement is not kept: every announcement advances a generation, and a
 * result is stored only if the generation did not move while it was read.
 */
import type { MetaStore, SqlExecutor } from '../../catalog/store/meta-store.js';
import { loadClientPrincipal, type ClientPrincipal } from './clients.js';
import { loadPat, type PatRecord, type PatStates } from './credentials.js';
import { loadPrincipalAuthState, type PrincipalAuthState } from './principals.js';

/** Reads a principal's auth state; the cache and the plain store both answer it. */
export interface PrincipalStates {
  principal(tenantId: string, principalId: string): Promise<PrincipalAuthState | undefined>;
  clientPrincipal(clientId: string): Promise<ClientPrincipal | undefined>;
}

/** Straight from the store, no cache: for CLIs, one-shot tools and tests of the uncached path. */
export function storePrincipalStates(db: SqlExecutor): PrincipalStates {
  return {
    principal: (tenantId, principalId) => loadPrincipalAuthState(db, tenantId, principalId),
    clientPrincipal: (clientId) => loadClientPrincipal(db, clientId),
  };
}

export interface AuthStateCacheOptions {
  /** Entries kept per map; the oldest goes first. */
  readonly maxEntries?: number;
}

const DEFAULT_MAX_ENTRIES = 10_000;

export class AuthStateCache implements PrincipalStates, PatStates {
  readonly #principals = new Map<string, PrincipalAuthState>();
  readonly #clients = new Map<string, ClientPrincipal>();
  /** Live PATs by the hex SHA-256 of the token (the plaintext is never kept). */
  readonly #pats = new Map<string, PatRecord>();
  readonly #maxEntries: number;
  #generation = 0;
  readonly #unlisten: () => void;

  constructor(private readonly store: MetaStore, options: AuthStateCacheOptions = {}) {
    this.#maxEntries = options.maxEntries ?? DEFAULT_MAX_ENTRIES;
    this.#unlisten = store.notifications.listen('floe_auth', {
      onMessage: (payload) => this.forget(payload),
      onReset: () => this.forget('*'),
    });
  }

  async principal(tenantId: string, principalId: string): Promise<PrincipalAuthState | undefined> {
    const state = await this.read(this.#principals, principalId, () => loadPrincipalAuthState(this.store, tenantId, principalId));
    return state?.tenantId === tenantId ? state : undefined;
  }

  clientPrincipal(clientId: string): Promise<ClientPrincipal | undefined> {
    return this.read(this.#clients, clientId, () => loadClientPrincipal(this.store, clientId));
  }

  pat(tokenSha256Hex: string): Promise<PatRecord | undefined> {
    return this.read(this.#pats, tokenSha256Hex, () => loadPat(this.store, tokenSha256Hex));
  }

  /** `last_used_at` is not announced (it changes on use, not on a decision): the entry keeps it. */
  patUsed(tokenSha256Hex: string, atMs: number): void {
    const cached = this.#pats.get(tokenSha256Hex);
    if (cached !== undefined) this.#pats.set(tokenSha256Hex, { ...cached, lastUsedAtMs: atMs });
  }

  /** Entries held, for tests and metrics. */
  get size(): { readonly principals: number; readonly clients: number; readonly pats: number } {
    return { principals: this.#principals.size, clients: this.#clients.size, pats: this.#pats.size };
  }

  close(): void {
    this.#unlisten();
    this.forget('*');
  }

  /**
   * The entry, while the store is heard; else a load, kept only if no announcement came meanwhile.
   * Misses (unknown client ids, unknown or revoked PATs) are not kept: anyone can send any number.
   */
  private async read<V>(map: Map<string, V>, key: string, load: () => Promise<V | undefined>): Promise<V | undefined> {
    const cached = map.get(key);
    if (cached !== undefined && this.store.notifications.delivering()) return cached;
    const generation = this.#generation;
    const loaded = await load();
    if (loaded !== undefined && this.keepable(generation)) remember(map, key, loaded, this.#maxEntries);
    return loaded;
  }

  private keepable(generation: number): boolean {
    return generation === this.#generation && this.store.notifications.delivering();
  }

  /** Drops what an announcement names: one principal (its clients and PATs) or, for `*`, everything. */
  private forget(principalId: string): void {
    this.#generation++;
    if (principalId === '*') {
      this.#principals.clear();
      this.#clients.clear();
      this.#pats.clear();
      return;
    }
    this.#principals.delete(principalId);
    for (const [clientId, c] of this.#clients) if (c.client.principalId === principalId) this.#clients.delete(clientId);
    for (const [hash, pat] of this.#pats) if (pat.principalId === principalId) this.#pats.delete(hash);
  }
}

function remember<V>(map: Map<string, V>, key: string, value: V, maxEntries: number): void {
  map.delete(key);
  map.set(key, value);
  if (map.size > maxEntries) map.delete(map.keys().next().value!);
}
