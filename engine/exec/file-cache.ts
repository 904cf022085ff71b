/**
 * The read-through cache of data files that live on object storage. DuckDB here reads local files
 * only (no `httpfs`), so before a fragment runs, every object-store file it reads is fetched into a
 * local folder. Iceberg never rewrites a data file in place (a write makes a new name), so a cached
 * copy keyed by location and size stays valid; a file replaced behind Floe's back under the same
 * name with another size is a different key and is fetched again, never served stale.
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

/** Where a file's bytes come from (a FileIO's `read`). */
export type FetchFile = (location: string) => Promise<Uint8Array>;

export interface FileCacheOptions {
  /** Folder for cached files (created; its previous content is discarded at start). */
  readonly directory: string;
  /** Most bytes held on disk by the cache, fetching included. */
  readonly maxBytes: number;
  /** Most fetches in flight across all queries. */
  readonly concurrency?: number;
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
  readonly #dir: string;
  readonly #scratch: string;
  readonly #max: number;
  readonly #concurrency: number;

  constructor(options: FileCacheOptions) {
    this.#dir = path.join(options.directory, 'files');
    this.#scratch = path.join(options.directory, 'scratch');
    rmSync(options.directory, { recursive: true, force: true });
    mkdirSync(this.#dir, { recursive: true });
    mkdirSync(this.#scratch, { recursive: true });
    this.#max = Math.max(0, Math.floor(options.maxBytes));
    this.#concurrency = Math.max(1, options.concurrency ?? 8);
  }

  stats(): FileCacheStats {
    return {
      hits: this.#hits, misses: this.#misses, bytesFetched: this.#fetched, evictions: this.#evictions, bypasses: this.#bypasses,
      residentBytes: this.#resident, peakResidentBytes: this.#peak, maxBytes: this.#max,
    };
  }

  /** Fetches (or finds) every file and pins it until `release`. Rejects if a fetch fails (nothing stays pinned). */
  async acquire(files: readonly WantedFile[], fetch: FetchFile): Promise<FileLease> {
    const unique = new Map<string, WantedFile>();
    for (const f of files) unique.set(keyOf(f), f);
    const pinned: Entry[] = [];
    const bypassed: string[] = [];
    const paths = new Map<string, string>();
    let fetchedHere = 0;
    let scratch: Promise<string> | undefined;
    const release = async (): Promise<void> => {
      for (const e of pinned.splice(0)) {
        e.pins--;
        e.lastUsed = ++this.#tick;
      }
      this.#wake();
      if (scratch !== undefined) await rm(await scratch, { recursive: true, force: true });
      bypassed.length = 0;
    };
    try {
      // Smallest first: they finish soonest, and a query's small files are often all it needs first.
      const ordered = [...unique.values()].sort((a, b) => a.size - b.size);
      await Promise.all(ordered.map(async (f) => {
        const key = keyOf(f);
        let entry = this.#entries.get(key);
        if (entry !== undefined) {
          entry.pins++;
          pinned.push(entry);
          this.#hits++;
          await entry.ready;
          paths.set(f.location, entry.path);
          return;
        }
        this.#misses++;
        if (this.#makeRoom(f.size)) {
          entry = { key, location: f.location, size: f.size, path: path.join(this.#dir, key), pins: 1, lastUsed: ++this.#tick, ready: Promise.resolve() };
          const e = entry;
          this.#entries.set(key, e);
          this.#resident += f.size;
          this.#peak = Math.max(this.#peak, this.#resident);
          pinned.push(e);
          e.ready = this.#fetchTo(f, e.path, fetch).then((n) => {
            fetchedHere += n;
          }, (err: unknown) => {
            this.#entries.delete(key);
            this.#resident -= f.size;
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
        fetchedHere += await this.#fetchTo(f, target, fetch);
        bypassed.push(target);
        paths.set(f.location, target);
      }));
    } catch (e) {
      await release();
      throw e;
    }
    return { paths, bytesFetched: fetchedHere, release };
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

  async #fetchTo(f: WantedFile, target: string, fetch: FetchFile): Promise<number> {
    await this.#slot();
    try {
      const bytes = await fetch(f.location);
      if (bytes.byteLength !== f.size) {
        throw new Error(`${f.location} has ${bytes.byteLength} bytes, the manifest says ${f.size}: the file was replaced outside Iceberg`);
      }
      // Written under a temporary name and renamed: a reader never sees half a file.
      const tmp = `${target}.${process.pid}.${++this.#tick}.part`;
      await writeFile(tmp, bytes);
      await rename(tmp, target);
      this.#fetched += bytes.byteLength;
      return bytes.byteLength;
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
