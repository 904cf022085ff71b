/**
 * Where a table or view may keep its files (docs/catalog.md "Table locations").
 *
 * Vended credentials and remote signing reach every object under a table's locations (its
 * `location` and the location properties). A table whose location were the warehouse root, a
 * namespace's folder, or a folder holding another table would therefore give whoever may load it
 * the files of every table below. So, as Polaris with `ALLOW_TABLE_LOCATION_OVERLAP=false`, a
 * location must not be the warehouse root or contain it, must not be or contain a namespace's
 * folder, and must not overlap (contain, equal, or lie under) a location of another live table or
 * view of the catalog. Create, register, commit and view replace refuse such a location (400);
 * vending and signing refuse a table that has one anyway (403; tables stored before the rule).
 *
 * Each entity's locations are kept in `catalog_entity_locations` (migration 0012) in a comparable
 * form: `file:///a/b/`, `s3://bucket/key/` (s3a and s3n are s3), `gs://bucket/name/`,
 * `abfs://container@account/path/` (every ADLS scheme and host of the account), always ending in
 * '/' with empty segments dropped, so "lies under" is "starts with" segment by segment (`orders`
 * and `orders_old` do not overlap). `.` and `..` segments are refused: clients that normalise
 * paths would read them as another place.
 *
 * Races: a prefix overlap cannot be a unique index, so every check that leads to stored locations
 * runs inside the store transaction that stores them, after taking a transaction-scoped advisory
 * lock of the catalog (`lockLocations`). Two creates at nested locations are serialised; the second
 * sees the first's rows and is refused. Commits that keep their locations (appends) never take it.
 */
import { FileNotFoundError, schemeOf } from '../../storage-creds/file-io.js';
import { ADLS_SCHEMES, parseAdlsLocation } from '../../storage-creds/adls-file-io.js';
import { GCS_SCHEMES, parseGcsLocation } from '../../storage-creds/gcs-file-io.js';
import { S3_SCHEMES, parseS3Location } from '../../storage-creds/s3-file-io.js';
import { LOCATION_PROPERTIES, type TableMetadata } from '../iceberg/table-metadata.js';
import type { ViewMetadata } from '../iceberg/view-metadata.js';
import { IcebergError, unreachable } from '../iceberg/errors.js';
import type { MetaStore, SqlExecutor } from '../store/meta-store.js';
import { namespaceFromKey, namespaceKey, type Namespace } from './context.js';
import type { MetadataFiles } from './deps.js';
import { CatalogError } from './errors.js';
import { defaultNamespaceLocation, locationSegment } from './resolve.js';
import type { CatalogRecord, EntityKind } from './store.js';

/** One place an entity keeps files: what names it (`location` or the property) and the location as written. */
export interface LocationClaim {
  readonly what: string;
  readonly location: string;
}

/** A table's locations: `location`, then each location property that is set. */
export function tableClaims(m: TableMetadata): readonly LocationClaim[] {
  const out: LocationClaim[] = [{ what: 'location', location: m.location }];
  for (const p of LOCATION_PROPERTIES) {
    const v = m.properties.get(p);
    if (v !== undefined && v !== '') out.push({ what: p, location: v });
  }
  return out;
}

/** A view's one location (its metadata files go below it). */
export function viewClaims(m: ViewMetadata): readonly LocationClaim[] {
  return [{ what: 'location', location: m.location }];
}

/** Whether two claim lists name the same places (a commit that keeps them needs no check). */
export function sameClaims(a: readonly LocationClaim[], b: readonly LocationClaim[]): boolean {
  return a.length === b.length && a.every((c, i) => c.what === b[i]?.what && c.location === b[i]?.location);
}

/** A location in comparable form: `root` (`s3://bucket`) and its path segments. */
export interface Comparable {
  readonly root: string;
  readonly segments: readonly string[];
}

/** `root/seg/…/seg/`: one '/' after the root and after every segment. */
function keyOf(c: Comparable): string {
  return `${c.root}/${c.segments.map((s) => `${s}/`).join('')}`;
}

/** A segment clients would read as "here" or "up", written plainly or percent-encoded. */
function isDotSegment(s: string): boolean {
  return /^(?:\.|%2e){1,2}$/i.test(s);
}

/** The comparable form of `location`, or why it cannot name a place of a table. */
export function comparableLocation(location: string): { readonly kind: 'ok'; readonly key: string; readonly value: Comparable } | { readonly kind: 'invalid'; readonly why: string } {
  const scheme = schemeOf(location);
  let root: string;
  let path: string;
  try {
    if (scheme === undefined) {
      // A relative path (Spark tables written with one, registered with a location mapping) is
      // compared with the other relative paths; a leading `./` is notation, not a place.
      root = location.startsWith('/') ? 'file://' : 'relative:';
      path = location.startsWith('/') ? location : location.replace(/^(?:\.\/+)+/, '');
    } else if (S3_SCHEMES.has(scheme)) {
      const l = parseS3Location(location);
      root = `s3://${l.bucket}`;
      path = l.key;
    } else if (GCS_SCHEMES.has(scheme)) {
      const l = parseGcsLocation(location);
      root = `gs://${l.bucket}`;
      path = l.name;
    } else if (ADLS_SCHEMES.has(scheme)) {
      // Every scheme and host of an account reach the same files: the account is the place.
      const l = parseAdlsLocation(location);
      root = `abfs://${l.container}@${l.account}`;
      path = l.path;
    } else {
      const rest = location.slice(scheme.length + 1);
      const authority = rest.startsWith('//') ? rest.slice(2).split('/')[0] ?? '' : '';
      // file:/x, file:///x and file://localhost/x are one place.
      root = `${scheme}://${scheme === 'file' && authority === 'localhost' ? '' : authority}`;
      path = rest.startsWith('//') ? rest.slice(2 + authority.length) : rest;
    }
  } catch (e) {
    return { kind: 'invalid', why: (e as Error).message };
  }
  const segments = path.split('/').filter((s) => s !== '');
  if (segments.some(isDotSegment)) return { kind: 'invalid', why: 'it has a `.` or `..` segment' };
  const value = { root, segments };
  return { kind: 'ok', key: keyOf(value), value };
}

/** Keys of `c` and every folder above it, up to the root. */
export function selfAndAncestorKeys(c: Comparable): readonly string[] {
  return c.segments.map((_, i) => keyOf({ root: c.root, segments: c.segments.slice(0, i) })).concat(keyOf(c));
}

/** `key` and every key below it: [key, key with its final '/' made '0') in byte order ('0' follows '/'). */
export function rangeBelow(key: string): readonly [string, string] {
  return [key, `${key.slice(0, -1)}0`];
}

/**
 * The namespace whose folder `c` would be (`<warehouse>/<level>/…`, each level as
 * `locationSegment` writes it), or undefined when `c` is not below the warehouse or a segment is not
 * one `locationSegment` could have written.
 */
function namespaceAt(warehouse: Comparable, c: Comparable): Namespace | undefined {
  if (c.root !== warehouse.root || c.segments.length <= warehouse.segments.length) return undefined;
  if (!warehouse.segments.every((s, i) => c.segments[i] === s)) return undefined;
  const levels: string[] = [];
  for (const s of c.segments.slice(warehouse.segments.length)) {
    const level = s.replace(/%(25|2F|5C)/g, (_, hex: string) => String.fromCharCode(parseInt(hex, 16)));
    if (locationSegment(level) !== s) return undefined;
    levels.push(level);
  }
  return levels;
}

/** Why a claim cannot be an entity's: what it collides with. */
export type LocationConflict =
  | { readonly kind: 'invalid'; readonly claim: LocationClaim; readonly why: string }
  | { readonly kind: 'warehouse'; readonly claim: LocationClaim; readonly warehouse: string; readonly relation: 'equals' | 'contains' }
  | { readonly kind: 'namespace'; readonly claim: LocationClaim; readonly namespace: Namespace }
  | { readonly kind: 'entity'; readonly claim: LocationClaim; readonly other: string; readonly otherKind: EntityKind; readonly relation: 'equals' | 'contains' | 'inside' };

/** The conflict in words, naming both places (and nothing else of the other entity). */
export function describeConflict(entity: EntityKind, c: LocationConflict): string {
  const mine = `the ${entity}'s ${c.claim.what} ${c.claim.location}`;
  switch (c.kind) {
    case 'invalid':
      return `${mine} cannot be used: ${c.why}`;
    case 'warehouse':
      return `${mine} ${c.relation === 'equals' ? 'is' : 'contains'} the catalog's warehouse ${c.warehouse}`;
    case 'namespace':
      return `${mine} is the folder of namespace ${c.namespace.join('.')}`;
    case 'entity': {
      const relation = c.relation === 'equals' ? 'is also the location' : c.relation === 'contains' ? 'contains the location' : 'lies inside the location';
      return `${mine} ${relation} ${c.other} of another ${c.otherKind}`;
    }
    default:
      return unreachable(c);
  }
}

/** The entity the claims are for (its own stored locations are not a conflict). */
export interface ClaimOwner {
  readonly namespace: Namespace;
  readonly name: string;
}

interface ConflictRow {
  source: 'entity' | 'namespace' | 'stale';
  location: string | null;
  display: string | null;
  kind: EntityKind | null;
}

/** At most this many metadata files are read at once when stale rows are made current. */
const REFRESH_PARALLEL = 16;

/**
 * How long vending and signing take a table's locations found free as free (`conflictOf`). Stored
 * locations change only through the checked operations, so a table found free stays free; what can
 * still turn it is a row from before the rule (or from a replica without it) made current, which
 * this bounds. Every vended load asked the store once before; a scan asks hundreds of times a second.
 */
const FREE_FOR_MS = 1000;
const FREE_CACHE_MAX = 10_000;

/** Runs `fn` in a store transaction (or in the caller's, when it already has one). */
type InTransaction = <T>(fn: (tx: SqlExecutor) => Promise<T>) => Promise<T>;

/**
 * The catalog's table and view locations: the checks, and the rows they read. One per catalog
 * service; it keeps only the refreshes under way (one per catalog at a time).
 */
export class EntityLocations {
  private readonly refreshing = new Map<string, Promise<void>>();
  /** Checks of `conflictOf` under way or found free, by catalog, owner and claims. */
  private readonly checked = new Map<string, { readonly at: number; readonly check: Promise<LocationConflict | undefined> }>();

  constructor(private readonly store: MetaStore, private readonly files: MetadataFiles) {}

  /**
   * The first reason `claims` cannot belong to `owner`, or undefined; for the vending and signing
   * routes (no lock: they store nothing). Rows of other entities not yet current are made current
   * first, one refresh per catalog at a time. Concurrent checks of the same claims share one; a
   * table found free is taken as free for FREE_FOR_MS; a conflict is never kept (a commit moving
   * the location back counts at once).
   */
  conflictOf(catalog: CatalogRecord, owner: ClaimOwner, claims: readonly LocationClaim[]): Promise<LocationConflict | undefined> {
    const key = JSON.stringify([catalog.id, owner.namespace, owner.name, claims.map((c) => [c.what, c.location])]);
    const now = Date.now();
    const hit = this.checked.get(key);
    if (hit !== undefined && now - hit.at < FREE_FOR_MS) return hit.check;
    const check = this.checkNow(catalog, owner, claims);
    if (this.checked.size >= FREE_CACHE_MAX) this.checked.clear();
    this.checked.set(key, { at: now, check });
    const forget = (): void => {
      if (this.checked.get(key)?.check === check) this.checked.delete(key);
    };
    check.then((c) => { if (c !== undefined) forget(); }, forget);
    return check;
  }

  private async checkNow(catalog: CatalogRecord, owner: ClaimOwner, claims: readonly LocationClaim[]): Promise<LocationConflict | undefined> {
    const first = await this.findConflict(this.store, catalog, owner, claims);
    if (!first.stale) return first.conflict;
    await this.refreshShared(catalog);
    return (await this.findConflict(this.store, catalog, owner, claims)).conflict;
  }

  /**
   * Refuses (400) `claims` for `owner` unless free, inside `tx`, which will store them: takes the
   * catalog's location lock (held to the end of `tx`; the caller has taken its row locks before)
   * and makes stale rows current first (a create did so outside already, in `precheck`, so here
   * they are rare). A stale row another transaction holds is not waited for (that one may be
   * waiting for this lock): the operation fails as concurrent, to be retried (`during` a commit
   * as a 409 CommitFailedException, which clients retry; otherwise a 503).
   */
  async assertFree(tx: SqlExecutor, catalog: CatalogRecord, entity: EntityKind, owner: ClaimOwner, claims: readonly LocationClaim[], during: 'commit' | 'create'): Promise<void> {
    await lockLocations(tx, catalog);
    let found = await this.findConflict(tx, catalog, owner, claims);
    if (found.stale) {
      if (!(await this.refreshStale(tx, catalog, (fn) => fn(tx), 'SKIP LOCKED'))) throw busy(during);
      found = await this.findConflict(tx, catalog, owner, claims);
    }
    if (found.conflict !== undefined) throw locationRefused(entity, owner, found.conflict);
  }

  /**
   * The same check before any file is written (a create or register refused early, and stale rows
   * made current outside the transaction that will hold the lock). The check inside the
   * transaction (`assertFree`) is the one that counts.
   */
  async precheck(catalog: CatalogRecord, entity: EntityKind, owner: ClaimOwner, claims: readonly LocationClaim[]): Promise<void> {
    const conflict = await this.checkNow(catalog, owner, claims);
    if (conflict !== undefined) throw locationRefused(entity, owner, conflict);
  }

  /**
   * Refuses (400) a new namespace whose folder is, or lies inside, a location of a table or view:
   * that entity's credentials would reach every table later created in the namespace. Inside the
   * namespace's creating transaction, under the catalog's location lock.
   */
  async assertNamespaceFree(tx: SqlExecutor, catalog: CatalogRecord, ns: Namespace): Promise<void> {
    await lockLocations(tx, catalog);
    const folder = comparableLocation(defaultNamespaceLocation(catalog, ns));
    if (folder.kind === 'invalid') return;
    const keys = selfAndAncestorKeys(folder.value);
    const lookup = async (): Promise<{ display: string; kind: EntityKind } | undefined> => (await tx.query<{ display: string; kind: EntityKind }>(
      `SELECT l.display, e.kind FROM catalog_entity_locations l JOIN catalog_entities e ON e.id = l.entity_id
        WHERE l.catalog_id = $1 AND l.location = ANY($2::text[]) LIMIT 1`,
      [catalog.id, keys],
    )).rows[0];
    if (!(await this.refreshStale(tx, catalog, (fn) => fn(tx), 'SKIP LOCKED'))) throw busy('create');
    const hit = await lookup();
    if (hit !== undefined) {
      throw new CatalogError('BadRequestException', `Cannot create namespace ${ns.join('.')}: its folder ${defaultNamespaceLocation(catalog, ns)} lies inside the location ${hit.display} of a ${hit.kind}`);
    }
  }

  /**
   * Stores `claims` as entity `entityId`'s locations, current as of `metadataLocation`. A claim
   * without a comparable form is not stored: nothing could be checked against it, and such an
   * entity gets no credential anyway.
   */
  async record(tx: SqlExecutor, catalog: CatalogRecord, entityId: string, metadataLocation: string | null, claims: readonly LocationClaim[]): Promise<void> {
    const rows = new Map<string, string>();
    for (const c of claims) {
      const k = comparableLocation(c.location);
      if (k.kind === 'ok' && !rows.has(k.key)) rows.set(k.key, c.location);
    }
    await tx.query('DELETE FROM catalog_entity_locations WHERE entity_id = $1', [entityId]);
    if (rows.size > 0) {
      await tx.query(
        `INSERT INTO catalog_entity_locations (tenant_id, catalog_id, entity_id, location, display)
         SELECT $1, $2, $3, u.location, u.display FROM unnest($4::text[], $5::text[]) AS u(location, display)`,
        [catalog.tenantId, catalog.id, entityId, [...rows.keys()], [...rows.values()]],
      );
    }
    await tx.query('UPDATE catalog_entities SET locations_of = $2 WHERE id = $1', [entityId, metadataLocation]);
  }

  /**
   * One query: a stored location of another entity overlapping a claim, a namespace whose folder a
   * claim is, and whether the catalog has rows not current (then the answer may be incomplete).
   */
  private async findConflict(db: SqlExecutor, catalog: CatalogRecord, owner: ClaimOwner, claims: readonly LocationClaim[]): Promise<{ readonly conflict: LocationConflict | undefined; readonly stale: boolean }> {
    const warehouse = comparableLocation(catalog.warehouseLocation);
    const parsed: { claim: LocationClaim; key: string; value: Comparable }[] = [];
    for (const claim of claims) {
      const c = comparableLocation(claim.location);
      if (c.kind === 'invalid') return { conflict: { kind: 'invalid', claim, why: c.why }, stale: false };
      // The warehouse itself, or a folder above it: it holds every namespace.
      if (warehouse.kind === 'ok' && warehouse.key.startsWith(c.key)) {
        return { conflict: { kind: 'warehouse', claim, warehouse: catalog.warehouseLocation, relation: warehouse.key === c.key ? 'equals' : 'contains' }, stale: false };
      }
      parsed.push({ claim, key: c.key, value: c.value });
    }
    // Namespaces form a tree (every child's parent exists), so a claim holding some namespace's
    // folder is itself a namespace's folder: an exact match is enough.
    const namespaceClaims = new Map<string, LocationClaim>();
    if (warehouse.kind === 'ok') {
      for (const p of parsed) {
        const ns = namespaceAt(warehouse.value, p.value);
        if (ns !== undefined && !namespaceClaims.has(namespaceKey(ns))) namespaceClaims.set(namespaceKey(ns), p.claim);
      }
    }
    const ranges = parsed.map((p) => rangeBelow(p.key));
    const above = [...new Set(parsed.flatMap((p) => selfAndAncestorKeys(p.value).slice(0, -1)))];
    const r = await db.query<ConflictRow>(
      `(SELECT 'namespace' AS source, namespace_key AS location, NULL AS display, NULL AS kind
          FROM catalog_namespaces WHERE catalog_id = $1 AND namespace_key = ANY($7::text[]) LIMIT 1)
       UNION ALL
       (SELECT 'entity', l.location, l.display, e.kind
          FROM unnest($4::text[], $5::text[]) AS r(lo, hi)
          JOIN catalog_entity_locations l ON l.catalog_id = $1 AND l.location >= r.lo AND l.location < r.hi
          JOIN catalog_entities e ON e.id = l.entity_id
         WHERE NOT (e.namespace_key = $2 AND e.name = $3) LIMIT 1)
       UNION ALL
       (SELECT 'entity', l.location, l.display, e.kind
          FROM catalog_entity_locations l JOIN catalog_entities e ON e.id = l.entity_id
         WHERE l.catalog_id = $1 AND l.location = ANY($6::text[]) AND NOT (e.namespace_key = $2 AND e.name = $3) LIMIT 1)
       UNION ALL
       (SELECT 'stale', NULL, NULL, NULL FROM catalog_entities
         WHERE catalog_id = $1 AND locations_of IS DISTINCT FROM metadata_location AND NOT (namespace_key = $2 AND name = $3) LIMIT 1)`,
      [catalog.id, namespaceKey(owner.namespace), owner.name, ranges.map((x) => x[0]), ranges.map((x) => x[1]), above, [...namespaceClaims.keys()]],
      // Every vend runs it (constant text): parsed and planned once per connection.
      { prepared: true },
    );
    const stale = r.rows.some((x) => x.source === 'stale');
    const ns = r.rows.find((x) => x.source === 'namespace');
    if (ns?.location != null) {
      return { conflict: { kind: 'namespace', claim: namespaceClaims.get(ns.location) as LocationClaim, namespace: namespaceFromKey(ns.location) }, stale };
    }
    const row = r.rows.find((x) => x.source === 'entity');
    if (row?.location == null) return { conflict: undefined, stale };
    const other = row.location;
    const mine = parsed.find((p) => p.key === other) ?? parsed.find((p) => other.startsWith(p.key)) ?? parsed.find((p) => p.key.startsWith(other));
    if (mine === undefined) throw new Error(`location check: ${other} matched none of the claims`);
    const relation = mine.key === other ? 'equals' : other.startsWith(mine.key) ? 'contains' : 'inside';
    return { conflict: { kind: 'entity', claim: mine.claim, other: row.display ?? other, otherKind: row.kind ?? 'table', relation }, stale };
  }

  /** `refreshStale` outside any transaction, shared by concurrent callers of one catalog. */
  private refreshShared(catalog: CatalogRecord): Promise<void> {
    const running = this.refreshing.get(catalog.id);
    if (running !== undefined) return running;
    const run = this.refreshStale(this.store, catalog, (fn) => this.store.transaction(fn), '').then(() => undefined).finally(() => this.refreshing.delete(catalog.id));
    this.refreshing.set(catalog.id, run);
    return run;
  }

  /**
   * Takes again, from their metadata files, the locations of the catalog's entities whose rows are
   * not current (stored before migration 0012, or by a replica that did not keep them). A file that
   * cannot be read leaves the row stale (tried again next time) and stores what its path tells:
   * the folder above its `metadata/` folder, else the folder it is in. False when a stale row was
   * skipped because another transaction holds it (`SKIP LOCKED`).
   */
  private async refreshStale(db: SqlExecutor, catalog: CatalogRecord, inTransaction: InTransaction, wait: '' | 'SKIP LOCKED'): Promise<boolean> {
    const stale = (await db.query<{ id: string; kind: EntityKind; metadata_location: string }>(
      'SELECT id, kind, metadata_location FROM catalog_entities WHERE catalog_id = $1 AND locations_of IS DISTINCT FROM metadata_location',
      [catalog.id],
    )).rows;
    let complete = true;
    for (let i = 0; i < stale.length; i += REFRESH_PARALLEL) {
      const batch = await Promise.all(stale.slice(i, i + REFRESH_PARALLEL).map(async (row) => {
        try {
          const claims = row.kind === 'table' ? tableClaims(await this.files.readTable(catalog, row.metadata_location)) : viewClaims(await this.files.readView(catalog, row.metadata_location));
          return { row, claims, current: true };
        } catch (e) {
          // The path is all there is. A missing or unparseable file stays so (metadata files are
          // never rewritten): the row is current. Any other failure (the store) is tried again.
          const dir = row.metadata_location.slice(0, Math.max(0, row.metadata_location.lastIndexOf('/')));
          const claims = [{ what: 'location', location: dir.endsWith('/metadata') ? dir.slice(0, -'/metadata'.length) : dir }];
          return { row, claims, current: e instanceof FileNotFoundError || e instanceof IcebergError || e instanceof SyntaxError };
        }
      }));
      for (const { row, claims, current } of batch) {
        const done = await inTransaction(async (tx) => {
          // Only while the pointer has not moved (then the mover keeps the row).
          const held = await tx.query('SELECT 1 FROM catalog_entities WHERE id = $1 AND metadata_location = $2 FOR UPDATE ' + wait, [row.id, row.metadata_location]);
          if (held.rows.length === 0) {
            const moved = await tx.query('SELECT 1 FROM catalog_entities WHERE id = $1 AND metadata_location = $2', [row.id, row.metadata_location]);
            return moved.rows.length === 0;
          }
          await this.record(tx, catalog, row.id, current ? row.metadata_location : null, claims);
          return true;
        });
        complete &&= done;
      }
    }
    return complete;
  }
}

/** The 400 of a create, register or commit refused for its location. */
function locationRefused(entity: EntityKind, owner: ClaimOwner, c: LocationConflict): CatalogError {
  const name = [...owner.namespace, owner.name].join('.');
  return new CatalogError('BadRequestException', `Invalid location for ${entity} ${name}: ${describeConflict(entity, c)}. A ${entity}'s files may not be the warehouse root, a namespace's folder, or overlap another table's or view's location`);
}

/**
 * The catalog's location lock, held to the end of `tx`: checks that lead to stored locations run
 * one at a time per catalog (a prefix overlap cannot be a unique index). Always taken after any
 * entity row lock of the same transaction, never before, so lock waits cannot form a cycle.
 */
async function lockLocations(tx: SqlExecutor, catalog: CatalogRecord): Promise<void> {
  await tx.query("SELECT pg_advisory_xact_lock(hashtextextended('floe.entity-locations:' || $1::text, 0))", [catalog.id]);
}

/** A stale row held by another transaction: retry. */
function busy(during: 'commit' | 'create'): CatalogError {
  return during === 'commit'
    ? new CatalogError('CommitFailedException', 'Commit failed: the locations of other tables are being updated concurrently, retry')
    : new CatalogError('ServiceUnavailableException', 'The locations of other tables are being updated concurrently, retry');
}
