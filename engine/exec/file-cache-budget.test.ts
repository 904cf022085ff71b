/**
 * The file cache's budget accounting (issue 17: "never exceeded even under concurrent queries"):
 * objects larger than their manifest says, fetches that fail or are cancelled, leases that fail on
 * one file while others are still being fetched, and a property test of random interleavings of
 * all of it against a fake object store. Every wait is on the test's own gates or on
 * `setImmediate` turns, never on a clock.
 */
import t from 'tap';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { FileCache, type FetchedFile, type LeaseVerdict, type WantedFile } from './file-cache.js';

const root = mkdtempSync(path.join(tmpdir(), 'floe-file-cache-budget-'));
t.teardown(() => rmSync(root, { recursive: true, force: true }));

/** Bytes of the files in `dir` (a file removed while it is listed counts 0). */
function du(dir: string): number {
  let n = 0;
  for (const name of readdirSync(dir)) {
    try {
      n += statSync(path.join(dir, name)).size;
    } catch {
      // Gone between the listing and the stat.
    }
  }
  return n;
}

/** Distinct bytes per location and version, so a copy of one version is never taken for another. */
function content(location: string, version: number, size: number): Uint8Array {
  const seed = [...location].reduce((n, c) => n + c.charCodeAt(0), 0);
  return Uint8Array.from({ length: size }, (_, i) => (i * 31 + version * 17 + seed) % 251);
}

/** A promise the test resolves or rejects when it chooses. */
function gate<T>(): { promise: Promise<T>; open: (v: T) => void; fail: (e: unknown) => void } {
  let open!: (v: T) => void;
  let fail!: (e: unknown) => void;
  const promise = new Promise<T>((resolve, reject) => {
    open = resolve;
    fail = reject;
  });
  return { promise, open, fail };
}

/** A store whose GETs answer when the test opens their gate (one gate per location). */
function gatedStore(objects: Record<string, Uint8Array>): { fetch: (l: string) => Promise<FetchedFile>; gates: Map<string, ReturnType<typeof gate<void>>>; asked: string[] } {
  const gates = new Map(Object.keys(objects).map((l) => [l, gate<void>()] as const));
  const asked: string[] = [];
  return {
    gates, asked,
    fetch: async (l) => {
      asked.push(l);
      await gates.get(l)!.promise;
      return { bytes: objects[l]!, version: 'e1' };
    },
  };
}

/** Resolves once `check` holds, looking again after each turn of the event loop (bounded by turns, not time). */
async function until(check: () => boolean, turns = 100_000): Promise<void> {
  for (let i = 0; i < turns && !check(); i++) await new Promise((r) => setImmediate(r));
  if (!check()) throw new Error('condition never held');
}

t.test('an object larger than its manifest while pinned copies leave no room: kept outside the cache, the budget holds', async (t) => {
  const objects = { a: content('a', 0, 600), b: content('b', 0, 700) };
  const fetch = async (l: string): Promise<FetchedFile> => ({ bytes: objects[l as 'a' | 'b'], version: 'e1' });
  const dir = path.join(root, 'larger');
  const cache = new FileCache({ directory: dir, maxBytes: 1000 });
  const la = await cache.acquire([{ location: 'a', size: 600 }], fetch);
  // The manifest says 300 (which fits next to a's 600); the object is 700 (which does not).
  const lb = await cache.acquire([{ location: 'b', size: 300 }], fetch);
  const copy = lb.paths.get('b')!;
  t.same(readFileSync(copy), Buffer.from(objects.b), 'the object as stored, all 700 bytes');
  t.match(copy, `${path.sep}scratch${path.sep}`, 'in the lease\'s scratch folder, outside the cache');
  const s = cache.stats();
  t.same([s.residentBytes, s.sizeMismatches, s.bypasses], [600, 1, 1], 'only a counts; the disagreement is counted; b bypassed');
  t.ok(s.peakResidentBytes <= 1000, `peak ${s.peakResidentBytes} within the budget`);
  t.ok(du(path.join(dir, 'files')) <= 1000, 'nor are more bytes on disk in the cache');
  await lb.release();
  t.notOk(existsSync(copy), 'the outside copy goes with its lease');

  // Once a is unpinned, b's real size evicts it: b is cached at its real size.
  await la.release();
  const again = await cache.acquire([{ location: 'b', size: 300 }], fetch);
  t.same(readFileSync(again.paths.get('b')!), Buffer.from(objects.b));
  t.match(again.paths.get('b')!, `${path.sep}files${path.sep}`, 'in the cache this time');
  t.same([cache.stats().residentBytes, cache.stats().evictions], [700, 1], 'a evicted for b\'s real bytes');
  t.ok(cache.stats().peakResidentBytes <= 1000);
  await again.release();
  const hit = await cache.acquire([{ location: 'b', size: 300 }], fetch);
  t.equal(hit.bytesFetched, 0, 'a hit afterwards');
  await hit.release();
});

t.test('leases waiting on a fetch whose real size finds no room each get their own copy of its bytes', async (t) => {
  const objects = { p: content('p', 0, 500), x: content('x', 0, 900) };
  const s = gatedStore(objects);
  const cache = new FileCache({ directory: path.join(root, 'waiters'), maxBytes: 1000 });
  s.gates.get('p')!.open();
  const pinned = await cache.acquire([{ location: 'p', size: 500 }], s.fetch);
  const first = cache.acquire([{ location: 'x', size: 400 }], s.fetch);
  const second = cache.acquire([{ location: 'x', size: 400 }], s.fetch);
  s.gates.get('x')!.open();
  const leases = await Promise.all([first, second]);
  const copies = leases.map((l) => l.paths.get('x')!);
  t.not(copies[0], copies[1], 'one copy per lease');
  for (const c of copies) t.same(readFileSync(c), Buffer.from(objects.x), 'each the object\'s 900 bytes');
  t.equal(cache.stats().residentBytes, 500, 'the cache holds only the pinned file');
  t.ok(cache.stats().peakResidentBytes <= 1000);
  await Promise.all([...leases, pinned].map((l) => l.release()));
  for (const c of copies) t.notOk(existsSync(c));
  await cache.idle();
  t.same(readdirSync(path.join(root, 'waiters', 'scratch')), [], 'no scratch folder left');
});

t.test('an object larger than the whole budget is never written into the cache', async (t) => {
  const big = content('huge', 0, 5000);
  const cache = new FileCache({ directory: path.join(root, 'huge'), maxBytes: 1000 });
  const lease = await cache.acquire([{ location: 'huge', size: 100 }], async () => big);
  t.same(readFileSync(lease.paths.get('huge')!), Buffer.from(big));
  t.same([cache.stats().residentBytes, cache.stats().bypasses], [0, 1]);
  t.ok(cache.stats().peakResidentBytes <= 1000, 'the 100 bytes reserved, never the 5000');
  await lease.release();
});

t.test('a cancelled statement: acquire rejects at once; a fetch under way lands in the cache, one not yet sent frees its bytes and is never sent', async (t) => {
  const objects = { x: content('x', 0, 100), y: content('y', 0, 200) };
  const s = gatedStore(objects);
  const dir = path.join(root, 'cancel');
  // One fetch at a time: x is sent, y waits for its slot.
  const cache = new FileCache({ directory: dir, maxBytes: 1000, concurrency: 1 });
  const abort = new AbortController();
  const acquiring = cache.acquire([{ location: 'x', size: 100 }, { location: 'y', size: 200 }], s.fetch, undefined, { signal: abort.signal });
  await until(() => s.asked.length === 1);
  t.equal(cache.stats().residentBytes, 300, 'both reserved');
  const reason = new Error('cancelled by the test');
  abort.abort(reason);
  await t.rejects(acquiring, reason, 'rejects with the signal\'s reason, while x is still being fetched');
  t.equal(cache.stats().residentBytes, 100, 'y, never sent, gave its bytes back at once; x, being fetched, holds its own');
  s.gates.get('x')!.open();
  await cache.idle();
  t.same(s.asked, ['x'], 'y was never fetched');
  t.same([cache.stats().residentBytes, du(path.join(dir, 'files'))], [100, 100], 'x in the cache, unpinned');
  const later = await cache.acquire([{ location: 'x', size: 100 }], s.fetch);
  t.equal(later.bytesFetched, 0, 'and served to the next statement');
  await later.release();
  cache.evictAll();
  t.equal(cache.stats().residentBytes, 0, 'nothing leaked');

  // Aborted before it starts: nothing at all.
  const done = new AbortController();
  done.abort(reason);
  await t.rejects(cache.acquire([{ location: 'y', size: 200 }], s.fetch, undefined, { signal: done.signal }), reason);
  t.same([cache.stats().residentBytes, s.asked.length], [0, 1]);
});

t.test('a lease failing on one file lets go of the others at once; a fetch failing after that frees its reservation', async (t) => {
  const objects = { a: content('a', 0, 100), c: content('c', 0, 300) };
  const s = gatedStore(objects);
  const broken = new Error('no such object: b');
  const fetch = async (l: string): Promise<FetchedFile> => {
    if (l === 'b') throw broken;
    return s.fetch(l);
  };
  const dir = path.join(root, 'fail');
  const cache = new FileCache({ directory: dir, maxBytes: 1000, concurrency: 4 });
  await t.rejects(cache.acquire([{ location: 'a', size: 100 }, { location: 'b', size: 200 }, { location: 'c', size: 300 }], fetch), broken, 'the first failure, without waiting for a and c');
  t.equal(cache.stats().residentBytes, 400, 'b freed; a and c still being fetched hold theirs');
  s.gates.get('a')!.open();
  s.gates.get('c')!.fail(new Error('connection reset'));
  await cache.idle();
  t.same([cache.stats().residentBytes, du(path.join(dir, 'files'))], [100, 100], 'a cached; c failed with nobody pinning it and freed its bytes');
  cache.evictAll();
  t.equal(cache.stats().residentBytes, 0, 'no reservation left behind, no pin left behind');
});

t.test('a large object fetched in ranges and found larger than its manifest: one whole GET, then the same rule', async (t) => {
  const size = 20_000;
  const real = content('r', 1, 30_000);
  const fetchRange = async (_l: string, offset: number, length: number) => ({ bytes: real.subarray(offset, offset + length), version: 'e1', objectSize: real.length });
  const dir = path.join(root, 'ranged');
  const cache = new FileCache({ directory: dir, maxBytes: 25_000, partBytes: 4096 });
  let gets = 0;
  const fetch = async (): Promise<FetchedFile> => {
    gets++;
    // While the object is fetched, the cache's folder holds no more than it reserved (the manifest's 20,000).
    t.ok(du(path.join(dir, 'files')) <= 20_000);
    return { bytes: real, version: 'e1' };
  };
  const lease = await cache.acquire([{ location: 'r', size }], fetch, undefined, { fetchRange });
  t.equal(gets, 1, 'one whole GET after the ranged parts disagreed');
  t.same(readFileSync(lease.paths.get('r')!), Buffer.from(real));
  t.same([cache.stats().residentBytes, cache.stats().bypasses], [0, 1], '30,000 bytes do not fit a 25,000 budget: outside');
  t.ok(cache.stats().peakResidentBytes <= 25_000);
  await lease.release();
});

/** A small seeded generator (mulberry32): the property test's interleavings are reproducible. */
function random(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let x = Math.imul(a ^ (a >>> 15), 1 | a);
    x = (x + Math.imul(x ^ (x >>> 7), 61 | x)) ^ x;
    return ((x ^ (x >>> 14)) >>> 0) / 4294967296;
  };
}

class SourceFailure extends Error {}
class Cancelled extends Error {}

/**
 * Random statements (1-4 files each, up to 8 at once, some cancelled, checks before or alongside)
 * against a fake store whose objects are replaced behind the cache's back at other sizes or the
 * same, whose requests fail now and then, whose ranged answers sometimes lack the object's size or
 * come back short, all answering after random turns of the event loop. At every request, every
 * turn and every step: the cache's resident bytes (reservations included) are within the budget,
 * and the bytes in its folder within its resident bytes. Every copy served is byte for byte one
 * version of its object, and with its checks passed, a version no older than the statement. At the
 * end, with nothing running, the resident bytes are exactly the bytes on disk, and evicting
 * everything leaves 0: no reservation or pin was ever lost.
 */
async function property(seed: number, ranged: boolean): Promise<{ problems: string[]; stats: ReturnType<FileCache['stats']>; outcomes: Record<string, number> }> {
  const rng = random(seed);
  const budget = 30_000;
  const dir = path.join(root, `prop-${seed}-${ranged}`);
  const cache = new FileCache({ directory: dir, maxBytes: budget, concurrency: 1 + Math.floor(rng() * 4), partBytes: 4096 });
  const files = path.join(dir, 'files');
  const problems: string[] = [];
  const audit = (where: string): void => {
    const { residentBytes } = cache.stats();
    if (residentBytes > budget) problems.push(`${where}: resident ${residentBytes} above the budget ${budget}`);
    if (residentBytes < 0) problems.push(`${where}: resident ${residentBytes} below 0`);
    const onDisk = du(files);
    if (onDisk > residentBytes) problems.push(`${where}: ${onDisk} bytes in the cache's folder, only ${residentBytes} counted`);
  };
  const turns = async (most: number): Promise<void> => {
    for (let i = Math.floor(rng() * (most + 1)); i > 0; i--) {
      await new Promise((r) => setImmediate(r));
      audit('turn');
    }
  };
  // Locations: small files and files large enough for ranged parts; manifests give the first size.
  const history = new Map<string, Uint8Array[]>();
  const manifest = new Map<string, number>();
  for (let i = 0; i < 8; i++) {
    const l = `s3://b/f${i}.parquet`;
    const size = i < 5 ? 100 + Math.floor(rng() * 3000) : 8192 + Math.floor(rng() * 8000);
    manifest.set(l, size);
    // Some objects already differ from their manifest, as some writers' do.
    const real = rng() < 0.25 ? Math.max(1, Math.floor(size * (0.5 + rng() * 1.5))) : size;
    history.set(l, [content(l, 0, real)]);
  }
  const locations = [...manifest.keys()];
  const latest = (l: string): { bytes: Uint8Array; version: number } => {
    const h = history.get(l)!;
    return { bytes: h[h.length - 1]!, version: h.length - 1 };
  };
  const failRate = 0.06;
  const source = {
    fetch: async (l: string): Promise<FetchedFile> => {
      audit('GET');
      const { bytes, version } = latest(l);
      await turns(5);
      audit('GET answered');
      if (rng() < failRate) throw new SourceFailure(`GET ${l} failed`);
      return { bytes: bytes.slice(), version: `v${version}` };
    },
    fetchRange: async (l: string, offset: number, length: number) => {
      audit('ranged GET');
      const { bytes, version } = latest(l);
      await turns(5);
      if (rng() < failRate) throw new SourceFailure(`ranged GET ${l} failed`);
      const short = rng() < 0.05 ? Math.floor(length / 2) : length;
      return { bytes: bytes.slice(offset, offset + short), version: `v${version}`, objectSize: rng() < 0.1 ? undefined : bytes.length };
    },
    head: async (l: string): Promise<string> => {
      const { version } = latest(l);
      await turns(3);
      if (rng() < failRate / 3) throw new SourceFailure(`HEAD ${l} failed`);
      return `v${version}`;
    },
  };
  const outcomes: Record<string, number> = { served: 0, failed: 0, cancelled: 0, stale: 0 };
  const cancels: Promise<void>[] = [];
  const statement = async (q: number): Promise<void> => {
    const picked = locations.filter(() => rng() < 0.35).slice(0, 4);
    if (picked.length === 0) picked.push(locations[Math.floor(rng() * locations.length)]!);
    // Mostly the manifest's size; now and then a manifest giving the object's size now (another key).
    const wanted: WantedFile[] = picked.map((l) => ({ location: l, size: rng() < 0.8 ? manifest.get(l)! : latest(l).bytes.length }));
    const startVersion = new Map(picked.map((l) => [l, latest(l).version]));
    const checks = rng() < 0.5 ? 'before' as const : 'alongside' as const;
    const abort = rng() < 0.2 ? new AbortController() : undefined;
    if (abort !== undefined) {
      // Awaited before the end checks: a cancel still counting turns after the cache is closed
      // would audit a folder that close() has removed (seen as ENOENT on a loaded CI machine).
      cancels.push(turns(20).then(() => abort.abort(new Cancelled(`statement ${q} cancelled`))));
    }
    let lease;
    try {
      lease = await cache.acquire(wanted, source.fetch, source.head, { checks, ...(ranged ? { fetchRange: source.fetchRange } : {}), ...(abort !== undefined ? { signal: abort.signal } : {}) });
    } catch (e) {
      if (e instanceof Cancelled) outcomes.cancelled!++;
      else if (e instanceof SourceFailure) outcomes.failed!++;
      else problems.push(`statement ${q}: unexpected error ${String(e)}`);
      audit('after a failed acquire');
      return;
    }
    audit('after acquire');
    const verdict: LeaseVerdict = await lease.verdict;
    if (verdict.kind !== 'current') outcomes.stale!++;
    for (const w of wanted) {
      const copy = lease.paths.get(w.location);
      if (copy === undefined) {
        problems.push(`statement ${q}: no copy of ${w.location}`);
        continue;
      }
      const got = readFileSync(copy);
      const versions = history.get(w.location)!;
      const v = versions.findIndex((b) => Buffer.from(b).equals(got));
      if (v < 0) problems.push(`statement ${q}: the copy of ${w.location} (${got.length} bytes) is no version of the object`);
      else if (verdict.kind === 'current' && v < startVersion.get(w.location)!) problems.push(`statement ${q}: ${w.location} served at version ${v}, older than ${startVersion.get(w.location)} when it began`);
    }
    outcomes.served!++;
    // Held (pinned) for a while, as a running query holds its files.
    await turns(30);
    await lease.release();
    audit('after release');
  };
  const running = new Set<Promise<void>>();
  for (let q = 0; q < 60; q++) {
    while (running.size >= 8) await Promise.race(running);
    const r = rng();
    if (r < 0.2) {
      // Replaced behind the cache's back: another size (larger or smaller) or the same.
      const l = locations[Math.floor(rng() * locations.length)]!;
      const size = rng() < 0.5 ? latest(l).bytes.length : Math.max(1, Math.floor(manifest.get(l)! * (0.5 + rng() * 1.5)));
      history.get(l)!.push(content(l, history.get(l)!.length, size));
    } else if (r < 0.24) {
      cache.evictAll();
      audit('after evictAll');
    }
    const run = statement(q).catch((e: unknown) => {
      problems.push(`statement ${q} threw ${String(e)}`);
    });
    running.add(run);
    void run.finally(() => running.delete(run));
    await turns(4);
  }
  await Promise.all(running);
  await Promise.all(cancels);
  await cache.idle();
  audit('at rest');
  const atRest = cache.stats().residentBytes;
  const onDisk = du(files);
  if (atRest !== onDisk) problems.push(`at rest: ${atRest} bytes counted, ${onDisk} on disk`);
  cache.evictAll();
  if (cache.stats().residentBytes !== 0 || du(files) !== 0) problems.push(`after evictAll at rest: ${cache.stats().residentBytes} counted, ${du(files)} on disk`);
  if (readdirSync(path.join(dir, 'scratch')).length !== 0) problems.push('scratch folders left behind');
  if (cache.stats().peakResidentBytes > budget) problems.push(`peak ${cache.stats().peakResidentBytes}`);
  const stats = cache.stats();
  cache.close();
  return { problems, stats, outcomes };
}

t.test('property: random fetch / pin / release / evict / replace / fail / cancel interleavings keep the budget and serve only real bytes', async (t) => {
  const total = { bypasses: 0, sizeMismatches: 0, evictions: 0, staleRefetches: 0, served: 0, failed: 0, cancelled: 0 };
  for (let seed = 1; seed <= 16; seed++) {
    for (const ranged of [false, true]) {
      const { problems, stats, outcomes } = await property(seed, ranged);
      t.same(problems, [], `seed ${seed}${ranged ? ', ranged' : ''}: no invariant broken`);
      total.bypasses += stats.bypasses;
      total.sizeMismatches += stats.sizeMismatches;
      total.evictions += stats.evictions;
      total.staleRefetches += stats.staleRefetches;
      total.served += outcomes.served!;
      total.failed += outcomes.failed!;
      total.cancelled += outcomes.cancelled!;
    }
  }
  // The runs went through every path they are meant to check (else they prove little).
  for (const [what, n] of Object.entries(total)) t.ok(n > 0, `${what}: ${n}`);
});
