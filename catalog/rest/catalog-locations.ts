/**
 * Where a catalog may keep its files, against every other catalog of every tenant (docs/catalog.md
 * "Catalog locations").
 *
 * The table-location rule (locations.ts) holds within one catalog. Were two catalogs' warehouses
 * equal or nested (`s3://b/` and `s3://b/y/`), a user of the outer one could create or register a
 * table at `s3://b/y/ns/t`, inside its own warehouse, and be vended credentials or signatures for
 * the inner catalog's files (when both profiles sign with the same keys or role) — another
 * catalog's, possibly another tenant's. So, as Polaris with `ALLOW_OVERLAPPING_CATALOG_URLS=false`,
 * a catalog's warehouse must not equal, contain or lie inside another catalog's, of any tenant;
 * compared in the comparable form of locations.ts (s3/s3a/s3n one, every ADLS host of an account
 * one, segment-wise, `.`/`..` refused). The warehouse is a catalog's only place: vending and
 * signing reach nothing outside it, not even where a location mapping sends a table.
 *
 * Refusals name the location only: which catalog holds the other one, or its tenant, is not the
 * caller's to know.
 *
 * Races: creations of catalogs, of every tenant, take one transaction-scoped advisory lock
 * (`lockCatalogLocations`, a key of its own, distinct from each catalog's entity-location lock)
 * before they check and insert, so two nested warehouses created at once are serialised and the
 * second sees the first. Catalogs stored before the rule (or by a replica without it) may overlap:
 * vending and signing for their tables refuse (`CatalogLocations.overlapOf`).
 */
import type { MetaStore, SqlExecutor } from '../store/meta-store.js';
import { badRequest, type CatalogError } from './errors.js';
import { comparableLocation, rangeBelow, selfAndAncestorKeys } from './locations.js';
import { findCatalog, insertCatalog, type CatalogRecord, type NewCatalogRecord } from './store.js';

/** How a warehouse meets another catalog's: mine equals it, contains it, or lies inside it. */
export type WarehouseOverlap = 'equals' | 'contains' | 'inside';

/**
 * The stored key of a warehouse (`catalogs.warehouse_key`, migration 0013): its comparable form,
 * or '' when it has none (matches no other key; see the migration).
 */
export function warehouseKeyOf(location: string): string {
  const c = comparableLocation(location);
  return c.kind === 'ok' ? c.key : '';
}

/** Refuses (400) a warehouse location with no comparable form, saying why. */
export function assertComparableWarehouse(location: string): void {
  const c = comparableLocation(location);
  if (c.kind === 'invalid') throw badRequest(`Invalid warehouse location ${JSON.stringify(location)}: ${c.why}`);
}

/** The overlap in words: the location and the relation, nothing of the other catalog. */
export function describeWarehouseOverlap(location: string, overlap: WarehouseOverlap): string {
  const relation = overlap === 'equals' ? 'is' : overlap === 'contains' ? 'contains' : 'lies inside';
  return `the warehouse ${location} is in use: it ${relation} another catalog's warehouse`;
}

/**
 * The catalogs' location lock, held to the end of `tx`: one creation at a time, across tenants (a
 * prefix overlap cannot be a unique index). Catalog creations are rare; nothing else takes it.
 */
async function lockCatalogLocations(tx: SqlExecutor): Promise<void> {
  await tx.query("SELECT pg_advisory_xact_lock(hashtextextended('floe.catalog-locations', 0))");
}

/**
 * Takes the keys of catalogs stored without one (before migration 0013, or by a replica without
 * it) from their warehouse locations. One row per statement: concurrent fills never hold two row
 * locks, so they cannot deadlock; a row filled meanwhile is left (the key is the same).
 */
async function fillMissingKeys(db: SqlExecutor): Promise<void> {
  // Every vend of a catalog not yet found apart runs it (constant text): prepared.
  const missing = await db.query<{ id: string; warehouse_location: string }>('SELECT id, warehouse_location FROM catalogs WHERE warehouse_key IS NULL', [], { prepared: true });
  for (const row of missing.rows) {
    await db.query('UPDATE catalogs SET warehouse_key = $2 WHERE id = $1 AND warehouse_key IS NULL', [row.id, warehouseKeyOf(row.warehouse_location)]);
  }
}

/**
 * How the warehouse `location` overlaps that of a catalog other than `self` (null: any catalog),
 * or undefined when it overlaps none. One indexed query: the keys below it, and its own key and
 * those of the folders above it. A location with no comparable form overlaps nothing here (it is
 * refused, or given no credential, elsewhere).
 */
async function findOverlap(db: SqlExecutor, self: string | null, location: string): Promise<WarehouseOverlap | undefined> {
  const c = comparableLocation(location);
  if (c.kind === 'invalid') return undefined;
  await fillMissingKeys(db);
  const [lo, hi] = rangeBelow(c.key);
  const r = await db.query<{ warehouse_key: string }>(
    `(SELECT warehouse_key FROM catalogs WHERE warehouse_key >= $2 AND warehouse_key < $3 AND id IS DISTINCT FROM $1::uuid LIMIT 1)
     UNION ALL
     (SELECT warehouse_key FROM catalogs WHERE warehouse_key = ANY($4::text[]) AND id IS DISTINCT FROM $1::uuid LIMIT 1)`,
    [self, lo, hi, selfAndAncestorKeys(c.value)],
    { prepared: true },
  );
  const other = r.rows[0]?.warehouse_key;
  if (other === undefined) return undefined;
  return other === c.key ? 'equals' : other.startsWith(c.key) ? 'contains' : 'inside';
}

/** Refuses (400) a new catalog's warehouse that overlaps another catalog's; the early check, outside any lock. */
export async function precheckWarehouse(db: SqlExecutor, location: string): Promise<void> {
  const overlap = await findOverlap(db, null, location);
  if (overlap !== undefined) throw warehouseRefused(location, overlap);
}

/**
 * Inserts a catalog in one transaction under the catalogs' location lock: undefined when its
 * tenant has one of that name (the caller's 409 comes before any overlap), 400 when its warehouse
 * overlaps another catalog's. The check that counts (`precheckWarehouse` only refuses early).
 */
export function insertExclusiveCatalog(store: MetaStore, c: Omit<NewCatalogRecord, 'warehouseKey'>): Promise<CatalogRecord | undefined> {
  return store.transaction(async (tx) => {
    await lockCatalogLocations(tx);
    if (await findCatalog(tx, c.tenantId, c.name) !== undefined) return undefined;
    const overlap = await findOverlap(tx, null, c.warehouseLocation);
    if (overlap !== undefined) throw warehouseRefused(c.warehouseLocation, overlap);
    return insertCatalog(tx, { ...c, warehouseKey: warehouseKeyOf(c.warehouseLocation) });
  });
}

/** The 400 of a creation refused for its warehouse: the location and the relation, nothing of the other catalog. */
function warehouseRefused(location: string, overlap: WarehouseOverlap): CatalogError {
  return badRequest(`Invalid warehouse location ${JSON.stringify(location)}: ${describeWarehouseOverlap(location, overlap)}. Catalogs, of any tenant, may not share or nest their warehouses`);
}

/**
 * How long vending and signing take a catalog found apart from the others as apart. New catalogs
 * cannot overlap it (their creation is checked) and warehouses never move; what can still turn it
 * is a catalog stored by a replica without the rule, which this bounds.
 */
const APART_FOR_MS = 1000;
const APART_CACHE_MAX = 10_000;

/** The vending and signing side: whether a catalog's warehouse overlaps another's. One per catalog service. */
export class CatalogLocations {
  private readonly checked = new Map<string, { readonly at: number; readonly check: Promise<WarehouseOverlap | undefined> }>();

  constructor(private readonly store: MetaStore) {}

  /**
   * How `catalog`'s warehouse overlaps another catalog's (of any tenant), or undefined. Concurrent
   * checks of one catalog share one query; a catalog found apart is taken as apart for
   * APART_FOR_MS; an overlap is never kept (dropping the other catalog counts at once).
   */
  overlapOf(catalog: CatalogRecord): Promise<WarehouseOverlap | undefined> {
    const now = Date.now();
    const hit = this.checked.get(catalog.id);
    if (hit !== undefined && now - hit.at < APART_FOR_MS) return hit.check;
    const check = findOverlap(this.store, catalog.id, catalog.warehouseLocation);
    if (this.checked.size >= APART_CACHE_MAX) this.checked.clear();
    this.checked.set(catalog.id, { at: now, check });
    const forget = (): void => {
      if (this.checked.get(catalog.id)?.check === check) this.checked.delete(catalog.id);
    };
    check.then((o) => { if (o !== undefined) forget(); }, forget);
    return check;
  }
}
