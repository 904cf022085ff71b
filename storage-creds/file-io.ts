/**
 * FileIO: the byte-level storage interface the catalog and the engine use for metadata, manifests and
 * data files. Locations are strings as Iceberg stores them (`file:///…`, `/abs/path`, `s3://…`);
 * implementations decide which schemes they serve. Errors are the typed classes below so callers can
 * map them (not found → 404, already exists → 409) without parsing messages.
 */

/** One object found by `list`. */
export interface FileInfo {
  readonly location: string;
  readonly size: number;
  readonly lastModifiedMs: number;
}

export interface WriteOptions {
  /** Replace an existing object. When false (the default) the write fails with `FileAlreadyExistsError` if the object exists. */
  readonly overwrite?: boolean;
}

/** An object's bytes and its version tag as the store names it (S3: the ETag). */
export interface VersionedBytes {
  readonly bytes: Buffer;
  readonly version: string | undefined;
}

export interface FileIO {
  /** The whole object. `FileNotFoundError` if missing. */
  read(location: string): Promise<Buffer>;
  /**
   * `length` bytes from `offset` (fewer when the object ends first, none past its end): Parquet
   * footers and column chunks without fetching the whole object. `FileNotFoundError` if missing.
   */
  readRange(location: string, offset: number, length: number): Promise<Buffer>;
  /**
   * Writes the whole object atomically: readers see the old state or the new bytes, never a prefix.
   * Without `overwrite` it is create-if-absent, which is what makes a metadata-file commit safe.
   */
  write(location: string, bytes: Uint8Array, options?: WriteOptions): Promise<void>;
  exists(location: string): Promise<boolean>;
  /** Size in bytes. `FileNotFoundError` if missing. */
  size(location: string): Promise<number>;
  /** Deletes one object; deleting a missing object is not an error (purge may race). */
  delete(location: string): Promise<void>;
  /** Deletes every object under `prefix` (table purge); returns how many were deleted. */
  deletePrefix(prefix: string): Promise<number>;
  /** Every object under `prefix`, recursively, sorted by location. */
  list(prefix: string): Promise<readonly FileInfo[]>;
  /**
   * The whole object and its version tag, read in one request. Stores that tag objects (S3 ETags)
   * implement this and `version`; the read-through cache then notices an object rewritten in place
   * even when its size did not change.
   */
  readVersioned?(location: string): Promise<VersionedBytes>;
  /** The object's current version tag without its bytes (S3: HeadObject). `FileNotFoundError` if missing. */
  version?(location: string): Promise<string | undefined>;
  /**
   * `length` bytes from `offset` in one request, with the version tag and the whole object's size
   * as that response gives them (S3: `ETag`, `Content-Range`): the read-through cache fetches a
   * large file in parallel ranges and knows them to be of one version when their tags agree.
   */
  readRangeVersioned?(location: string, offset: number, length: number): Promise<VersionedRange>;
}

/** A ranged read's bytes, version tag and the whole object's size (undefined when not given). */
export interface VersionedRange extends VersionedBytes {
  readonly objectSize: number | undefined;
}

/** The object does not exist. */
export class FileNotFoundError extends Error {
  readonly kind = 'file-not-found';
  constructor(readonly location: string) {
    super(`File does not exist: ${location}`);
    this.name = 'FileNotFoundError';
  }
}

/** A create-if-absent write found the object already there. */
export class FileAlreadyExistsError extends Error {
  readonly kind = 'file-already-exists';
  constructor(readonly location: string) {
    super(`File already exists: ${location}`);
    this.name = 'FileAlreadyExistsError';
  }
}

/** Why an object store refused or failed a request (what an operator fixes). */
export type StorageFailure =
  | 'access-denied' // bad key, wrong secret, or a policy that forbids the operation
  | 'no-such-bucket'
  | 'wrong-region' // the bucket lives elsewhere, or endpoint / path-style addressing is wrong
  | 'unavailable' // unreachable, 5xx or throttled after the retries
  | 'rejected'; // any other refusal (4xx)

/**
 * An object store could not do what was asked, after retries. The message names the operation,
 * the location and the cause, never a credential.
 */
export class StorageError extends Error {
  readonly kind = 'storage-error';
  constructor(
    readonly location: string,
    readonly operation: string,
    readonly failure: StorageFailure,
    readonly detail: string,
  ) {
    super(`Storage ${operation} failed for ${location}: ${detail}`);
    this.name = 'StorageError';
  }
}

/** The location's scheme is one this FileIO cannot serve (object stores come later). */
export class UnsupportedLocationError extends Error {
  readonly kind = 'unsupported-location';
  constructor(
    readonly location: string,
    readonly scheme: string,
  ) {
    super(`Location scheme '${scheme}' is not supported by this FileIO yet: ${location}`);
    this.name = 'UnsupportedLocationError';
  }
}

/** The URI scheme of a location (`s3`, `file`), or `undefined` for a plain path. */
export function schemeOf(location: string): string | undefined {
  const m = /^([A-Za-z][A-Za-z0-9+.-]*):/.exec(location);
  // A Windows drive letter (`C:`) is not a scheme.
  return m === null || (m[1] as string).length === 1 ? undefined : (m[1] as string).toLowerCase();
}

/** A prefix rewrite for tables registered from elsewhere: locations starting with `from` are read at `to` + rest. */
export interface LocationMapping {
  readonly from: string;
  readonly to: string;
}

/** Applies the mapping with the longest matching `from` (none → unchanged). */
export function remapLocation(location: string, mappings: readonly LocationMapping[]): string {
  let best: LocationMapping | undefined;
  for (const m of mappings) if (location.startsWith(m.from) && (best === undefined || m.from.length > best.from.length)) best = m;
  return best === undefined ? location : best.to + location.slice(best.from.length);
}

/** Inverse direction (longest matching `to`), so listings come back in the caller's namespace. */
export function unmapLocation(location: string, mappings: readonly LocationMapping[]): string {
  let best: LocationMapping | undefined;
  for (const m of mappings) if (location.startsWith(m.to) && (best === undefined || m.to.length > best.to.length)) best = m;
  return best === undefined ? location : best.from + location.slice(best.to.length);
}

/**
 * Wraps `io` so that every location is rewritten by `mappings` (longest `from` prefix wins) before it
 * reaches storage. Locations returned by `list` are mapped back. Errors name the caller's location.
 */
export function remapLocations(io: FileIO, mappings: readonly LocationMapping[]): FileIO {
  if (mappings.length === 0) return io;
  const map = (l: string): string => remapLocation(l, mappings);
  const rename = async <T>(location: string, op: () => Promise<T>): Promise<T> => {
    try {
      return await op();
    } catch (e) {
      if (e instanceof FileNotFoundError) throw new FileNotFoundError(location);
      if (e instanceof FileAlreadyExistsError) throw new FileAlreadyExistsError(location);
      throw e;
    }
  };
  return {
    read: (l) => rename(l, () => io.read(map(l))),
    readRange: (l, offset, length) => rename(l, () => io.readRange(map(l), offset, length)),
    write: (l, bytes, options) => rename(l, () => io.write(map(l), bytes, options)),
    exists: (l) => io.exists(map(l)),
    size: (l) => rename(l, () => io.size(map(l))),
    delete: (l) => io.delete(map(l)),
    deletePrefix: (p) => io.deletePrefix(map(p)),
    list: async (p) => (await io.list(map(p))).map((f) => ({ ...f, location: unmapLocation(f.location, mappings) })),
    ...(io.readVersioned !== undefined ? { readVersioned: (l: string) => rename(l, () => io.readVersioned!(map(l))) } : {}),
    ...(io.version !== undefined ? { version: (l: string) => rename(l, () => io.version!(map(l))) } : {}),
    ...(io.readRangeVersioned !== undefined ? { readRangeVersioned: (l: string, offset: number, length: number) => rename(l, () => io.readRangeVersioned!(map(l), offset, length)) } : {}),
  };
}

/**
 * One FileIO over several: a location whose scheme is in `routes` goes to that FileIO, any other
 * (local paths, `file:`) to `fallback`. A catalog on object storage sees its store this way and
 * still reads the deployment's local files it was registered with.
 */
export function routeBySchemes(routes: ReadonlyMap<string, FileIO>, fallback: FileIO): FileIO {
  const pick = (location: string): FileIO => {
    const scheme = schemeOf(location);
    return (scheme === undefined ? undefined : routes.get(scheme)) ?? fallback;
  };
  return {
    read: (l) => pick(l).read(l),
    readRange: (l, offset, length) => pick(l).readRange(l, offset, length),
    write: (l, bytes, options) => pick(l).write(l, bytes, options),
    exists: (l) => pick(l).exists(l),
    size: (l) => pick(l).size(l),
    delete: (l) => pick(l).delete(l),
    deletePrefix: (p) => pick(p).deletePrefix(p),
    list: (p) => pick(p).list(p),
    // Versions where the chosen store has them (a FileIO without them reads plain bytes).
    readVersioned: async (l) => {
      const io = pick(l);
      return io.readVersioned !== undefined ? io.readVersioned(l) : { bytes: await io.read(l), version: undefined };
    },
    version: async (l) => {
      const io = pick(l);
      return io.version !== undefined ? io.version(l) : undefined;
    },
    readRangeVersioned: async (l, offset, length) => {
      const io = pick(l);
      return io.readRangeVersioned !== undefined ? io.readRangeVersioned(l, offset, length) : { bytes: await io.readRange(l, offset, length), version: undefined, objectSize: undefined };
    },
  };
}

/**
 * A FileIO in memory, for tests and for staging. Keys are locations verbatim; `Map` so any string works.
 */
export class InMemoryFileIO implements FileIO {
  private readonly objects = new Map<string, { readonly bytes: Buffer; readonly lastModifiedMs: number }>();

  async read(location: string): Promise<Buffer> {
    const o = this.objects.get(location);
    if (o === undefined) throw new FileNotFoundError(location);
    return Buffer.from(o.bytes);
  }

  async readRange(location: string, offset: number, length: number): Promise<Buffer> {
    const o = this.objects.get(location);
    if (o === undefined) throw new FileNotFoundError(location);
    return Buffer.from(o.bytes.subarray(offset, offset + Math.max(0, length)));
  }

  async write(location: string, bytes: Uint8Array, options: WriteOptions = {}): Promise<void> {
    if (options.overwrite !== true && this.objects.has(location)) throw new FileAlreadyExistsError(location);
    this.objects.set(location, { bytes: Buffer.from(bytes), lastModifiedMs: Date.now() });
  }

  async exists(location: string): Promise<boolean> {
    return this.objects.has(location);
  }

  async size(location: string): Promise<number> {
    const o = this.objects.get(location);
    if (o === undefined) throw new FileNotFoundError(location);
    return o.bytes.length;
  }

  async delete(location: string): Promise<void> {
    this.objects.delete(location);
  }

  async deletePrefix(prefix: string): Promise<number> {
    let n = 0;
    for (const key of [...this.objects.keys()]) {
      if (key.startsWith(prefix)) {
        this.objects.delete(key);
        n++;
      }
    }
    return n;
  }

  async list(prefix: string): Promise<readonly FileInfo[]> {
    return [...this.objects.entries()]
      .filter(([k]) => k.startsWith(prefix))
      .map(([location, o]) => ({ location, size: o.bytes.length, lastModifiedMs: o.lastModifiedMs }))
      .sort((a, b) => (a.location < b.location ? -1 : a.location > b.location ? 1 : 0));
  }
}
