/**
 * The read-through cache's acceptance on a real Ceph RGW (issue 17): a query over more data than
 * the budget completes, and the cache never holds more than its budget, watched on the metrics
 * while 8 such queries run at once; `bytes_scanned` in history counts bytes fetched from storage
 * (a second run of the same query, all cache hits, fetched nothing); a data file changed behind
 * Floe's back is refetched, never served stale.
 */
import t from 'tap';
import { CopyObjectCommand, ListObjectsV2Command, PutObjectCommand } from '@aws-sdk/client-s3';
import { findOrphans } from '../../catalog/rest/orphans.js';
import { Floe } from '../../index.js';
import { openStore } from '../../catalog/store/open-store.js';
import type { MetaStore } from '../../catalog/store/meta-store.js';
import { onRgw, type RgwStore } from '../helpers/rgw.js';
import { parseExposition } from '../helpers/prometheus.js';
import { FileCache } from '../../engine/exec/file-cache.js';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const ADMIN = { tenantId: 'default', principalId: 'test', roles: ['tenant_admin'] };
const FILES = 8;
const ROWS_PER_FILE = 3000;

async function openFloe(store: MetaStore, maxBytes?: number): Promise<Floe> {
  return Floe.open({
    store,
    ...(maxBytes === undefined ? {} : { config: (c) => ({ ...c, storage: { ...c.storage, cache: { ...c.storage.cache, max_bytes: maxBytes } } }) }),
  });
}

/** The cache's gauges as /metrics exposes them. */
async function cacheGauges(floe: Floe): Promise<{ resident: number; peak: number; max: number; bypasses: number }> {
  const e = parseExposition(await floe.state.metrics.registry.metrics());
  const v = (name: string): number => Number(e.samples.find((s) => s.name === name)?.value ?? Number.NaN);
  return { resident: v('floe_file_cache_resident_bytes'), peak: v('floe_file_cache_peak_resident_bytes'), max: v('floe_file_cache_max_bytes'), bypasses: v('floe_file_cache_bypasses_total') };
}

async function bytesScanned(floe: Floe, queryId: string): Promise<number> {
  const rows = (await floe.sql(`SELECT bytes_scanned FROM system.query_history WHERE query_id = '${queryId}'`)).rows;
  return Number(rows[0]?.[0]);
}

/** The data files of a table in the bucket, found under the table's location. */
async function dataFiles(rgw: RgwStore, floe: Floe, table: string): Promise<{ key: string; size: number }[]> {
  const { location } = (await floe.state.catalog.loadTable(ADMIN, 'lake', { namespace: ['c'], name: table })).metadata;
  const prefix = `${location.replace(/^s3:\/\/cachewh\//, '').replace(/\/+$/, '')}/`;
  const s3 = rgw.client();
  try {
    const r = await s3.send(new ListObjectsV2Command({ Bucket: 'cachewh', Prefix: prefix }));
    return (r.Contents ?? []).filter((o) => o.Key?.endsWith('.parquet')).map((o) => ({ key: o.Key ?? '', size: o.Size ?? 0 }));
  } finally {
    s3.destroy();
  }
}

await onRgw(t, 'file cache on RGW', async (t, rgw) => {
  await rgw.createBucket('cachewh');
  const store = await openStore({ kind: 'pglite-memory' });
  const writer = await openFloe(store);
  // Closing a Floe closes the store it was given: every server stays open until the suite ends.
  const outer = t;
  const later = (floe: Floe): void => outer.teardown(() => floe.close());
  later(writer);
  await writer.state.catalog.createCatalog(ADMIN, {
    name: 'lake', warehouseLocation: 's3://cachewh/wh',
    storage: {
      profile: { type: 's3', bucket: 'cachewh', keyPrefix: 'wh', region: rgw.region, endpoint: rgw.endpoint, pathStyleAccess: true, credentialSource: 'access-key' },
      secret: { type: 's3-keys', accessKeyId: rgw.accessKeyId, secretAccessKey: rgw.secretAccessKey },
    },
  });
  await writer.sql('CREATE SCHEMA lake.c');
  await writer.sql('CREATE TABLE lake.c.big (id bigint, pad string)');
  // One data file per INSERT; md5 text barely compresses, so each file is tens of KB.
  for (let i = 0; i < FILES; i++) {
    const lo = i * ROWS_PER_FILE;
    await writer.sql(`INSERT INTO lake.c.big SELECT x, md5(CAST(x AS varchar)) || md5(CAST(x + 1 AS varchar)) FROM range(${lo}, ${lo + ROWS_PER_FILE}) r(x)`);
  }
  const files = await dataFiles(rgw, writer, 'big');
  t.equal(files.length, FILES, 'one data file per INSERT in the bucket');
  const total = files.reduce((n, f) => n + f.size, 0);
  const largest = Math.max(...files.map((f) => f.size));
  const N = FILES * ROWS_PER_FILE;
  const QUERY = 'SELECT count(*), sum(id), count(DISTINCT pad) FROM lake.c.big';
  const expected = [[N, (N * (N - 1)) / 2, N]];

  await t.test('bytes_scanned counts bytes fetched from storage, cache hits apart', async (t) => {
    const first = await writer.sql(QUERY);
    t.same(first.rows, expected);
    t.equal(await bytesScanned(writer, first.queryId), total, 'the first run fetched every data file');
    const second = await writer.sql(QUERY);
    t.same(second.rows, expected);
    t.equal(await bytesScanned(writer, second.queryId), 0, 'the second run was all cache hits: nothing fetched');
  });

  await t.test('a file fetched in parallel ranges from RGW: parts of one ETag, the object\'s bytes', async (t) => {
    const io = await writer.state.catalog.fileIOFor(ADMIN, 'lake');
    const dir = mkdtempSync(join(tmpdir(), 'floe-ranged-'));
    t.teardown(() => rmSync(dir, { recursive: true, force: true }));
    const cache = new FileCache({ directory: dir, maxBytes: total, partBytes: 16_384 });
    const f = files[0]!;
    const location = `s3://cachewh/${f.key}`;
    let parts = 0;
    const lease = await cache.acquire([{ location, size: f.size }], (l) => io.readVersioned!(l), undefined, {
      fetchRange: async (l, offset, length) => {
        parts++;
        const got = await io.readRangeVersioned!(l, offset, length);
        t.equal(got.objectSize, f.size, 'Content-Range gives the object\'s size');
        return got;
      },
    });
    t.equal(parts, Math.ceil(f.size / 16_384), 'one ranged GET per part');
    t.same(readFileSync(lease.paths.get(location)!), await io.read(location), 'the copy is the object');
    await lease.release();
    const again = await cache.acquire([{ location, size: f.size }], (l) => io.readVersioned!(l), (l) => io.version!(l));
    t.same([cache.stats().hits, cache.stats().staleRefetches], [1, 0], 'a hit: the parts\' ETag is the one HEAD answers');
    await again.release();
    cache.close();
  });

  await t.test('8 concurrent queries over more data than the budget: all complete, the cache never exceeds it', async (t) => {
    // Room for about three of the eight files: every query reads more than the budget.
    const budget = largest * 3 + 1;
    t.ok(total > budget, `the table (${total} B) is larger than the budget (${budget} B)`);
    const reader = await openFloe(store, budget);
    later(reader);
    t.equal((await cacheGauges(reader)).max, budget, 'floe_file_cache_max_bytes is the budget');
    let running = true;
    let peakSeen = 0;
    let polls = 0;
    const poll = (async () => {
      while (running) {
        const g = await cacheGauges(reader);
        peakSeen = Math.max(peakSeen, g.resident);
        polls++;
        await new Promise((resolve) => setTimeout(resolve, 2));
      }
    })();
    const answers = await Promise.all(Array.from({ length: 8 }, () => reader.sql(QUERY))).finally(() => {
      running = false;
    });
    await poll;
    for (const a of answers) t.same(a.rows, expected, 'each query read every row');
    const g = await cacheGauges(reader);
    t.ok(polls > 1, `the metrics were polled while the queries ran (${polls} polls)`);
    t.ok(peakSeen > 0 && peakSeen <= budget, `resident bytes seen while running (${peakSeen}) never above the budget (${budget})`);
    t.ok(g.peak > 0 && g.peak <= budget, `the cache's own peak (${g.peak}) never above the budget`);
    t.ok(g.resident <= budget, 'nor after');
    t.ok(g.bypasses > 0, 'files that did not fit were fetched outside the cache');
  });

  await t.test('a data file replaced behind Floe\'s back is refetched, never served stale', async (t) => {
    await writer.sql('CREATE TABLE lake.c.small (id bigint)');
    await writer.sql('INSERT INTO lake.c.small VALUES (1)');
    await writer.sql('CREATE TABLE lake.c.wider (id bigint)');
    await writer.sql('INSERT INTO lake.c.wider SELECT x FROM range(0, 500) r(x)');
    t.same((await writer.sql('SELECT id FROM lake.c.small')).rows, [[1]], 'cached');
    const [small] = await dataFiles(rgw, writer, 'small');
    const [wider] = await dataFiles(rgw, writer, 'wider');
    t.not(small!.size, wider!.size, 'the replacement has another size');
    const s3 = rgw.client();
    t.teardown(() => s3.destroy());
    await s3.send(new CopyObjectCommand({ Bucket: 'cachewh', Key: small!.key, CopySource: `cachewh/${wider!.key}` }));
    // A second server (same metadata) with a cold cache and the first one (warm) say the same thing.
    const other = await openFloe(store);
    later(other);
    // The object is read as stored now (as a local file is read in place), never the old copy; the
    // size disagreement with the manifest is counted.
    const wanted = Array.from({ length: 500 }, (_, i) => [i]);
    for (const [name, floe] of [['cold', other], ['warm', writer]] as const) {
      const mismatches = async (): Promise<number> => Number(parseExposition(await floe.state.metrics.registry.metrics()).samples.find((s) => s.name === 'floe_file_cache_size_mismatch_total')?.value);
      const before = await mismatches();
      const answer = await floe.sql('SELECT id FROM lake.c.small ORDER BY id').then((a) => a.rows, (e: unknown) => e);
      t.same(answer, wanted, `${name} cache: the changed file is refetched and read as stored, not served stale`);
      t.equal(await mismatches(), before + 1, `${name} cache: floe_file_cache_size_mismatch_total counts it`);
    }
    // A budget with room for the manifest's size but not for the object's: the reservation is made
    // from the manifest, the real size is known before anything is written, and the object is read
    // from outside the cache rather than push the cache over its budget.
    const budget = Math.floor((small!.size + wider!.size) / 2);
    t.ok(small!.size < budget && budget < wider!.size, `the budget (${budget} B) lies between the manifest's size (${small!.size} B) and the object's (${wider!.size} B)`);
    const tight = await openFloe(store, budget);
    later(tight);
    t.same((await tight.sql('SELECT id FROM lake.c.small ORDER BY id')).rows, wanted, 'tight budget: the object read as stored');
    const g = await cacheGauges(tight);
    t.ok(g.peak <= budget && g.resident <= budget, `the cache's peak (${g.peak} B) and resident bytes (${g.resident} B) never above the budget (${budget} B)`);
    t.ok(g.bypasses >= 1, 'the object was read from outside the cache');
  });

  await t.test('a data file rewritten in place at the same size is refetched (the ETag)', async (t) => {
    for (const [name, id] of [['one', 1], ['two', 2]] as const) {
      await writer.sql(`CREATE TABLE lake.c.${name} (id bigint)`);
      await writer.sql(`INSERT INTO lake.c.${name} VALUES (${id})`);
    }
    t.same((await writer.sql('SELECT id FROM lake.c.one')).rows, [[1]], 'cached');
    const [one] = await dataFiles(rgw, writer, 'one');
    const [two] = await dataFiles(rgw, writer, 'two');
    t.equal(one!.size, two!.size, 'the replacement has the same size');
    const before = Number(parseExposition(await writer.state.metrics.registry.metrics()).samples.find((s) => s.name === 'floe_file_cache_stale_refetches_total')?.value);
    const s3 = rgw.client();
    t.teardown(() => s3.destroy());
    await s3.send(new CopyObjectCommand({ Bucket: 'cachewh', Key: one!.key, CopySource: `cachewh/${two!.key}` }));
    t.same((await writer.sql('SELECT id FROM lake.c.one')).rows, [[2]], 'the bytes now in storage, not the cached ones');
    const after = Number(parseExposition(await writer.state.metrics.registry.metrics()).samples.find((s) => s.name === 'floe_file_cache_stale_refetches_total')?.value);
    t.equal(after, before + 1, 'floe_file_cache_stale_refetches_total counts it');
  });

  await t.test('an upload no snapshot refers to is listed as an orphan (floe admin orphans)', async (t) => {
    const { location } = (await writer.state.catalog.loadTable(ADMIN, 'lake', { namespace: ['c'], name: 'big' })).metadata;
    const key = `${location.replace(/^s3:\/\/cachewh\//, '').replace(/\/+$/, '')}/data/never-committed.parquet`;
    const s3 = rgw.client();
    t.teardown(() => s3.destroy());
    await s3.send(new PutObjectCommand({ Bucket: 'cachewh', Key: key, Body: Buffer.from('PAR1 half an upload') }));
    const report = await findOrphans(writer.state.catalog, ADMIN, 'lake');
    t.same(report.orphans.map((o) => [o.location, o.size, o.table]), [[`s3://cachewh/${key}`, 19, 'c.big']], 'the stray upload, and nothing Floe committed');
  });
});
