import t from 'tap';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { FileCache } from './file-cache.js';

const root = mkdtempSync(path.join(tmpdir(), 'floe-file-cache-'));
t.teardown(() => rmSync(root, { recursive: true, force: true }));

/** A fake object store: location → bytes, counting reads. */
function store(files: Record<string, number>): { fetch: (l: string) => Promise<Uint8Array>; reads: Map<string, number>; bytes: Map<string, Uint8Array> } {
  const bytes = new Map(Object.entries(files).map(([l, n]) => [l, Uint8Array.from({ length: n }, (_, i) => (i + l.length) % 251)] as const));
  const reads = new Map<string, number>();
  return {
    bytes, reads,
    fetch: async (l) => {
      reads.set(l, (reads.get(l) ?? 0) + 1);
      await new Promise((r) => setTimeout(r, 2));
      const b = bytes.get(l);
      if (b === undefined) throw new Error(`no ${l}`);
      return b;
    },
  };
}

t.test('hits after the first fetch, with the right bytes', async (t) => {
  const s = store({ 's3://b/a.parquet': 100, 's3://b/b.parquet': 50 });
  const cache = new FileCache({ directory: path.join(root, 'c1'), maxBytes: 1000 });
  const wanted = [{ location: 's3://b/a.parquet', size: 100 }, { location: 's3://b/b.parquet', size: 50 }];
  const one = await cache.acquire(wanted, s.fetch);
  t.equal(one.bytesFetched, 150);
  t.same([...readFileSync(one.paths.get('s3://b/a.parquet')!)], [...s.bytes.get('s3://b/a.parquet')!]);
  await one.release();
  const two = await cache.acquire(wanted, s.fetch);
  t.equal(two.bytesFetched, 0, 'served from the cache');
  await two.release();
  t.match(cache.stats(), { hits: 2, misses: 2, bytesFetched: 150, residentBytes: 150 });
});

t.test('LRU eviction keeps the budget; pinned files are never evicted', async (t) => {
  const s = store({ a: 400, b: 400, c: 400 });
  const cache = new FileCache({ directory: path.join(root, 'c2'), maxBytes: 1000 });
  const la = await cache.acquire([{ location: 'a', size: 400 }], s.fetch);
  const lb = await cache.acquire([{ location: 'b', size: 400 }], s.fetch);
  await lb.release();
  // a is pinned, b is not: c evicts b.
  const lc = await cache.acquire([{ location: 'c', size: 400 }], s.fetch);
  t.ok(existsSync(la.paths.get('a')!), 'the pinned file stays');
  t.equal(cache.stats().evictions, 1);
  t.ok(cache.stats().peakResidentBytes <= 1000);
  await la.release();
  await lc.release();
});

t.test('a query over more than the budget completes outside the cache', async (t) => {
  const s = store({ a: 600, b: 600, c: 600 });
  const cache = new FileCache({ directory: path.join(root, 'c3'), maxBytes: 1000 });
  const lease = await cache.acquire([{ location: 'a', size: 600 }, { location: 'b', size: 600 }, { location: 'c', size: 600 }], s.fetch);
  t.equal(lease.paths.size, 3);
  for (const p of lease.paths.values()) t.equal(readFileSync(p).length, 600);
  t.ok(cache.stats().peakResidentBytes <= 1000, 'the cache itself stayed within its budget');
  t.equal(cache.stats().bypasses, 2);
  const bypass = [...lease.paths.values()].filter((p) => p.includes(`${path.sep}scratch${path.sep}`));
  await lease.release();
  for (const p of bypass) t.notOk(existsSync(p), 'bypass copies go at release');
});

t.test('eight concurrent queries: single fetch per file, budget never exceeded', async (t) => {
  const files: Record<string, number> = {};
  for (let i = 0; i < 20; i++) files[`f${i}`] = 100 + i * 37;
  const s = store(files);
  const cache = new FileCache({ directory: path.join(root, 'c4'), maxBytes: 2500, concurrency: 4 });
  const names = Object.keys(files);
  const queries = Array.from({ length: 8 }, (_, q) => names.filter((_, i) => (i + q) % 3 === 0).map((l) => ({ location: l, size: files[l]! })));
  await Promise.all(queries.map(async (wanted) => {
    for (let round = 0; round < 3; round++) {
      const lease = await cache.acquire(wanted, s.fetch);
      for (const w of wanted) t.equal(readFileSync(lease.paths.get(w.location)!).length, w.size);
      await lease.release();
    }
  }));
  t.ok(cache.stats().peakResidentBytes <= 2500, `peak ${cache.stats().peakResidentBytes} within 2500`);
  t.ok(cache.stats().hits > 0);
});

t.test('a file replaced under the same name is fetched again, never served stale', async (t) => {
  const s = store({ x: 100 });
  const cache = new FileCache({ directory: path.join(root, 'c5'), maxBytes: 10_000 });
  await (await cache.acquire([{ location: 'x', size: 100 }], s.fetch)).release();
  s.bytes.set('x', new Uint8Array(120).fill(7));
  const lease = await cache.acquire([{ location: 'x', size: 120 }], s.fetch);
  t.same([...readFileSync(lease.paths.get('x')!)].slice(0, 3), [7, 7, 7]);
  await lease.release();
  // A manifest size the object does not have is an error, not a silent read of other bytes.
  const fresh = new FileCache({ directory: path.join(root, 'c5b'), maxBytes: 10_000 });
  await t.rejects(fresh.acquire([{ location: 'x', size: 100 }], s.fetch), /replaced outside Iceberg/);
  t.equal(fresh.stats().residentBytes, 0, 'nothing is kept of a failed fetch');
});

t.test('two queries wanting the same file fetch it once', async (t) => {
  const s = store({ y: 1000 });
  const cache = new FileCache({ directory: path.join(root, 'c6'), maxBytes: 10_000 });
  const [a, b] = await Promise.all([cache.acquire([{ location: 'y', size: 1000 }], s.fetch), cache.acquire([{ location: 'y', size: 1000 }], s.fetch)]);
  t.equal(s.reads.get('y'), 1);
  t.equal(a.paths.get('y'), b.paths.get('y'));
  await a.release();
  await b.release();
});

t.test('with version tags, a file rewritten in place at its old size is fetched again; its holder keeps the old copy', async (t) => {
  const s = store({ v: 200 });
  let tag = 'etag-1';
  const fetch = async (l: string) => ({ bytes: await s.fetch(l), version: tag });
  const heads: string[] = [];
  const current = async (l: string) => {
    heads.push(l);
    return tag;
  };
  const cache = new FileCache({ directory: path.join(root, 'c7'), maxBytes: 1000 });
  const old = await cache.acquire([{ location: 'v', size: 200 }], fetch, current);
  const again = await cache.acquire([{ location: 'v', size: 200 }], fetch, current);
  t.equal(s.reads.get('v'), 1, 'same tag: a hit');
  t.same(heads, ['v'], 'checked with one HEAD');
  await again.release();
  s.bytes.set('v', new Uint8Array(200).fill(9));
  tag = 'etag-2';
  const fresh = await cache.acquire([{ location: 'v', size: 200 }], fetch, current);
  t.equal(s.reads.get('v'), 2, 'another tag: fetched again');
  t.same([...readFileSync(fresh.paths.get('v')!)].slice(0, 3), [9, 9, 9], 'the new bytes');
  t.not(fresh.paths.get('v'), old.paths.get('v'), 'in another file');
  t.ok(existsSync(old.paths.get('v')!), 'the query still holding the old copy keeps reading it');
  t.equal(cache.stats().residentBytes, 400, 'both copies count against the budget while both are on disk');
  await old.release();
  t.notOk(existsSync(old.paths.get('v')!), 'the stale copy goes with its last holder');
  t.equal(cache.stats().residentBytes, 200, 'and its bytes leave the count');
  await fresh.release();
  const s3 = cache.stats();
  t.equal(s3.staleRefetches, 1);
  const last = await cache.acquire([{ location: 'v', size: 200 }], fetch, current);
  t.equal(s.reads.get('v'), 2, 'the new copy is a hit');
  await last.release();
});

t.test('leases wanting a cached copy at the same time share one version check', async (t) => {
  const s = store({ w: 100 });
  let heads = 0;
  const fetch = async (l: string) => ({ bytes: await s.fetch(l), version: 'e1' });
  const current = async () => {
    heads++;
    await new Promise((r) => setTimeout(r, 5));
    return 'e1';
  };
  const cache = new FileCache({ directory: path.join(root, 'c8'), maxBytes: 1000 });
  await (await cache.acquire([{ location: 'w', size: 100 }], fetch, current)).release();
  const leases = await Promise.all([1, 2, 3].map(() => cache.acquire([{ location: 'w', size: 100 }], fetch, current)));
  t.equal(heads, 1, 'one HEAD for three leases');
  t.equal(cache.stats().hits, 3);
  await Promise.all(leases.map((l) => l.release()));
  await (await cache.acquire([{ location: 'w', size: 100 }], fetch, current)).release();
  t.equal(heads, 2, 'a later lease checks again');
});
