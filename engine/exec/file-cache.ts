/**
 * The read-through cache of data files that live on object storage. DuckDB here reads local files
 * only (no `httpfs`), so before a fragment runs, every object-store file it reads is fetched into a
 * local folder. Iceberg never rewrites a data file in place (a write makes a new name), so a cached
 * copy keyed by location and size stays valid; a file replaced behind Floe's back under the same
 * name with another size is a different key and is fetched again, never served stale. Where the
 * store tags objects with a version (S3 ETags), the copy also remembers the tag it was fetched with
 * and a hit is checked against the object's current tag (one HEAD, no bytes): a file rewritten in
 * place, even at its old size, is fetched again.
 *
 * The budget (`maxBytes`) bounds the bytes the cache holds on disk at every moment, counting files
 * being fetched: room is made by evicting unpinned files, least recently used first. Files a running
 * query reads are pinned until it releases its lease. When pinned files leave no room, a query's
 * file is fetched into the query's own scratch folder instead (outside the cache, deleted at release),
 * so a query over more data than the budget still completes and the cache never exceeds its budget.
 *
 * Fetches run concurrently (at most `concurrency` at once), smallest files first (footers and small
 * files make a query start sooner), and a file wanted by several queries is fetched once.
 */
import { mkdirSync, rmSync } from 'node:fs';
import { mkdtemp, rename, rm, writeFile } from 'node:fs/promises';
import { createHash } from 'node:crypto';
import * as path from 'node:path';
import { floeError } from '../../grammar/errors.js';

/** A fetched object's bytes and the version tag (S3 ETag) they had, when the store has tags. */
export interface FetchedFile {
  readonly bytes: Uint8Array;
  readonly version: string | undefined;
}

/** Where a file's bytes come from (a FileIO's `read`, or `readVersioned` where the store tags objects). */
export type FetchFile = (location: string) => Promise<Uint8Array | FetchedFile>;

/** The object's current version tag without its bytes (S3 HeadObject), to check a cached copy against. */
export type CurrentVersion = (location: string) => Promise<string | undefined>;

export interface FileCacheOptions {
  /** Folder for cached files (created; its previous content is discarded at start). */
  readonly directory: string;
  /** Most bytes held on disk by the cache, fetching included. */
  readonly maxBytes: number;
  /** Most fetches in flight across all queries. */
  readonly concurrency?: number;
  /** Check a hit's version tag against the object before serving it (default true). */
  readonly verifyVersions?: boolean;
}

/** A file a query wants: where it lives and its size as the manifest says. */
export interface WantedFile {
  readonly location: string;
  readonly size: number;
}

/** What the cache has done since it started. */
export interface FileCacheStats {
  readonly hits: number;
  readonly misses: number;
  readonly bytesFetched: number;
  readonly evictions: number;
  /** Files fetched outside the cache because pinned files left no room. */
  readonly bypasses: number;
  /** Cached copies found replaced in storage (another version tag) and fetched again. */
  readonly staleRefetches: number;
  readonly residentBytes: number;
  /** Highest `residentBytes` ever seen (the budget check in tests). */
  readonly peakResidentBytes: number;
  readonly maxBytes: number;
}

/** The local paths of one query's files; `release` unpins them (and deletes bypass copies). */
export interface FileLease {
  /** Location → local path, for every wanted file. */
  readonly paths: ReadonlyMap<string, string>;
  /** Bytes this lease caused to be fetched from storage (history's `bytes_scanned`, cache hits apart). */
  readonly bytesFetched: number;
  release(): Promise<void>;
}

interface Entry {
  readonly key: string;
  readonly location: string;
  readonly size: number;
  readonly path: string;
  pins: number;
  lastUsed: number;
  /** The version tag the copy was fetched with (undefined: the store has none). */
  version: string | undefined;
  /** Replaced in storage: out of the index, its file goes when the last lease lets go. */
  stale: boolean;
  /** The version check in flight, shared by the leases that want the copy meanwhile. */
  checking?: Promise<string | undefined> | undefined;
  /** Settles when the file is on disk (rejects when the fetch failed; the entry is then gone). */
  ready: Promise<void>;
}

export class FileCache {
  readonly #entries = new Map<string, Entry>();
  readonly #waiting: (() => void)[] = [];
  #resident = 0;
  #peak = 0;
  #tick = 0;
  #active = 0;
  #hits = 0;
  #misses = 0;
  #fetched = 0;
  #evictions = 0;
  #bypasses = 0;
  #staleRefetches = 0;
  readonly #dir: string;
  readonly #scratch: string;
  readonly #max: number;
  readonly #concurrency: number;
  #verify: boolean;

  constructor(options: FileCacheOptions) {
    this.#dir = path.join(options.directory, 'files');
    this.#scratch = path.join(options.directory, 'scratch');
    rmSync(options.directory, { recursive: true, force: true });
    mkdirSync(this.#dir, { recursive: true });
    mkdirSync(this.#scratch, { recursive: true });
    this.#max = Math.max(0, Math.floor(options.maxBytes));
    this.#concurrency = Math.max(1, options.concurrency ?? 8);
    this.#verify = options.verifyVersions ?? true;
  }

  stats(): FileCacheStats {
    return {
      hits: this.#hits, misses: this.#misses, bytesFetched: this.#fetched, evictions: this.#evictions, bypasses: this.#bypasses, staleRefetches: this.#staleRefetches,
      residentBytes: this.#resident, peakResidentBytes: this.#peak, maxBytes: this.#max,
    };
  }

  /**
   * Fetches (or finds) every file and pins it until `release`. With `currentVersion`, a cached copy
   * fetched with a version tag is served only while the object still has that tag. Rejects if a
   * fetch fails (nothing stays pinned).
   */
  async acquire(files: readonly WantedFile[], fetch: FetchFile, currentVersion?: CurrentVersion): Promise<FileLease> {
    const unique = new Map<string, WantedFile>();
    for (const f of files) unique.set(keyOf(f), f);
    const pinned: Entry[] = [];
    const bypassed: string[] = [];
    const paths = new Map<string, string>();
    let fetchedHere = 0;
    let scratch: Promise<string> | undefined;
    const release = async (): Promise<void> => {
      for (const e of pinned.splice(0)) this.#unpin(e);
      this.#wake();
      if (scratch !== undefined) await rm(await scratch, { recursive: true, force: true });
      bypassed.length = 0;
    };
    /** A cached copy this lease may serve: still the object's version (or the store has no versions). */
    const current = async (e: Entry): Promise<boolean> => {
      if (!this.#verify || currentVersion === undefined || e.version === undefined || e.stale) return !e.stale;
      // Scans of one statement (a self-join) and concurrent statements share a check in flight.
      e.checking ??= this.#withSlot(() => currentVersion(e.location)).finally(() => {
        e.checking = undefined;
      });
      const now = await e.checking;
      if (now === e.version) return true;
      // Rewritten in place behind Iceberg's back: never served again; readers holding it finish first.
      if (!e.stale) {
        e.stale = true;
        this.#staleRefetches++;
        if (this.#entries.get(e.key) === e) this.#entries.delete(e.key);
      }
      return false;
    };
    try {
      // Smallest first: they finish soonest, and a query's small files are often all it needs first.
      const ordered = [...unique.values()].sort((a, b) => a.size - b.size);
      await Promise.all(ordered.map(async (f) => {
        const key = keyOf(f);
        // A copy found stale leaves the index; look again (another lease may have fetched it anew).
        for (let found = this.#entries.get(key); found !== undefined; found = this.#entries.get(key)) {
          found.pins++;
          pinned.push(found);
          await found.ready;
          if (await current(found)) {
            this.#hits++;
            paths.set(f.location, found.path);
            return;
          }
          pinned.splice(pinned.indexOf(found), 1);
          this.#unpin(found);
        }
        this.#misses++;
        if (this.#makeRoom(f.size)) {
          // A fresh file name per copy: a stale copy may still be open by the queries pinning it.
          const e: Entry = {
            key, location: f.location, size: f.size, path: path.join(this.#dir, `${++this.#tick}-${key}`), pins: 1, lastUsed: this.#tick,
            version: undefined, stale: false, ready: Promise.resolve(),
          };
          this.#entries.set(key, e);
          this.#resident += f.size;
          this.#peak = Math.max(this.#peak, this.#resident);
          pinned.push(e);
          e.ready = this.#fetchTo(f, e.path, fetch).then((got) => {
            fetchedHere += got.bytes;
            e.version = got.version;
          }, (err: unknown) => {
            // Out of the index; its reserved bytes are freed when the leases waiting on it let go.
            if (this.#entries.get(key) === e) this.#entries.delete(key);
            e.stale = true;
            throw err;
          });
          await e.ready;
          paths.set(f.location, e.path);
          return;
        }
        // No room while other queries hold their files: this query's own copy, outside the budget.
        this.#bypasses++;
        // One folder per lease, made once even when several files bypass at the same time.
        scratch ??= mkdtemp(path.join(this.#scratch, 'q-'));
        const target = path.join(await scratch, key);
        fetchedHere += (await this.#fetchTo(f, target, fetch)).bytes;
        bypassed.push(target);
        paths.set(f.location, target);
      }));
    } catch (e) {
      await release();
      throw e;
    }
    return { paths, bytesFetched: fetchedHere, release };
  }

  /** One lease lets go of `e`; the last one out of a stale copy removes it and frees its bytes. */
  #unpin(e: Entry): void {
    e.pins--;
    e.lastUsed = ++this.#tick;
    if (e.stale && e.pins === 0) {
      this.#resident -= e.size;
      rmSync(e.path, { force: true });
    }
  }

  /** Evicts unpinned files until `size` more bytes fit; false when pinned files leave no room. */
  #makeRoom(size: number): boolean {
    if (size > this.#max) return false;
    if (this.#resident + size <= this.#max) return true;
    const victims = [...this.#entries.values()].filter((e) => e.pins === 0).sort((a, b) => a.lastUsed - b.lastUsed);
    let free = this.#max - this.#resident;
    const chosen: Entry[] = [];
    for (const v of victims) {
      if (free >= size) break;
      chosen.push(v);
      free += v.size;
    }
    if (free < size) return false;
    for (const v of chosen) {
      this.#entries.delete(v.key);
      this.#resident -= v.size;
      this.#evictions++;
      // Unpinned means no query reads it; the file goes now (a failed unlink only wastes disk).
      rmSync(v.path, { force: true });
    }
    return true;
  }

  async #fetchTo(f: WantedFile, target: string, fetch: FetchFile): Promise<{ bytes: number; version: string | undefined }> {
    // The write stays inside the slot: at most `concurrency` fetched files are in memory at once.
    return this.#withSlot(async () => {
      const got = await fetch(f.location);
      const { bytes, version } = got instanceof Uint8Array ? { bytes: got, version: undefined } : got;
      if (bytes.byteLength !== f.size) {
        throw floeError('DATA_FILE_CHANGED', { location: f.location, bytes: bytes.byteLength, expected: f.size });
      }
      // Written under a temporary name and renamed: a reader never sees half a file.
      const tmp = `${target}.${process.pid}.${++this.#tick}.part`;
      await writeFile(tmp, bytes);
      await rename(tmp, target);
      this.#fetched += bytes.byteLength;
      return { bytes: bytes.byteLength, version };
    });
  }

  /** Runs one storage request within the `concurrency` bound. */
  async #withSlot<T>(request: () => Promise<T>): Promise<T> {
    await this.#slot();
    try {
      return await request();
    } finally {
      this.#active--;
      this.#wake();
    }
  }

  async #slot(): Promise<void> {
    while (this.#active >= this.#concurrency) await new Promise<void>((resolve) => this.#waiting.push(resolve));
    this.#active++;
  }

  #wake(): void {
    const next = this.#waiting.shift();
    if (next !== undefined) next();
  }

  /** Turns the version check of hits on or off (the benchmark measures both in one run). */
  set verifyVersions(on: boolean) {
    this.#verify = on;
  }

  /** Evicts every copy no running statement holds (an empty cache, for cold-cache measurements). */
  evictAll(): void {
    for (const e of [...this.#entries.values()]) {
      if (e.pins !== 0) continue;
      this.#entries.delete(e.key);
      this.#resident -= e.size;
      this.#evictions++;
      rmSync(e.path, { force: true });
    }
  }

  /** Removes every cached file (server shutdown). */
  close(): void {
    rmSync(path.dirname(this.#dir), { recursive: true, force: true });
    this.#entries.clear();
    this.#resident = 0;
  }
}

/** The cache key of a file: its location and size (a different size is a different file). */
function keyOf(f: WantedFile): string {
  const ext = /\.[A-Za-z0-9]{1,10}$/.exec(f.location)?.[0] ?? '';
  return `${createHash('sha256').update(`${f.location}\n${f.size}`).digest('hex').slice(0, 40)}${ext}`;
}
