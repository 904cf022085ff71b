/**
 * What the catalog operations work with, built once per server (`CatalogService`) and passed to
 * every operation: the store, the clock, the FileIO that reaches storage, and caches of immutable
 * metadata files. No module-level state: tests build many services in one process.
 */
import { randomUUID } from 'node:crypto';
import type { MetaStore } from '../store/meta-store.js';
import { remapLocations, routeBySchemes, type FileIO } from '../../storage-creds/file-io.js';
import { fileIOForProfile, profileSchemes, type ProfileFileIO, type StorageProfile, type StorageSecret } from '../../storage-creds/storage-profile.js';
import { metadataBytes, metadataText, parseTableMetadata, serializeTableMetadata, type TableMetadata } from '../iceberg/table-metadata.js';
import { parseViewMetadata, serializeViewMetadata, type ViewMetadata } from '../iceberg/view-metadata.js';
import { loadLiveEntries, type LiveEntries } from '../iceberg/scan.js';
import type { Snapshot } from '../iceberg/snapshot.js';
import { assertStorableText } from './context.js';
import type { EntityLocations } from './locations.js';
import type { CatalogLocations } from './catalog-locations.js';
import type { CatalogRecord } from './store.js';

export interface CatalogClock {
  now(): number;
}

/**
 * Seals and opens stored secrets under the server key (the principals' `SecretBox` satisfies it);
 * injected, so the catalog never holds a key itself.
 */
export interface SecretSealer {
  seal(plaintext: string, purpose: string): string;
  open(sealed: string, purpose: string): string;
}

/** The sealing purpose of a catalog's storage secret: a sealed value moved to another row does not open. */
export function storageSecretPurpose(catalogId: string): string {
  return `storage-profile:${catalogId}`;
}

/** Builds the FileIO of a storage profile (injectable so tests can tune retries). */
export type ProfileFileIOFactory = (profile: StorageProfile, secret: StorageSecret | null) => ProfileFileIO;

export interface CatalogDeps {
  readonly store: MetaStore;
  readonly clock: CatalogClock;
  /** Storage for every scheme the deployment serves; catalogs wrap it with their remappings. */
  readonly io: FileIO;
  readonly files: MetadataFiles;
  readonly newUuid: () => string;
  /** Seals storage-profile keys; without it, catalogs with keys in their profile are refused. */
  readonly secrets: SecretSealer | undefined;
  readonly profileIO: ProfileFileIOFactory;
  /** Where tables and views keep their files: the overlap checks (docs/catalog.md "Table locations"). */
  readonly locations: EntityLocations;
  /** Whether a catalog's warehouse overlaps another catalog's, for vending and signing (docs/catalog.md "Catalog locations"). */
  readonly catalogLocations: CatalogLocations;
}

/**
 * A small least-recently-used map, bounded by entry count and by total weight (bytes, for
 * metadata): a catalog with a few huge tables must not hold gigabytes. Metadata files are
 * immutable once written (a commit writes a new file), so a cache keyed by location never serves
 * stale content.
 */
export class LruCache<K, V> {
  private readonly map = new Map<K, { readonly value: V; readonly weight: number }>();
  private totalWeight = 0;

  constructor(
    private readonly capacity: number,
    private readonly maxWeight: number = Number.POSITIVE_INFINITY,
  ) {}

  get(key: K): V | undefined {
    const e = this.map.get(key);
    if (e !== undefined) {
      this.map.delete(key);
      this.map.set(key, e);
    }
    return e?.value;
  }

  set(key: K, value: V, weight = 1): void {
    this.delete(key);
    if (weight > this.maxWeight) return;
    this.map.set(key, { value, weight });
    this.totalWeight += weight;
    while (this.map.size > this.capacity || this.totalWeight > this.maxWeight) this.delete(this.map.keys().next().value as K);
  }

  private delete(key: K): void {
    const e = this.map.get(key);
    if (e === undefined) return;
    this.map.delete(key);
    this.totalWeight -= e.weight;
  }

  get size(): number {
    return this.map.size;
  }
}

/** Bytes of metadata text kept per cache (parsed objects are a few times their text). */
export const METADATA_CACHE_BYTES = 64 * 1024 * 1024;

/** Reads and writes metadata files through a catalog's FileIO, with a cache of parsed files. */
export class MetadataFiles {
  private readonly tables: LruCache<string, TableMetadata>;
  private readonly views: LruCache<string, ViewMetadata>;
  /** Serialized REST bodies by (catalog, location, variant): loadTable answers from here. */
  readonly responses: LruCache<string, string>;
  /** Decoded live manifest entries by (catalog, manifest list): what a scan of a snapshot plans from. */
  private readonly entries: LruCache<string, LiveEntries>;

  /** Object-store FileIOs of catalogs with a storage profile, by catalog id (profiles never change). */
  private readonly profileStorage = new Map<string, { readonly io: FileIO; readonly client: ProfileFileIO }>();

  constructor(
    private readonly io: FileIO,
    capacity = 2048,
    private readonly secrets: SecretSealer | undefined = undefined,
    private readonly profileIO: ProfileFileIOFactory = fileIOForProfile,
  ) {
    this.tables = new LruCache(capacity, METADATA_CACHE_BYTES);
    this.views = new LruCache(capacity, METADATA_CACHE_BYTES);
    this.responses = new LruCache(capacity, METADATA_CACHE_BYTES);
    this.entries = new LruCache(capacity, METADATA_CACHE_BYTES);
  }

  /**
   * A snapshot's live manifest entries, read once per catalog: a manifest list and its manifests
   * are immutable (a commit writes new ones), so the entries of a manifest list never change; a
   * query over a small table spent more on reading and decoding them than on the rest of planning.
   * Weighed at ≈ 1 KB an entry (a decoded entry with its bounds).
   */
  async liveEntries(catalog: CatalogRecord, io: FileIO, snapshot: Snapshot): Promise<LiveEntries> {
    const key = `${catalog.id} ${snapshot.manifestList}`;
    const cached = this.entries.get(key);
    if (cached !== undefined) return cached;
    const live = await loadLiveEntries(io, snapshot);
    this.entries.set(key, live, 1024 * Math.max(1, live.length));
    return live;
  }

  /**
   * The FileIO of a catalog: its object store for the profile's schemes (`s3://`, `abfss://`, …) when it has a storage profile,
   * the deployment's storage for the rest, seen through the catalog's location remappings.
   */
  ioFor(catalog: CatalogRecord): FileIO {
    return remapLocations(this.storageOf(catalog), catalog.locationMappings);
  }

  private storageOf(catalog: CatalogRecord): FileIO {
    const profile = catalog.storageProfile;
    if (profile === null) return this.io;
    const known = this.profileStorage.get(catalog.id);
    if (known !== undefined) return known.io;
    let secret: StorageSecret | null = null;
    if (catalog.storageSecretSealed !== null) {
      if (this.secrets === undefined) throw new Error('catalog storage secrets cannot be opened: no server key');
      secret = JSON.parse(this.secrets.open(catalog.storageSecretSealed, storageSecretPurpose(catalog.id))) as StorageSecret;
    }
    const client = this.profileIO(profile, secret);
    const io = routeBySchemes(new Map([...profileSchemes(profile)].map((s) => [s, client])), this.io);
    this.profileStorage.set(catalog.id, { io, client });
    return io;
  }

  /** Closes a dropped catalog's object-store connections. */
  forgetCatalog(catalogId: string): void {
    this.profileStorage.get(catalogId)?.client.destroy();
    this.profileStorage.delete(catalogId);
  }

  /** Closes every object-store client (server shutdown). */
  close(): void {
    for (const id of [...this.profileStorage.keys()]) this.forgetCatalog(id);
  }

  async readTable(catalog: CatalogRecord, location: string): Promise<TableMetadata> {
    const key = `${catalog.id} ${location}`;
    const cached = this.tables.get(key);
    if (cached !== undefined) return cached;
    const text = metadataText(await this.ioFor(catalog).read(location));
    const m = parseTableMetadata(text);
    this.tables.set(key, m, text.length);
    return m;
  }

  /** Writes a new metadata file (create-if-absent, so a file is never replaced); returns its text. */
  async writeTable(catalog: CatalogRecord, location: string, m: TableMetadata): Promise<string> {
    assertStorableText(location, 'location');
    const text = serializeTableMetadata(m);
    await this.ioFor(catalog).write(location, metadataBytes(location, text));
    this.tables.set(`${catalog.id} ${location}`, m, text.length);
    return text;
  }

  async readView(catalog: CatalogRecord, location: string): Promise<ViewMetadata> {
    const key = `${catalog.id} ${location}`;
    const cached = this.views.get(key);
    if (cached !== undefined) return cached;
    const text = metadataText(await this.ioFor(catalog).read(location));
    const m = parseViewMetadata(text);
    this.views.set(key, m, text.length);
    return m;
  }

  async writeView(catalog: CatalogRecord, location: string, m: ViewMetadata): Promise<void> {
    assertStorableText(location, 'location');
    const text = serializeViewMetadata(m);
    await this.ioFor(catalog).write(location, Buffer.from(text, 'utf8'));
    this.views.set(`${catalog.id} ${location}`, m, text.length);
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
