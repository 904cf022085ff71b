/**
 * Iceberg tables shaped as other engines write them, crafted on disk for tests: Parquet data files
 * written by DuckDB (with Parquet field ids, or without them as migrated files are), manifests and a
 * manifest list written by Floe's own Iceberg library, and a metadata file written as JSON by hand so
 * that any field the spec allows can be set (v3 defaults, name mappings, gzip compression).
 *
 * Each crafted file states exactly what the manifest says about it (partition tuple, column
 * metrics): the tests decide what a foreign writer claimed, and the reader must cope.
 */
import { mkdirSync, mkdtempSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { gzipSync } from 'node:zlib';
import { randomUUID } from 'node:crypto';
import { DuckDBInstance, type DuckDBConnection } from '@duckdb/node-api';
import type { Test } from 'tap';
import { Floe } from '../../index.js';
import type { IcebergValue } from '../../catalog/iceberg/conversions.js';
import { toByteBuffer } from '../../catalog/iceberg/conversions.js';
import type { JsonValue } from '../../catalog/iceberg/json.js';
import { stringifyJson } from '../../catalog/iceberg/json.js';
import { writeManifest } from '../../catalog/iceberg/manifest.js';
import type { DataFile, ManifestEntry } from '../../catalog/iceberg/manifest.js';
import { describeManifest, writeManifestList } from '../../catalog/iceberg/manifest-list.js';
import { parseTableMetadata } from '../../catalog/iceberg/table-metadata.js';
import type { PrimitiveType } from '../../catalog/iceberg/types.js';

/** Parquet field ids for DuckDB's `COPY ... (FIELD_IDS {...})`: a number, or a nested object for structs. */
export type FieldIds = { readonly [column: string]: number | FieldIds };

export interface CraftedFile {
  /** A DuckDB `SELECT` whose columns (named as the file stores them) become the file. */
  readonly select: string;
  /** Parquet field ids by file column; absent = a file without field ids (read by name mapping). */
  readonly fieldIds?: FieldIds;
  /** The partition tuple the manifest records (in the spec's field order). */
  readonly partition?: readonly (IcebergValue | null)[];
  readonly specId?: number;
  /** What the manifest claims about columns (by field id); absent maps are left out. */
  readonly valueCounts?: ReadonlyMap<number, number>;
  readonly nullValueCounts?: ReadonlyMap<number, number>;
  readonly bounds?: ReadonlyMap<number, { readonly type: PrimitiveType; readonly lower: IcebergValue; readonly upper: IcebergValue }>;
  /**
   * Metrics computed from the file's data as a writer would, for the file columns named here (file
   * column → the field id the writer resolved it to; int, long, double and string columns). A
   * writer whose resolution differs from the reader's is modelled by mapping a column to an id the
   * reader would not give it.
   */
  readonly metricsFrom?: Readonly<Record<string, { readonly id: number; readonly type: 'int' | 'long' | 'double' | 'string' }>>;
}

export interface CraftedTable {
  /** Folder of the table (created). */
  readonly dir: string;
  readonly formatVersion: 1 | 2 | 3;
  /** `schemas` of the metadata, as JSON (each with its `schema-id`). */
  readonly schemas: readonly JsonValue[];
  readonly currentSchemaId?: number;
  /** `partition-specs` as JSON; defaults to one unpartitioned spec. */
  readonly specs?: readonly JsonValue[];
  readonly defaultSpecId?: number;
  readonly properties?: Readonly<Record<string, string>>;
  readonly files: readonly CraftedFile[];
  /** Write the metadata file gzip-compressed as `v1.gz.metadata.json`, as Java does with the gzip codec. */
  readonly gzip?: boolean;
}

function fieldIdsSql(ids: FieldIds): string {
  return `{${Object.entries(ids).map(([k, v]) => `"${k.replace(/"/g, '""')}": ${typeof v === 'number' ? String(v) : fieldIdsSql(v)}`).join(', ')}}`;
}

function maxFieldId(json: JsonValue): number {
  let max = 0;
  const walk = (v: JsonValue): void => {
    if (v === null || typeof v !== 'object') return;
    if (Array.isArray(v)) {
      for (const x of v) walk(x);
      return;
    }
    for (const [k, x] of Object.entries(v as Record<string, JsonValue>)) {
      if ((k === 'id' || k === 'element-id' || k === 'key-id' || k === 'value-id') && typeof x === 'number') max = Math.max(max, x);
      walk(x);
    }
  };
  walk(json);
  return max;
}

/** Writes the table and returns its metadata location (`file://...`). */
export async function craftTable(conn: DuckDBConnection, table: CraftedTable): Promise<string> {
  const dataDir = path.join(table.dir, 'data');
  const metaDir = path.join(table.dir, 'metadata');
  mkdirSync(dataDir, { recursive: true });
  mkdirSync(metaDir, { recursive: true });
  const specs = table.specs ?? [{ 'spec-id': 0, fields: [] }];
  const lastPartitionId = Math.max(999, ...specs.flatMap((s) => ((s as { fields: { 'field-id': number }[] }).fields).map((f) => f['field-id'])));
  const base: Record<string, JsonValue> = {
    'format-version': table.formatVersion,
    'table-uuid': randomUUID(),
    location: `file://${table.dir}`,
    'last-sequence-number': 0,
    'last-updated-ms': Date.now(),
    'last-column-id': Math.max(...table.schemas.map(maxFieldId)),
    'current-schema-id': table.currentSchemaId ?? (table.schemas.at(-1) as { 'schema-id': number })['schema-id'],
    schemas: [...table.schemas],
    'default-spec-id': table.defaultSpecId ?? (specs.at(-1) as { 'spec-id': number })['spec-id'],
    'partition-specs': [...specs],
    'last-partition-id': lastPartitionId,
    'default-sort-order-id': 0,
    'sort-orders': [{ 'order-id': 0, fields: [] }],
    properties: { ...(table.properties ?? {}) },
    'current-snapshot-id': -1,
    refs: {},
    snapshots: [],
    'snapshot-log': [],
    'metadata-log': [],
  };
  if (table.formatVersion === 3) base['next-row-id'] = 0;
  const empty = parseTableMetadata(stringifyJson(base));
  const schemaOf = empty.schemas.find((s) => s.schemaId === empty.currentSchemaId)!;

  const snapshotId = 1000n + BigInt(Math.floor(Math.random() * 1e9));
  const entriesBySpec = new Map<number, ManifestEntry[]>();
  for (const [i, f] of table.files.entries()) {
    const file = path.join(dataDir, `f${i}-${randomUUID()}.parquet`);
    const ids = f.fieldIds === undefined ? '' : `, FIELD_IDS ${fieldIdsSql(f.fieldIds)}`;
    await conn.run(`COPY (${f.select}) TO '${file}' (FORMAT PARQUET${ids})`);
    const count = Number((await conn.runAndReadAll(`SELECT count(*) FROM read_parquet('${file}')`)).getRowsJS()[0]![0]);
    const size = statSync(file).size;
    const specId = f.specId ?? empty.defaultSpecId;
    let auto: Pick<DataFile, 'valueCounts' | 'nullValueCounts' | 'lowerBounds' | 'upperBounds'> = {};
    if (f.metricsFrom !== undefined) {
      const values = new Map<number, number>();
      const nulls = new Map<number, number>();
      const lower = new Map<number, Uint8Array>();
      const upper = new Map<number, Uint8Array>();
      for (const [column, { id, type }] of Object.entries(f.metricsFrom)) {
        const q = `"${column.replace(/"/g, '""')}"`;
        const [n, nn, lo, hi] = (await conn.runAndReadAll(`SELECT count(*), count(*) - count(${q}), min(${q}), max(${q}) FROM read_parquet('${file}')`)).getRowsJS()[0]!;
        values.set(id, Number(n));
        nulls.set(id, Number(nn));
        if (lo !== null && hi !== null) {
          const v = (x: unknown): IcebergValue => (type === 'long' ? BigInt(x as bigint) : type === 'string' ? String(x) : Number(x));
          lower.set(id, toByteBuffer({ kind: type }, v(lo)));
          upper.set(id, toByteBuffer({ kind: type }, v(hi)));
        }
      }
      auto = { valueCounts: values, nullValueCounts: nulls, lowerBounds: lower, upperBounds: upper };
    }
    const dataFile: DataFile = {
      content: 'data',
      filePath: `file://${file}`,
      fileFormat: 'PARQUET',
      partition: f.partition ?? [],
      recordCount: count,
      fileSizeInBytes: size,
      ...auto,
      ...(f.valueCounts !== undefined ? { valueCounts: f.valueCounts } : {}),
      ...(f.nullValueCounts !== undefined ? { nullValueCounts: f.nullValueCounts } : {}),
      ...(f.bounds !== undefined
        ? {
            lowerBounds: new Map([...f.bounds].map(([id, b]) => [id, toByteBuffer(b.type, b.lower)] as const)),
            upperBounds: new Map([...f.bounds].map(([id, b]) => [id, toByteBuffer(b.type, b.upper)] as const)),
          }
        : {}),
    };
    const entry: ManifestEntry = { status: 'added', snapshotId, sequenceNumber: null, fileSequenceNumber: null, dataFile };
    const list = entriesBySpec.get(specId) ?? [];
    list.push(entry);
    entriesBySpec.set(specId, list);
  }

  const manifests = [];
  const manifestVersion = table.formatVersion === 1 ? 1 : 2;
  for (const [specId, entries] of entriesBySpec) {
    const spec = empty.partitionSpecs.find((s) => s.specId === specId)!;
    const bytes = writeManifest({ formatVersion: manifestVersion, spec, schema: schemaOf, content: 'data', entries });
    const manifestPath = path.join(metaDir, `${randomUUID()}-m0.avro`);
    writeFileSync(manifestPath, bytes);
    manifests.push(describeManifest({ manifestPath: `file://${manifestPath}`, manifestLength: bytes.length, spec, schema: schemaOf, content: 'data', entries, addedSnapshotId: snapshotId, sequenceNumber: 1 }));
  }
  const listPath = path.join(metaDir, `snap-${snapshotId}-1-${randomUUID()}.avro`);
  writeFileSync(listPath, writeManifestList({ formatVersion: manifestVersion, snapshotId, sequenceNumber: 1, manifests }));
  const totalRecords = table.files.length === 0 ? 0 : manifests.reduce((n, m) => n + (m.addedRowsCount ?? 0), 0);
  const withSnapshot: Record<string, JsonValue> = {
    ...base,
    'last-sequence-number': table.formatVersion === 1 ? 0 : 1,
    'current-snapshot-id': snapshotId,
    refs: { main: { 'snapshot-id': snapshotId, type: 'branch' } },
    snapshots: [{
      'snapshot-id': snapshotId,
      ...(table.formatVersion === 1 ? {} : { 'sequence-number': 1 }),
      'timestamp-ms': Date.now(),
      'manifest-list': `file://${listPath}`,
      summary: { operation: 'append', 'added-records': String(totalRecords), 'total-records': String(totalRecords) },
      'schema-id': empty.currentSchemaId,
    }],
    'snapshot-log': [{ 'snapshot-id': snapshotId, 'timestamp-ms': Date.now() }],
  };
  if (table.formatVersion === 3) withSnapshot['next-row-id'] = totalRecords;
  const text = stringifyJson(withSnapshot);
  const name = table.gzip === true ? `00001-${randomUUID()}.gz.metadata.json` : `00001-${randomUUID()}.metadata.json`;
  const metadataPath = path.join(metaDir, name);
  writeFileSync(metadataPath, table.gzip === true ? gzipSync(text) : text);
  return `file://${metadataPath}`;
}

/** A Floe with a catalog whose warehouse is a fresh temp folder, and a DuckDB to craft files with. */
export interface ForeignCatalog {
  readonly root: string;
  readonly duck: DuckDBConnection;
  readonly floe: Floe;
  readonly admin: { readonly tenantId: string; readonly principalId: string; readonly roles: string[] };
}

/**
 * Opens an embedded Floe whose workers may read `root` (a new temp folder), with catalog `catalog`
 * (warehouse in `root`) and its namespace `ns`; closed and removed when `t` ends.
 */
export async function openForeignCatalog(t: Test, name: string, catalog = 'ext'): Promise<ForeignCatalog> {
  const root = mkdtempSync(path.join(tmpdir(), `floe-foreign-${name}-`));
  const duck = await (await DuckDBInstance.create(':memory:')).connect();
  const floe = await Floe.open({ config: (c) => ({ ...c, query: { ...c.query, data_directories: [root] } }) });
  t.teardown(async () => {
    await floe.close();
    rmSync(root, { recursive: true, force: true });
  });
  const admin = { tenantId: 'default', principalId: 'test', roles: ['tenant_admin'] };
  await floe.state.catalog.createCatalog(admin, { name: catalog, warehouseLocation: `file://${root}/${catalog}` });
  await floe.state.catalog.createNamespace(admin, catalog, ['ns']);
  return { root, duck, floe, admin };
}

/** A small seeded generator (mulberry32), so a property test's failure names a reproducible case. */
export function seededRandom(seed: number): () => number {
  let s = seed >>> 0;
  return () => {
    s = (s + 0x6d2b79f5) >>> 0;
    let x = s;
    x = Math.imul(x ^ (x >>> 15), x | 1);
    x ^= x + Math.imul(x ^ (x >>> 7), x | 61);
    return ((x ^ (x >>> 14)) >>> 0) / 4294967296;
  };
}
