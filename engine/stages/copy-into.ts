/**
 * COPY INTO <table> [(cols)] FROM @stage[/path]: loads a stage's files into an Iceberg table in one
 * commit.
 *
 *   resolve the table and the stage (USAGE checked) → pick the files (FILES, PATTERN, the path
 *   prefix) → drop those the load history says were loaded (same location, size and etag) unless
 *   FORCE → per file: size cap, empty file, gzip integrity, then one DuckDB pass that parses every
 *   row into the target's types and reports the bad ones (CSV: the reader's rejects, with line and
 *   column; Parquet and JSON: values that do not cast, by row) → ON_ERROR decides what is loaded →
 *   one worker writes every loaded file's good rows as Parquet → one Iceberg commit (appends
 *   re-based on conflict, as INSERT) → load history rows, PURGE.
 *
 * Nothing is committed when the statement fails, so under ABORT_STATEMENT a bad row anywhere loads
 * nothing. VALIDATION_MODE = RETURN_ERRORS runs the checks and answers the errors, loading nothing.
 * The parse runs in the locked-down workers, which may read the warehouse, and so the stage folders
 * of `file://` warehouses.
 */
import { createGunzip } from 'node:zlib';
import { mkdir, open, rm } from 'node:fs/promises';
import { basename, join } from 'node:path';
import { floeError, isFloeError, type FloeError } from '../../grammar/errors.js';
import type { CopyInto } from '../../grammar/ir.js';
import type { MetaStore } from '../../catalog/store/meta-store.js';
import type { CatalogService } from '../../catalog/rest/service.js';
import type { LoadedTable } from '../../catalog/rest/loaded.js';
import { toCatalogError } from '../../catalog/rest/errors.js';
import { currentSchema, type TableMetadata } from '../../catalog/iceberg/table-metadata.js';
import { findFieldByName } from '../../catalog/iceberg/schema.js';
import type { NestedField } from '../../catalog/iceberg/types.js';
import type { TableRequirement } from '../../catalog/iceberg/table-updates.js';
import { resolveLocalPath } from '../../storage-creds/local-file-io.js';
import type { FileIO } from '../../storage-creds/file-io.js';
import type { Executor } from '../exec/index.js';
import { appendWriteRequest, commitUpdates, dataFilesFromWritten, duckdbType, quoteIdent, sqlString, stageAppend, type StagedChange } from '../iceberg-io/index.js';
import { defaultValueSql } from '../iceberg-io/defaults.js';
import { identName } from '../planner/names.js';
import { checkIsolation } from '../planner/isolation.js';
import { NamespaceLookup } from '../session/namespace-lookup.js';
import { catalogContextOf, sqlErrorOf, statementStorage } from '../session/catalog-statements.js';
import type { RowSet, StatementContext } from '../session/query-service.js';
import type { QueryRunner } from '../session/query-runner.js';
import type { QueryLease } from '../wlm/index.js';
import { compressionOfFile, formatTypeOfName, jsonCompression, readerSql, resolveLoadFormat, type LoadFormat, type ReaderColumn } from './load-format.js';
import type { StagedFile } from './stage-files.js';
import { checkStageKey, parseStageRef, stageDisplay, stagePattern } from './stage-path.js';
import type { ResolvedStage, StageService } from './stages.js';

/** Errors reported per file by VALIDATION_MODE (and kept per file otherwise); the rest are counted. */
const MAX_ERRORS_PER_FILE = 1000;
/**
 * Rejected values DuckDB keeps per CSV file (its rejects table lives in the worker's memory until
 * the next check): errors_seen, and the bad rows in rows_parsed, count at most this many.
 */
const MAX_REJECTS_KEPT = 100_000;
const MAX_APPEND_ATTEMPTS = 20;
/** Bytes read per step when checking a gzip file's integrity. */
const GZIP_CHECK_CHUNK_BYTES = 8 * 1024 * 1024;

export interface CopyRunnerOptions {
  readonly catalog: CatalogService;
  readonly executor: Executor;
  readonly stages: StageService;
  readonly queries: QueryRunner;
  readonly store: MetaStore;
  readonly clock: { now(): number };
  /** Largest file loaded (`loading.max_file_bytes`). */
  readonly maxFileBytes: number;
}

/** What became of one file. */
export type FileStatus = 'LOADED' | 'PARTIALLY_LOADED' | 'LOAD_FAILED' | 'LOAD_SKIPPED';

/** One bad row (or a whole bad file, `line` 0). */
export interface LoadError {
  readonly line: number;
  /** 1-based column of the file (CSV) or of the target (Parquet, JSON); 0 when not about one column. */
  readonly column: number;
  readonly columnName: string | null;
  readonly reason: string;
  readonly record: string | null;
}

interface FileCheck {
  readonly file: StagedFile;
  readonly display: string;
  /** Rows that parsed into the target's types. */
  readonly goodRows: number;
  /** Rows with at least one error. */
  readonly badRows: number;
  readonly errorsSeen: number;
  readonly errors: readonly LoadError[];
  /** Set when the file as a whole cannot be loaded (unreadable, empty, too large). */
  readonly fileError?: FloeError;
}

export interface FileOutcome {
  readonly file: string;
  readonly status: FileStatus;
  readonly rowsParsed: number;
  readonly rowsLoaded: number;
  readonly errorsSeen: number;
  readonly firstError: string | null;
  readonly firstErrorLine: number | null;
  readonly firstErrorColumn: number | null;
}

const ANSWER_COLUMNS = ['file', 'status', 'rows_parsed', 'rows_loaded', 'errors_seen', 'first_error', 'first_error_line', 'first_error_column'];
const ANSWER_TYPES = ['VARCHAR', 'VARCHAR', 'BIGINT', 'BIGINT', 'BIGINT', 'VARCHAR', 'BIGINT', 'BIGINT'];

/** How the file's columns reach the target's: the reader's columns and, per target field, its source expression. */
interface ColumnPlan {
  readonly reader: readonly ReaderColumn[];
  /** Target field → SQL over the reader's row (`undefined`: the field's write default). */
  readonly sources: ReadonlyMap<number, string>;
  /** Per checked source: SQL that is true when the row's value does not fit, with the target column's 1-based position and name. */
  readonly checks: readonly { readonly bad: string; readonly column: number; readonly name: string }[];
}

export class CopyRunner {
  constructor(private readonly o: CopyRunnerOptions) {}

  async run(ctx: StatementContext, s: CopyInto): Promise<RowSet> {
    // A URL that is no object store (file:///etc/) is an escape attempt: 42501, as in every other statement.
    checkIsolation(s);
    this.o.queries.rejectIfQueueFull(ctx, s);
    if (s.source.kind === 'Location') {
      throw floeError('UNSUPPORTED_STATEMENT', { what: 'COPY INTO from a URL: create a stage (CREATE STAGE) and load from @stage' });
    }
    const cc = catalogContextOf(ctx);
    const lookup = new NamespaceLookup(this.o.catalog, cc);
    const name = await lookup.tableName(s.table, { catalog: ctx.session.catalog, namespace: [ctx.session.schema] });
    const target = { catalog: name.catalog, ident: { namespace: name.namespace, name: name.name }, display: [name.catalog, ...name.namespace, name.name].join('.') };
    let loaded: LoadedTable;
    try {
      loaded = await this.o.catalog.loadTable(cc, target.catalog, target.ident);
    } catch (e) {
      throw sqlErrorOf(e, target.display);
    }
    const ref = parseStageRef(s.source.path);
    const stage = await this.o.stages.resolve(cc, ctx.session.catalog, ref);
    const files = await this.pickFiles(stage, ref.path, s);
    const format = resolveLoadFormat(stage.fileFormat, s.fileFormat ?? [], files.length > 0 ? formatTypeOfName(files[0]!.key) : 'CSV');
    const schema = currentSchema(loaded.metadata);
    const targetFields = s.columns.length > 0 ? s.columns.map((c) => {
      const f = findFieldByName(schema, identName(c), false);
      if (!f) throw floeError('UNDEFINED_COLUMN', { name: `${target.display}.${c.name}` });
      return f;
    }) : schema.fields;
    if (new Set(targetFields.map((f) => f.id)).size !== targetFields.length) throw floeError('INVALID_PARAMETER', { name: 'COPY INTO', detail: 'a column is named twice' });
    if (s.matchByColumnName !== undefined && s.matchByColumnName !== 'NONE' && format.type === 'CSV' && !format.parseHeader) {
      throw floeError('INVALID_PARAMETER', { name: 'MATCH_BY_COLUMN_NAME', detail: 'CSV files need FILE_FORMAT = (PARSE_HEADER = TRUE): the header line names the columns' });
    }
    // The load history: files loaded into this table before, by location, size and etag.
    const history = s.force || files.length === 0 ? new Set<string>() : await this.loadedBefore(ctx, loaded.metadata.tableUuid, files);
    const toLoad = files.filter((f) => !history.has(historyKey(f)));
    const skipped = files.filter((f) => history.has(historyKey(f)));
    if (toLoad.length === 0 && s.validationMode === undefined) {
      return answer(skipped.map((f) => skippedOutcome(stage, f)));
    }
    return this.o.queries.withLease(ctx, s, { features: { joins: 0, scans: toLoad.length, windowFunctions: 0, aggregates: 0 }, estimatedRows: 0 }, async (lease) => {
      // Files on object storage are fetched into the executor's staging folder, which the workers may read.
      const local = await this.localize(ctx, stage, toLoad);
      try {
        return await this.load(ctx, lease, s, target, loaded, stage, format, targetFields, toLoad, skipped, local.paths);
      } finally {
        await local.release();
      }
    });
  }

  /** A local path for every file: the file itself on `file://` stages, a fetched copy otherwise. */
  private async localize(ctx: StatementContext, stage: ResolvedStage, files: readonly StagedFile[]): Promise<{ paths: Map<string, string>; release: () => Promise<void> }> {
    const paths = new Map<string, string>();
    if (isLocal(stage.files.root)) {
      for (const f of files) paths.set(f.location, resolveLocalPath(f.location));
      return { paths, release: async () => undefined };
    }
    const folder = join(this.o.executor.stagingDirectory, `copy-${ctx.queryId}`);
    await mkdir(folder, { recursive: true });
    let n = 0;
    for (const f of files) {
      if (f.size > this.o.maxFileBytes || f.size === 0) continue; // refused by the checks without being fetched
      const target = join(folder, `${n++}-${basename(f.key)}`);
      const out = await open(target, 'w');
      try {
        for (let offset = 0; offset < f.size; offset += GZIP_CHECK_CHUNK_BYTES) {
          await out.write(await stage.files.io.readRange(f.location, offset, Math.min(GZIP_CHECK_CHUNK_BYTES, f.size - offset)));
        }
      } finally {
        await out.close();
      }
      paths.set(f.location, target);
    }
    return { paths, release: () => rm(folder, { recursive: true, force: true }) };
  }

  private async load(
    ctx: StatementContext, lease: QueryLease, s: CopyInto, target: { catalog: string; ident: { namespace: readonly string[]; name: string }; display: string },
    loaded: LoadedTable, stage: ResolvedStage, format: LoadFormat, targetFields: readonly NestedField[], toLoad: readonly StagedFile[], skipped: readonly StagedFile[],
    localPaths: ReadonlyMap<string, string>,
  ): Promise<RowSet> {
    {
      const checks: FileCheck[] = [];
      for (const f of toLoad) checks.push(await this.checkFile(ctx, lease, stage, f, localPaths.get(f.location) ?? '', format, targetFields, s));
      if (s.validationMode === 'RETURN_ERRORS') return validationAnswer(checks);
      const onError = s.onError ?? 'ABORT_STATEMENT';
      if (onError === 'ABORT_STATEMENT') {
        const bad = checks.find((c) => c.fileError !== undefined || c.errors.length > 0);
        if (bad !== undefined) throw bad.fileError ?? floeError('LOAD_FILE_ERROR', { file: bad.display, line: bad.errors[0]!.line, column: bad.errors[0]!.column, reason: bad.errors[0]!.reason });
      }
      const loadable = checks.filter((c) => c.fileError === undefined && (onError === 'CONTINUE' || c.errors.length === 0) && c.goodRows > 0);
      const rowsLoaded = await this.write(ctx, lease, target, loaded, localPaths, format, targetFields, s, loadable);
      const outcomes = checks.map((c): FileOutcome => {
        const first = c.fileError !== undefined ? { line: 0, column: 0, reason: c.fileError.message } : c.errors[0];
        const failed = c.fileError !== undefined || (onError === 'SKIP_FILE' && c.errors.length > 0);
        return {
          file: c.display,
          status: failed ? 'LOAD_FAILED' : c.errors.length > 0 ? 'PARTIALLY_LOADED' : 'LOADED',
          rowsParsed: c.goodRows + c.badRows, rowsLoaded: failed ? 0 : c.goodRows, errorsSeen: c.fileError !== undefined ? 1 : c.errorsSeen,
          firstError: first?.reason ?? null, firstErrorLine: first === undefined || first.line === 0 ? null : first.line, firstErrorColumn: first === undefined || first.column === 0 ? null : first.column,
        };
      });
      // Files that loaded (all or some rows) enter the history, and PURGE removes them.
      const done = checks.filter((_, i) => outcomes[i]!.status === 'LOADED' || outcomes[i]!.status === 'PARTIALLY_LOADED');
      await this.recordHistory(ctx, loaded.metadata.tableUuid, target.display, done, outcomes.filter((o) => o.status === 'LOADED' || o.status === 'PARTIALLY_LOADED'), rowsLoaded.snapshotId);
      if (s.purge) for (const c of done) await stage.files.remove(c.file.key).catch(() => undefined);
      return { ...answer([...outcomes, ...skipped.map((f) => skippedOutcome(stage, f))]), bytesScanned: checks.reduce((n, c) => n + c.file.size, 0), fragments: 1 };
    }
  }

  /** The files a COPY names: FILES (each must exist), else every file under the path, PATTERN applied. */
  private async pickFiles(stage: ResolvedStage, path: string, s: CopyInto): Promise<StagedFile[]> {
    const listed = (await stage.files.list(path)).filter((f) => !f.key.endsWith('/'));
    if (s.files !== undefined) {
      const byKey = new Map(listed.map((f) => [f.key, f] as const));
      const base = path === '' || path.endsWith('/') ? path : `${path}/`;
      const out: StagedFile[] = [];
      for (const name of s.files) {
        const key = checkStageKey(`${base}${name}`, {}, 'FILES');
        const f = byKey.get(key);
        if (f === undefined) throw floeError('NOT_FOUND', { what: `file ${stageDisplay(stage, key)}` });
        if (!out.includes(f)) out.push(f);
      }
      return out;
    }
    const match = stagePattern(s.pattern);
    return match === undefined ? listed : listed.filter((f) => match(f.key));
  }

  private async loadedBefore(ctx: StatementContext, tableUuid: string, files: readonly StagedFile[]): Promise<Set<string>> {
    const r = await this.o.store.query<{ file_location: string; size: string | number; etag: string }>(
      'SELECT file_location, size, etag FROM copy_history WHERE tenant_id = $1 AND table_uuid = $2 AND file_location = ANY($3::text[])',
      [ctx.principal.tenantId, tableUuid, files.map((f) => f.location)]);
    return new Set(r.rows.map((row) => `${row.file_location}\u0000${Number(row.size)}\u0000${row.etag}`));
  }

  /** Everything that can be known about a file before writing: whether it loads, and its bad rows. */
  private async checkFile(
    ctx: StatementContext, lease: QueryLease, stage: ResolvedStage, file: StagedFile, path: string, format: LoadFormat, fields: readonly NestedField[], s: CopyInto,
  ): Promise<FileCheck> {
    const display = stageDisplay(stage, file.key);
    const none = { file, display, goodRows: 0, badRows: 0, errorsSeen: 0, errors: [] };
    if (file.size > this.o.maxFileBytes) return { ...none, fileError: floeError('LOAD_FILE_TOO_LARGE', { file: display, bytes: file.size, limit: this.o.maxFileBytes }) };
    if (file.size === 0) return { ...none, fileError: floeError('LOAD_FILE_UNREADABLE', { file: display, reason: 'the file is empty' }) };
    if (format.type !== 'PARQUET' && compressionOfFile(format, file.key) === 'GZIP') {
      const problem = await gzipProblem(stage.files.io, file);
      // DuckDB reads a truncated gzip stream as a shorter file without a word: checked here first.
      if (problem !== undefined) return { ...none, fileError: floeError('LOAD_FILE_UNREADABLE', { file: display, reason: problem }) };
    }
    try {
      const plan = await this.columnPlan(lease, format, path, file.key, fields, s);
      const r = await this.o.executor.execute({ fragments: [{ id: 0, sql: checkSql(format, path, file.key, plan), scans: [], inputs: [] }] }, { signal: lease.signal, memoryLimitBytes: lease.memoryLimitBytes, storage: statementStorage(this.o.catalog, ctx) });
      lease.chargeCpu(r.metrics.cpuMs);
      const head = r.rows[0]!;
      const errors = r.rows.slice(1).map((row): LoadError => ({
        line: Number(row[0]), column: Number(row[1]), columnName: row[2] === null ? null : String(row[2]), reason: cleanReason(String(row[3])), record: row[4] === null ? null : String(row[4]),
      }));
      return { file, display, goodRows: Number(head[5]), badRows: Number(head[6]), errorsSeen: Number(head[7]), errors };
    } catch (e) {
      if (!isFloeError(e) || e.sqlState.startsWith('57') || e.sqlState.startsWith('53')) throw e;
      return { ...none, fileError: floeError('LOAD_FILE_UNREADABLE', { file: display, reason: e.message }) };
    }
  }

  /** The reader's columns and each target field's source. */
  private async columnPlan(lease: QueryLease, format: LoadFormat, path: string, key: string, fields: readonly NestedField[], s: CopyInto): Promise<ColumnPlan> {
    const mode = s.matchByColumnName ?? (format.type === 'CSV' ? 'NONE' : 'CASE_INSENSITIVE');
    const named = (name: string, f: NestedField) => (mode === 'CASE_SENSITIVE' ? name === f.name : name.toLowerCase() === f.name.toLowerCase());
    if (format.type === 'CSV' && mode === 'NONE') {
      // Positional: the file's columns are the target columns in order, parsed as their types by the reader.
      const reader = fields.map((f) => ({ name: f.name, duckdbType: duckdbType(f.type) }));
      return { reader, sources: new Map(fields.map((f) => [f.id, quoteIdent(f.name)] as const)), checks: [] };
    }
    if (format.type === 'CSV') {
      // By the header's names: the file's columns in file order, a matched one parsed as its target's type, others as text.
      const header = await this.o.executor.execute({ fragments: [{ id: 0, sql: `DESCRIBE SELECT * FROM read_csv(${sqlString(path)}, delim = ${sqlString(format.delimiter)}, quote = ${sqlString(format.quote)}, escape = ${sqlString(format.escape)}, header = true, all_varchar = true, compression = ${sqlString(compressionOfFile(format, key).toLowerCase())})`, scans: [], inputs: [] }] }, { signal: lease.signal });
      const names = header.rows.map((r) => String(r[0]));
      const sources = new Map<number, string>();
      const reader = names.map((name) => {
        const f = fields.find((x) => named(name, x));
        if (f === undefined || sources.has(f.id)) return { name, duckdbType: 'VARCHAR' };
        sources.set(f.id, quoteIdent(name));
        return { name, duckdbType: duckdbType(f.type) };
      });
      if (sources.size === 0) throw floeError('DATATYPE_MISMATCH', { detail: `no column of the file matches a target column by name (the header has ${names.join(', ')})` });
      return { reader, sources, checks: [] };
    }
    // Parquet and JSON carry names: columns by name (case-insensitive unless CASE_SENSITIVE), or by position with NONE.
    const described = await this.o.executor.execute({ fragments: [{ id: 0, sql: `DESCRIBE SELECT * FROM ${format.type === 'PARQUET' ? readerSql(format, path, key, []) : `read_json(${sqlString(path)}, format = 'newline_delimited', compression = ${jsonCompression(format, key)})`}`, scans: [], inputs: [] }] }, { signal: lease.signal });
    const fileColumns = described.rows.map((r) => ({ name: String(r[0]), type: String(r[1]) }));
    const reader: ReaderColumn[] = format.type === 'JSON' ? fileColumns.map((c) => ({ name: c.name, duckdbType: c.type })) : [];
    const sources = new Map<number, string>();
    const checks: { bad: string; column: number; name: string }[] = [];
    fields.forEach((f, i) => {
      const source = mode === 'NONE' ? fileColumns[i] : fileColumns.find((c) => named(c.name, f));
      if (source === undefined) return;
      const col = quoteIdent(source.name);
      const type = duckdbType(f.type);
      sources.set(f.id, `TRY_CAST(${col} AS ${type})`);
      checks.push({ bad: `(${col} IS NOT NULL AND TRY_CAST(${col} AS ${type}) IS NULL)`, column: i + 1, name: f.name });
    });
    if (mode === 'NONE' && fileColumns.length !== fields.length) {
      throw floeError('DATATYPE_MISMATCH', { detail: `the file has ${fileColumns.length} columns and the target ${fields.length} (MATCH_BY_COLUMN_NAME = NONE matches by position)` });
    }
    if (sources.size === 0) throw floeError('DATATYPE_MISMATCH', { detail: `no column of the file matches a target column by name (the file has ${fileColumns.map((c) => c.name).join(', ')})` });
    return { reader, sources, checks };
  }

  /** Writes the good rows of `files` and commits one append; returns the rows written and the snapshot. */
  private async write(
    ctx: StatementContext, lease: QueryLease, target: { catalog: string; ident: { namespace: readonly string[]; name: string }; display: string },
    loaded: LoadedTable, localPaths: ReadonlyMap<string, string>, format: LoadFormat, fields: readonly NestedField[], s: CopyInto, files: readonly FileCheck[],
  ): Promise<{ rows: number; snapshotId: bigint | null }> {
    if (files.length === 0) return { rows: 0, snapshotId: null };
    const schema = currentSchema(loaded.metadata);
    const selects: string[] = [];
    for (const c of files) {
      const path = localPaths.get(c.file.location)!;
      const plan = await this.columnPlan(lease, format, path, c.file.key, fields, s);
      const exprs = schema.fields.map((f) => `${columnValue(plan.sources.get(f.id) ?? writeDefaultSql(f), f)} AS ${quoteIdent(f.name)}`);
      const skipBad = c.errors.length > 0;
      const reader = readerSql(format, path, c.file.key, plan.reader, skipBad && format.type === 'CSV' ? ['ignore_errors = true'] : []);
      const where = skipBad && plan.checks.length > 0 ? ` WHERE NOT (${plan.checks.map((x) => x.bad).join(' OR ')})` : '';
      selects.push(`SELECT ${exprs.join(', ')} FROM ${reader} AS __floe_file${where}`);
    }
    const sql = selects.join('\nUNION ALL\n');
    const cc = catalogContextOf(ctx);
    const catalogRecord = await this.o.catalog.loadCatalog(cc, target.catalog);
    const { request, dataLocation } = appendWriteRequest(loaded.metadata, sql, [], { locationMappings: catalogRecord.locationMappings, catalog: target.catalog });
    const written = await this.o.executor.write(request, { storage: statementStorage(this.o.catalog, ctx), signal: lease.signal, memoryLimitBytes: lease.memoryLimitBytes, onMemory: (bytes) => lease.reportMemory(bytes) });
    lease.chargeCpu(written.metrics.cpuMs);
    const dataFiles = dataFilesFromWritten(loaded.metadata, written.files, dataLocation);
    const rows = dataFiles.reduce((n, f) => n + f.recordCount, 0);
    if (dataFiles.length === 0) return { rows, snapshotId: null };
    const io = await this.o.catalog.fileIOFor(cc, target.catalog);
    const staged = await stageAppend(io, loaded.metadata, dataFiles);
    const snapshotId = await this.commit(cc, io, target, loaded.metadata, staged);
    return { rows, snapshotId };
  }

  /** One append commit, re-based onto newer snapshots after a conflict (as INSERT does). */
  private async commit(
    cc: ReturnType<typeof catalogContextOf>, io: FileIO, target: { catalog: string; ident: { namespace: readonly string[]; name: string }; display: string },
    metadata: TableMetadata, staged: StagedChange,
  ): Promise<bigint> {
    let current = metadata;
    const schemaId = currentSchema(metadata).schemaId;
    for (let attempt = 1; ; attempt++) {
      if (currentSchema(current).schemaId !== schemaId) throw floeError('COMMIT_CONFLICT', { detail: `the schema of ${target.display} changed while COPY ran; run it again` });
      const commit = await commitUpdates(io, current, staged);
      const requirements: TableRequirement[] = [...commit.requirements, { type: 'assert-current-schema-id', currentSchemaId: schemaId }];
      try {
        await this.o.catalog.commitTable(cc, target.catalog, target.ident, requirements, commit.updates);
        return staged.snapshotId;
      } catch (e) {
        if (toCatalogError(e)?.type !== 'CommitFailedException' || attempt >= MAX_APPEND_ATTEMPTS) throw sqlErrorOf(e, target.display);
        await new Promise((r) => setTimeout(r, Math.random() * Math.min(100, 5 * attempt)));
        current = (await this.o.catalog.loadTable(cc, target.catalog, target.ident)).metadata;
      }
    }
  }

  private async recordHistory(ctx: StatementContext, tableUuid: string, tableName: string, checks: readonly FileCheck[], outcomes: readonly FileOutcome[], snapshotId: bigint | null): Promise<void> {
    const now = new Date(this.o.clock.now());
    for (let i = 0; i < checks.length; i++) {
      const c = checks[i]!;
      const o = outcomes[i]!;
      await this.o.store.query(
        `INSERT INTO copy_history (tenant_id, table_uuid, table_name, file_location, file_name, size, etag, status, rows_parsed, rows_loaded, errors_seen, first_error, query_id, principal_id, snapshot_id, loaded_at)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16)`,
        [ctx.principal.tenantId, tableUuid, tableName, c.file.location, c.display, c.file.size, c.file.etag, o.status, o.rowsParsed, o.rowsLoaded, o.errorsSeen,
          o.firstError, ctx.queryId, ctx.principal.principalId, snapshotId === null ? null : snapshotId.toString(), now]);
    }
  }
}

function isLocal(location: string): boolean {
  try {
    resolveLocalPath(location);
    return true;
  } catch {
    return false;
  }
}

function historyKey(f: StagedFile): string {
  return `${f.location}\u0000${f.size}\u0000${f.etag}`;
}

function skippedOutcome(stage: ResolvedStage, f: StagedFile): FileOutcome {
  return { file: stageDisplay(stage, f.key), status: 'LOAD_SKIPPED', rowsParsed: 0, rowsLoaded: 0, errorsSeen: 0, firstError: 'already loaded into this table (FORCE = TRUE loads it again)', firstErrorLine: null, firstErrorColumn: null };
}

function answer(outcomes: readonly FileOutcome[]): RowSet {
  return {
    columns: ANSWER_COLUMNS, types: ANSWER_TYPES,
    rows: outcomes.map((o) => [o.file, o.status, o.rowsParsed, o.rowsLoaded, o.errorsSeen, o.firstError, o.firstErrorLine, o.firstErrorColumn]),
  };
}

/** VALIDATION_MODE = RETURN_ERRORS: one row per error (a whole-file problem is one row with line 0). */
function validationAnswer(checks: readonly FileCheck[]): RowSet {
  const rows: unknown[][] = [];
  for (const c of checks) {
    if (c.fileError !== undefined) rows.push([c.display, null, null, null, c.fileError.message, null]);
    for (const e of c.errors) rows.push([c.display, e.line === 0 ? null : e.line, e.column === 0 ? null : e.column, e.columnName, e.reason, e.record]);
  }
  return { columns: ['file', 'line', 'column', 'column_name', 'error', 'rejected_record'], types: ['VARCHAR', 'BIGINT', 'BIGINT', 'VARCHAR', 'VARCHAR', 'VARCHAR'], rows };
}

/**
 * The check of one file, as one DuckDB text: its first row is the counts (good rows, bad rows,
 * errors), the others its first errors (line, column, column name, reason, record).
 */
function checkSql(format: LoadFormat, path: string, key: string, plan: ColumnPlan): string {
  const head = (good: string, bad: string, seen: string) => `SELECT NULL::BIGINT, NULL::BIGINT, NULL::VARCHAR, NULL::VARCHAR, NULL::VARCHAR, (${good})::BIGINT, (${bad})::BIGINT, (${seen})::BIGINT`;
  if (format.type === 'CSV') {
    // Every column is projected (hash over all of them), so every value is parsed and every bad one rejected.
    const cols = plan.reader.map((c) => quoteIdent(c.name)).join(', ');
    // The reader's column_idx counts from 0 or 1 depending on the error type; the column's name does not.
    const position = `coalesce(list_position([${plan.reader.map((c) => sqlString(c.name)).join(', ')}]::VARCHAR[], column_name), column_idx + 1)`;
    const reader = readerSql(format, path, key, plan.reader, [`store_rejects = true`, `rejects_table = '__floe_copy_rejects'`, `rejects_scan = '__floe_copy_scans'`, `rejects_limit = ${MAX_REJECTS_KEPT}`]);
    return [
      'DROP TABLE IF EXISTS __floe_copy_rejects', 'DROP TABLE IF EXISTS __floe_copy_scans',
      `CREATE OR REPLACE TEMP TABLE __floe_copy_parsed AS SELECT count(*) AS n, bit_xor(hash(${cols})) AS h FROM ${reader}`,
      `${head('SELECT n FROM __floe_copy_parsed', 'SELECT count(DISTINCT line) FROM __floe_copy_rejects', 'SELECT count(*) FROM __floe_copy_rejects')}
       UNION ALL SELECT * FROM (SELECT line, ${position} AS position, column_name, error_type || ': ' || error_message, csv_line, NULL, NULL, NULL FROM __floe_copy_rejects ORDER BY line, position LIMIT ${MAX_ERRORS_PER_FILE})`,
    ].join(';\n');
  }
  const reader = readerSql(format, path, key, plan.reader);
  const badCase = plan.checks.length === 0 ? 'NULL::INTEGER' : `CASE ${plan.checks.map((c, i) => `WHEN ${c.bad} THEN ${i}`).join(' ')} END`;
  const names = `[${plan.checks.map((c) => sqlString(c.name)).join(', ')}]::VARCHAR[]`;
  const columns = `[${plan.checks.map((c) => c.column).join(', ')}]::BIGINT[]`;
  const rows = `SELECT row_number() OVER () AS __row, ${badCase} AS __bad FROM ${reader} AS __floe_file`;
  return `WITH __floe_rows AS (${rows})
    ${head('SELECT count(*) FILTER (WHERE __bad IS NULL) FROM __floe_rows', 'SELECT count(*) FILTER (WHERE __bad IS NOT NULL) FROM __floe_rows', 'SELECT count(*) FILTER (WHERE __bad IS NOT NULL) FROM __floe_rows')}
    UNION ALL SELECT * FROM (SELECT __row, (${columns})[__bad + 1], (${names})[__bad + 1], 'value does not convert to the column''s type', NULL, NULL, NULL, NULL FROM __floe_rows WHERE __bad IS NOT NULL ORDER BY __row LIMIT ${MAX_ERRORS_PER_FILE})`;
}

/** DuckDB's reject messages carry a hint list after the reason; the reason is what a user needs. */
function cleanReason(text: string): string {
  return text.split('\n')[0]!.replace(/\s*Possible fixes:.*$/s, '').trim();
}

/** Whether a gzip file decompresses to its end; the reason when it does not. */
async function gzipProblem(io: FileIO, file: StagedFile): Promise<string | undefined> {
  const gunzip = createGunzip();
  const done = new Promise<string | undefined>((resolve) => {
    gunzip.on('error', (e) => resolve(`not a complete gzip file (${e.message})`));
    gunzip.on('end', () => resolve(undefined));
  });
  gunzip.resume();
  for (let offset = 0; offset < file.size; offset += GZIP_CHECK_CHUNK_BYTES) {
    const chunk = await io.readRange(file.location, offset, Math.min(GZIP_CHECK_CHUNK_BYTES, file.size - offset));
    if (!gunzip.write(chunk)) await new Promise((r) => gunzip.once('drain', r));
  }
  gunzip.end();
  return done;
}

/** A value written into column `f`: cast to its type, and an error instead of a NULL in a NOT NULL column. */
function columnValue(expr: string, f: NestedField): string {
  const value = `CAST((${expr}) AS ${duckdbType(f.type)})`;
  return f.required ? `CASE WHEN ${value} IS NULL THEN error(${sqlString(`NULL value in column ${f.name}, which is NOT NULL`)}) ELSE ${value} END` : value;
}

function writeDefaultSql(f: NestedField): string {
  return f.writeDefault === undefined ? 'NULL' : (defaultValueSql(f.type, f.writeDefault, duckdbType) ?? 'NULL');
}
