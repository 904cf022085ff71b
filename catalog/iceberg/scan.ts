/**
 * Scan planning for the engine: which data files make up a snapshot, and which delete files apply to
 * each (table spec "Scan Planning"). Pure except for reading the manifest list and manifests through
 * the given FileIO.
 */
import type { FileIO } from '../../storage-creds/file-io.js';
import { IcebergError, unreachable } from './errors.js';
import { readManifest } from './manifest.js';
import type { DataFile, ManifestEntry } from './manifest.js';
import { readManifestList } from './manifest-list.js';
import type { ManifestFile } from './manifest-list.js';
import { isUnpartitioned } from './partition-spec.js';
import type { PartitionSpec } from './partition-spec.js';
import type { Schema } from './schema.js';
import type { Snapshot } from './snapshot.js';
import { currentSchema, currentSnapshot, partitionSpecById, schemaById, snapshotAsOfTime, snapshotById, snapshotForRef } from './table-metadata.js';
import type { TableMetadata } from './table-metadata.js';

/** Which snapshot to read. */
export type SnapshotSelector =
  | { readonly kind: 'current' }
  | { readonly kind: 'snapshot-id'; readonly snapshotId: bigint }
  /** A branch or tag (`FOR VERSION AS OF 'name'`). */
  | { readonly kind: 'ref'; readonly name: string }
  /** The main branch as of a time (`FOR TIMESTAMP AS OF`), by the snapshot log. */
  | { readonly kind: 'timestamp'; readonly timestampMs: number };

/**
 * The snapshot a selector names; `undefined` only for `current` on a table without snapshots.
 * Unknown ids/refs and times before the first snapshot are `NotFoundException`s.
 */
export function resolveSnapshot(metadata: TableMetadata, selector: SnapshotSelector): Snapshot | undefined {
  switch (selector.kind) {
    case 'current':
      return currentSnapshot(metadata);
    case 'snapshot-id': {
      const s = snapshotById(metadata, selector.snapshotId);
      if (s === undefined) throw new IcebergError('NotFoundException', `Cannot find snapshot with ID ${selector.snapshotId}`);
      return s;
    }
    case 'ref': {
      const s = snapshotForRef(metadata, selector.name);
      if (s === undefined) throw new IcebergError('NotFoundException', `Cannot find ref ${selector.name}`);
      return s;
    }
    case 'timestamp': {
      const s = snapshotAsOfTime(metadata, selector.timestampMs);
      if (s === undefined) throw new IcebergError('NotFoundException', `Cannot find a snapshot older than ${new Date(selector.timestampMs).toISOString()}`);
      return s;
    }
    default:
      return unreachable(selector);
  }
}

/** A live content file of a snapshot with what a reader needs to apply deletes. */
export interface ScanFile {
  readonly file: DataFile;
  readonly specId: number;
  /** Data sequence number (after inheritance). */
  readonly sequenceNumber: number;
  readonly snapshotId: bigint;
}

/** A data file to read and the delete files that apply to it. */
export interface FileScanTask extends ScanFile {
  /** Position delete files that apply (their positions refer to this file's rows). */
  readonly positionDeletes: readonly ScanFile[];
  /** Equality delete files that apply (rows matching on `equalityIds` are deleted). */
  readonly equalityDeletes: readonly ScanFile[];
}

export interface ScanPlan {
  /** The snapshot read; `undefined` for an empty table. */
  readonly snapshot: Snapshot | undefined;
  /** Schema to read with: the snapshot's schema for time travel to a snapshot id, else the current one. */
  readonly schema: Schema;
  readonly tasks: readonly FileScanTask[];
  /** Every live delete file of the snapshot. */
  readonly deleteFiles: readonly ScanFile[];
  /** Sum of live data files' record counts (before deletes). */
  readonly totalRecords: number;
}

/** Reads the manifest list of a snapshot (or its v1 inline manifest list). */
export async function loadManifestFiles(io: FileIO, snapshot: Snapshot): Promise<readonly ManifestFile[]> {
  if (snapshot.manifestList !== undefined) return readManifestList(await io.read(snapshot.manifestList)).manifests;
  return (snapshot.manifests ?? []).map((path) => ({
    manifestPath: path,
    manifestLength: 0,
    partitionSpecId: 0,
    content: 'data',
    sequenceNumber: 0,
    minSequenceNumber: 0,
    addedSnapshotId: snapshot.snapshotId,
  }));
}

/** Live (not deleted) entries of a snapshot's manifests, with inheritance applied. */
/** The live (added or existing) entries of a snapshot's manifests, each with its manifest. */
export type LiveEntries = readonly { readonly manifest: ManifestFile; readonly entry: ManifestEntry }[];

export async function loadLiveEntries(io: FileIO, snapshot: Snapshot): Promise<LiveEntries> {
  const manifests = await loadManifestFiles(io, snapshot);
  const loaded = await Promise.all(
    manifests.map(async (m) => {
      const manifest = readManifest(await io.read(m.manifestPath), { addedSnapshotId: m.addedSnapshotId, sequenceNumber: m.sequenceNumber });
      const specId = manifest.metadata.partitionSpecId ?? m.partitionSpecId;
      return manifest.entries.filter((e) => e.status !== 'deleted').map((entry) => ({ manifest: { ...m, partitionSpecId: specId }, entry }));
    }),
  );
  return loaded.flat();
}

function partitionKey(specId: number, values: DataFile['partition']): string {
  return `${specId}|${values.map((v) => (v === null ? 'null' : v instanceof Uint8Array ? `b:${Buffer.from(v).toString('hex')}` : `${typeof v}:${String(v)}`)).join('|')}`;
}

/**
 * Plans a scan: live data files of the snapshot, each with its applicable deletes. Rules of the spec:
 * a position delete applies when the data file's data sequence number ≤ the delete's, the partition
 * (spec and tuple) is the same, and `referenced_data_file`, if set, names the data file; an equality
 * delete applies when the data file's sequence number < the delete's and the partition is the same or
 * the delete's spec is unpartitioned (a global delete).
 */
export async function planScan(
  metadata: TableMetadata, io: FileIO, selector: SnapshotSelector = { kind: 'current' },
  /** Where the snapshot's live entries come from (a cache, `MetadataFiles.liveEntries`); by default they are read. */
  liveEntries: (io: FileIO, snapshot: Snapshot) => Promise<LiveEntries> = loadLiveEntries,
): Promise<ScanPlan> {
  const snapshot = resolveSnapshot(metadata, selector);
  const schema = selector.kind === 'snapshot-id' && snapshot?.schemaId !== undefined ? (schemaById(metadata, snapshot.schemaId) ?? currentSchema(metadata)) : currentSchema(metadata);
  if (snapshot === undefined) return { snapshot, schema, tasks: [], deleteFiles: [], totalRecords: 0 };
  const live = await liveEntries(io, snapshot);
  const toScanFile = ({ manifest, entry }: (typeof live)[number]): ScanFile => ({
    file: entry.dataFile,
    specId: manifest.partitionSpecId,
    sequenceNumber: entry.sequenceNumber ?? 0,
    snapshotId: entry.snapshotId ?? manifest.addedSnapshotId,
  });
  const dataFiles = live.filter((x) => x.entry.dataFile.content === 'data').map(toScanFile);
  const deleteFiles = live.filter((x) => x.entry.dataFile.content !== 'data').map(toScanFile);

  const specs = new Map<number, PartitionSpec | undefined>();
  const specOf = (id: number): PartitionSpec | undefined => {
    if (!specs.has(id)) specs.set(id, partitionSpecById(metadata, id));
    return specs.get(id);
  };
  const byPartition = new Map<string, ScanFile[]>();
  const globalEqualityDeletes: ScanFile[] = [];
  for (const d of deleteFiles) {
    const spec = specOf(d.specId);
    if (d.file.content === 'equality-deletes' && spec !== undefined && isUnpartitioned(spec)) {
      globalEqualityDeletes.push(d);
      continue;
    }
    const key = partitionKey(d.specId, d.file.partition);
    const list = byPartition.get(key) ?? [];
    list.push(d);
    byPartition.set(key, list);
  }
  const tasks = dataFiles.map((f): FileScanTask => {
    const candidates = byPartition.get(partitionKey(f.specId, f.file.partition)) ?? [];
    const positionDeletes = candidates.filter(
      (d) => d.file.content === 'position-deletes' && f.sequenceNumber <= d.sequenceNumber && (d.file.referencedDataFile === undefined || d.file.referencedDataFile === f.file.filePath),
    );
    const equalityDeletes = [...candidates.filter((d) => d.file.content === 'equality-deletes'), ...globalEqualityDeletes].filter((d) => f.sequenceNumber < d.sequenceNumber);
    return { ...f, positionDeletes, equalityDeletes };
  });
  return { snapshot, schema, tasks, deleteFiles, totalRecords: dataFiles.reduce((n, f) => n + f.file.recordCount, 0) };
}
