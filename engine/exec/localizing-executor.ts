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
import { floeError } from '../../grammar/errors.js';
import type { FragmentPlan, TableScanInput } from '../fragments.js';
import type { ExecuteOptions, Executor, StatementStorage, WriteRequest, WriteResult } from './executor.js';
import type { FetchFile, FileCache, FileLease, WantedFile } from './file-cache.js';

/** How a statement reaches the object-store files of a catalog (the catalog's FileIO). */
export type CatalogStorage = (catalog: string) => Promise<StatementStorage>;

interface Localized {
  readonly scans: ReadonlyMap<TableScanInput, TableScanInput>;
  /** Planned bytes of the scans that read object storage (replaced by fetched bytes in metrics). */
  readonly remoteBytes: number;
  readonly fetched: number;
  release(): Promise<void>;
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

async function localize(cache: FileCache, scans: readonly TableScanInput[], storage: CatalogStorage | undefined): Promise<Localized> {
  const leases: FileLease[] = [];
  const replaced = new Map<TableScanInput, TableScanInput>();
  let remoteBytes = 0;
  const release = async (): Promise<void> => {
    await Promise.all(leases.splice(0).map((l) => l.release()));
  };
  // Every scan's files at once: a statement over several tables waits for one round of fetches
  // (or of ETag checks, when all are cached), not one per table.
  const settled = await Promise.allSettled(scans.map(async (scan) => {
    const wanted = remoteFiles(scan);
    if (wanted.length === 0) return;
    if (storage === undefined || scan.catalog === undefined) {
      throw floeError('UNSUPPORTED_STATEMENT', { what: `reading ${scan.tableName}: its files are on object storage and this statement has no way to reach it` });
    }
    const io = await storage(scan.catalog);
    // With version tags (S3 ETags) the cache also notices a file rewritten in place at its old size.
    const fetch: FetchFile = io.readVersioned !== undefined ? (l) => io.readVersioned!(l) : (l) => io.read(l);
    const lease = await cache.acquire(wanted, fetch, io.version !== undefined ? (l) => io.version!(l) : undefined);
    leases.push(lease);
    remoteBytes += scan.estimatedBytes;
    replaced.set(scan, { ...scan, localFiles: new Map([...(scan.localFiles ?? []), ...lease.paths]) });
  }));
  const failed = settled.find((r): r is PromiseRejectedResult => r.status === 'rejected');
  if (failed !== undefined) {
    await release();
    throw failed.reason;
  }
  return { scans: replaced, remoteBytes, fetched: leases.reduce((n, l) => n + l.bytesFetched, 0), release };
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

/** `inner` with object-store files fetched into `cache` before each statement reads them. */
export function localizingExecutor(inner: Executor, cache: FileCache): Executor {
  const bytes = (planned: number, l: Localized): number => Math.max(0, planned - l.remoteBytes) + l.fetched;
  return {
    async execute(plan, options: ExecuteOptions = {}) {
      const l = await localize(cache, plan.fragments.flatMap((f) => f.scans), options.storage);
      try {
        const r = await inner.execute(mapPlan(plan, l.scans), options);
        return l.scans.size === 0 ? r : { ...r, metrics: { ...r.metrics, bytesScanned: bytes(r.metrics.bytesScanned, l) } };
      } finally {
        await l.release();
      }
    },
    async write(request: WriteRequest, options = {}) {
      const l = await localize(cache, request.scans, options.storage);
      try {
        const scans = l.scans.size === 0 ? request.scans : request.scans.map((s) => l.scans.get(s) ?? s);
        return await uploaded(inner, request, request.targetCatalog, options.storage, (dataDirectory) => inner.write({ ...request, scans, dataDirectory }, options));
      } finally {
        await l.release();
      }
    },
    async writePlan(plan, request, options = {}) {
      const l = await localize(cache, plan.fragments.flatMap((f) => f.scans), options.storage);
      try {
        const r = await uploaded(inner, request, request.targetCatalog, options.storage, (dataDirectory) => inner.writePlan(mapPlan(plan, l.scans), { ...request, dataDirectory }, options));
        return l.scans.size === 0 ? r : { ...r, query: { ...r.query, bytesScanned: bytes(r.query.bytesScanned, l) } };
      } finally {
        await l.release();
      }
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
