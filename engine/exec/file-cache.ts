/**
 * The read-through cache of data files that live on object storage. DuckDB here reads local files
 * only (no `httpfs`), so before a fragment runs, every object-store file it reads is fetched into a
 * local folder. Iceberg never rewrites a data file in place (a write makes a new name), so a cached
 * copy keyed by location and size stays valid; a file replaced behind Floe's back under the same
 * name with another size is a different key and is fetched again, never served stale. Where the
 * store tags objects with a version (S3 ETags), the copy also remembers the tag it was fetched with
 * and a hit is checked against the object's current tag (one HEAD, no bytes): a file rewritten in
 * place, even at its old size, is fetched again. The check may run before `acquire` answers, or
 * alongside the statement that reads the copy (`checks: 'alongside'`): the lease's `verdict` then
 * says whether what the statement read may leave it (`localizing-executor.ts` reruns it if not).
 *
 * The budget (`maxBytes`) bounds the bytes the cache holds on disk at every moment, counting files
 * being fetched: room is made by evicting unpinned files, least recently used first. Files a running
 * query reads are pinned until it releases its lease. When pinned files leave no room, a query's
 * file is fetched into the query's own scratch folder instead (outside the cache, deleted at release),
 * so a query over more data than the budget still completes and the cache never exceeds its budget.
 *
 * Fetches run concurrently (at most `concurrency` at once), smallest files first (footers and small
 * files make a query start sooner), and a file wanted by several queries is fetched once. A large
 * file is fetched in ranged parts at once (`fetchRange`), which one GET stream would pace.
 *
 * The manifest's size plans the fetch and is reserved from the budget while it runs, but the object
 * as the store holds it now is what is served, whatever its size, exactly as a local file is read
 * in place: some writers' manifests give sizes their files do not have (two Spark tables in
 * ../shared/data). Such a disagreement is counted (`sizeMismatches`) and reported
 * (`onSizeMismatch`). The real size is known before a byte of the object reaches the cache's
 * folder (ranged parts are written only within the manifest's size, and any disagreement sends the
 * fetch to one whole GET, whose bytes are in memory before they are written), and the reservation
 * becomes it then: a smaller object frees the difference, a larger one evicts unpinned copies for
 * it, and when pinned copies leave no room it is not written into the cache at all: every query
 * waiting for it gets its own scratch copy of the bytes fetched (a bypass, as above). So the budget
 * holds even for an object larger than its manifest says. Staleness is the version tag's job,
 * which still guards every hit.
 *
 * Accounting in one place: an entry's `charged` bytes are in `#resident` from its reservation until
 * it is freed (evicted unpinned, or dropped and let go by every lease and by its fetch); a fetch
 * holds its entry (never evicted mid-fetch), a failed fetch frees its reservation when it settles,
 * whoever still pins it, and one not yet sent frees it as soon as no lease wants it. A lease that
 * fails or is cancelled lets go of its pins at once; its work still running pins nothing more.
 */
import { mkdirSync, rmSync } from 'node:fs';
import { mkdtemp, open, rename, rm, writeFile } from 'node:fs/promises';
import { createHash } from 'node:crypto';
import * as path from 'node:path';

/** A fetched object's bytes and the version tag (S3 ETag) they had, when the store has tags. */
export interface FetchedFile {
  readonly bytes: Uint8Array;
  readonly version: string | undefined;
}

/** Where a file's bytes come from (a FileIO's `read`, or `readVersioned` where the store tags objects). */
export type FetchFile = (location: string) => Promise<Uint8Array | FetchedFile>;

/** A byte range, its version tag and the whole object's size (S3 ranged GET: `ETag`, `Content-Range`). */
export type FetchRange = (location: string, offset: number, length: number) => Promise<FetchedFile & { readonly objectSize: number | undefined }>;

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
  /** Most version checks (HEADs, no bytes) in flight at once; default 4 × `concurrency`. */
  readonly checkConcurrency?: number;
  /** Size of one ranged part (default 8 MiB); files of at least twice it are fetched in ranges. */
  readonly partBytes?: number;
  /** Told when a fetched object's size is not the manifest's (the server logs a warning). */
  readonly onSizeMismatch?: (mismatch: SizeMismatch) => void;
}

/** A fetched object whose size is not the one its manifest gives (it is served as it is). */
export interface SizeMismatch {
  readonly location: string;
  readonly manifestBytes: number;
  readonly objectBytes: number;
}

/** How `acquire` treats the version checks of cached copies. */
export interface AcquireOptions {
  /**
   * `before` (the default): every check has answered before `acquire` resolves, and a copy found
   * replaced is fetched again, so the lease serves only current copies. `alongside`: cached copies
   * are served at once and their checks run in the background; `FileLease.verdict` says whether all
   * were still current. The caller must not let anything leave the statement (rows, uploads) before
   * the verdict is `current`; on `stale` it releases and acquires again (the stale copy is gone from
   * the index, so it is fetched anew). This takes the HEAD round trip off a warm statement's path.
   */
  readonly checks?: 'before' | 'alongside';
  /**
   * Ranged reads: a file of at least `rangedFromBytes` is fetched in parts of `partBytes` at once
   * (each in a fetch slot), written in place into its copy, instead of one GET that one stream
   * paces. The parts' version tags must agree (else the whole object is fetched in one GET).
   */
  readonly fetchRange?: FetchRange;
  /**
   * The statement's cancellation (or timeout): when it aborts, `acquire` rejects at once with the
   * signal's reason and the lease's pins go. A fetch the lease started goes on for any other lease
   * that wants the file, or into the cache as an unpinned copy; one still waiting for its slot when
   * nobody wants it any more is dropped at once, its reservation freed, and never sent.
   */
  readonly signal?: AbortSignal;
}

/** Whether the cached copies a lease serves are still the objects' current versions. */
export type LeaseVerdict =
  | { readonly kind: 'current' }
  /** A copy was replaced in storage (another version tag): what was read from it must be thrown away. */
  | { readonly kind: 'stale'; readonly location: string }
  /** A check failed (the object is gone, the store did not answer): the statement fails with it. */
  | { readonly kind: 'failed'; readonly error: unknown };

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
  /** Fetched objects whose size was not the manifest's (served as the store holds them). */
  readonly sizeMismatches: number;
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
  /**
   * Settles (never rejects) when every version check of the lease has answered; `current` at once
   * unless `checks: 'alongside'` left some in flight.
   */
  readonly verdict: Promise<LeaseVerdict>;
  release(): Promise<void>;
}

interface Entry {
  readonly key: string;
  readonly location: string;
  readonly path: string;
  /**
   * Bytes of the budget this copy holds (counted in `#resident`): the manifest's size reserved
   * while it is fetched, its real size from before a byte of it is written, 0 once freed.
   */
  charged: number;
  /** Leases holding the copy. */
  pins: number;
  /** Its fetch has not settled: it is never evicted, and its bytes are not freed until it settles. */
  fetching: boolean;
  /** A request of its fetch has been sent (before that, a fetch nobody wants any more is dropped at once). */
  started: boolean;
  lastUsed: number;
  /** The version tag the copy was fetched with (undefined: the store has none). */
  version: string | undefined;
  /**
   * Out of the index (replaced in storage, failed, abandoned, kept outside, evicted): never found
   * again; its bytes are freed when no lease and no fetch holds it any more.
   */
  dropped: boolean;
  /**
   * When (performance.now()) the request that last confirmed `version` was sent: the GET that
   * fetched the copy, or a HEAD that found the same tag. A lease begun before it needs no check.
   */
  confirmedAt: number;
  /**
   * The latest version check in flight and when it was asked for (it is sent no earlier): shared by
   * the leases that began before that, which it answers for.
   */
  checking?: { readonly asked: number; readonly tag: Promise<string | undefined> } | undefined;
  /** Settles when the fetch has: where the object went (rejects when the fetch failed; the entry is then gone). */
  ready: Promise<Landing>;
}

/** Where an entry's fetch put the object, and how many bytes it fetched from storage. */
type Landing =
  | { readonly kind: 'cached'; readonly fetched: number }
  /**
   * Larger than its manifest said, and pinned copies left no room for the difference: not in the
   * cache; each lease waiting for it writes these bytes into its own scratch folder (a bypass).
   */
  | { readonly kind: 'outside'; readonly fetched: number; readonly bytes: Uint8Array };

/** What `#fetchTo` brought: written to its target, or held in memory because its size did not fit. */
type Fetched =
  | { readonly kind: 'written'; readonly bytes: number; readonly version: string | undefined }
  | { readonly kind: 'unfit'; readonly data: Uint8Array; readonly version: string | undefined };

/** What a fetch asks of whoever it fetches for. */
interface FetchFor {
  /** Whether anyone still wants the file; asked as each request gets its slot, before it is sent. */
  wanted(): boolean;
  /** Whether `bytes` may be written to the target (room in the budget for a copy of that size). */
  fits(bytes: number): boolean;
}

/** A fetch nobody wanted any more when its turn came (every lease that asked for it had gone). */
class Unwanted extends Error {
  constructor(location: string) {
    super(`fetch of ${location} dropped: no statement wants it any more`);
  }
}

/** Thrown inside a lease's work once the lease is released or failed (never seen by a caller). */
class LeaseClosed extends Error {
  constructor() {
    super('file lease already released');
  }
}

export class FileCache {
  readonly #entries = new Map<string, Entry>();
  /** Every entry holding bytes of the budget, in the index or not (stale copies still read). */
  readonly #charged = new Set<Entry>();
  /** Fetches and lease clean-ups still running, for `idle`. */
  readonly #running = new Set<Promise<unknown>>();
  readonly #fetchSlots: Slots;
  readonly #checkSlots: Slots;
  #resident = 0;
  #peak = 0;
  #tick = 0;
  #hits = 0;
  #misses = 0;
  #fetched = 0;
  #evictions = 0;
  #bypasses = 0;
  #staleRefetches = 0;
  #sizeMismatches = 0;
  #closed = false;
  readonly #onSizeMismatch: ((mismatch: SizeMismatch) => void) | undefined;
  readonly #dir: string;
  readonly #scratch: string;
  #max: number;
  #verify: boolean;
  readonly #part: number;

  constructor(options: FileCacheOptions) {
    this.#dir = path.join(options.directory, 'files');
    this.#scratch = path.join(options.directory, 'scratch');
    rmSync(options.directory, { recursive: true, force: true });
    mkdirSync(this.#dir, { recursive: true });
    mkdirSync(this.#scratch, { recursive: true });
    this.#max = Math.max(0, Math.floor(options.maxBytes));
    const concurrency = Math.max(1, options.concurrency ?? 8);
    this.#fetchSlots = new Slots(concurrency);
    this.#checkSlots = new Slots(Math.max(1, options.checkConcurrency ?? 4 * concurrency));
    this.#verify = options.verifyVersions ?? true;
    this.#part = Math.max(4096, options.partBytes ?? 8 * 2 ** 20);
    this.#onSizeMismatch = options.onSizeMismatch;
  }

  stats(): FileCacheStats {
    return {
      hits: this.#hits, misses: this.#misses, bytesFetched: this.#fetched, evictions: this.#evictions, bypasses: this.#bypasses, staleRefetches: this.#staleRefetches,
      sizeMismatches: this.#sizeMismatches, residentBytes: this.#resident, peakResidentBytes: this.#peak, maxBytes: this.#max,
    };
  }

  /**
   * Fetches (or finds) every file and pins it until `release`. With `currentVersion`, a cached copy
   * fetched with a version tag is served only while the object still has that tag: checked before
   * `acquire` resolves, or alongside the statement (`options.checks`). Rejects as soon as one file
   * fails, or with the signal's reason as soon as `options.signal` aborts; nothing stays pinned
   * then (fetches already under way go on, see `AcquireOptions.signal`).
   */
  async acquire(files: readonly WantedFile[], fetch: FetchFile, currentVersion?: CurrentVersion, options: AcquireOptions = {}): Promise<FileLease> {
    const { signal } = options;
    signal?.throwIfAborted();
    const alongside = options.checks === 'alongside';
    const began = performance.now();
    const unique = new Map<string, WantedFile>();
    for (const f of files) unique.set(keyOf(f), f);
    const paths = new Map<string, string>();
    /** The checks left running (alongside): each settles with the stale location, or undefined. */
    const pending: Promise<string | undefined>[] = [];
    let fetchedHere = 0;

    // The lease's hold. Its work may still be running when it is closed (a file failed, the
    // statement was cancelled): from then on that work pins nothing and starts nothing, and
    // whatever it still awaits is let go by `release` (so a pin is never left behind, or dropped twice).
    const pinned = new Set<Entry>();
    let closed = false;
    /** The lease's scratch folder (made with its first copy kept outside the cache) and those copies being made. */
    let scratch: Promise<string> | undefined;
    const outside = new Set<Promise<unknown>>();
    let cleanup: Promise<void> | undefined;
    const live = (): void => {
      if (closed) throw new LeaseClosed();
    };
    const pin = (e: Entry): void => {
      e.pins++;
      pinned.add(e);
    };
    const unpin = (e: Entry): void => {
      if (pinned.delete(e)) this.#unpin(e);
    };
    const release = (): Promise<void> => {
      if (!closed) {
        closed = true;
        for (const e of pinned) this.#unpin(e);
        pinned.clear();
      }
      // The scratch folder goes once no copy is still being written into it (none starts after closing).
      cleanup ??= this.#track((async () => {
        await Promise.allSettled([...outside]);
        const dir = await scratch?.catch(() => undefined);
        if (dir !== undefined) await rm(dir, { recursive: true, force: true });
      })());
      return cleanup;
    };

    /** Whether a cached copy needs its version checked before it is served again. */
    const checked = (e: Entry): boolean => this.#verify && currentVersion !== undefined && e.version !== undefined && e.confirmedAt < began;
    /** A cached copy this lease may serve: still the object's version (or the store has no versions). */
    const current = async (e: Entry): Promise<boolean> => {
      if (e.dropped) return false;
      if (!checked(e)) return true;
      // Scans of one statement (a self-join) and concurrent statements share a check in flight, but
      // only one asked for after this lease began: an older HEAD may predate a rewrite this lease
      // must see.
      if (e.checking === undefined || e.checking.asked < began) {
        const check = { asked: performance.now(), tag: this.#checkSlots.run(async () => {
          const sent = performance.now();
          const tag = await currentVersion!(e.location);
          if (tag === e.version) e.confirmedAt = Math.max(e.confirmedAt, sent);
          return tag;
        }) };
        e.checking = check;
        void check.tag.finally(() => {
          if (e.checking === check) e.checking = undefined;
        }).catch(() => undefined);
      }
      const now = await e.checking.tag;
      if (now === e.version) return true;
      // Rewritten in place behind Iceberg's back: never served again; readers holding it finish first.
      this.#markStale(e);
      return false;
    };
    /**
     * `f` as this lease's own copy in its scratch folder, outside the budget: `bytes` when given
     * (an entry whose real size found no room), else fetched.
     */
    const keepOutside = async (f: WantedFile, key: string, bytes?: Uint8Array): Promise<string> => {
      live();
      this.#bypasses++;
      const copy = (async () => {
        // One folder per lease, made once even when several files bypass at the same time.
        scratch ??= mkdtemp(path.join(this.#scratch, 'q-'));
        const target = path.join(await scratch, key);
        if (bytes !== undefined) {
          await writeFile(target, bytes);
          return { target, fetched: 0 };
        }
        const got = await this.#fetchTo(f, target, fetch, options.fetchRange, { wanted: () => !closed, fits: () => true });
        return { target, fetched: got.kind === 'written' ? got.bytes : 0 };
      })();
      outside.add(copy);
      const { target, fetched } = await copy;
      live();
      fetchedHere += fetched;
      return target;
    };
    const serve = async (f: WantedFile): Promise<void> => {
      const key = keyOf(f);
      // A copy found stale leaves the index; look again (another lease may have fetched it anew).
      for (let found = this.#entries.get(key); found !== undefined; found = this.#entries.get(key)) {
        live();
        pin(found);
        const landing = await found.ready;
        live();
        if (landing.kind === 'outside') {
          // Its fetch (another lease's) found no room for its real size: this lease's own copy of
          // those bytes when their GET was sent after this lease began (as a fresh GET would be),
          // else of a fresh GET (the object may have been replaced since; no tag is checked here).
          const fresh = found.confirmedAt >= began;
          if (fresh) this.#hits++;
          else this.#misses++;
          paths.set(f.location, await keepOutside(f, key, fresh ? landing.bytes : undefined));
          return;
        }
        if (alongside && !found.dropped && checked(found)) {
          // Served now; the statement learns from the verdict whether it may keep what it read.
          const check = current(found).then((ok) => (ok ? undefined : f.location));
          // Read by the verdict; a lease that fails meanwhile never reads it (no stray rejection).
          check.catch(() => undefined);
          pending.push(check);
          this.#hits++;
          paths.set(f.location, found.path);
          return;
        }
        if (await current(found)) {
          live();
          this.#hits++;
          paths.set(f.location, found.path);
          return;
        }
        live();
        unpin(found);
      }
      live();
      this.#misses++;
      const e = this.#admit(f, key, fetch, options.fetchRange);
      if (e === undefined) {
        // No room while other queries hold their files: this query's own copy, outside the budget.
        paths.set(f.location, await keepOutside(f, key));
        return;
      }
      // Already pinned for this lease (its fetch may ask at once whether anyone wants it).
      pinned.add(e);
      const landing = await e.ready;
      live();
      fetchedHere += landing.fetched;
      paths.set(f.location, landing.kind === 'outside' ? await keepOutside(f, key, landing.bytes) : e.path);
    };

    // Smallest first: they finish soonest, and a query's small files are often all it needs first.
    const serving = [...unique.values()].sort((a, b) => a.size - b.size).map(serve);
    let onAbort: (() => void) | undefined;
    const stopped = new Promise<never>((_, reject) => {
      for (const s of serving) s.catch(reject);
      if (signal !== undefined) {
        onAbort = () => reject(signal.reason);
        signal.addEventListener('abort', onAbort, { once: true });
      }
    });
    try {
      await Promise.race([Promise.all(serving), stopped]);
    } catch (e) {
      // At once: what this lease pinned is let go now; its fetches in flight settle on their own.
      void release().catch(() => undefined);
      throw e;
    } finally {
      if (onAbort !== undefined) signal!.removeEventListener('abort', onAbort);
    }
    const verdict: Promise<LeaseVerdict> = pending.length === 0 ? Promise.resolve({ kind: 'current' }) : Promise.allSettled(pending).then((rs) => {
      const failed = rs.find((r): r is PromiseRejectedResult => r.status === 'rejected');
      if (failed !== undefined) return { kind: 'failed', error: failed.reason };
      const stale = rs.find((r): r is PromiseFulfilledResult<string> => r.status === 'fulfilled' && r.value !== undefined);
      return stale !== undefined ? { kind: 'stale', location: stale.value } : { kind: 'current' };
    });
    return { paths, bytesFetched: fetchedHere, verdict, release };
  }

  /**
   * Settles once no fetch and no lease clean-up is running (a released or failed lease's scratch
   * folder removed, a fetch a cancelled statement left behind settled). For tests and shutdown.
   */
  async idle(): Promise<void> {
    while (this.#running.size > 0) await Promise.allSettled([...this.#running]);
  }

  #track<T>(work: Promise<T>): Promise<T> {
    this.#running.add(work);
    const done = (): void => {
      this.#running.delete(work);
    };
    work.then(done, done);
    return work;
  }

  /**
   * A new entry for `f`, its manifest size reserved, pinned once for the caller's lease, and its
   * fetch started; undefined when pinned copies leave no room for it.
   */
  #admit(f: WantedFile, key: string, fetch: FetchFile, fetchRange: FetchRange | undefined): Entry | undefined {
    if (!this.#reserve(f.size)) return undefined;
    // A fresh file name per copy: a stale copy may still be open by the queries pinning it.
    const e: Entry = {
      key, location: f.location, charged: f.size, path: path.join(this.#dir, `${++this.#tick}-${key}`), pins: 1, fetching: true, started: false, lastUsed: this.#tick,
      version: undefined, confirmedAt: performance.now(), dropped: false, ready: Promise.resolve({ kind: 'cached', fetched: 0 }),
    };
    this.#entries.set(key, e);
    this.#charged.add(e);
    const wanted = (): boolean => {
      if (e.dropped) return false;
      if (e.pins > 0) {
        e.started = true;
        return true;
      }
      // Every lease that wanted it has gone before this request's turn: out of the index now (a
      // lease arriving later fetches anew rather than meet this fetch's end), freed as it settles.
      this.#drop(e);
      return false;
    };
    // The real size is known before a byte of the object reaches the cache's folder.
    const fits = (bytes: number): boolean => this.#recharge(e, bytes);
    e.ready = this.#track(this.#fetchTo(f, e.path, fetch, fetchRange, { wanted, fits }).then((got): Landing => {
      e.fetching = false;
      if (got.kind === 'unfit') {
        // Never written here: out of the cache, its reservation freed; the bytes go to the leases.
        this.#drop(e);
        this.#discharge(e);
        return { kind: 'outside', fetched: got.data.byteLength, bytes: got.data };
      }
      e.version = got.version;
      this.#settle(e);
      return { kind: 'cached', fetched: got.bytes };
    }, (err: unknown) => {
      // Nothing of it is on disk (`#fetchTo` removes its partial file): its bytes are freed now.
      e.fetching = false;
      this.#drop(e);
      this.#discharge(e);
      throw err;
    }));
    // Read by the leases pinning it; a fetch nobody awaits any more must not be a stray rejection.
    e.ready.catch(() => undefined);
    return e;
  }

  /**
   * `e` was replaced in storage: out of the index (fetched anew next time), counted once; freed now
   * if no lease holds it any more (a check alongside may answer after its statement let go).
   */
  #markStale(e: Entry): void {
    if (e.dropped) return;
    this.#staleRefetches++;
    this.#drop(e);
    this.#settle(e);
  }

  /** `e` out of the index: no lease finds it again. */
  #drop(e: Entry): void {
    e.dropped = true;
    if (this.#entries.get(e.key) === e) this.#entries.delete(e.key);
  }

  /** `e`'s bytes leave the budget and its file the disk (idempotent). */
  #discharge(e: Entry): void {
    this.#resident -= e.charged;
    e.charged = 0;
    this.#charged.delete(e);
    rmSync(e.path, { force: true });
  }

  /** One lease lets go of `e`. */
  #unpin(e: Entry): void {
    e.pins--;
    e.lastUsed = ++this.#tick;
    this.#settle(e);
  }

  /**
   * A dropped copy nothing holds any more is freed; so is a fetch still waiting for its first slot
   * once no lease wants it (a cancelled statement's queued files give their bytes back at once; the
   * fetch, when its turn comes, sends nothing). Over a budget `resize` shrank, unpinned copies go.
   */
  #settle(e: Entry): void {
    if (e.pins === 0 && e.fetching && !e.started) this.#drop(e);
    if (e.dropped && e.pins === 0 && (!e.fetching || !e.started)) this.#discharge(e);
    this.#trim();
  }

  /** Over a budget `resize` shrank: unpinned copies go, least recently used first, until it fits or none is left. */
  #trim(): void {
    if (this.#resident <= this.#max) return;
    const victims = [...this.#entries.values()].filter((e) => e.pins === 0 && !e.fetching).sort((a, b) => a.lastUsed - b.lastUsed);
    for (const v of victims) {
      if (this.#resident <= this.#max) break;
      this.#evict(v);
    }
  }

  /**
   * Takes `bytes` more of the budget, evicting unpinned copies (least recently used first) to make
   * room; false, evicting nothing, when pinned copies and fetches leave no room. Synchronous: two
   * reservations never both see the same free bytes.
   */
  #reserve(bytes: number): boolean {
    if (this.#closed) return false;
    if (this.#resident + bytes > this.#max) {
      const victims = [...this.#entries.values()].filter((e) => e.pins === 0 && !e.fetching).sort((a, b) => a.lastUsed - b.lastUsed);
      let free = this.#max - this.#resident;
      const chosen: Entry[] = [];
      for (const v of victims) {
        if (free >= bytes) break;
        chosen.push(v);
        free += v.charged;
      }
      if (free < bytes) return false;
      for (const v of chosen) this.#evict(v);
    }
    this.#resident += bytes;
    this.#peak = Math.max(this.#peak, this.#resident);
    return true;
  }

  /** `e`'s share of the budget becomes `bytes` (its real size): false when pinned copies leave no room for more. */
  #recharge(e: Entry, bytes: number): boolean {
    if (bytes > e.charged && !this.#reserve(bytes - e.charged)) return false;
    if (bytes < e.charged) this.#resident -= e.charged - bytes;
    e.charged = bytes;
    this.#charged.add(e);
    return true;
  }

  /** Unpinned means no query reads it: the copy goes now (a failed unlink only wastes disk). */
  #evict(e: Entry): void {
    this.#drop(e);
    this.#discharge(e);
    this.#evictions++;
  }

  /**
   * `f` fetched into `target`. Before each request gets its slot, `to.wanted()` is asked (false:
   * rejects with `Unwanted`); before the bytes of one whole GET are written, `to.fits(size)` (false:
   * they come back in memory, unwritten). A ranged fetch writes only within the manifest's size,
   * which the caller has reserved. No partial file is left behind when it fails.
   */
  async #fetchTo(f: WantedFile, target: string, fetch: FetchFile, fetchRange: FetchRange | undefined, to: FetchFor): Promise<Fetched> {
    // Written under a temporary name and renamed: a reader never sees half a file.
    const tmp = `${target}.${process.pid}.${++this.#tick}.part`;
    if (fetchRange !== undefined && f.size >= 2 * this.#part) {
      const got = await this.#fetchRanges(f, tmp, fetchRange, to);
      if (got !== undefined) {
        await rename(tmp, target).catch(async (err: unknown) => {
          await rm(tmp, { force: true });
          throw err;
        });
        this.#fetched += f.size;
        return { kind: 'written', bytes: f.size, version: got };
      }
      // The object changed between parts, or is not the manifest's size (the parts were planned
      // from it): once more in one request, which is one version of whatever length it has.
    }
    // The write stays inside the slot: at most `concurrency` fetched files are in memory at once.
    return this.#fetchSlots.run(async (): Promise<Fetched> => {
      if (!to.wanted()) throw new Unwanted(f.location);
      const got = await fetch(f.location);
      const { bytes, version } = got instanceof Uint8Array ? { bytes: got, version: undefined } : got;
      this.#fetched += bytes.byteLength;
      if (bytes.byteLength !== f.size) {
        // Served as the store holds it now, as a local file is read in place; counted and told.
        this.#sizeMismatches++;
        this.#onSizeMismatch?.({ location: f.location, manifestBytes: f.size, objectBytes: bytes.byteLength });
      }
      if (!to.fits(bytes.byteLength)) return { kind: 'unfit', data: bytes, version };
      try {
        await writeFile(tmp, bytes);
        await rename(tmp, target);
      } catch (err) {
        await rm(tmp, { force: true });
        throw err;
      }
      return { kind: 'written', bytes: bytes.byteLength, version };
    });
  }

  /**
   * `f` into `tmp` in parts fetched at once, each written at its offset; the version the parts
   * agree on, or undefined when they do not (the object was replaced while they were fetched) or
   * the object is not the manifest's size (the parts, planned from it, would assemble another length).
   */
  async #fetchRanges(f: WantedFile, tmp: string, fetchRange: FetchRange, to: FetchFor): Promise<string | undefined> {
    const handle = await open(tmp, 'w');
    let ok = false;
    try {
      const parts: [number, number][] = [];
      for (let offset = 0; offset < f.size; offset += this.#part) parts.push([offset, Math.min(this.#part, f.size - offset)]);
      // Settled, not raced: no part may still be writing into the file when it is closed.
      const settled = await Promise.allSettled(parts.map(([offset, length]) => this.#fetchSlots.run(async () => {
        if (!to.wanted()) throw new Unwanted(f.location);
        const got = await fetchRange(f.location, offset, length);
        // Another length than planned, or one the store did not give (no `Content-Range`: a longer
        // object would be cut at the manifest's size): nothing is written, one GET brings it whole.
        if (got.objectSize !== f.size || got.bytes.byteLength !== length) return OTHER_SIZE;
        await handle.write(got.bytes, 0, length, offset);
        return got.version;
      })));
      const failed = settled.find((r): r is PromiseRejectedResult => r.status === 'rejected');
      if (failed !== undefined) throw failed.reason;
      const versions = new Set(settled.map((r) => (r as PromiseFulfilledResult<string | undefined | typeof OTHER_SIZE>).value));
      const [version] = versions;
      if (versions.size !== 1 || version === undefined || version === OTHER_SIZE) return undefined;
      ok = true;
      return version;
    } finally {
      await handle.close();
      if (!ok) await rm(tmp, { force: true });
    }
  }

  /** Turns the version check of hits on or off (the benchmark measures both in one run). */
  set verifyVersions(on: boolean) {
    this.#verify = on;
  }

  /**
   * A new budget from now on: unpinned copies are evicted, least recently used first, until the
   * resident bytes fit it (pinned ones, and fetches under way, go as their statements let go); the
   * peak restarts at what is resident, so it is measured against this budget. Until then nothing
   * new is admitted. For the benchmark, which runs a phase with a budget smaller than the data in
   * the same process.
   */
  resize(maxBytes: number): void {
    this.#max = Math.max(0, Math.floor(maxBytes));
    this.#trim();
    this.#peak = this.#resident;
  }

  /** Evicts every copy no running statement holds (an empty cache, for cold-cache measurements). */
  evictAll(): void {
    for (const e of [...this.#entries.values()]) if (e.pins === 0 && !e.fetching) this.#evict(e);
  }

  /** Removes every cached file (server shutdown); fetches still running find no room. */
  close(): void {
    this.#closed = true;
    for (const e of [...this.#charged]) this.#discharge(e);
    this.#entries.clear();
    rmSync(path.dirname(this.#dir), { recursive: true, force: true });
  }
}

/** A ranged part's answer when the object is not the size its parts were planned from. */
const OTHER_SIZE: unique symbol = Symbol('other size');

/** A bound on requests in flight: `run` waits for a free place, first come first served. */
class Slots {
  readonly #waiting: (() => void)[] = [];
  #active = 0;

  constructor(readonly size: number) {}

  async run<T>(request: () => Promise<T>): Promise<T> {
    if (this.#active >= this.size) await new Promise<void>((resolve) => this.#waiting.push(resolve));
    else this.#active++;
    try {
      return await request();
    } finally {
      // The place passes straight to the next waiter (no window for a newcomer to take it).
      const next = this.#waiting.shift();
      if (next !== undefined) next();
      else this.#active--;
    }
  }
}

/** The cache key of a file: its location and size (a different size is a different file). */
function keyOf(f: WantedFile): string {
  const ext = /\.[A-Za-z0-9]{1,10}$/.exec(f.location)?.[0] ?? '';
  return `${createHash('sha256').update(`${f.location}\n${f.size}`).digest('hex').slice(0, 40)}${ext}`;
}
