import t from 'tap';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
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
  // A manifest size the object does not have: the object as stored now is served (as a local file
  // is read in place), never an older copy, and the disagreement is counted.
  const fresh = new FileCache({ directory: path.join(root, 'c5b'), maxBytes: 10_000 });
  const other = await fresh.acquire([{ location: 'x', size: 100 }], s.fetch);
  t.same(readFileSync(other.paths.get('x')!), Buffer.from(s.bytes.get('x')!), 'the 120 bytes stored now');
  t.same([fresh.stats().sizeMismatches, fresh.stats().residentBytes], [1, 120]);
  await other.release();
  await t.rejects(fresh.acquire([{ location: 'gone', size: 100 }], s.fetch), /no gone/);
  t.equal(fresh.stats().residentBytes, 120, 'nothing is kept of a failed fetch');
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

t.test('checks alongside: a hit is served at once, its verdict says whether it was current', async (t) => {
  const s = store({ a: 100, b: 50 });
  let tag = 'e1';
  let release: () => void = () => undefined;
  let heads = 0;
  const fetch = async (l: string) => ({ bytes: await s.fetch(l), version: tag });
  // The HEAD answers only when the test lets it: the lease must not wait for it.
  const current = async () => {
    heads++;
    await new Promise<void>((r) => { release = r; });
    return tag;
  };
  const cache = new FileCache({ directory: path.join(root, 'c9'), maxBytes: 1000 });
  await (await cache.acquire([{ location: 'a', size: 100 }], fetch, current)).release();
  const lease = await cache.acquire([{ location: 'a', size: 100 }, { location: 'b', size: 50 }], fetch, current, { checks: 'alongside' });
  t.equal(heads, 1, 'the check of the hit is in flight');
  t.ok(existsSync(lease.paths.get('a')!), 'and the copy already served');
  t.equal(s.reads.get('b'), 1, 'the miss was fetched (its GET is its check)');
  release();
  t.same(await lease.verdict, { kind: 'current' });
  await lease.release();

  // Rewritten in place: served alongside, the verdict says stale, and the next lease fetches anew.
  tag = 'e2';
  s.bytes.set('a', new Uint8Array(100).fill(7));
  const stale = await cache.acquire([{ location: 'a', size: 100 }], fetch, current, { checks: 'alongside' });
  release();
  t.same(await stale.verdict, { kind: 'stale', location: 'a' });
  await stale.release();
  t.equal(cache.stats().staleRefetches, 1);
  const fresh = await cache.acquire([{ location: 'a', size: 100 }], fetch, current, { checks: 'alongside' });
  t.equal(s.reads.get('a'), 2, 'fetched again');
  t.same([...readFileSync(fresh.paths.get('a')!)].slice(0, 2), [7, 7]);
  t.same(await fresh.verdict, { kind: 'current' }, 'a copy fetched for this lease needs no check');
  t.equal(heads, 2);
  await fresh.release();
  t.equal(cache.stats().residentBytes, 150, 'the stale copy left the count');
});

t.test('a failed check is the verdict, not a stray rejection', async (t) => {
  const s = store({ a: 10 });
  const fetch = async (l: string) => ({ bytes: await s.fetch(l), version: 'e1' });
  const cache = new FileCache({ directory: path.join(root, 'c10'), maxBytes: 1000 });
  await (await cache.acquire([{ location: 'a', size: 10 }], fetch, async () => 'e1')).release();
  const gone = Object.assign(new Error('File does not exist: a'), { kind: 'file-not-found' });
  const lease = await cache.acquire([{ location: 'a', size: 10 }], fetch, async () => { throw gone; }, { checks: 'alongside' });
  t.same(await lease.verdict, { kind: 'failed', error: gone });
  await lease.release();
  await t.rejects(cache.acquire([{ location: 'a', size: 10 }], fetch, async () => { throw gone; }), gone, 'checked before: the error rejects acquire');
});

t.test('resize: a smaller budget evicts unpinned copies and is never exceeded after', async (t) => {
  const s = store({ a: 400, b: 400, c: 400 });
  const cache = new FileCache({ directory: path.join(root, 'c11'), maxBytes: 2000 });
  await (await cache.acquire([{ location: 'a', size: 400 }, { location: 'b', size: 400 }], s.fetch)).release();
  cache.resize(500);
  t.equal(cache.stats().residentBytes, 400, 'the least recently used copy evicted: the other fits');
  t.equal(cache.stats().peakResidentBytes, 400, 'the peak restarts at what is resident');
  const l = await cache.acquire([{ location: 'a', size: 400 }, { location: 'c', size: 400 }], s.fetch);
  t.equal(cache.stats().bypasses, 1, 'the second file did not fit');
  t.ok(cache.stats().peakResidentBytes <= 500);
  await l.release();
});

t.test('a large file is fetched in parallel ranges of one version; tags that disagree fall back to one GET', async (t) => {
  const size = 300_000;
  const s = store({ big: size });
  const ranges: [number, number][] = [];
  let tagOf = (_offset: number): string => 'e1';
  let objectSize = size;
  const fetch = async (l: string) => ({ bytes: await s.fetch(l), version: 'e1' });
  const fetchRange = async (l: string, offset: number, length: number) => {
    ranges.push([offset, length]);
    await new Promise((r) => setTimeout(r, 1));
    return { bytes: s.bytes.get(l)!.subarray(offset, offset + length), version: tagOf(offset), objectSize };
  };
  const cache = new FileCache({ directory: path.join(root, 'c12'), maxBytes: 10 * size, partBytes: 65_536 });
  const a = await cache.acquire([{ location: 'big', size }], fetch, undefined, { fetchRange });
  t.equal(ranges.length, 5, 'five parts');
  t.equal(s.reads.get('big'), undefined, 'no whole-object GET');
  t.same(readFileSync(a.paths.get('big')!), Buffer.from(s.bytes.get('big')!), 'the bytes, in place');
  t.equal(a.bytesFetched, size);
  await a.release();

  cache.evictAll();
  tagOf = (offset) => (offset === 0 ? 'e1' : 'e2');
  const b = await cache.acquire([{ location: 'big', size }], fetch, undefined, { fetchRange });
  t.equal(s.reads.get('big'), 1, 'parts of two versions: fetched again in one GET');
  t.same(readFileSync(b.paths.get('big')!), Buffer.from(s.bytes.get('big')!));
  await b.release();

  // The object is not the manifest's size: the parts planned from it would assemble another
  // length, so the whole object comes in one GET and is served as stored (as a local file is read).
  for (const [label, actual, told] of [['larger', size + 10, true], ['smaller', size - 70_000, true], ['smaller, no Content-Range', size - 70_000, false], ['larger, no Content-Range', size + 10, false]] as const) {
    cache.evictAll();
    s.bytes.set('big', Uint8Array.from({ length: actual }, (_, i) => (i * 7) % 251));
    s.reads.delete('big');
    tagOf = () => 'e3';
    objectSize = told ? actual : (undefined as unknown as number);
    const before = cache.stats().sizeMismatches;
    const c = await cache.acquire([{ location: 'big', size }], fetch, undefined, { fetchRange });
    t.equal(s.reads.get('big'), 1, `${label}: one whole-object GET`);
    t.same(readFileSync(c.paths.get('big')!), Buffer.from(s.bytes.get('big')!), `${label}: the object's bytes, its length`);
    t.equal(c.bytesFetched, actual, `${label}: the real bytes fetched`);
    t.equal(cache.stats().residentBytes, actual, `${label}: the budget counts the real bytes`);
    t.equal(cache.stats().sizeMismatches, before + 1, `${label}: counted`);
    await c.release();
  }
  cache.evictAll();
  t.equal(cache.stats().residentBytes, 0, 'evicted by its real bytes');
  t.same(readdirSync(path.join(root, 'c12', 'files')), [], 'no partial file left');
});

t.test('an object of another size than the manifest: served as stored, reported, and still checked by its tag', async (t) => {
  const s = store({ 's3://b/odd.parquet': 300, 's3://b/other.parquet': 400 });
  let tag = 'e1';
  const fetch = async (l: string) => ({ bytes: await s.fetch(l), version: tag });
  const told: unknown[] = [];
  const cache = new FileCache({ directory: path.join(root, 'c13'), maxBytes: 800, onSizeMismatch: (m) => told.push(m) });
  const a = await cache.acquire([{ location: 's3://b/odd.parquet', size: 100 }], fetch, async () => tag);
  t.same(readFileSync(a.paths.get('s3://b/odd.parquet')!), Buffer.from(s.bytes.get('s3://b/odd.parquet')!), 'the 300 bytes stored, not refused');
  t.same(told, [{ location: 's3://b/odd.parquet', manifestBytes: 100, objectBytes: 300 }], 'reported with its location');
  t.same([cache.stats().sizeMismatches, cache.stats().residentBytes], [1, 300], 'counted; the budget holds its real bytes');
  await a.release();

  // Both fit the budget by their real bytes (300 + 400).
  const b = await cache.acquire([{ location: 's3://b/other.parquet', size: 400 }], fetch, async () => tag);
  t.equal(cache.stats().residentBytes, 700);
  t.ok(cache.stats().peakResidentBytes <= 800, 'never above the budget');
  await b.release();

  // A hit is still checked by its tag: rewritten (another ETag), it is fetched again, never stale.
  const c = await cache.acquire([{ location: 's3://b/odd.parquet', size: 100 }], fetch, async () => tag);
  t.equal(s.reads.get('s3://b/odd.parquet'), 1, 'a hit while the tag is the same');
  await c.release();
  s.bytes.set('s3://b/odd.parquet', Uint8Array.from({ length: 250 }, (_, i) => (i * 3) % 251));
  tag = 'e2';
  const d = await cache.acquire([{ location: 's3://b/odd.parquet', size: 100 }], fetch, async () => tag);
  t.equal(s.reads.get('s3://b/odd.parquet'), 2, 'refetched');
  t.same(readFileSync(d.paths.get('s3://b/odd.parquet')!), Buffer.from(s.bytes.get('s3://b/odd.parquet')!), 'the new bytes');
  t.same([cache.stats().staleRefetches, cache.stats().sizeMismatches], [1, 2]);
  await d.release();
  t.equal(cache.stats().residentBytes, 400 + 250, 'the stale copy freed its real bytes');
});
