/**
 * The executor seen by the query and write paths when tables may live on object storage: before a
 * plan or a write runs, every object-store file its scans read (data and delete files) is fetched
 * into the read-through cache (`file-cache.ts`) and the scans read the local copies
 * (`TableScanInput.localFiles`); the copies are unpinned when the statement ends. Files on local
 * disk are read in place, as before. `bytesScanned` counts bytes fetched from object storage for
 * those scans (cache hits apart) and planned bytes for local ones.
 */
import { randomUUID } from 'node:crypto';
import { mkdir, readFile, rm } from 'node:fs/promises';
import * as nodePath from 'node:path';
import { remapLocation } from '../../storage-creds/file-io.js';
import { isLocalLocation } from '../../storage-creds/local-file-io.js';
import { floeError, isFloeError, type FloeError } from '../../grammar/errors.js';
import { unreachable } from '../../catalog/iceberg/errors.js';
import type { FragmentPlan, TableScanInput } from '../fragments.js';
import type { ExecuteOptions, Executor, StatementStorage, WriteRequest, WriteResult } from './executor.js';
import type { AcquireOptions, FetchFile, FetchRange, FileCache, FileLease, LeaseVerdict, WantedFile } from './file-cache.js';

/** How a statement reaches the object-store files of a catalog (the catalog's FileIO). */
export type CatalogStorage = (catalog: string) => Promise<StatementStorage>;

interface Localized {
  readonly scans: ReadonlyMap<TableScanInput, TableScanInput>;
  /** Planned bytes of the scans that read object storage (replaced by fetched bytes in metrics). */
  readonly remoteBytes: number;
  readonly fetched: number;
  /** Every lease's verdict: whether the cached copies served were all still current. */
  readonly verdict: Promise<LeaseVerdict>;
  release(): Promise<void>;
}

/** A cached copy a statement read was replaced in storage: the statement runs again on fresh copies. */
class StaleRead extends Error {
  constructor(readonly location: string) {
    super(`cached copy of ${location} was replaced in storage`);
  }
}

/** The object-store files of a scan (data files and the delete files that apply), by location. */
function remoteFiles(scan: TableScanInput): WantedFile[] {
  const mappings = scan.locationMappings ?? [];
  const out = new Map<string, WantedFile>();
  const add = (location: string, size: number): void => {
    if (!isLocalLocation(remapLocation(location, mappings))) out.set(location, { location, size });
  };
  for (const t of scan.tasks) {
    add(t.file.filePath, t.file.fileSizeInBytes);
    for (const d of [...t.positionDeletes, ...t.equalityDeletes]) add(d.file.filePath, d.file.fileSizeInBytes);
  }
  return [...out.values()];
}

/** A statement cancelled (or timed out) while its files were fetched: the signal's own error, as the executor gives it. */
function cancelled(signal: AbortSignal): FloeError {
  const reason: unknown = signal.reason;
  return isFloeError(reason) ? reason : floeError('QUERY_CANCELLED', { reason: 'cancelled by request' });
}

async function localize(cache: FileCache, scans: readonly TableScanInput[], storage: CatalogStorage | undefined, checks: AcquireOptions['checks'], signal: AbortSignal | undefined): Promise<Localized> {
  const leases: FileLease[] = [];
  const replaced = new Map<TableScanInput, TableScanInput>();
  let remoteBytes = 0;
  const release = async (): Promise<void> => {
    await Promise.all(leases.splice(0).map((l) => l.release()));
  };
  // One FileIO per catalog per statement (a lookup in the catalog store each).
  const ios = new Map<string, Promise<StatementStorage>>();
  // Every scan's files at once: a statement over several tables waits for one round of fetches
  // (or of ETag checks, when all are cached), not one per table.
  const settled = await Promise.allSettled(scans.map(async (scan) => {
    const wanted = remoteFiles(scan);
    if (wanted.length === 0) return;
    if (storage === undefined || scan.catalog === undefined) {
      throw floeError('UNSUPPORTED_STATEMENT', { what: `reading ${scan.tableName}: its files are on object storage and this statement has no way to reach it` });
    }
    const catalog = scan.catalog;
    if (!ios.has(catalog)) ios.set(catalog, storage(catalog));
    const io = await ios.get(catalog)!;
    // With version tags (S3 ETags) the cache also notices a file rewritten in place at its old size.
    const fetch: FetchFile = io.readVersioned !== undefined ? (l) => io.readVersioned!(l) : (l) => io.read(l);
    // Large files in parallel ranges where the store gives each range's version tag.
    const fetchRange: FetchRange | undefined = io.readRangeVersioned !== undefined ? (l, offset, length) => io.readRangeVersioned!(l, offset, length) : undefined;
    const lease = await cache.acquire(wanted, fetch, io.version !== undefined ? (l) => io.version!(l) : undefined, { checks, ...(fetchRange !== undefined ? { fetchRange } : {}), ...(signal !== undefined ? { signal } : {}) });
    leases.push(lease);
    remoteBytes += scan.estimatedBytes;
    replaced.set(scan, { ...scan, localFiles: new Map([...(scan.localFiles ?? []), ...lease.paths]) });
  }));
  const failed = settled.find((r): r is PromiseRejectedResult => r.status === 'rejected');
  if (failed !== undefined) {
    await Promise.all(leases.map((l) => l.verdict));
    await release();
    // A cancelled statement stops fetching at once (its reservations go with its pins) and says so.
    throw signal?.aborted === true ? cancelled(signal) : failed.reason;
  }
  const verdict = Promise.all(leases.map((l) => l.verdict)).then((vs): LeaseVerdict => vs.find((v) => v.kind === 'failed') ?? vs.find((v) => v.kind === 'stale') ?? { kind: 'current' });
  return { scans: replaced, remoteBytes, fetched: leases.reduce((n, l) => n + l.bytesFetched, 0), verdict, release };
}

/**
 * `work` (running over `l`'s copies) once `l`'s verdict is in: its result when every copy was
 * current, `StaleRead` when one was replaced (whatever `work` made of it is thrown away, even its
 * error: a replaced file may well fail to read), the check's error when a check failed.
 */
async function checked<T>(l: Localized, work: Promise<T>): Promise<T> {
  const [outcome, verdict] = await Promise.all([work.then((value) => ({ ok: true as const, value }), (error: unknown) => ({ ok: false as const, error })), l.verdict]);
  switch (verdict.kind) {
    case 'current':
      if (outcome.ok) return outcome.value;
      throw outcome.error;
    case 'stale':
      throw new StaleRead(verdict.location);
    case 'failed':
      throw verdict.error;
    default:
      return unreachable(verdict);
  }
}

/**
 * Runs `statement` over its files localized. Cached copies are first served while their ETags are
 * checked alongside (the statement's rows or uploads wait for the verdict, inside `statement`
 * through `checked`); when a copy turns out replaced, the statement runs once more with every
 * check answered before it starts, which serves only current copies.
 */
async function localized<T>(cache: FileCache, scans: readonly TableScanInput[], storage: CatalogStorage | undefined, signal: AbortSignal | undefined, statement: (l: Localized) => Promise<T>): Promise<T> {
  let fetchedBefore = 0;
  for (const checks of ['alongside', 'before'] as const) {
    const l = await localize(cache, scans, storage, checks, signal);
    try {
      return await statement({ ...l, fetched: l.fetched + fetchedBefore });
    } catch (e) {
      if (!(e instanceof StaleRead) || checks === 'before') throw e;
      fetchedBefore += l.fetched;
    } finally {
      await l.release();
    }
  }
  throw new Error('unreachable: the second round checks before it runs');
}

function mapPlan(plan: FragmentPlan, scans: ReadonlyMap<TableScanInput, TableScanInput>): FragmentPlan {
  if (scans.size === 0) return plan;
  return { ...plan, fragments: plan.fragments.map((f) => ({ ...f, scans: f.scans.map((s) => scans.get(s) ?? s) })) };
}

/**
 * A write into a table on object storage: the worker writes into a fresh local staging folder, then
 * each file is uploaded under the table's data location. A failed upload removes what was uploaded
 * (best effort; a leftover is an orphan no metadata refers to) and fails the write, so the commit
 * that would reference the files never happens.
 */
async function uploaded<T extends WriteResult>(
  inner: Executor, request: { readonly uploadLocation?: string; readonly dataDirectory: string }, catalog: string | undefined,
  storage: CatalogStorage | undefined, run: (dataDirectory: string) => Promise<T>,
): Promise<T> {
  const target = request.uploadLocation;
  if (target === undefined) return run(request.dataDirectory);
  if (storage === undefined || catalog === undefined) throw floeError('UNSUPPORTED_STATEMENT', { what: `writing to ${target}: this statement has no way to reach object storage` });
  const io = await storage(catalog);
  const staging = nodePath.join(inner.stagingDirectory, `upload-${randomUUID()}`);
  await mkdir(staging, { recursive: true });
  const done: string[] = [];
  try {
    const result = await run(staging);
    // Sequential per statement keeps memory to one file at a time; files are written once each.
    for (const f of result.files) {
      const location = `${target.replace(/\/+$/, '')}/${nodePath.basename(f.path)}`;
      await io.write(location, await readFile(f.path));
      done.push(location);
    }
    return result;
  } catch (e) {
    await Promise.all(done.map((l) => io.delete(l).catch(() => undefined)));
    throw e;
  } finally {
    await rm(staging, { recursive: true, force: true });
  }
}

/**
 * `inner` with writes into object-store tables uploaded (as `localizingExecutor` does) but no
 * cache: for `floe admin import`, whose statements read one local file and no table.
 */
export function uploadingExecutor(inner: Executor): Executor {
  return {
    execute: (plan, options) => inner.execute(plan, options),
    write: (request, options = {}) => uploaded(inner, request, request.targetCatalog, options.storage, (dataDirectory) => inner.write({ ...request, dataDirectory }, options)),
    writePlan: (plan, request, options = {}) => uploaded(inner, request, request.targetCatalog, options.storage, (dataDirectory) => inner.writePlan(plan, { ...request, dataDirectory }, options)),
    get stagingDirectory() {
      return inner.stagingDirectory;
    },
    get threads() {
      return inner.threads;
    },
    close: () => inner.close(),
  };
}

/** `inner` with object-store files fetched into `cache` before each statement reads them. */
export function localizingExecutor(inner: Executor, cache: FileCache): Executor {
  const bytes = (planned: number, l: Localized): number => Math.max(0, planned - l.remoteBytes) + l.fetched;
  return {
    async execute(plan, options: ExecuteOptions = {}) {
      const scans = plan.fragments.flatMap((f) => f.scans);
      return localized(cache, scans, options.storage, options.signal, async (l) => {
        const r = await checked(l, inner.execute(mapPlan(plan, l.scans), options));
        return l.scans.size === 0 ? r : { ...r, metrics: { ...r.metrics, bytesScanned: bytes(r.metrics.bytesScanned, l) } };
      });
    },
    async write(request: WriteRequest, options = {}) {
      return localized(cache, request.scans, options.storage, options.signal, (l) => {
        const scans = l.scans.size === 0 ? request.scans : request.scans.map((s) => l.scans.get(s) ?? s);
        // The verdict comes before the upload: a write never stores rows read from a replaced copy.
        return uploaded(inner, request, request.targetCatalog, options.storage, (dataDirectory) => checked(l, inner.write({ ...request, scans, dataDirectory }, options)));
      });
    },
    async writePlan(plan, request, options = {}) {
      return localized(cache, plan.fragments.flatMap((f) => f.scans), options.storage, options.signal, async (l) => {
        const r = await uploaded(inner, request, request.targetCatalog, options.storage, (dataDirectory) => checked(l, inner.writePlan(mapPlan(plan, l.scans), { ...request, dataDirectory }, options)));
        return l.scans.size === 0 ? r : { ...r, query: { ...r.query, bytesScanned: bytes(r.query.bytesScanned, l) } };
      });
    },
    get stagingDirectory() {
      return inner.stagingDirectory;
    },
    get threads() {
      return inner.threads;
    },
    close: () => inner.close(),
  };
}
