/**
 * What the catalog operations work with, built once per server (`CatalogService`) and passed to
 * every operation: the store, the clock, the FileIO that reaches storage, and caches of immutable
 * metadata files. No module-level state: tests build many services in one process.
 */
import { randomUUID } from 'node:crypto';
import type { MetaStore } from '../store/meta-store.js';
import { remapLocations, type FileIO } from '../../storage-creds/file-io.js';
import { parseTableMetadata, serializeTableMetadata, type TableMetadata } from '../iceberg/table-metadata.js';
import { parseViewMetadata, serializeViewMetadata, type ViewMetadata } from '../iceberg/view-metadata.js';
import type { CatalogRecord } from './store.js';

export interface CatalogClock {
  now(): number;
}

export interface CatalogDeps {
  readonly store: MetaStore;
  readonly clock: CatalogClock;
  /** Storage for every scheme the deployment serves; catalogs wrap it with their remappings. */
  readonly io: FileIO;
  readonly files: MetadataFiles;
  readonly newUuid: () => string;
}

/**
 * A small least-recently-used map. Metadata files are immutable once written (a commit writes a
 * new file), so a cache keyed by location never serves stale content.
 */
export class LruCache<K, V> {
  private readonly map = new Map<K, V>();
  constructor(private readonly capacity: number) {}

  get(key: K): V | undefined {
    const v = this.map.get(key);
    if (v !== undefined) {
      this.map.delete(key);
      this.map.set(key, v);
    }
    return v;
  }

  set(key: K, value: V): void {
    this.map.delete(key);
    this.map.set(key, value);
    if (this.map.size > this.capacity) this.map.delete(this.map.keys().next().value as K);
  }
}

/** Reads and writes metadata files through a catalog's FileIO, with a cache of parsed files. */
export class MetadataFiles {
  private readonly tables: LruCache<string, TableMetadata>;
  private readonly views: LruCache<string, ViewMetadata>;
  /** Serialized REST bodies by (catalog, location, variant): loadTable answers from here. */
  readonly responses: LruCache<string, string>;

  constructor(private readonly io: FileIO, capacity = 2048) {
    this.tables = new LruCache(capacity);
    this.views = new LruCache(capacity);
    this.responses = new LruCache(capacity);
  }

  /** The FileIO of a catalog: the deployment's storage seen through the catalog's location remappings. */
  ioFor(catalog: CatalogRecord): FileIO {
    return remapLocations(this.io, catalog.locationMappings);
  }

  async readTable(catalog: CatalogRecord, location: string): Promise<TableMetadata> {
    const key = `${catalog.id} ${location}`;
    const cached = this.tables.get(key);
    if (cached !== undefined) return cached;
    const text = (await this.ioFor(catalog).read(location)).toString('utf8');
    const m = parseTableMetadata(text);
    this.tables.set(key, m);
    return m;
  }

  /** Writes a new metadata file (create-if-absent, so a file is never replaced). */
  async writeTable(catalog: CatalogRecord, location: string, m: TableMetadata): Promise<void> {
    await this.ioFor(catalog).write(location, Buffer.from(serializeTableMetadata(m), 'utf8'));
    this.tables.set(`${catalog.id} ${location}`, m);
  }

  async readView(catalog: CatalogRecord, location: string): Promise<ViewMetadata> {
    const key = `${catalog.id} ${location}`;
    const cached = this.views.get(key);
    if (cached !== undefined) return cached;
    const m = parseViewMetadata((await this.ioFor(catalog).read(location)).toString('utf8'));
    this.views.set(key, m);
    return m;
  }

  async writeView(catalog: CatalogRecord, location: string, m: ViewMetadata): Promise<void> {
    await this.ioFor(catalog).write(location, Buffer.from(serializeViewMetadata(m), 'utf8'));
    this.views.set(`${catalog.id} ${location}`, m);
  }

  /** Best-effort removal of files a failed commit wrote (they were never referenced). */
  async discard(catalog: CatalogRecord, locations: readonly string[]): Promise<void> {
    const io = this.ioFor(catalog);
    await Promise.all(locations.map((l) => io.delete(l).catch(() => undefined)));
  }
}

export function defaultUuid(): string {
  return randomUUID();
}
