/**
 * The catalog's rows in the metadata store (migration 0002): catalogs, namespaces, and entities
 * (tables and views, each a pointer to its current metadata file). Every function takes the
 * executor to run on (the store or an open transaction) and filters by tenant.
 */
import type { SqlExecutor } from '../store/meta-store.js';
import type { LocationMapping } from '../../storage-creds/file-io.js';
import type { StorageProfile } from '../../storage-creds/storage-profile.js';
import { namespaceFromKey, type Namespace } from './context.js';

export interface CatalogRecord {
  readonly id: string;
  readonly tenantId: string;
  readonly name: string;
  readonly warehouseLocation: string;
  readonly properties: ReadonlyMap<string, string>;
  readonly locationMappings: readonly LocationMapping[];
  /** How the warehouse is reached (object storage); null = the deployment's local storage. */
  readonly storageProfile: StorageProfile | null;
  /** The profile's keys, sealed under the server key (purpose `storage-profile:<id>`); never returned. */
  readonly storageSecretSealed: string | null;
  readonly createdAt: Date;
}

export interface NamespaceRecord {
  readonly namespace: Namespace;
  readonly key: string;
  readonly properties: ReadonlyMap<string, string>;
}

export type EntityKind = 'table' | 'view';

export interface EntityRecord {
  readonly id: string;
  readonly catalogId: string;
  readonly namespaceKey: string;
  readonly name: string;
  readonly kind: EntityKind;
  readonly metadataLocation: string;
  readonly version: number;
  /** The metadata file its stored locations were taken from (current when it is `metadataLocation`). */
  readonly locationsOf: string | null;
}

interface CatalogRow {
  id: string;
  tenant_id: string;
  name: string;
  warehouse_location: string;
  properties: Record<string, string> | string;
  location_mappings: LocationMapping[] | string;
  storage_profile: StorageProfile | string | null;
  storage_secret_sealed: string | null;
  created_at: Date | string;
}

/** jsonb arrives parsed from pg and PGlite; a string only if a driver changed its mind. */
function jsonOf<T>(v: T | string): T {
  return typeof v === 'string' ? (JSON.parse(v) as T) : v;
}

/** A JSON object of strings as a `Map` (user-supplied keys such as `constructor` stay plain keys). */
export function stringMapOf(obj: Record<string, string> | string | null): Map<string, string> {
  const o = obj === null ? {} : jsonOf(obj);
  return new Map(Object.entries(o));
}

/** A `Map` as a plain JSON object that takes any key (null prototype). */
export function objectOf(map: ReadonlyMap<string, string>): Record<string, string> {
  const out = Object.create(null) as Record<string, string>;
  for (const [k, v] of map) out[k] = v;
  return out;
}

function catalogOf(r: CatalogRow): CatalogRecord {
  return {
    id: r.id,
    tenantId: r.tenant_id,
    name: r.name,
    warehouseLocation: r.warehouse_location,
    properties: stringMapOf(r.properties),
    locationMappings: jsonOf(r.location_mappings),
    storageProfile: r.storage_profile === null ? null : jsonOf(r.storage_profile),
    storageSecretSealed: r.storage_secret_sealed,
    createdAt: r.created_at instanceof Date ? r.created_at : new Date(r.created_at),
  };
}

const CATALOG_COLUMNS = 'id, tenant_id, name, warehouse_location, properties, location_mappings, storage_profile, storage_secret_sealed, created_at';

export async function findCatalog(db: SqlExecutor, tenantId: string, name: string): Promise<CatalogRecord | undefined> {
  const r = await db.query<CatalogRow>(`SELECT ${CATALOG_COLUMNS} FROM catalogs WHERE tenant_id = $1 AND name = $2`, [tenantId, name]);
  return r.rows[0] === undefined ? undefined : catalogOf(r.rows[0]);
}

export async function listCatalogRecords(db: SqlExecutor, tenantId: string): Promise<readonly CatalogRecord[]> {
  const r = await db.query<CatalogRow>(`SELECT ${CATALOG_COLUMNS} FROM catalogs WHERE tenant_id = $1 ORDER BY name`, [tenantId]);
  return r.rows.map(catalogOf);
}

export interface NewCatalogRecord {
  readonly id: string;
  readonly tenantId: string;
  readonly name: string;
  readonly warehouseLocation: string;
  readonly properties: ReadonlyMap<string, string>;
  readonly locationMappings: readonly LocationMapping[];
  readonly storageProfile?: StorageProfile | null;
  readonly storageSecretSealed?: string | null;
  /** The warehouse's comparable form (catalog-locations.ts `warehouseKeyOf`), for the overlap checks. */
  readonly warehouseKey: string;
}

/**
 * Inserts a catalog; returns undefined when the tenant already has one of that name. Catalogs are
 * created through catalog-locations.ts `insertExclusiveCatalog`, which checks the warehouse first.
 */
export async function insertCatalog(db: SqlExecutor, c: NewCatalogRecord): Promise<CatalogRecord | undefined> {
  const r = await db.query<CatalogRow>(
    `INSERT INTO catalogs (id, tenant_id, name, warehouse_location, properties, location_mappings, storage_profile, storage_secret_sealed, warehouse_key)
     VALUES ($1, $2, $3, $4, $5::jsonb, $6::jsonb, $7::jsonb, $8, $9)
     ON CONFLICT (tenant_id, name) DO NOTHING
     RETURNING ${CATALOG_COLUMNS}`,
    [c.id, c.tenantId, c.name, c.warehouseLocation, JSON.stringify(objectOf(c.properties)), JSON.stringify(c.locationMappings),
      c.storageProfile == null ? null : JSON.stringify(c.storageProfile), c.storageSecretSealed ?? null, c.warehouseKey],
  );
  return r.rows[0] === undefined ? undefined : catalogOf(r.rows[0]);
}

/** Replaces a catalog's storage profile and sealed keys (an operator-declared profile that changed). */
export async function updateCatalogStorage(db: SqlExecutor, catalogId: string, profile: StorageProfile, sealed: string | null): Promise<void> {
  await db.query('UPDATE catalogs SET storage_profile = $2::jsonb, storage_secret_sealed = $3 WHERE id = $1', [catalogId, JSON.stringify(profile), sealed]);
}

interface NamespaceRow {
  namespace_key: string;
  properties: Record<string, string> | string;
}

function namespaceOf(r: NamespaceRow): NamespaceRecord {
  return { namespace: namespaceFromKey(r.namespace_key), key: r.namespace_key, properties: stringMapOf(r.properties) };
}

export async function findNamespace(db: SqlExecutor, catalogId: string, key: string, lock: '' | 'FOR UPDATE' | 'FOR SHARE' = ''): Promise<NamespaceRecord | undefined> {
  const r = await db.query<NamespaceRow>(`SELECT namespace_key, properties FROM catalog_namespaces WHERE catalog_id = $1 AND namespace_key = $2 ${lock}`, [catalogId, key]);
  return r.rows[0] === undefined ? undefined : namespaceOf(r.rows[0]);
}

/** Children of `parentKey` ('' = top level) after `afterKey`, in key order, at most `limit`. */
export async function listNamespaceRecords(db: SqlExecutor, catalogId: string, parentKey: string, afterKey: string | undefined, limit: number): Promise<readonly NamespaceRecord[]> {
  const r = await db.query<NamespaceRow>(
    `SELECT namespace_key, properties FROM catalog_namespaces
      WHERE catalog_id = $1 AND parent_key = $2 AND ($3::text IS NULL OR namespace_key > $3::text)
      ORDER BY namespace_key LIMIT $4`,
    [catalogId, parentKey, afterKey ?? null, limit],
  );
  return r.rows.map(namespaceOf);
}

interface EntityRow {
  id: string;
  catalog_id: string;
  namespace_key: string;
  name: string;
  kind: EntityKind;
  metadata_location: string;
  version: number | bigint;
  locations_of: string | null;
}

const ENTITY_COLUMNS = 'id, catalog_id, namespace_key, name, kind, metadata_location, version, locations_of';

function entityOf(r: EntityRow): EntityRecord {
  return { id: r.id, catalogId: r.catalog_id, namespaceKey: r.namespace_key, name: r.name, kind: r.kind, metadataLocation: r.metadata_location, version: Number(r.version), locationsOf: r.locations_of };
}

/** The table or view of that name (either kind), optionally locked for a commit. */
export async function findEntity(db: SqlExecutor, catalogId: string, namespaceKey: string, name: string, lock: '' | 'FOR UPDATE' = ''): Promise<EntityRecord | undefined> {
  const r = await db.query<EntityRow>(`SELECT ${ENTITY_COLUMNS} FROM catalog_entities WHERE catalog_id = $1 AND namespace_key = $2 AND name = $3 ${lock}`, [catalogId, namespaceKey, name]);
  return r.rows[0] === undefined ? undefined : entityOf(r.rows[0]);
}

/**
 * Locks the rows of several entities in one statement, in (namespace, name) order, so that two
 * multi-table commits touching the same tables always lock them in the same order and cannot deadlock.
 */
export async function lockEntities(db: SqlExecutor, catalogId: string, idents: readonly { readonly namespaceKey: string; readonly name: string }[]): Promise<readonly EntityRecord[]> {
  if (idents.length === 0) return [];
  const r = await db.query<EntityRow>(
    `SELECT ${ENTITY_COLUMNS} FROM catalog_entities
      WHERE catalog_id = $1 AND (namespace_key, name) IN (SELECT * FROM unnest($2::text[], $3::text[]))
      ORDER BY namespace_key, name FOR UPDATE`,
    [catalogId, idents.map((i) => i.namespaceKey), idents.map((i) => i.name)],
  );
  return r.rows.map(entityOf);
}

export async function listEntityRecords(db: SqlExecutor, catalogId: string, namespaceKey: string, kind: EntityKind, afterName: string | undefined, limit: number): Promise<readonly EntityRecord[]> {
  const r = await db.query<EntityRow>(
    `SELECT ${ENTITY_COLUMNS} FROM catalog_entities
      WHERE catalog_id = $1 AND namespace_key = $2 AND kind = $3 AND ($4::text IS NULL OR name > $4::text)
      ORDER BY name LIMIT $5`,
    [catalogId, namespaceKey, kind, afterName ?? null, limit],
  );
  return r.rows.map(entityOf);
}

export interface NewEntityRecord {
  readonly id: string;
  readonly tenantId: string;
  readonly catalogId: string;
  readonly namespaceKey: string;
  readonly name: string;
  readonly kind: EntityKind;
  readonly metadataLocation: string;
}

/** Inserts a table or view; undefined when the name is taken (by either kind). */
export async function insertEntity(db: SqlExecutor, e: NewEntityRecord): Promise<EntityRecord | undefined> {
  const r = await db.query<EntityRow>(
    `INSERT INTO catalog_entities (id, tenant_id, catalog_id, namespace_key, name, kind, metadata_location)
     VALUES ($1, $2, $3, $4, $5, $6, $7)
     ON CONFLICT (catalog_id, namespace_key, name) DO NOTHING
     RETURNING ${ENTITY_COLUMNS}`,
    [e.id, e.tenantId, e.catalogId, e.namespaceKey, e.name, e.kind, e.metadataLocation],
  );
  return r.rows[0] === undefined ? undefined : entityOf(r.rows[0]);
}

/**
 * Compare-and-swap of the metadata pointer: true only if the row still pointed at `expected`.
 * `sameLocations`: the new metadata keeps the old one's locations, so stored locations current for
 * `expected` stay current; otherwise they become stale until the caller stores the new ones.
 */
export async function swapMetadataLocation(db: SqlExecutor, entityId: string, expected: string, next: string, sameLocations: boolean): Promise<boolean> {
  const r = await db.query(
    `UPDATE catalog_entities SET metadata_location = $3, version = version + 1, updated_at = now(),
            locations_of = CASE WHEN $4::boolean AND locations_of = $2 THEN $3 ELSE locations_of END
      WHERE id = $1 AND metadata_location = $2`,
    [entityId, expected, next, sameLocations],
  );
  return r.rowCount === 1;
}

export async function deleteEntity(db: SqlExecutor, entityId: string): Promise<boolean> {
  const r = await db.query('DELETE FROM catalog_entities WHERE id = $1', [entityId]);
  return r.rowCount === 1;
}

/** Catalog columns prefixed `c_`, for joins that fetch a catalog with its entities in one round trip. */
const CATALOG_JOIN_COLUMNS = 'c.id AS c_id, c.tenant_id AS c_tenant_id, c.name AS c_name, c.warehouse_location AS c_warehouse_location, c.properties AS c_properties, c.location_mappings AS c_location_mappings, c.storage_profile AS c_storage_profile, c.storage_secret_sealed AS c_storage_secret_sealed, c.created_at AS c_created_at';

type JoinedRow = { [K in keyof CatalogRow as `c_${K & string}`]: CatalogRow[K] } & { [K in keyof EntityRow]: EntityRow[K] | null };

function splitJoined(r: JoinedRow): { catalog: CatalogRecord; entity: EntityRecord | undefined } {
  const catalog = catalogOf({ id: r.c_id, tenant_id: r.c_tenant_id, name: r.c_name, warehouse_location: r.c_warehouse_location, properties: r.c_properties, location_mappings: r.c_location_mappings, storage_profile: r.c_storage_profile, storage_secret_sealed: r.c_storage_secret_sealed, created_at: r.c_created_at });
  const entity = r.id === null ? undefined : entityOf(r as EntityRow);
  return { catalog, entity };
}

/**
 * The hot path of a table load: the tenant's catalog and the named entity in one query (the
 * catalog is undefined when the tenant has no catalog of that name).
 */
export async function findCatalogAndEntity(db: SqlExecutor, tenantId: string, catalogName: string, namespaceKey: string, name: string): Promise<{ catalog: CatalogRecord | undefined; entity: EntityRecord | undefined }> {
  const r = await db.query<JoinedRow>(
    `SELECT ${CATALOG_JOIN_COLUMNS}, e.id, e.catalog_id, e.namespace_key, e.name, e.kind, e.metadata_location, e.version, e.locations_of
       FROM catalogs c LEFT JOIN catalog_entities e ON e.catalog_id = c.id AND e.namespace_key = $3 AND e.name = $4
      WHERE c.tenant_id = $1 AND c.name = $2`,
    [tenantId, catalogName, namespaceKey, name],
    // Every table load and sign runs it: prepared, PostgreSQL does not parse and plan it each time.
    { prepared: true },
  );
  const row = r.rows[0];
  return row === undefined ? { catalog: undefined, entity: undefined } : splitJoined(row);
}

/**
 * `lockEntities` joined with the tenant's catalog: the commit's first statement both resolves the
 * catalog and locks the rows (in (namespace, name) order). `catalog` is undefined when no row
 * matched; the caller then resolves the catalog on its own to tell the errors apart.
 */
export async function lockEntitiesInCatalog(
  db: SqlExecutor, tenantId: string, catalogName: string, idents: readonly { readonly namespaceKey: string; readonly name: string }[],
): Promise<{ catalog: CatalogRecord | undefined; rows: readonly EntityRecord[] }> {
  const r = await db.query<JoinedRow>(
    `SELECT ${CATALOG_JOIN_COLUMNS}, e.id, e.catalog_id, e.namespace_key, e.name, e.kind, e.metadata_location, e.version, e.locations_of
       FROM catalog_entities e JOIN catalogs c ON c.id = e.catalog_id
      WHERE c.tenant_id = $1 AND c.name = $2 AND (e.namespace_key, e.name) IN (SELECT * FROM unnest($3::text[], $4::text[]))
      ORDER BY e.namespace_key, e.name FOR UPDATE OF e`,
    [tenantId, catalogName, idents.map((i) => i.namespaceKey), idents.map((i) => i.name)],
  );
  const split = r.rows.map(splitJoined);
  return { catalog: split[0]?.catalog, rows: split.map((s) => s.entity as EntityRecord) };
}
