/**
 * `CatalogService`: the REST catalog's operations behind one typed interface, used by the HTTP
 * routes (`server/routes/iceberg/`) and by the SQL engine (which creates tables, loads metadata and
 * commits `add-snapshot` + `set-snapshot-ref` through the very same `commitTable`). Each operation
 * lives in its own module under `operations/` and runs in labelled steps: validation,
 * authorization (tenant scoping), business logic.
 */
import type { JsonValue } from '../iceberg/json.js';
import { planScan, type ScanPlan, type SnapshotSelector } from '../iceberg/scan.js';
import type { TableMetadata } from '../iceberg/table-metadata.js';
import type { TableRequirement, TableUpdate } from '../iceberg/table-updates.js';
import type { ViewRequirement, ViewUpdate } from '../iceberg/view-metadata.js';
import type { MetaStore } from '../store/meta-store.js';
import type { FileIO } from '../../storage-creds/file-io.js';
import type { CatalogContext, EntityIdent, Namespace } from './context.js';
import { defaultUuid, MetadataFiles, type CatalogClock, type CatalogDeps, type ProfileFileIOFactory, type SecretSealer } from './deps.js';
import { fileIOForProfile } from '../../storage-creds/storage-profile.js';
import type { LoadedTable, LoadedView } from './loaded.js';
import { EntityLocations, describeConflict, tableClaims } from './locations.js';
import { CatalogLocations, describeWarehouseOverlap } from './catalog-locations.js';
import type { Page, PageRequest } from './paging.js';
import { requireCatalog } from './resolve.js';
import type { CatalogRecord, NamespaceRecord } from './store.js';
import * as catalogs from './operations/catalogs/index.js';
import * as commit from './operations/tables/commit.js';
import * as namespaces from './operations/namespaces/index.js';
import * as rename from './operations/rename.js';
import * as tables from './operations/tables/index.js';
import * as views from './operations/views/index.js';

export type { CreateCatalogRequest } from './operations/catalogs/index.js';
export type { TableChange } from './operations/tables/commit.js';
export type { NamespacePropertiesChange } from './operations/namespaces/index.js';
export type { CreateTableRequest, RegisterTableRequest } from './operations/tables/index.js';
export type { CreateViewRequest } from './operations/views/index.js';

export interface CatalogServiceOptions {
  readonly store: MetaStore;
  /** Storage reachable from this server; each catalog sees it through its location remappings. */
  readonly io: FileIO;
  readonly clock?: CatalogClock;
  /** UUID source (tests may make it deterministic). */
  readonly newUuid?: () => string;
  /** Parsed metadata files kept in memory (they are immutable, so never stale). */
  readonly cacheEntries?: number;
  /** Seals storage-profile keys at rest (the server's key); without it profiles with keys are refused. */
  readonly secrets?: SecretSealer;
  /** Builds a storage profile's FileIO (default: the S3 FileIO with the SDK's retries). */
  readonly profileIO?: ProfileFileIOFactory;
}

export class CatalogService {
  readonly deps: CatalogDeps;

  constructor(options: CatalogServiceOptions) {
    const profileIO = options.profileIO ?? fileIOForProfile;
    const files = new MetadataFiles(options.io, options.cacheEntries, options.secrets, profileIO);
    this.deps = {
      store: options.store,
      clock: options.clock ?? { now: () => Date.now() },
      io: options.io,
      files,
      newUuid: options.newUuid ?? defaultUuid,
      secrets: options.secrets,
      profileIO,
      locations: new EntityLocations(options.store, files),
      catalogLocations: new CatalogLocations(options.store),
    };
  }

  /** Closes the object-store clients of catalogs with storage profiles. */
  close(): void {
    this.deps.files.close();
  }

  // Catalogs ------------------------------------------------------------------------------

  listCatalogs(ctx: CatalogContext): Promise<readonly CatalogRecord[]> {
    return catalogs.listCatalogs(this.deps, ctx);
  }
  createCatalog(ctx: CatalogContext, request: catalogs.CreateCatalogRequest): Promise<CatalogRecord> {
    return catalogs.createCatalog(this.deps, ctx, request);
  }
  loadCatalog(ctx: CatalogContext, name: string): Promise<CatalogRecord> {
    return catalogs.loadCatalog(this.deps, ctx, name);
  }
  dropCatalog(ctx: CatalogContext, name: string): Promise<void> {
    return catalogs.dropCatalog(this.deps, ctx, name);
  }
  /** A catalog from the operator file: created when missing, its storage checked (and updated) when present. */
  declareCatalog(ctx: CatalogContext, request: catalogs.CreateCatalogRequest): Promise<catalogs.DeclaredCatalogOutcome> {
    return catalogs.declareCatalog(this.deps, ctx, request);
  }
  /** First start: catalog `default` of the tenant, warehouse under the data directory. */
  ensureDefaultCatalog(tenantId: string, warehouseLocation: string): Promise<void> {
    return catalogs.ensureDefaultCatalog(this.deps, tenantId, warehouseLocation);
  }
  /** The FileIO through which `catalog`'s tables are read and written (remappings applied). */
  async fileIOFor(ctx: CatalogContext, catalog: string): Promise<FileIO> {
    return this.deps.files.ioFor(await requireCatalog(this.deps.store, ctx, catalog));
  }

  /**
   * Plans a scan of a table of `catalog` (a record the caller loaded for this request): its
   * snapshot's manifest entries come from the catalog's cache of immutable manifest lists.
   */
  planScan(catalog: CatalogRecord, metadata: TableMetadata, selector?: SnapshotSelector): Promise<ScanPlan> {
    return planScan(metadata, this.deps.files.ioFor(catalog), selector, (io, snapshot) => this.deps.files.liveEntries(catalog, io, snapshot));
  }

  // Namespaces ----------------------------------------------------------------------------

  listNamespaces(ctx: CatalogContext, catalog: string, parent?: Namespace, page?: PageRequest): Promise<Page<Namespace>> {
    return namespaces.listNamespaces(this.deps, ctx, catalog, parent, page);
  }
  createNamespace(ctx: CatalogContext, catalog: string, ns: Namespace, properties?: ReadonlyMap<string, string>): Promise<NamespaceRecord> {
    return namespaces.createNamespace(this.deps, ctx, catalog, ns, properties);
  }
  loadNamespace(ctx: CatalogContext, catalog: string, ns: Namespace): Promise<NamespaceRecord> {
    return namespaces.loadNamespace(this.deps, ctx, catalog, ns);
  }
  namespaceExists(ctx: CatalogContext, catalog: string, ns: Namespace): Promise<boolean> {
    return namespaces.namespaceExists(this.deps, ctx, catalog, ns);
  }
  dropNamespace(ctx: CatalogContext, catalog: string, ns: Namespace): Promise<void> {
    return namespaces.dropNamespace(this.deps, ctx, catalog, ns);
  }
  updateNamespaceProperties(ctx: CatalogContext, catalog: string, ns: Namespace, removals: readonly string[], updates: ReadonlyMap<string, string>): Promise<namespaces.NamespacePropertiesChange> {
    return namespaces.updateNamespaceProperties(this.deps, ctx, catalog, ns, removals, updates);
  }

  // Tables --------------------------------------------------------------------------------

  listTables(ctx: CatalogContext, catalog: string, ns: Namespace, page?: PageRequest): Promise<Page<EntityIdent>> {
    return tables.listTables(this.deps, ctx, catalog, ns, page);
  }
  createTable(ctx: CatalogContext, catalog: string, ns: Namespace, request: tables.CreateTableRequest): Promise<LoadedTable> {
    return tables.createTable(this.deps, ctx, catalog, ns, request);
  }
  loadTable(ctx: CatalogContext, catalog: string, ident: EntityIdent): Promise<LoadedTable> {
    return tables.loadTable(this.deps, ctx, catalog, ident);
  }
  tableExists(ctx: CatalogContext, catalog: string, ident: EntityIdent): Promise<boolean> {
    return tables.tableExists(this.deps, ctx, catalog, ident);
  }
  /** The one commit path: requirements checked and updates applied under the row lock. */
  commitTable(ctx: CatalogContext, catalog: string, ident: EntityIdent, requirements: readonly TableRequirement[], updates: readonly TableUpdate[], duringCommit?: commit.DuringCommit): Promise<LoadedTable> {
    return commit.commitTable(this.deps, ctx, catalog, { ident, requirements, updates }, duringCommit);
  }
  /** Atomic commit across tables: all or nothing. */
  commitTransaction(ctx: CatalogContext, catalog: string, changes: readonly commit.TableChange[]): Promise<readonly LoadedTable[]> {
    return commit.commitTables(this.deps, ctx, catalog, changes);
  }
  dropTable(ctx: CatalogContext, catalog: string, ident: EntityIdent, options?: { readonly purge?: boolean }): Promise<void> {
    return tables.dropTable(this.deps, ctx, catalog, ident, options);
  }
  renameTable(ctx: CatalogContext, catalog: string, source: EntityIdent, destination: EntityIdent): Promise<void> {
    return rename.renameEntity(this.deps, ctx, catalog, 'table', source, destination);
  }
  registerTable(ctx: CatalogContext, catalog: string, ns: Namespace, request: tables.RegisterTableRequest): Promise<LoadedTable> {
    return tables.registerTable(this.deps, ctx, catalog, ns, request);
  }
  /**
   * Why credentials or signatures must not cover the table's locations (its catalog's warehouse
   * overlaps another catalog's; one of them is the warehouse root, a namespace's folder, or
   * overlaps another table's or view's location), or undefined when they may. For vending and
   * signing: a catalog or table stored before the rules may still have such a location.
   */
  async locationConflict(catalog: CatalogRecord, ident: EntityIdent, metadata: TableMetadata): Promise<string | undefined> {
    const overlap = await this.deps.catalogLocations.overlapOf(catalog);
    if (overlap !== undefined) return describeWarehouseOverlap(catalog.warehouseLocation, overlap);
    const conflict = await this.deps.locations.conflictOf(catalog, ident, tableClaims(metadata));
    return conflict === undefined ? undefined : describeConflict('table', conflict);
  }
  reportMetrics(ctx: CatalogContext, catalog: string, ident: EntityIdent, reportType: string, report: JsonValue): Promise<void> {
    return tables.reportMetrics(this.deps, ctx, catalog, ident, reportType, report);
  }

  // Views ---------------------------------------------------------------------------------

  listViews(ctx: CatalogContext, catalog: string, ns: Namespace, page?: PageRequest): Promise<Page<EntityIdent>> {
    return views.listViews(this.deps, ctx, catalog, ns, page);
  }
  createView(ctx: CatalogContext, catalog: string, ns: Namespace, request: views.CreateViewRequest): Promise<LoadedView> {
    return views.createView(this.deps, ctx, catalog, ns, request);
  }
  loadView(ctx: CatalogContext, catalog: string, ident: EntityIdent): Promise<LoadedView> {
    return views.loadView(this.deps, ctx, catalog, ident);
  }
  viewExists(ctx: CatalogContext, catalog: string, ident: EntityIdent): Promise<boolean> {
    return views.viewExists(this.deps, ctx, catalog, ident);
  }
  replaceView(ctx: CatalogContext, catalog: string, ident: EntityIdent, requirements: readonly ViewRequirement[], updates: readonly ViewUpdate[]): Promise<LoadedView> {
    return views.replaceView(this.deps, ctx, catalog, ident, requirements, updates);
  }
  dropView(ctx: CatalogContext, catalog: string, ident: EntityIdent): Promise<void> {
    return views.dropView(this.deps, ctx, catalog, ident);
  }
  renameView(ctx: CatalogContext, catalog: string, source: EntityIdent, destination: EntityIdent): Promise<void> {
    return rename.renameEntity(this.deps, ctx, catalog, 'view', source, destination);
  }
}
