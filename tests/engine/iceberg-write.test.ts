/**
 * Floe-written Iceberg tables, checked by independent paths: data files read by DuckDB directly by
 * field id (SQL written here, not the engine's scan), manifests and manifest lists decoded with
 * avsc's own file decoder, metadata round-tripped through the catalog parsers. Covers partitioned
 * appends (identity, bucket, day), full column stats, summaries, the re-based append after a
 * conflict, copy-on-write deletes and merge-on-read position deletes.
 */
import t from 'tap';
import { copyFileSync, existsSync, mkdtempSync, rmSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import * as os from 'node:os';
import * as path from 'node:path';
import { DuckDBInstance } from '@duckdb/node-api';
import { fromByteBuffer } from '../../catalog/iceberg/conversions.js';
import { parseTimestampMicros } from '../../catalog/iceberg/datetime.js';
import { planScan } from '../../catalog/iceberg/scan.js';
import { schema } from '../../catalog/iceberg/schema.js';
import { checkRequirements, applyUpdates } from '../../catalog/iceberg/table-commit.js';
import { currentSchema, currentSnapshot, newTableMetadata, parseTableMetadata, serializeTableMetadata } from '../../catalog/iceberg/table-metadata.js';
import type { TableMetadata } from '../../catalog/iceberg/table-metadata.js';
import { applyTransform, Transforms } from '../../catalog/iceberg/transforms.js';
import { Types, nestedField } from '../../catalog/iceberg/types.js';
import type { PrimitiveType } from '../../catalog/iceberg/types.js';
import { LocalFileIO } from '../../storage-creds/local-file-io.js';
import { createExecutor } from '../../engine/exec/index.js';
import {
  appendWriteRequest, commitChange, commitUpdates, dataFilesFromWritten, deleteFilesFromWritten, isMergeOnRead, positionDeleteWriteRequest, stageAppend, stageOverwrite, stageRowDelta,
} from '../../engine/iceberg-io/write.js';
import type { CommitPort, StagedChange } from '../../engine/iceberg-io/write.js';
import { importFormatOf, importSourceSql } from '../../engine/iceberg-io/import.js';
import type { TableScanInput } from '../../engine/fragments.js';
import { scanRelation } from '../../engine/fragments.js';
import { liveEntries } from '../helpers/iceberg-files.js';

const root = mkdtempSync(path.join(os.tmpdir(), 'floe-iceberg-write-'));
const warehouse = path.join(root, 'warehouse');
const exec = createExecutor({ workers: 2, spillDirectory: path.join(root, 'spill'), dataDirectories: [warehouse] });
const io = new LocalFileIO();
const duck = await DuckDBInstance.create(':memory:');
const conn = await duck.connect();
t.teardown(async () => {
  conn.closeSync();
  await exec.close();
  rmSync(root, { recursive: true, force: true });
});

const SOURCE = `SELECT x::BIGINT AS id, 'name-' || (x % 3) AS name, (x * 1.25)::DECIMAL(10,2) AS amount,
  TIMESTAMPTZ '2024-01-01 00:00:00+00' + to_minutes(x * 10) AS ts, CASE WHEN x % 10 = 0 THEN NULL ELSE x % 3 END::INTEGER AS grp
  FROM range(0, 500) t(x)`;

function newTable(name: string, properties: ReadonlyMap<string, string> = new Map()): TableMetadata {
  return newTableMetadata({
    schema: schema(0, [
      nestedField(1, 'id', Types.long, true),
      nestedField(2, 'name', Types.string),
      nestedField(3, 'amount', Types.decimal(10, 2)),
      nestedField(4, 'ts', Types.timestamptz),
      nestedField(5, 'grp', Types.int),
    ]),
    partitionSpec: {
      fields: [
        { sourceId: 2, name: 'name', transform: Transforms.identity },
        { sourceId: 1, name: 'id_bucket', transform: Transforms.bucket(4) },
        { sourceId: 4, name: 'ts_day', transform: Transforms.day },
      ],
    },
    location: `file://${warehouse}/db/${name}`,
    properties,
    now: Date.now(),
  });
}

async function commit(m: TableMetadata, change: StagedChange): Promise<TableMetadata> {
  const c = await commitUpdates(io, m, change);
  t.same(checkRequirements(m, c.requirements), [], 'requirements hold on the base');
  return applyUpdates(m, c.updates, { now: Date.now() });
}

async function append(m: TableMetadata, sql: string): Promise<StagedChange> {
  const { request, dataLocation } = appendWriteRequest(m, sql, []);
  const written = await exec.write(request);
  return stageAppend(io, m, dataFilesFromWritten(m, written.files, dataLocation));
}

/** Rows of the table by an independent path: DuckDB over the data files by field id, position deletes anti-joined. */
async function independentRows(m: TableMetadata, order = 'id'): Promise<unknown[][]> {
  const entries = await liveEntries(m);
  const data = entries.filter((e) => (e.data_file.content ?? 0) === 0).map((e) => e.data_file.file_path.replace(/^file:\/\//, ''));
  const deletes = entries.filter((e) => e.data_file.content === 1).map((e) => e.data_file.file_path.replace(/^file:\/\//, ''));
  if (data.length === 0) return [];
  const list = (xs: string[]) => `[${xs.map((x) => `'${x}'`).join(', ')}]`;
  const schemaMap = `MAP {1: {name: 'id', type: 'BIGINT', default_value: NULL}, 2: {name: 'name', type: 'VARCHAR', default_value: NULL}, 3: {name: 'amount', type: 'DECIMAL(10,2)', default_value: NULL}, 4: {name: 'ts', type: 'TIMESTAMPTZ', default_value: NULL}, 5: {name: 'grp', type: 'INTEGER', default_value: NULL}}`;
  const anti = deletes.length === 0 ? '' : `WHERE NOT EXISTS (SELECT 1 FROM read_parquet(${list(deletes)}) p WHERE replace(p.file_path, 'file://', '') = d.filename AND p.pos = d.file_row_number)`;
  const r = await conn.runAndReadAll(`SELECT id, name, amount::VARCHAR, epoch_us(ts), grp FROM read_parquet(${list(data)}, schema = ${schemaMap}, filename = true, file_row_number = true) d ${anti} ORDER BY ${order}`);
  return r.getRowsJS().map((row) => row.map((v) => (typeof v === 'bigint' ? Number(v) : v)));
}

async function sourceRows(where = 'true'): Promise<unknown[][]> {
  const r = await conn.runAndReadAll(`SELECT id, name, amount::VARCHAR, epoch_us(ts), grp FROM (${SOURCE}) WHERE ${where} ORDER BY id`);
  return r.getRowsJS().map((row) => row.map((v) => (typeof v === 'bigint' ? Number(v) : v)));
}

async function scanOf(m: TableMetadata, rowPositions = false): Promise<{ scan: TableScanInput; plan: Awaited<ReturnType<typeof planScan>> }> {
  const plan = await planScan(m, io);
  return {
    plan,
    scan: {
      relation: scanRelation(0), tableName: 'db.t', schema: plan.schema, columns: 'all', tasks: plan.tasks,
      estimatedRows: plan.totalRecords, estimatedBytes: 0, partitionSpecs: m.partitionSpecs, rowPositions,
    },
  };
}

t.test('a partitioned append: files per partition, stats, summary, metadata that round-trips', async (t) => {
  const m0 = newTable('events');
  const change = await append(m0, SOURCE);
  const m1 = await commit(m0, change);
  t.same(parseTableMetadata(serializeTableMetadata(m1)), m1, 'metadata round-trips through the parsers');
  const snap = currentSnapshot(m1)!;
  const entries = await liveEntries(m1);
  t.equal(snap.summary.get('operation'), 'append');
  t.equal(snap.summary.get('added-records'), '500');
  t.equal(snap.summary.get('total-records'), '500');
  t.equal(snap.summary.get('added-data-files'), String(entries.length));
  t.equal(snap.summary.get('total-data-files'), String(entries.length));
  t.equal(Number(snap.summary.get('changed-partition-count')), entries.length);
  t.same(await independentRows(m1), await sourceRows(), 'DuckDB over the files by field id reads back the rows');

  // Each file holds one partition tuple, and its manifest values are the transforms of its rows.
  let checked = 0;
  for (const e of entries) {
    const file = e.data_file.file_path.replace(/^file:\/\//, '');
    const rows = (await conn.runAndReadAll(`SELECT id, name, epoch_us(ts), grp, amount::VARCHAR FROM read_parquet('${file}')`)).getRowsJS();
    t.equal(rows.length, Number(e.data_file.record_count));
    const parts = e.data_file.partition;
    for (const [id, name, ts] of rows) {
      t.equal(name, parts['name']);
      t.equal(applyTransform(Transforms.bucket(4), Types.long, id as bigint), parts['id_bucket']);
      t.equal(applyTransform(Transforms.day, Types.timestamptz, ts as bigint), parts['ts_day']);
      checked++;
    }
    // Stats: counts and bounds match the rows.
    const count = (m: { key: number; value: bigint }[], id: number) => Number(m.find((x) => x.key === id)?.value);
    const bound = (m: { key: number; value: Buffer }[], id: number, type: PrimitiveType) => fromByteBuffer(type, m.find((x) => x.key === id)!.value);
    t.equal(count(e.data_file.value_counts, 1), rows.length);
    t.equal(count(e.data_file.null_value_counts, 5), rows.filter((r) => r[3] === null).length);
    t.ok(count(e.data_file.column_sizes, 2) > 0);
    const ids = rows.map((r) => r[0] as bigint);
    t.equal(bound(e.data_file.lower_bounds, 1, Types.long), ids.reduce((a, b) => (b < a ? b : a)));
    t.equal(bound(e.data_file.upper_bounds, 1, Types.long), ids.reduce((a, b) => (b > a ? b : a)));
    const tss = rows.map((r) => r[2] as bigint);
    t.equal(bound(e.data_file.upper_bounds, 4, Types.timestamptz), tss.reduce((a, b) => (b > a ? b : a)));
    const amounts = rows.map((r) => Math.round(Number(r[4]) * 100));
    t.equal(bound(e.data_file.lower_bounds, 3, Types.decimal(10, 2)), BigInt(Math.min(...amounts)));
  }
  t.equal(checked, 500);
});

t.test('an append staged on an old snapshot is re-based after a conflict', async (t) => {
  const m0 = newTable('rebase');
  const m1 = await commit(m0, await append(m0, `${SOURCE} WHERE x < 100`));
  const a = await append(m1, `SELECT * FROM (${SOURCE}) WHERE id >= 100 AND id < 200`);
  const b = await append(m1, `SELECT * FROM (${SOURCE}) WHERE id >= 200`);
  const m2 = await commit(m1, a);
  // b's first commit attempt, built on m1, fails the requirement against m2.
  const stale = await commitUpdates(io, m1, b);
  t.ok(checkRequirements(m2, stale.requirements).length > 0, 'the stale commit conflicts');
  const m3 = await commit(m2, b);
  t.equal(currentSnapshot(m3)!.parentSnapshotId, a.snapshotId);
  t.equal(currentSnapshot(m3)!.summary.get('total-records'), '500');
  t.equal(m3.lastSequenceNumber, 3);
  t.same(await independentRows(m3), await sourceRows());
  // Copy-on-write or merge-on-read changes are not re-based.
  const cow = await stageOverwrite(io, m1, new Set(), []);
  await t.rejects(commitUpdates(io, m3, cow), { code: 'COMMIT_CONFLICT' });
});

t.test('copy-on-write DELETE rewrites only the affected files', async (t) => {
  const m0 = newTable('cow');
  const m1 = await commit(m0, await append(m0, SOURCE));
  t.notOk(isMergeOnRead(m1, 'delete'));
  const { scan, plan } = await scanOf(m1, true);
  const affected = await exec.execute({ fragments: [{ id: 0, sql: `SELECT DISTINCT __floe_file_path FROM __floe_scan_0 WHERE name = 'name-2' AND grp = 2`, scans: [scan], inputs: [] }] });
  const paths = new Set(affected.rows.map((r) => String(r[0])));
  t.ok(paths.size > 0 && paths.size < plan.tasks.length, `${paths.size} of ${plan.tasks.length} files affected`);
  const rewriteScan: TableScanInput = { ...scan, rowPositions: false, tasks: plan.tasks.filter((x) => paths.has(x.file.filePath)) };
  const { request, dataLocation } = appendWriteRequest(m1, `SELECT * FROM __floe_scan_0 WHERE NOT (name = 'name-2' AND grp IS NOT DISTINCT FROM 2)`, [rewriteScan]);
  const written = await exec.write(request);
  const m2 = await commit(m1, await stageOverwrite(io, m1, paths, dataFilesFromWritten(m1, written.files, dataLocation)));
  const snap = currentSnapshot(m2)!;
  t.equal(snap.summary.get('operation'), 'overwrite');
  t.equal(snap.summary.get('deleted-data-files'), String(paths.size));
  const expected = await sourceRows(`NOT (name = 'name-2' AND grp IS NOT DISTINCT FROM 2)`);
  t.equal(snap.summary.get('total-records'), String(expected.length));
  t.same(await independentRows(m2), expected);
  t.same(parseTableMetadata(serializeTableMetadata(m2)), m2);
  // The engine's own scan agrees.
  const again = await scanOf(m2);
  const count = await exec.execute({ fragments: [{ id: 0, sql: 'SELECT count(*) FROM __floe_scan_0', scans: [again.scan], inputs: [] }] });
  t.same(count.rows, [[expected.length]]);
});

t.test('merge-on-read DELETE writes position delete files', async (t) => {
  const m0 = newTable('mor', new Map([['write.delete.mode', 'merge-on-read']]));
  const m1 = await commit(m0, await append(m0, SOURCE));
  t.ok(isMergeOnRead(m1, 'delete'));
  const { scan, plan } = await scanOf(m1, true);
  const { request, dataLocation } = positionDeleteWriteRequest(m1, `SELECT __floe_file_path, __floe_pos FROM __floe_scan_0 WHERE id % 5 = 0`, [scan]);
  const written = await exec.write(request);
  const byPath = new Map(plan.tasks.map((x) => [x.file.filePath, x] as const));
  const deletes = deleteFilesFromWritten(written.files, dataLocation, byPath);
  t.ok(deletes.every((d) => d.file.referencedDataFile !== undefined));
  const m2 = await commit(m1, await stageRowDelta(io, m1, deletes, []));
  const snap = currentSnapshot(m2)!;
  t.equal(snap.summary.get('operation'), 'delete');
  t.equal(snap.summary.get('added-position-deletes'), '100');
  t.equal(snap.summary.get('total-position-deletes'), '100');
  const expected = await sourceRows('id % 5 <> 0');
  t.same(await independentRows(m2), expected, 'an independent anti-join drops the deleted positions');
  // The engine's scan applies them too (position deletes planned by planScan).
  const again = await scanOf(m2);
  t.ok(again.plan.tasks.some((x) => x.positionDeletes.length > 0));
  const r = await exec.execute({ fragments: [{ id: 0, sql: 'SELECT count(*), sum(id) FROM __floe_scan_0', scans: [again.scan], inputs: [] }] });
  t.same(r.rows, [[400, expected.reduce((n, row) => n + (row[0] as number), 0)]]);
  t.same(parseTableMetadata(serializeTableMetadata(m2)), m2);
});

t.test('an empty insert writes no files', async (t) => {
  const m0 = newTable('empty');
  const { request, dataLocation } = appendWriteRequest(m0, `SELECT * FROM (${SOURCE}) WHERE false`, []);
  const written = await exec.write(request);
  t.same(written.files, []);
  const change = await stageAppend(io, m0, dataFilesFromWritten(m0, written.files, dataLocation));
  const m1 = await commit(m0, change);
  t.equal(currentSnapshot(m1)!.summary.get('total-records'), '0');
  t.same(currentSchema(m1).fields.map((f) => f.name), ['id', 'name', 'amount', 'ts', 'grp']);
  t.equal(parseTimestampMicros('1970-01-01T00:00:00Z'), 0n);
});

t.test('truncated string statistics never become an upper bound', async (t) => {
  const m0 = newTableMetadata({
    schema: schema(0, [nestedField(1, 'id', Types.long, true), nestedField(2, 's', Types.string)]),
    location: `file://${warehouse}/db/longstrings`,
    now: Date.now(),
  });
  // DuckDB cuts string statistics at 256 bytes.
  const m1 = await commit(m0, await append(m0, `SELECT x::BIGINT AS id, repeat('z', 300) || x::VARCHAR AS s FROM range(3) t(x) UNION ALL SELECT 9, 'a'`));
  const [entry] = await liveEntries(m1);
  t.notOk(entry!.data_file.upper_bounds.some((b) => b.key === 2), 'no upper bound for the truncated column');
  t.equal(fromByteBuffer(Types.string, entry!.data_file.lower_bounds.find((b) => b.key === 2)!.value), 'a');
  t.ok(entry!.data_file.upper_bounds.some((b) => b.key === 1), 'other columns keep theirs');
});

t.test('8 concurrent appends all land, re-based through conflicts', async (t) => {
  const m0 = newTableMetadata({
    schema: schema(0, [nestedField(1, 'id', Types.long, true), nestedField(2, 'writer', Types.int)]),
    location: `file://${warehouse}/db/concurrent`,
    now: Date.now(),
  });
  // A compare-and-swap catalog in memory: requirements checked against the current metadata.
  let current = m0;
  let conflicts = 0;
  const port: CommitPort = {
    load: async () => current,
    commit: async (requirements, updates) => {
      await new Promise((r) => setTimeout(r, 1));
      if (checkRequirements(current, requirements).length > 0) {
        conflicts++;
        return 'conflict';
      }
      current = applyUpdates(current, updates, { now: Date.now() });
      return 'committed';
    },
  };
  // All eight are staged against the same base first and then committed at once, so conflicts happen
  // whatever the machine's speed (staged one after another they could all land without one).
  const changes = await Promise.all(
    Array.from({ length: 8 }, (_, w) => append(m0, `SELECT (${w} * 1000 + x)::BIGINT AS id, ${w}::INTEGER AS writer FROM range(25) t(x)`)),
  );
  await Promise.all(changes.map((change) => commitChange(io, port, change)));
  t.ok(conflicts > 0, `${conflicts} conflicts were re-based`);
  t.equal(current.snapshots.length, 8);
  t.equal(currentSnapshot(current)!.summary.get('total-records'), '200');
  const entries = await liveEntries(current);
  t.equal(entries.length, 8);
  const files = entries.map((e) => `'${e.data_file.file_path.replace(/^file:\/\//, '')}'`).join(', ');
  const r = (await conn.runAndReadAll(`SELECT count(DISTINCT id), count(DISTINCT writer) FROM read_parquet([${files}])`)).getRowsJS();
  t.same(r, [[200n, 8n]]);
  t.same(parseTableMetadata(serializeTableMetadata(current)), current);
});

t.test('commitChange: a conflicting attempt leaves no manifest list; a rewrite, a schema change or retries run out are COMMIT_CONFLICT', async (t) => {
  const m0 = newTableMetadata({
    schema: schema(0, [nestedField(1, 'id', Types.long, true), nestedField(2, 'writer', Types.int)]),
    location: `file://${warehouse}/db/conflicts`,
    now: Date.now(),
  });
  const listsOf = (attempts: string[]): string[] => attempts.filter((l) => existsSync(l.replace(/^file:\/\//, '')));
  // A catalog that always answers 409, recording the manifest list each attempt pointed to.
  const refusing = (loads: () => TableMetadata): { port: CommitPort; lists: string[] } => {
    const lists: string[] = [];
    return {
      lists,
      port: {
        load: async () => loads(),
        commit: async (_requirements, updates) => {
          const add = updates.find((u) => u.action === 'add-snapshot');
          if (add?.action === 'add-snapshot' && add.snapshot.manifestList !== undefined) lists.push(add.snapshot.manifestList);
          return 'conflict';
        },
      },
    };
  };
  const change = await append(m0, 'SELECT 1::BIGINT AS id, 1::INTEGER AS writer');
  // Retries run out: a clock that jumps a minute per reading ends them after the first wait.
  let clock = 0;
  const outOfTime = refusing(() => m0);
  const e1 = await commitChange(io, outOfTime.port, change, { metadata: m0, display: 'db.conflicts', now: () => (clock += 30_000), random: () => 0 }).then(() => undefined, (e: unknown) => e);
  t.match(e1, { code: 'COMMIT_CONFLICT', message: /db\.conflicts kept changing: gave up after 1 attempts/ });
  t.ok(outOfTime.lists.length >= 1);
  t.same(listsOf(outOfTime.lists), [], "every refused attempt's manifest list is deleted");
  // A rewrite is never re-based.
  const rewrite = refusing(() => m0);
  const e2 = await commitChange(io, rewrite.port, { ...change, rebaseable: false }, { metadata: m0, display: 'db.conflicts' }).then(() => undefined, (e: unknown) => e);
  t.match(e2, { code: 'COMMIT_CONFLICT', message: /db\.conflicts changed while the statement ran/ });
  t.equal(rewrite.lists.length, 1, 'one attempt');
  // The schema changed meanwhile: the re-base stops instead of writing rows under another schema.
  const evolved = applyUpdates(m0, [
    { action: 'add-schema', schema: schema(1, [nestedField(1, 'id', Types.long, true), nestedField(2, 'writer', Types.int), nestedField(3, 'note', Types.string)]) },
    { action: 'set-current-schema', schemaId: -1 },
  ], { now: Date.now() });
  const schemaChanged = refusing(() => evolved);
  const e3 = await commitChange(io, schemaChanged.port, change, { metadata: m0, display: 'db.conflicts', random: () => 0 }).then(() => undefined, (e: unknown) => e);
  t.match(e3, { code: 'COMMIT_CONFLICT', message: /the schema of db\.conflicts changed/ });
  t.equal(schemaChanged.lists.length, 1);
  t.same(listsOf(schemaChanged.lists), []);
});

t.test('importing a dbgen .tbl.gz file through the staging folder', async (t) => {
  const m0 = newTableMetadata({
    schema: schema(0, [
      nestedField(1, 'n_nationkey', Types.int, true),
      nestedField(2, 'n_name', Types.string),
      nestedField(3, 'n_regionkey', Types.int),
      nestedField(4, 'n_comment', Types.string),
    ]),
    location: `file://${warehouse}/db/nation`,
    now: Date.now(),
  });
  const source = path.resolve(fileURLToPath(new URL('../../../', import.meta.url)), '../shared/data/tpch/sf0.01/nation.tbl.gz');
  const staged = path.join(exec.stagingDirectory, 'nation.tbl.gz');
  copyFileSync(source, staged);
  t.equal(importFormatOf(staged), 'tbl');
  const { request, dataLocation } = appendWriteRequest(m0, importSourceSql(staged, currentSchema(m0), 'tbl'), []);
  const written = await exec.write(request);
  rmSync(staged);
  const m1 = await commit(m0, await stageAppend(io, m0, dataFilesFromWritten(m0, written.files, dataLocation)));
  t.equal(currentSnapshot(m1)!.summary.get('total-records'), '25');
  const file = written.files[0]!.path;
  const r = (await conn.runAndReadAll(`SELECT n_nationkey, n_name FROM read_parquet('${file}') ORDER BY 1 LIMIT 2`)).getRowsJS();
  t.same(r, [[0, 'ALGERIA'], [1, 'ARGENTINA']]);
  t.equal(importFormatOf('x.parquet'), 'parquet');
  t.equal(importFormatOf('x.csv.gz'), 'csv');
  t.equal(importFormatOf('x.json'), undefined);
});

t.test('format v1 tables: appends and copy-on-write, no sequence numbers', async (t) => {
  const m0 = newTableMetadata({
    schema: schema(0, [nestedField(1, 'id', Types.long, true), nestedField(2, 'k', Types.int)]),
    partitionSpec: { fields: [{ sourceId: 2, name: 'k', transform: Transforms.identity }] },
    location: `file://${warehouse}/db/v1table`,
    formatVersion: 1,
    now: Date.now(),
  });
  t.equal(m0.formatVersion, 1);
  const m1 = await commit(m0, await append(m0, 'SELECT x::BIGINT AS id, (x % 2)::INTEGER AS k FROM range(10) t(x)'));
  const m2 = await commit(m1, await append(m1, 'SELECT x::BIGINT AS id, (x % 2)::INTEGER AS k FROM range(10, 20) t(x)'));
  t.equal(currentSnapshot(m2)!.sequenceNumber, 0);
  t.equal(currentSnapshot(m2)!.summary.get('total-records'), '20');
  const { scan, plan } = await scanOf(m2, true);
  t.equal(plan.tasks.length, 4);
  const hit = await exec.execute({ fragments: [{ id: 0, sql: 'SELECT DISTINCT __floe_file_path FROM __floe_scan_0 WHERE id = 3', scans: [scan], inputs: [] }] });
  const paths = new Set(hit.rows.map((r) => String(r[0])));
  const rewrite: TableScanInput = { ...scan, rowPositions: false, tasks: plan.tasks.filter((x) => paths.has(x.file.filePath)) };
  const { request, dataLocation } = appendWriteRequest(m2, 'SELECT * FROM __floe_scan_0 WHERE id <> 3', [rewrite]);
  const written = await exec.write(request);
  const m3 = await commit(m2, await stageOverwrite(io, m2, paths, dataFilesFromWritten(m2, written.files, dataLocation)));
  t.equal(currentSnapshot(m3)!.summary.get('total-records'), '19');
  const after = await scanOf(m3);
  const r = await exec.execute({ fragments: [{ id: 0, sql: 'SELECT count(*), sum(id) FROM __floe_scan_0', scans: [after.scan], inputs: [] }] });
  t.same(r.rows, [[19, 190 - 3]]);
  t.same(parseTableMetadata(serializeTableMetadata(m3)), m3);
  await t.rejects(stageRowDelta(io, m3, [], []), { code: 'UNSUPPORTED_STATEMENT' }, 'merge-on-read needs v2');
});
