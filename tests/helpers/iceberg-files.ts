/**
 * Reading Floe-written Iceberg tables by a path independent of the engine: manifest lists and
 * manifests decoded with avsc's own file decoder (64-bit longs as bigint), data files read by DuckDB
 * directly by field id with SQL written here, position deletes anti-joined by file and position.
 */
import avro from 'avsc';
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as nodePath from 'node:path';
import type { DuckDBConnection } from '@duckdb/node-api';
import type { FileIO } from '../../storage-creds/file-io.js';
import { fileIOForProfile } from '../../storage-creds/storage-profile.js';
import { loadConfig } from '../../server/config.js';
import { resolveOperatorCatalogs } from '../../server/operator-catalogs.js';
import { currentSnapshot } from '../../catalog/iceberg/table-metadata.js';
import type { TableMetadata } from '../../catalog/iceberg/table-metadata.js';

/** avsc's long type over bigint (snapshot ids use all 64 bits). */
const bigLong = (avro.types.LongType as unknown as { __with(methods: object): unknown }).__with({
  fromBuffer: (buf: Buffer) => buf.readBigInt64LE(),
  toBuffer: (n: bigint) => {
    const b = Buffer.alloc(8);
    b.writeBigInt64LE(BigInt(n));
    return b;
  },
  fromJSON: (n: number | string) => BigInt(n),
  toJSON: (n: bigint) => Number(n),
  isValid: (n: unknown) => typeof n === 'bigint',
  compare: (a: bigint, b: bigint) => (a === b ? 0 : a < b ? -1 : 1),
});

/**
 * Object-store files read back here are first copied into a local mirror (the warehouse matrix,
 * tests/helpers/warehouse-matrix.ts, puts catalog `default` in a bucket): `localFile` maps a
 * location to its copy, `mirrored` fetches it once through a FileIO of the profile that FLOE_CONFIG
 * declares for `default`. Files Iceberg writes are never rewritten, so a copy stays valid.
 */
interface Mirror {
  readonly dir: string;
  readonly io: FileIO;
}
let mirror: Mirror | undefined;
const OBJECT_STORE = /^(s3a?|s3n|abfss?|wasbs?|gs):\/\//;

function mirrorOf(): Mirror {
  if (mirror !== undefined) return mirror;
  const file = process.env.FLOE_CONFIG;
  const declared = file ? resolveOperatorCatalogs(loadConfig({ file, env: {} }).catalogs).find((c) => c.request.name === 'default') : undefined;
  if (declared?.request.storage === undefined) throw new Error('an object-store location, but FLOE_CONFIG declares no storage profile for catalog default');
  const dir = mkdtempSync(nodePath.join(tmpdir(), 'floe-readback-'));
  const io = fileIOForProfile(declared.request.storage.profile, declared.request.storage.secret);
  process.once('exit', () => rmSync(dir, { recursive: true, force: true }));
  mirror = { dir, io };
  return mirror;
}

/** The local copy of an object-store file (fetched once), or the local file itself. */
export async function mirrored(location: string): Promise<string> {
  const local = localFile(location);
  if (!OBJECT_STORE.test(location) || existsSync(local)) return local;
  const bytes = await mirrorOf().io.read(location);
  mkdirSync(nodePath.dirname(local), { recursive: true });
  writeFileSync(local, bytes);
  return local;
}

/** The records of an Avro file (a manifest list or a manifest). */
export async function decodeAvro(location: string): Promise<unknown[]> {
  const file = await mirrored(location);
  const records: unknown[] = [];
  await new Promise<void>((resolve, reject) => {
    avro.createFileDecoder(file, { parseHook: (schema: unknown) => avro.Type.forSchema(schema as never, { registry: { long: bigLong } } as never) } as never)
      .on('data', (r: unknown) => records.push(r)).on('end', resolve).on('error', reject);
  });
  return records;
}

/** A manifest entry as avsc decodes it. */
export interface AvroEntry {
  /** 0 existing, 1 added, 2 deleted. */
  status: number;
  snapshot_id: bigint | null;
  data_file: {
    /** 0 data, 1 position deletes, 2 equality deletes (absent in v1). */
    content?: number; file_path: string; record_count: bigint; partition: Record<string, unknown>;
    referenced_data_file?: string | null;
    value_counts: { key: number; value: bigint }[]; null_value_counts: { key: number; value: bigint }[];
    lower_bounds: { key: number; value: Buffer }[]; upper_bounds: { key: number; value: Buffer }[]; column_sizes: { key: number; value: bigint }[];
  };
}

/** Every entry of the current snapshot's manifests, with the snapshot that added its manifest. */
export async function manifestEntries(m: TableMetadata): Promise<(AvroEntry & { manifestSnapshotId: bigint })[]> {
  const snap = currentSnapshot(m);
  if (snap === undefined) return [];
  const list = (await decodeAvro(snap.manifestList!)) as { manifest_path: string; added_snapshot_id: bigint }[];
  const out: (AvroEntry & { manifestSnapshotId: bigint })[] = [];
  for (const mf of list) for (const e of (await decodeAvro(mf.manifest_path)) as AvroEntry[]) out.push({ ...e, manifestSnapshotId: mf.added_snapshot_id });
  // Callers read the entries' files by `localFile`: object-store ones are copied here first.
  await Promise.all(out.filter((e) => e.status !== 2).map((e) => mirrored(e.data_file.file_path)));
  return out;
}

/** The live entries (not deleted) of the current snapshot. */
export async function liveEntries(m: TableMetadata): Promise<AvroEntry[]> {
  return (await manifestEntries(m)).filter((e) => e.status !== 2);
}

/** A column read back by field id: its id, name and DuckDB type. */
export interface ReadBackColumn {
  readonly id: number;
  readonly name: string;
  readonly duckdbType: string;
}

/** Local path of a `file://` location, or of an object-store file's copy (see `mirrored`). */
export function localFile(location: string): string {
  const store = OBJECT_STORE.exec(location);
  if (store !== null) return nodePath.join(mirrorOf().dir, store[1]!, location.slice(store[0].length));
  return location.replace(/^file:\/\//, '');
}

/** SQL mapping a location column to what `localFile` gives (the anti-join of position deletes). */
function localFileSql(column: string): string {
  const local = `replace(${column}, 'file://', '')`;
  return mirror === undefined ? local : `regexp_replace(${local}, '^(s3a?|s3n|abfss?|wasbs?|gs)://', '${mirror.dir}/\\1/')`;
}

/**
 * The table's rows by the independent path: the live data files read by DuckDB by field id, live
 * position deletes anti-joined on (file, position). Each row ends with its data file's local path
 * (`localFile` of the location the manifests list) and its 0-based position in that file.
 */
export async function readBackRows(conn: DuckDBConnection, m: TableMetadata, columns: readonly ReadBackColumn[], select: string, order: string): Promise<unknown[][]> {
  const entries = await liveEntries(m);
  const data = entries.filter((e) => (e.data_file.content ?? 0) === 0).map((e) => e.data_file.file_path);
  const deletes = entries.filter((e) => e.data_file.content === 1).map((e) => localFile(e.data_file.file_path));
  if (data.length === 0) return [];
  const list = (xs: readonly string[]) => `[${xs.map((x) => `'${x}'`).join(', ')}]`;
  const schemaMap = `MAP {${columns.map((c) => `${c.id}: {name: '${c.name}', type: '${c.duckdbType}', default_value: NULL}`).join(', ')}}`;
  const anti = deletes.length === 0 ? '' : `WHERE NOT EXISTS (SELECT 1 FROM read_parquet(${list(deletes)}) p WHERE ${localFileSql('p.file_path')} = d.filename AND p.pos = d.file_row_number)`;
  const sql = `SELECT ${select}, filename AS __file, file_row_number AS __pos FROM read_parquet(${list(data.map(localFile))}, schema = ${schemaMap}, filename = true, file_row_number = true) d ${anti} ORDER BY ${order}`;
  const r = await conn.runAndReadAll(sql);
  return r.getRowsJS().map((row) => row.map((v) => (typeof v === 'bigint' ? Number(v) : v)));
}
