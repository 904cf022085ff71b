/** Shared helpers for the Iceberg scenario tests: where the shared test tables are, and their remapped FileIOs. */
import { readdirSync } from 'node:fs';
import * as path from 'node:path';
import { fileURLToPath } from 'node:url';
import { remapLocations } from '../../storage-creds/file-io.js';
import type { FileIO } from '../../storage-creds/file-io.js';
import { LocalFileIO } from '../../storage-creds/local-file-io.js';

/** Project root (tests run from `dist/tests/iceberg/`). */
export const PROJECT_ROOT = path.resolve(fileURLToPath(new URL('../../../', import.meta.url)));
/** `../shared/data/iceberg`, used in place. */
export const ICEBERG_DATA = path.resolve(PROJECT_ROOT, '../shared/data/iceberg');

/** A shared test table: its folder, and the prefixes its metadata was written with. */
export interface SharedTable {
  readonly name: string;
  readonly dir: string;
  readonly originalPrefixes: readonly string[];
}

export const SHARED_TABLES: readonly SharedTable[] = [
  { name: 'lineitem_iceberg', dir: 'lineitem_iceberg', originalPrefixes: ['./lineitem_iceberg/', 'lineitem_iceberg/'] },
  { name: 'mytable', dir: 'equality_deletes/warehouse/mydb/mytable', originalPrefixes: ['data/persistent/equality_deletes/warehouse/mydb/mytable/'] },
  { name: 'mytable_partitioned', dir: 'equality_deletes/warehouse/mydb/mytable_partitioned', originalPrefixes: ['data/persistent/equality_deletes/warehouse/mydb/mytable_partitioned/'] },
  { name: 'partition_integer', dir: 'partition_integer', originalPrefixes: ['data/persistent/partition_integer/'] },
  { name: 'partition_timestamptz', dir: 'partition_timestamptz/default.db/partition_timestamptz', originalPrefixes: ['data/persistent/partition_timestamptz/default.db/partition_timestamptz/'] },
];

export function sharedTable(name: string): SharedTable {
  const t = SHARED_TABLES.find((x) => x.name === name);
  if (t === undefined) throw new Error(`unknown shared table ${name}`);
  return t;
}

/** A local FileIO that maps the table's original prefixes onto its folder here. */
export function remappedIo(table: SharedTable): FileIO {
  const to = `${path.join(ICEBERG_DATA, table.dir)}/`;
  return remapLocations(new LocalFileIO(), table.originalPrefixes.map((from) => ({ from, to })));
}

/** Every `*.metadata.json` of the table, oldest first (numbered `vN` or `NNNNN-uuid`). */
export function metadataFiles(table: SharedTable): readonly string[] {
  const dir = path.join(ICEBERG_DATA, table.dir, 'metadata');
  const version = (f: string): number => Number(/^v?(\d+)/.exec(f)?.[1] ?? -1);
  return readdirSync(dir)
    .filter((f) => f.endsWith('.metadata.json'))
    .sort((a, b) => version(a) - version(b))
    .map((f) => path.join(dir, f));
}
