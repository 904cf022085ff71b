import t from 'tap';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { schema } from '../../catalog/iceberg/schema.js';
import type { FileScanTask } from '../../catalog/iceberg/scan.js';
import type { FragmentPlan, TableScanInput } from '../fragments.js';
import type { Executor, QueryResult } from './executor.js';
import { FileCache } from './file-cache.js';
import { localizingExecutor } from './localizing-executor.js';

const root = mkdtempSync(path.join(tmpdir(), 'floe-localize-'));
t.teardown(() => rmSync(root, { recursive: true, force: true }));

function task(location: string, size: number): FileScanTask {
  return { file: { content: 'data', filePath: location, fileFormat: 'PARQUET', partition: [], recordCount: 1, fileSizeInBytes: size }, specId: 0, positionDeletes: [], equalityDeletes: [] } as unknown as FileScanTask;
}

function scan(tasks: FileScanTask[], catalog = 'lake'): TableScanInput {
  return { relation: '__floe_scan_0', tableName: `${catalog}.ns.t`, catalog, schema: schema(0, []), columns: 'all', tasks, estimatedRows: 1, estimatedBytes: tasks.reduce((n, x) => n + x.file.fileSizeInBytes, 0) };
}

/** An inner executor that records the scans it was given and checks every local copy exists. */
function recorder(): { executor: Executor; seen: TableScanInput[] } {
  const seen: TableScanInput[] = [];
  const result: QueryResult = { columns: [], types: [], rows: [], metrics: { rows: 0, fragments: 1, cpuMs: 0, wallMs: 0, bytesScanned: 0 } } as unknown as QueryResult;
  return {
    seen,
    executor: {
      async execute(plan) {
        for (const f of plan.fragments) for (const s of f.scans) {
          seen.push(s);
          for (const p of s.localFiles?.values() ?? []) readFileSync(p);
        }
        return { ...result, metrics: { ...result.metrics, bytesScanned: plan.fragments.flatMap((f) => f.scans).reduce((n, s) => n + s.estimatedBytes, 0) } };
      },
      write: async () => { throw new Error('unused'); },
      writePlan: async () => { throw new Error('unused'); },
      stagingDirectory: root,
      threads: 0,
      close: async () => undefined,
    },
  };
}

t.test('object-store files are fetched and read locally; local ones are read in place', async (t) => {
  const cache = new FileCache({ directory: path.join(root, 'c1'), maxBytes: 1 << 20 });
  const { executor, seen } = recorder();
  const ex = localizingExecutor(executor, cache);
  const objects = new Map([['s3://bucket/t/data/a.parquet', new Uint8Array(10).fill(1)]]);
  const asked: string[] = [];
  const plan: FragmentPlan = { fragments: [{ id: 0, sql: 'SELECT 1', inputs: [], scans: [scan([task('s3://bucket/t/data/a.parquet', 10), task(`file://${root}/local.parquet`, 5)])] }] };
  const storageOf = (l: string): Uint8Array => objects.get(l)!;
  const io = { read: async (l: string) => storageOf(l), write: async () => undefined, delete: async () => undefined };
  const r = await ex.execute(plan, { storage: async (c) => { asked.push(c); return io; } });
  t.same(asked, ['lake']);
  const local = seen[0]!.localFiles!;
  t.equal(local.size, 1, 'only the object-store file has a local copy');
  t.match(local.get('s3://bucket/t/data/a.parquet'), /files/);
  t.equal(r.metrics.bytesScanned, 10, 'bytes fetched from storage');
  const again = await ex.execute(plan, { storage: async () => io });
  t.equal(again.metrics.bytesScanned, 0, 'a cache hit reads nothing from storage');
  t.equal(cache.stats().hits, 1);
});

t.test('without a way to reach the store, a clear error, not a wrong read', async (t) => {
  const cache = new FileCache({ directory: path.join(root, 'c2'), maxBytes: 1 << 20 });
  const ex = localizingExecutor(recorder().executor, cache);
  const plan: FragmentPlan = { fragments: [{ id: 0, sql: 'SELECT 1', inputs: [], scans: [scan([task('s3://bucket/x.parquet', 3)])] }] };
  await t.rejects(ex.execute(plan), { code: 'UNSUPPORTED_STATEMENT' });
});

t.test('an ETag found changed after the statement ran on the cached copy: its result is dropped and it runs again on the new bytes', async (t) => {
  const cache = new FileCache({ directory: path.join(root, 'c3'), maxBytes: 1 << 20 });
  const location = 's3://bucket/t/data/v.parquet';
  let stored = { bytes: new Uint8Array(4).fill(1), version: 'e1' };
  let heads = 0;
  let runs = 0;
  // The inner executor answers with the first byte of the copy it read.
  const inner: Executor = {
    ...recorder().executor,
    async execute(plan) {
      runs++;
      const copy = plan.fragments[0]!.scans[0]!.localFiles!.get(location)!;
      return { columns: ['b'], types: ['INTEGER'], rows: [[readFileSync(copy)[0]!]], metrics: { rows: 1, fragments: 1, cpuMs: 0, wallMs: 0, bytesScanned: 4, perFragment: [] } };
    },
  };
  const ex = localizingExecutor(inner, cache);
  const io = {
    read: async () => stored.bytes, readVersioned: async () => stored,
    version: async () => {
      heads++;
      await new Promise((r) => setTimeout(r, 20));
      return stored.version;
    },
    write: async () => undefined, delete: async () => undefined,
  };
  const plan: FragmentPlan = { fragments: [{ id: 0, sql: 'SELECT 1', inputs: [], scans: [scan([task(location, 4)])] }] };
  t.same((await ex.execute(plan, { storage: async () => io })).rows, [[1]], 'fetched');
  t.same((await ex.execute(plan, { storage: async () => io })).rows, [[1]], 'a hit, checked alongside');
  t.equal(heads, 1);
  t.equal(runs, 2);
  stored = { bytes: new Uint8Array(4).fill(2), version: 'e2' };
  const r = await ex.execute(plan, { storage: async () => io });
  t.same(r.rows, [[2]], 'the new bytes, never the cached ones');
  t.equal(runs, 4, 'the run over the stale copy was thrown away');
  t.equal(r.metrics.bytesScanned, 4, 'the refetch counts');
  t.equal(cache.stats().staleRefetches, 1);
});

t.test('a statement cancelled while its files are fetched ends at once with QUERY_CANCELLED and holds no pin', async (t) => {
  const cache = new FileCache({ directory: path.join(root, 'c4'), maxBytes: 1 << 20 });
  const { executor, seen } = recorder();
  const ex = localizingExecutor(executor, cache);
  const location = 's3://bucket/t/data/slow.parquet';
  let answer: (() => void) | undefined;
  let asked = 0;
  // The GET answers only when the test lets it: the statement must not wait for it to end.
  const io = {
    read: async () => {
      asked++;
      await new Promise<void>((resolve) => { answer = resolve; });
      return new Uint8Array(8).fill(3);
    },
    write: async () => undefined, delete: async () => undefined,
  };
  const plan: FragmentPlan = { fragments: [{ id: 0, sql: 'SELECT 1', inputs: [], scans: [scan([task(location, 8)])] }] };
  const abort = new AbortController();
  const running = ex.execute(plan, { storage: async () => io, signal: abort.signal });
  for (let i = 0; i < 10_000 && answer === undefined; i++) await new Promise((r) => setImmediate(r));
  t.equal(asked, 1, 'the GET is in flight');
  abort.abort();
  await t.rejects(running, { code: 'QUERY_CANCELLED' }, 'the cancellation, not the fetch, ends it');
  t.same(seen, [], 'the statement never ran');
  answer!();
  await cache.idle();
  t.equal(cache.stats().residentBytes, 8, 'the fetch under way finished into the cache');
  cache.evictAll();
  t.equal(cache.stats().residentBytes, 0, 'unpinned: nothing held for the cancelled statement');
});
