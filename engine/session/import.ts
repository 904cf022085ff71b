/**
 * `floe admin import`: loads a local file into an Iceberg table through the same write path as
 * INSERT (a worker writes Parquet with field ids and statistics; manifests, snapshot, the
 * catalog's commit with `assert-ref-snapshot-id`, re-based on conflict). The operator's authority:
 * the file is read by DuckDB directly, which user SQL may never do.
 *
 * Formats: Parquet (`.parquet`), CSV with a header (`.csv`, `.csv.gz`), and TPC-H dbgen files
 * (`.tbl`, `.tbl.gz`: `|`-delimited, no header, trailing `|`). A missing table is created from a
 * Parquet or CSV file's own schema; a `.tbl` file needs the table to exist (it has no column names).
 */
import { dirname, resolve } from 'node:path';
import { existsSync } from 'node:fs';
import { floeError } from '../../grammar/errors.js';
import type { CatalogService } from '../../catalog/rest/service.js';
import type { CatalogContext } from '../../catalog/rest/context.js';
import { toCatalogError } from '../../catalog/rest/errors.js';
import { currentSchema, type TableMetadata } from '../../catalog/iceberg/table-metadata.js';
import type { Executor } from '../exec/index.js';
import { uploadingExecutor } from '../exec/localizing-executor.js';
import { appendWriteRequest, commitUpdates, dataFilesFromWritten, duckdbType, quoteIdent, sqlString, stageAppend } from '../iceberg-io/index.js';
import { schemaOfResult } from './result-schema.js';
import { sqlErrorOf } from './catalog-statements.js';

export type ImportFormat = 'parquet' | 'csv' | 'tbl';

export function formatOf(file: string): ImportFormat {
  const f = file.toLowerCase().replace(/\.(gz|zst)$/, '');
  if (f.endsWith('.parquet')) return 'parquet';
  if (f.endsWith('.csv')) return 'csv';
  if (f.endsWith('.tbl')) return 'tbl';
  throw floeError('INVALID_PARAMETER', { name: 'file', detail: 'expected .parquet, .csv[.gz] or .tbl[.gz]' });
}

export interface ImportRequest {
  readonly context: CatalogContext;
  readonly catalog: string;
  readonly namespace: readonly string[];
  readonly table: string;
  readonly file: string;
}

export interface ImportDeps {
  readonly catalog: CatalogService;
  /** An executor whose workers may read the file's folder. */
  readonly executor: Executor;
}

/** The DuckDB relation that reads the file, columns positional (`column0…`) for `.tbl`. */
function sourceSql(file: string, format: ImportFormat, columns?: number): string {
  const path = sqlString(file);
  switch (format) {
    case 'parquet': return `SELECT * FROM read_parquet(${path})`;
    case 'csv': return `SELECT * FROM read_csv(${path}, header = true)`;
    case 'tbl': {
      // dbgen lines end with a delimiter: one more (empty) column than the table has.
      const names = Array.from({ length: (columns ?? 0) + 1 }, (_, i) => `'column${i}': 'VARCHAR'`).join(', ');
      return `SELECT * FROM read_csv(${path}, delim = '|', header = false, quote = '', escape = '', columns = {${names}})`;
    }
    default: {
      const never: never = format;
      throw new Error(`unknown format ${String(never)}`);
    }
  }
}

/** Loads the file; returns the rows written. Creates the table from the file's schema when missing. */
export async function importFile(deps: ImportDeps, r: ImportRequest): Promise<{ rows: number; created: boolean }> {
  try {
    return await importInto(deps, r);
  } catch (e) {
    throw sqlErrorOf(e, `${r.catalog}.${r.namespace.join('.')}.${r.table}`);
  }
}

async function importInto(deps: ImportDeps, r: ImportRequest): Promise<{ rows: number; created: boolean }> {
  const file = resolve(r.file);
  if (!existsSync(file)) throw floeError('INVALID_PARAMETER', { name: 'file', detail: `${file} does not exist` });
  const format = formatOf(file);
  const ident = { namespace: r.namespace, name: r.table };
  let metadata: TableMetadata;
  let created = false;
  try {
    metadata = (await deps.catalog.loadTable(r.context, r.catalog, ident)).metadata;
  } catch (e) {
    if (toCatalogError(e)?.type !== 'NoSuchTableException') throw e;
    if (format === 'tbl') throw floeError('UNDEFINED_TABLE', { name: `${r.catalog}.${r.namespace.join('.')}.${r.table} (create it first: .tbl files carry no column names)` });
    const probe = await deps.executor.execute({ fragments: [{ id: 0, sql: `${sourceSql(file, format)} LIMIT 0`, scans: [], inputs: [] }] });
    const schema = schemaOfResult(probe.columns, probe.types);
    metadata = (await deps.catalog.createTable(r.context, r.catalog, r.namespace, { name: r.table, schema })).metadata;
    created = true;
  }
  const fields = currentSchema(metadata).fields;
  const source = sourceSql(file, format, fields.length);
  const exprs = fields.map((f, i) => {
    const col = format === 'tbl' ? quoteIdent(`column${i}`) : quoteIdent(f.name);
    return `CAST(${col} AS ${duckdbType(f.type)}) AS ${quoteIdent(f.name)}`;
  });
  const sql = `SELECT ${exprs.join(', ')} FROM (${source}) AS __floe_import`;
  const catalogRecord = await deps.catalog.loadCatalog(r.context, r.catalog);
  const { request, dataLocation } = appendWriteRequest(metadata, sql, [], { locationMappings: catalogRecord.locationMappings, catalog: r.catalog });
  // A table on object storage: the worker writes locally and the files are uploaded before the commit.
  const written = await deps.executor.write(request, { storage: async (name) => {
    const io = await deps.catalog.fileIOFor(r.context, name);
    return { read: (l) => io.read(l), write: (l, bytes) => io.write(l, bytes), delete: (l) => io.delete(l) };
  } });
  const dataFiles = dataFilesFromWritten(metadata, written.files, dataLocation);
  const rows = dataFiles.reduce((n, f) => n + f.recordCount, 0);
  if (dataFiles.length === 0) return { rows, created };
  const io = await deps.catalog.fileIOFor(r.context, r.catalog);
  const staged = await stageAppend(io, metadata, dataFiles);
  for (let attempt = 1; ; attempt++) {
    const commit = await commitUpdates(io, metadata, staged);
    try {
      await deps.catalog.commitTable(r.context, r.catalog, ident, commit.requirements, commit.updates);
      return { rows, created };
    } catch (e) {
      if (toCatalogError(e)?.type !== 'CommitFailedException' || attempt >= 20) throw e;
      metadata = (await deps.catalog.loadTable(r.context, r.catalog, ident)).metadata;
    }
  }
}

/** The folder a worker must be allowed to read for `file`. */
export function importDirectory(file: string): string {
  return dirname(resolve(file));
}

/**
 * Runs `work` with a one-worker executor that may read `directory` besides the warehouse: imports
 * read files that the serving workers are never allowed to see.
 */
export async function withImportExecutor<T>(
  create: (options: { workers: number; spillDirectory: string; dataDirectories: string[] }) => Executor,
  folders: { warehouse: string; spill: string; extra: readonly string[] }, directory: string, work: (executor: Executor) => Promise<T>,
): Promise<T> {
  const executor = uploadingExecutor(create({ workers: 1, spillDirectory: folders.spill, dataDirectories: [folders.warehouse, ...folders.extra, directory] }));
  try {
    return await work(executor);
  } finally {
    await executor.close();
  }
}
