/**
 * Table operations apart from commits: list, create (including stage-create), load, exists, drop
 * (with purge), register, and client metrics reports.
 */
import type { JsonValue } from '../../iceberg/json.js';
import { readManifest } from '../../iceberg/manifest.js';
import { readManifestList } from '../../iceberg/manifest-list.js';
import type { UnboundPartitionSpec } from '../../iceberg/partition-spec.js';
import type { Schema } from '../../iceberg/schema.js';
import type { SortOrder } from '../../iceberg/sort-order.js';
import { newTableMetadata, nextMetadataLocation, type TableMetadata } from '../../iceberg/table-metadata.js';
import type { FileIO } from '../../../storage-creds/file-io.js';
import type { CatalogContext, EntityIdent, Namespace } from '../context.js';
import { namespaceKey, qualifiedName, validateEntityName, validateNamespace } from '../context.js';
import type { CatalogDeps } from '../deps.js';
import { CatalogError, noSuchNamespace, noSuchTable, noSuchWarehouse } from '../errors.js';
import { readingMetadata, type LoadedTable } from '../loaded.js';
import { keysetPage, type Page, type PageRequest } from '../paging.js';
import { defaultEntityLocation, requireCatalog, requireNamespace } from '../resolve.js';
import { deleteEntity, findCatalogAndEntity, findEntity, insertEntity, listEntityRecords, swapMetadataLocation, type CatalogRecord, type EntityRecord } from '../store.js';

export interface CreateTableRequest {
  readonly name: string;
  /** Defaults to `<warehouse>/<namespace>/<name>-<uuid>`. */
  readonly location?: string;
  readonly schema: Schema;
  readonly partitionSpec?: UnboundPartitionSpec;
  readonly writeOrder?: SortOrder;
  /** Return the metadata without creating the table; the client commits it later with `assert-create`. */
  readonly stageCreate?: boolean;
  readonly properties?: ReadonlyMap<string, string>;
}

export interface RegisterTableRequest {
  readonly name: string;
  readonly metadataLocation: string;
  /** Point an existing table at this metadata instead of failing with 409. */
  readonly overwrite?: boolean;
}

export const NO_CONFIG: ReadonlyMap<string, string> = new Map();

/** Unique-violation and foreign-key-violation SQLSTATEs, as both backends report them. */
export function sqlState(e: unknown): string | undefined {
  const code = (e as { code?: unknown } | null)?.code;
  return typeof code === 'string' ? code : undefined;
}

export function alreadyExists(ident: EntityIdent, existing: EntityRecord): CatalogError {
  return existing.kind === 'view'
    ? new CatalogError('AlreadyExistsException', `View with same name already exists: ${qualifiedName(ident)}`)
    : new CatalogError('AlreadyExistsException', `Table already exists: ${qualifiedName(ident)}`);
}

/** The table row of `ident`, or 404 (a view of that name is not a table). */
export async function requireTable(_deps: CatalogDeps, db: Parameters<typeof findEntity>[0], catalog: CatalogRecord, ident: EntityIdent, lock: '' | 'FOR UPDATE' = ''): Promise<EntityRecord> {
  const row = await findEntity(db, catalog.id, namespaceKey(ident.namespace), ident.name, lock);
  if (row === undefined || row.kind !== 'table') {
    if (row === undefined && (await db.query('SELECT 1 FROM catalog_namespaces WHERE catalog_id = $1 AND namespace_key = $2', [catalog.id, namespaceKey(ident.namespace)])).rows.length === 0) {
      throw noSuchNamespace(ident.namespace);
    }
    throw noSuchTable(ident.namespace, ident.name);
  }
  return row;
}

export async function listTables(deps: CatalogDeps, ctx: CatalogContext, catalogName: string, ns: Namespace, page: PageRequest = {}): Promise<Page<EntityIdent>> {
  validateNamespace(ns);
  const catalog = await requireCatalog(deps.store, ctx, catalogName);
  await requireNamespace(deps.store, catalog, ns);
  const p = await keysetPage(page, (after, limit) => listEntityRecords(deps.store, catalog.id, namespaceKey(ns), 'table', after, limit), (e) => e.name);
  return { items: p.items.map((e) => ({ namespace: ns, name: e.name })), ...(p.nextPageToken !== undefined ? { nextPageToken: p.nextPageToken } : {}) };
}

export async function createTable(deps: CatalogDeps, ctx: CatalogContext, catalogName: string, ns: Namespace, request: CreateTableRequest): Promise<LoadedTable> {
  // Validation
  validateNamespace(ns);
  validateEntityName(request.name, 'table');
  const ident: EntityIdent = { namespace: ns, name: request.name };
  const catalog = await requireCatalog(deps.store, ctx, catalogName);
  await requireNamespace(deps.store, catalog, ns);
  const existing = await findEntity(deps.store, catalog.id, namespaceKey(ns), request.name);
  if (existing !== undefined) throw alreadyExists(ident, existing);
  // Business logic
  const tableUuid = deps.newUuid();
  const metadata = newTableMetadata({
    schema: request.schema,
    ...(request.partitionSpec !== undefined ? { partitionSpec: request.partitionSpec } : {}),
    ...(request.writeOrder !== undefined ? { sortOrder: request.writeOrder } : {}),
    location: request.location ?? defaultEntityLocation(catalog, ns, request.name, tableUuid),
    ...(request.properties !== undefined ? { properties: request.properties } : {}),
    tableUuid,
    now: deps.clock.now(),
  });
  if (request.stageCreate === true) return { catalogId: catalog.id, ident, metadata, config: NO_CONFIG };
  const location = nextMetadataLocation(metadata, undefined, deps.newUuid());
  await deps.files.writeTable(catalog, location, metadata);
  let row: EntityRecord | undefined;
  try {
    row = await insertEntity(deps.store, { id: tableUuid, tenantId: ctx.tenantId, catalogId: catalog.id, namespaceKey: namespaceKey(ns), name: request.name, kind: 'table', metadataLocation: location });
  } catch (e) {
    await deps.files.discard(catalog, [location]);
    if (sqlState(e) === '23503') throw noSuchNamespace(ns);
    throw e;
  }
  if (row === undefined) {
    // Lost a race with a concurrent create of the same name: our file was never referenced.
    await deps.files.discard(catalog, [location]);
    const winner = await findEntity(deps.store, catalog.id, namespaceKey(ns), request.name);
    throw winner === undefined ? new CatalogError('AlreadyExistsException', `Table already exists: ${qualifiedName(ident)}`) : alreadyExists(ident, winner);
  }
  return { catalogId: catalog.id, ident, metadataLocation: location, metadata, config: NO_CONFIG };
}

export async function loadTable(deps: CatalogDeps, ctx: CatalogContext, catalogName: string, ident: EntityIdent): Promise<LoadedTable> {
  validateNamespace(ident.namespace);
  // One round trip on the hot path: the tenant's catalog and the table row together.
  const { catalog, entity } = await findCatalogAndEntity(deps.store, ctx.tenantId, catalogName, namespaceKey(ident.namespace), ident.name);
  if (catalog === undefined) throw noSuchWarehouse(catalogName);
  const row = entity !== undefined && entity.kind === 'table' ? entity : await requireTable(deps, deps.store, catalog, ident);
  const metadata = await readingMetadata(deps.files.readTable(catalog, row.metadataLocation));
  return { catalogId: catalog.id, ident, metadataLocation: row.metadataLocation, metadata, config: NO_CONFIG };
}

export async function tableExists(deps: CatalogDeps, ctx: CatalogContext, catalogName: string, ident: EntityIdent): Promise<boolean> {
  validateNamespace(ident.namespace);
  const catalog = await requireCatalog(deps.store, ctx, catalogName);
  const row = await findEntity(deps.store, catalog.id, namespaceKey(ident.namespace), ident.name);
  return row !== undefined && row.kind === 'table';
}

/**
 * Drops the table row. With `purge`, then deletes every file the metadata references (metadata
 * files, manifest lists, manifests, data and delete files, statistics), as Java's
 * `CatalogUtil.dropTableData`, and the table folder itself when it lies inside the warehouse.
 */
export async function dropTable(deps: CatalogDeps, ctx: CatalogContext, catalogName: string, ident: EntityIdent, options: { readonly purge?: boolean } = {}): Promise<void> {
  validateNamespace(ident.namespace);
  const catalog = await requireCatalog(deps.store, ctx, catalogName);
  const dropped = await deps.store.transaction(async (tx) => {
    const row = await requireTable(deps, tx, catalog, ident, 'FOR UPDATE');
    await deleteEntity(tx, row.id);
    return row;
  });
  if (options.purge !== true) return;
  const metadata = await deps.files.readTable(catalog, dropped.metadataLocation).catch(() => undefined);
  const io = deps.files.ioFor(catalog);
  if (metadata !== undefined) await purgeTableFiles(io, metadata, dropped.metadataLocation);
  else await io.delete(dropped.metadataLocation);
  const warehouse = `${catalog.warehouseLocation.replace(/\/+$/, '')}/`;
  if (metadata !== undefined && `${metadata.location}/`.startsWith(warehouse) && metadata.location.length + 1 > warehouse.length) {
    await io.deletePrefix(`${metadata.location.replace(/\/+$/, '')}/`);
  }
}

/** Deletes the files a table's metadata references. Missing files are skipped. */
export async function purgeTableFiles(io: FileIO, m: TableMetadata, metadataLocation: string): Promise<void> {
  const files = new Set<string>();
  for (const s of m.snapshots) {
    const lists = s.manifestList !== undefined ? [s.manifestList] : [];
    for (const list of lists) {
      files.add(list);
      const bytes = await io.read(list).catch(() => undefined);
      if (bytes === undefined) continue;
      for (const mf of readManifestList(bytes).manifests) {
        files.add(mf.manifestPath);
        const mbytes = await io.read(mf.manifestPath).catch(() => undefined);
        if (mbytes === undefined) continue;
        for (const entry of readManifest(mbytes).entries) files.add(entry.dataFile.filePath);
      }
    }
    for (const manifest of s.manifests ?? []) files.add(manifest);
  }
  for (const st of m.statistics) files.add(st.statisticsPath);
  for (const st of m.partitionStatistics) files.add(st.statisticsPath);
  for (const e of m.metadataLog) files.add(e.metadataFile);
  files.add(metadataLocation);
  const all = [...files];
  for (let i = 0; i < all.length; i += 32) await Promise.all(all.slice(i, i + 32).map((f) => io.delete(f).catch(() => undefined)));
}

/**
 * Registers an existing metadata file as a table (read through the catalog's remappings, so a
 * table written elsewhere can be registered in place). `overwrite` re-points an existing table.
 */
export async function registerTable(deps: CatalogDeps, ctx: CatalogContext, catalogName: string, ns: Namespace, request: RegisterTableRequest): Promise<LoadedTable> {
  // Validation
  validateNamespace(ns);
  validateEntityName(request.name, 'table');
  if (request.metadataLocation === '') throw new CatalogError('BadRequestException', 'Invalid metadata location: empty');
  const ident: EntityIdent = { namespace: ns, name: request.name };
  const catalog = await requireCatalog(deps.store, ctx, catalogName);
  await requireNamespace(deps.store, catalog, ns);
  const metadata = await readingMetadata(deps.files.readTable(catalog, request.metadataLocation));
  // Business logic
  await deps.store.transaction(async (tx) => {
    const existing = await findEntity(tx, catalog.id, namespaceKey(ns), request.name, 'FOR UPDATE');
    if (existing !== undefined) {
      if (request.overwrite !== true || existing.kind !== 'table') throw alreadyExists(ident, existing);
      await swapMetadataLocation(tx, existing.id, existing.metadataLocation, request.metadataLocation);
      return;
    }
    let row: EntityRecord | undefined;
    try {
      row = await insertEntity(tx, { id: deps.newUuid(), tenantId: ctx.tenantId, catalogId: catalog.id, namespaceKey: namespaceKey(ns), name: request.name, kind: 'table', metadataLocation: request.metadataLocation });
    } catch (e) {
      if (sqlState(e) === '23503') throw noSuchNamespace(ns);
      throw e;
    }
    if (row === undefined) throw new CatalogError('AlreadyExistsException', `Table already exists: ${qualifiedName(ident)}`);
  });
  return { catalogId: catalog.id, ident, metadataLocation: request.metadataLocation, metadata, config: NO_CONFIG };
}

/** Stores a client's scan or commit report (POST .../metrics). */
export async function reportMetrics(deps: CatalogDeps, ctx: CatalogContext, catalogName: string, ident: EntityIdent, reportType: string, report: JsonValue): Promise<void> {
  validateNamespace(ident.namespace);
  const catalog = await requireCatalog(deps.store, ctx, catalogName);
  const row = await requireTable(deps, deps.store, catalog, ident);
  await deps.store.query(
    'INSERT INTO catalog_metrics_reports (tenant_id, catalog_id, entity_id, report_type, report) VALUES ($1, $2, $3, $4, $5::jsonb)',
    [ctx.tenantId, catalog.id, row.id, reportType, JSON.stringify(report, (_k, v: unknown) => (typeof v === 'bigint' ? v.toString() : v))],
  );
}
