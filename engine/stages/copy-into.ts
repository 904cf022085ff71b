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
import type { CopyInto, OptionEntry, StageQuery } from '../../grammar/ir.js';
import type { MetaStore, SqlExecutor } from '../../catalog/store/meta-store.js';
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
import type { DataFile } from '../../catalog/iceberg/manifest.js';
import { appendWriteRequest, commitChange, dataFilesFromWritten, duckdbType, quoteIdent, sqlString, stageAppend, type StagedChange } from '../iceberg-io/index.js';
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
import { badCaseSql, checkListsSql, checkTransform, csvColumns, transformPlan, type ColumnPlan, type FileColumn, type RowCheck } from './copy-transform.js';
import { checkStageKey, parseStageRef, stageDisplay, stagePattern } from './stage-path.js';
import type { ResolvedStage, StageService } from './stages.js';

/** Errors reported per file by VALIDATION_MODE (and kept per file otherwise); the rest are counted. */
const MAX_ERRORS_PER_FILE = 1000;
/**
 * Rejected values DuckDB keeps per CSV file (its rejects table lives in the worker's memory until
 * the next check): errors_seen, and the bad rows in rows_parsed, count at most this many.
 */
const MAX_REJECTS_KEPT = 100_000;
/** History rows per INSERT (16 parameters each, well under the protocol's 65,535). */
const HISTORY_ROWS_PER_INSERT = 500;
/** Files written at once by the one-pass load (each write is one worker's DuckDB, with its threads). */
const ONE_PASS_PARALLEL_FILES = 2;

/** Writes the load history of a COPY on a store transaction, with the snapshot it committed (null: none). */
type HistoryWrite = (tx: SqlExecutor, snapshotId: bigint | null) => Promise<void>;
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
  /** How its columns were read by the check, reused by the write. */
  readonly plan?: ColumnPlan;
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

export class CopyRunner {
  constructor(private readonly o: CopyRunnerOptions) {}

  async run(ctx: StatementContext, s: CopyInto): Promise<RowSet> {
    // A URL that is no object store (file:///etc/) is an escape attempt: 42501, as in every other statement.
    checkIsolation(s);
    this.o.queries.rejectIfQueueFull(ctx, s);
    const source = copySource(s);
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
    const ref = parseStageRef(source.path);
    const stage = await this.o.stages.resolve(cc, ctx.session.catalog, ref);
    const files = await this.pickFiles(stage, ref.path, s.files, source.pattern);
    const format = resolveLoadFormat(stage.fileFormat, source.fileFormat, files.length > 0 ? formatTypeOfName(files[0]!.key) : 'CSV');
    const schema = currentSchema(loaded.metadata);
    const targetFields = s.columns.length > 0 ? s.columns.map((c) => {
      const f = findFieldByName(schema, identName(c), false);
      if (!f) throw floeError('UNDEFINED_COLUMN', { name: `${target.display}.${c.name}` });
      return f;
    }) : schema.fields;
    if (new Set(targetFields.map((f) => f.id)).size !== targetFields.length) throw floeError('INVALID_PARAMETER', { name: 'COPY INTO', detail: 'a column is named twice' });
    if (source.transform !== undefined) checkTransform(source.transform, targetFields);
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
        return await this.load(ctx, lease, s, source.transform, target, loaded, stage, format, targetFields, toLoad, skipped, local.paths);
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
    ctx: StatementContext, lease: QueryLease, s: CopyInto, transform: StageQuery | undefined, target: { catalog: string; ident: { namespace: readonly string[]; name: string }; display: string },
    loaded: LoadedTable, stage: ResolvedStage, format: LoadFormat, targetFields: readonly NestedField[], toLoad: readonly StagedFile[], skipped: readonly StagedFile[],
    localPaths: ReadonlyMap<string, string>,
  ): Promise<RowSet> {
    {
      if ((s.onError ?? 'ABORT_STATEMENT') === 'ABORT_STATEMENT' && s.validationMode === undefined) {
        const fast = await this.loadInOnePass(ctx, lease, s, transform, target, loaded, stage, format, targetFields, toLoad, localPaths);
        if (fast !== undefined) {
          if (s.purge) for (const f of toLoad) await stage.files.remove(f.key).catch(() => undefined);
          return { ...answer([...fast, ...skipped.map((f) => skippedOutcome(stage, f))]), bytesScanned: toLoad.reduce((n, f) => n + f.size, 0), fragments: toLoad.length };
        }
      }
      const checks: FileCheck[] = [];
      for (const f of toLoad) checks.push(await this.checkFile(ctx, lease, stage, f, localPaths.get(f.location) ?? '', format, targetFields, s, transform));
      if (s.validationMode === 'RETURN_ERRORS') return validationAnswer(checks);
      const onError = s.onError ?? 'ABORT_STATEMENT';
      if (onError === 'ABORT_STATEMENT') {
        const bad = checks.find((c) => c.fileError !== undefined || c.errors.length > 0);
        if (bad !== undefined) throw bad.fileError ?? floeError('LOAD_FILE_ERROR', { file: bad.display, line: bad.errors[0]!.line, column: bad.errors[0]!.column, reason: bad.errors[0]!.reason });
      }
      const loadable = checks.filter((c) => c.fileError === undefined && (onError === 'CONTINUE' || c.errors.length === 0) && c.goodRows > 0);
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
      // Files that loaded (all or some rows) enter the history, and PURGE removes them. The history
      // rows are written in the commit's own store transaction: both happen or neither does.
      const done = checks.flatMap((c, i) => (outcomes[i]!.status === 'LOADED' || outcomes[i]!.status === 'PARTIALLY_LOADED' ? [{ check: c, outcome: outcomes[i]! }] : []));
      const history: HistoryWrite = (tx, snapshotId) => this.recordHistory(tx, ctx, loaded.metadata.tableUuid, target.display, done, snapshotId, s.force);
      const written = await this.write(ctx, lease, target, loaded, localPaths, format, targetFields, s, transform, loadable, history);
      // Nothing committed (no rows to write: empty files, or header lines only): the history alone.
      if (!written.committed && done.length > 0) await this.o.store.transaction((tx) => history(tx, null));
      if (s.purge) for (const d of done) await stage.files.remove(d.check.file.key).catch(() => undefined);
      return { ...answer([...outcomes, ...skipped.map((f) => skippedOutcome(stage, f))]), bytesScanned: checks.reduce((n, c) => n + c.file.size, 0), fragments: 1 };
    }
  }

  /** The files a COPY names: FILES (each must exist), else every file under the path, PATTERN applied. */
  private async pickFiles(stage: ResolvedStage, path: string, names: readonly string[] | undefined, pattern: string | undefined): Promise<StagedFile[]> {
    const listed = (await stage.files.list(path)).filter((f) => !f.key.endsWith('/'));
    if (names !== undefined) {
      const byKey = new Map(listed.map((f) => [f.key, f] as const));
      const base = path === '' || path.endsWith('/') ? path : `${path}/`;
      const out: StagedFile[] = [];
      for (const name of names) {
        const key = checkStageKey(`${base}${name}`, {}, 'FILES');
        const f = byKey.get(key);
        if (f === undefined) throw floeError('NOT_FOUND', { what: `file ${stageDisplay(stage, key)}` });
        if (!out.includes(f)) out.push(f);
      }
      return out;
    }
    const match = stagePattern(pattern);
    return match === undefined ? listed : listed.filter((f) => match(f.key));
  }

  private async loadedBefore(ctx: StatementContext, tableUuid: string, files: readonly StagedFile[]): Promise<Set<string>> {
    const r = await this.o.store.query<{ file_location: string; size: string | number; etag: string }>(
      'SELECT file_location, size, etag FROM copy_history WHERE tenant_id = $1 AND table_uuid = $2 AND file_location = ANY($3::text[])',
      [ctx.principal.tenantId, tableUuid, files.map((f) => f.location)]);
    return new Set(r.rows.map((row) => `${row.file_location}\u0000${Number(row.size)}\u0000${row.etag}`));
  }

  /** What makes a file unloadable as a whole, found without parsing it: size, emptiness, a broken gzip stream. */
  private async wholeFileProblem(stage: ResolvedStage, file: StagedFile, format: LoadFormat): Promise<FloeError | undefined> {
    const display = stageDisplay(stage, file.key);
    if (file.size > this.o.maxFileBytes) return floeError('LOAD_FILE_TOO_LARGE', { file: display, bytes: file.size, limit: this.o.maxFileBytes });
    if (file.size === 0) return floeError('LOAD_FILE_UNREADABLE', { file: display, reason: 'the file is empty' });
    if (format.type !== 'PARQUET' && compressionOfFile(format, file.key) === 'GZIP') {
      const problem = await gzipProblem(stage.files.io, file);
      // DuckDB reads a truncated gzip stream as a shorter file without a word: checked here first.
      if (problem !== undefined) return floeError('LOAD_FILE_UNREADABLE', { file: display, reason: problem });
    }
    return undefined;
  }

  /**
   * ON_ERROR = ABORT_STATEMENT, the common case, in one pass: each file is written straight away by
   * a strict reader (a bad value, a wrong column count or a failing expression is an error, never a
   * skipped row or a NULL), files in parallel, one write each so each file's row count is known;
   * then one commit. Undefined when a write met bad data: its files are deleted and the caller runs
   * the per-file checks, which find and report the first bad row (file, line, column). Whole-file
   * problems fail the statement here as they would there.
   */
  private async loadInOnePass(
    ctx: StatementContext, lease: QueryLease, s: CopyInto, transform: StageQuery | undefined, target: { catalog: string; ident: { namespace: readonly string[]; name: string }; display: string },
    loaded: LoadedTable, stage: ResolvedStage, format: LoadFormat, fields: readonly NestedField[], files: readonly StagedFile[], localPaths: ReadonlyMap<string, string>,
  ): Promise<FileOutcome[] | undefined> {
    for (const f of files) {
      const problem = await this.wholeFileProblem(stage, f, format);
      if (problem !== undefined) throw problem;
    }
    const schema = currentSchema(loaded.metadata);
    const perFile: (readonly DataFile[])[] = new Array(files.length);
    let bad: FloeError | undefined;
    let next = 0;
    const writeOne = async (): Promise<void> => {
      while (bad === undefined && next < files.length) {
        const i = next++;
        const f = files[i]!;
        const path = localPaths.get(f.location)!;
        try {
          const plan = await this.columnPlan(lease, format, path, f.key, stageDisplay(stage, f.key), fields, s, transform);
          perFile[i] = await this.writeRows(ctx, lease, target, loaded, fileSelect(schema, format, path, f.key, plan, false));
        } catch (e) {
          // Bad data (class 22, a file the binder refuses) sends the statement to the checks; the rest fails it.
          if (!isFloeError(e) || !(e.sqlState.startsWith('22') || (transform === undefined && e.sqlState.startsWith('42')))) throw e;
          bad = e;
        }
      }
    };
    try {
      await Promise.all(Array.from({ length: Math.min(files.length, ONE_PASS_PARALLEL_FILES) }, writeOne));
    } catch (e) {
      await this.discard(ctx, target.catalog, perFile.flat());
      throw e;
    }
    if (bad !== undefined) {
      await this.discard(ctx, target.catalog, perFile.flat());
      return undefined;
    }
    const outcomes = files.map((f, i): FileOutcome => {
      const rows = (perFile[i] ?? []).reduce((n, d) => n + d.recordCount, 0);
      return { file: stageDisplay(stage, f.key), status: 'LOADED', rowsParsed: rows, rowsLoaded: rows, errorsSeen: 0, firstError: null, firstErrorLine: null, firstErrorColumn: null };
    });
    const done = files.map((f, i) => ({ check: { file: f, display: outcomes[i]!.file, goodRows: outcomes[i]!.rowsLoaded, badRows: 0, errorsSeen: 0, errors: [] }, outcome: outcomes[i]! }));
    const history: HistoryWrite = (tx, snapshotId) => this.recordHistory(tx, ctx, loaded.metadata.tableUuid, target.display, done, snapshotId, s.force);
    const committed = await this.commitFiles(ctx, target, loaded, perFile.flat(), history);
    if (!committed) await this.o.store.transaction((tx) => history(tx, null));
    return outcomes;
  }

  /** Deletes data files a COPY wrote and will not commit (best effort: they are orphans otherwise). */
  private async discard(ctx: StatementContext, catalog: string, files: readonly DataFile[]): Promise<void> {
    if (files.length === 0) return;
    const io = await this.o.catalog.fileIOFor(catalogContextOf(ctx), catalog);
    await Promise.all(files.map((f) => io.delete(f.filePath).catch(() => undefined)));
  }

  /** Everything that can be known about a file before writing: whether it loads, and its bad rows. */
  private async checkFile(
    ctx: StatementContext, lease: QueryLease, stage: ResolvedStage, file: StagedFile, path: string, format: LoadFormat, fields: readonly NestedField[], s: CopyInto,
    transform: StageQuery | undefined,
  ): Promise<FileCheck> {
    const display = stageDisplay(stage, file.key);
    const none = { file, display, goodRows: 0, badRows: 0, errorsSeen: 0, errors: [] };
    const fileError = await this.wholeFileProblem(stage, file, format);
    if (fileError !== undefined) return { ...none, fileError };
    let plan: ColumnPlan;
    try {
      plan = await this.columnPlan(lease, format, path, file.key, display, fields, s, transform);
    } catch (e) {
      // A statement the binder refuses (a wrong alias, names without a header) fails whatever the file.
      if (!isFloeError(e) || (transform !== undefined && e.code !== 'LOAD_FILE_UNREADABLE') || e.sqlState.startsWith('57') || e.sqlState.startsWith('53')) throw e;
      return { ...none, fileError: e.code === 'LOAD_FILE_UNREADABLE' ? e : floeError('LOAD_FILE_UNREADABLE', { file: display, reason: e.message }) };
    }
    try {
      const r = await this.o.executor.execute({ fragments: [{ id: 0, sql: checkSql(format, path, file.key, plan), scans: [], inputs: [] }] }, { signal: lease.signal, memoryLimitBytes: lease.memoryLimitBytes, storage: statementStorage(this.o.catalog, ctx) });
      lease.chargeCpu(r.metrics.cpuMs);
      const head = r.rows[0]!;
      const errors = r.rows.slice(1).map((row): LoadError => ({
        line: Number(row[0]), column: Number(row[1]), columnName: row[2] === null ? null : String(row[2]), reason: cleanReason(String(row[3])), record: row[4] === null ? null : String(row[4]),
      }));
      return { file, display, goodRows: Number(head[5]), badRows: Number(head[6]), errorsSeen: Number(head[7]), errors, plan };
    } catch (e) {
      // The user's expressions that DuckDB cannot bind (a function over the wrong type) are the statement's fault, not the file's.
      if (!isFloeError(e) || e.sqlState.startsWith('57') || e.sqlState.startsWith('53') || (transform !== undefined && e.sqlState.startsWith('42'))) throw e;
      return { ...none, fileError: floeError('LOAD_FILE_UNREADABLE', { file: display, reason: e.message }) };
    }
  }

  /** A file's columns in order, for binding a transformation (CSV: named only with PARSE_HEADER). */
  private async fileColumns(lease: QueryLease, format: LoadFormat, path: string, key: string): Promise<FileColumn[]> {
    const describe = async (reader: string) => (await this.o.executor.execute({ fragments: [{ id: 0, sql: `DESCRIBE SELECT * FROM ${reader}`, scans: [], inputs: [] }] }, { signal: lease.signal })).rows;
    switch (format.type) {
      case 'CSV': {
        // The dialect is the format's; only the column count (the most rows') and the header's names are detected.
        const rows = await describe(`read_csv(${sqlString(path)}, delim = ${sqlString(format.delimiter)}, quote = ${sqlString(format.quote)}, escape = ${sqlString(format.escape)}, header = ${format.parseHeader}, skip = ${format.skipHeader}, all_varchar = true, ignore_errors = true, compression = ${sqlString(compressionOfFile(format, key).toLowerCase())})`);
        return csvColumns(rows.map((r) => String(r[0])), format.parseHeader);
      }
      case 'PARQUET':
        return (await describe(readerSql(format, path, key, []))).map((r) => ({ name: String(r[0]), duckdbType: String(r[1]) }));
      case 'JSON':
        return (await describe(`read_json(${sqlString(path)}, format = 'newline_delimited', compression = ${jsonCompression(format, key)})`)).map((r) => ({ name: String(r[0]), duckdbType: String(r[1]) }));
      default: {
        const never: never = format;
        throw new Error(`unknown format ${String(never)}`);
      }
    }
  }

  /** The reader's columns and each target field's source. */
  private async columnPlan(
    lease: QueryLease, format: LoadFormat, path: string, key: string, display: string, fields: readonly NestedField[], s: CopyInto, transform: StageQuery | undefined,
  ): Promise<ColumnPlan> {
    if (transform !== undefined) return transformPlan(transform, format, await this.fileColumns(lease, format, path, key), fields, display);
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
    const checks: RowCheck[] = [];
    fields.forEach((f, i) => {
      const source = mode === 'NONE' ? fileColumns[i] : fileColumns.find((c) => named(c.name, f));
      if (source === undefined) return;
      const col = quoteIdent(source.name);
      const type = duckdbType(f.type);
      // The value as it is; the write casts it (strictly: a row failing its check is filtered out first).
      sources.set(f.id, col);
      if (source.type.toUpperCase() === type.toUpperCase()) return; // same type: nothing can fail to convert
      checks.push({ bad: `(${col} IS NOT NULL AND TRY_CAST(${col} AS ${type}) IS NULL)`, column: i + 1, name: f.name, reason: 'value does not convert to the column\'s type' });
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
    loaded: LoadedTable, localPaths: ReadonlyMap<string, string>, format: LoadFormat, fields: readonly NestedField[], s: CopyInto, transform: StageQuery | undefined, files: readonly FileCheck[],
    history: HistoryWrite,
  ): Promise<{ rows: number; committed: boolean }> {
    if (files.length === 0) return { rows: 0, committed: false };
    const schema = currentSchema(loaded.metadata);
    const selects: string[] = [];
    for (const c of files) {
      const path = localPaths.get(c.file.location)!;
      const plan = c.plan ?? await this.columnPlan(lease, format, path, c.file.key, c.display, fields, s, transform);
      selects.push(fileSelect(schema, format, path, c.file.key, plan, c.errors.length > 0));
    }
    const dataFiles = await this.writeRows(ctx, lease, target, loaded, selects.join('\nUNION ALL\n'));
    const rows = dataFiles.reduce((n, f) => n + f.recordCount, 0);
    return { rows, committed: await this.commitFiles(ctx, target, loaded, dataFiles, history) };
  }

  /** Runs one write of `sql`'s rows into the table's data folder; the data files written. */
  private async writeRows(
    ctx: StatementContext, lease: QueryLease, target: { catalog: string; ident: { namespace: readonly string[]; name: string }; display: string }, loaded: LoadedTable, sql: string,
  ): Promise<readonly DataFile[]> {
    const cc = catalogContextOf(ctx);
    const catalogRecord = await this.o.catalog.loadCatalog(cc, target.catalog);
    const { request, dataLocation } = appendWriteRequest(loaded.metadata, sql, [], { locationMappings: catalogRecord.locationMappings, catalog: target.catalog });
    const written = await this.o.executor.write(request, { storage: statementStorage(this.o.catalog, ctx), signal: lease.signal, memoryLimitBytes: lease.memoryLimitBytes, onMemory: (bytes) => lease.reportMemory(bytes) });
    lease.chargeCpu(written.metrics.cpuMs);
    return dataFilesFromWritten(loaded.metadata, written.files, dataLocation);
  }

  /** One append of `dataFiles` with the load history in the commit's transaction; false when there is nothing to commit. */
  private async commitFiles(
    ctx: StatementContext, target: { catalog: string; ident: { namespace: readonly string[]; name: string }; display: string }, loaded: LoadedTable,
    dataFiles: readonly DataFile[], history: HistoryWrite,
  ): Promise<boolean> {
    if (dataFiles.length === 0) return false;
    const cc = catalogContextOf(ctx);
    const io = await this.o.catalog.fileIOFor(cc, target.catalog);
    const staged = await stageAppend(io, loaded.metadata, dataFiles);
    await this.commit(cc, io, target, loaded.metadata, staged, (tx) => history(tx, staged.snapshotId));
    return true;
  }

  /** One append commit, re-based onto newer snapshots after a conflict (`commitChange`, as INSERT does). */
  private async commit(
    cc: ReturnType<typeof catalogContextOf>, io: FileIO, target: { catalog: string; ident: { namespace: readonly string[]; name: string }; display: string },
    metadata: TableMetadata, staged: StagedChange, duringCommit: (tx: SqlExecutor) => Promise<void>,
  ): Promise<bigint> {
    await commitChange(io, {
      load: async () => {
        try {
          return (await this.o.catalog.loadTable(cc, target.catalog, target.ident)).metadata;
        } catch (e) {
          throw sqlErrorOf(e, target.display);
        }
      },
      commit: async (requirements, updates) => {
        try {
          await this.o.catalog.commitTable(cc, target.catalog, target.ident, requirements, updates, (tx) => duringCommit(tx));
          return 'committed';
        } catch (e) {
          if (toCatalogError(e)?.type === 'CommitFailedException') return 'conflict';
          throw sqlErrorOf(e, target.display);
        }
      },
    }, staged, { metadata, display: target.display });
    return staged.snapshotId;
  }

  /**
   * Writes the history rows of the files a COPY loaded, on `tx` (the commit's transaction). Unless
   * FORCE, it first looks for the same files loaded meanwhile: commits to one table are serialized
   * by the row lock the commit holds, so a concurrent COPY of the same files that committed first is
   * seen here, and this commit is abandoned instead of loading the rows twice.
   */
  private async recordHistory(
    tx: SqlExecutor, ctx: StatementContext, tableUuid: string, tableName: string, done: readonly { check: FileCheck; outcome: FileOutcome }[], snapshotId: bigint | null, force: boolean,
  ): Promise<void> {
    if (done.length === 0) return;
    if (!force) {
      const r = await tx.query<{ file_name: string }>(
        `SELECT h.file_name FROM copy_history h JOIN unnest($3::text[], $4::bigint[], $5::text[]) AS f(location, size, etag)
            ON h.file_location = f.location AND h.size = f.size AND h.etag = f.etag
          WHERE h.tenant_id = $1 AND h.table_uuid = $2 LIMIT 1`,
        [ctx.principal.tenantId, tableUuid, done.map((d) => d.check.file.location), done.map((d) => String(d.check.file.size)), done.map((d) => d.check.file.etag)]);
      if (r.rows.length > 0) {
        throw floeError('COMMIT_CONFLICT', { detail: `${r.rows[0]!.file_name} was loaded into ${tableName} by another COPY while this one ran; nothing was loaded by this one (run it again: the loaded files are skipped)` });
      }
    }
    const now = new Date(this.o.clock.now());
    for (let from = 0; from < done.length; from += HISTORY_ROWS_PER_INSERT) {
      const batch = done.slice(from, from + HISTORY_ROWS_PER_INSERT);
      const params: unknown[] = [];
      const values = batch.map(({ check: c, outcome: o }) => {
        const row = [ctx.principal.tenantId, tableUuid, tableName, c.file.location, c.display, c.file.size, c.file.etag, o.status, o.rowsParsed, o.rowsLoaded, o.errorsSeen,
          o.firstError, ctx.queryId, ctx.principal.principalId, snapshotId === null ? null : snapshotId.toString(), now];
        const first = params.length;
        params.push(...row);
        return `(${row.map((_, i) => `$${first + i + 1}`).join(', ')})`;
      });
      await tx.query(
        `INSERT INTO copy_history (tenant_id, table_uuid, table_name, file_location, file_name, size, etag, status, rows_parsed, rows_loaded, errors_seen, first_error, query_id, principal_id, snapshot_id, loaded_at)
         VALUES ${values.join(', ')}`, params);
    }
  }
}

/** Where a COPY reads and how: the plain form's clauses, or those of a transformation's FROM. */
interface CopySourceSpec {
  readonly path: string;
  readonly fileFormat: readonly OptionEntry[];
  readonly pattern: string | undefined;
  readonly transform: StageQuery | undefined;
}

function copySource(s: CopyInto): CopySourceSpec {
  switch (s.source.kind) {
    case 'Location':
      throw floeError('UNSUPPORTED_STATEMENT', { what: 'COPY INTO from a URL: create a stage (CREATE STAGE) and load from @stage' });
    case 'Stage':
      return { path: s.source.path, fileFormat: s.fileFormat ?? [], pattern: s.pattern, transform: undefined };
    case 'StageQuery': {
      const q = s.source;
      if (q.namedFormat !== undefined) throw floeError('INVALID_PARAMETER', { name: 'FILE_FORMAT', detail: 'Floe has no named file formats: give the options, FILE_FORMAT => (TYPE = CSV, …), or set them on the stage' });
      if (q.fileFormat !== undefined && s.fileFormat !== undefined) throw floeError('INVALID_PARAMETER', { name: 'FILE_FORMAT', detail: 'given both in the SELECT\'s FROM and on the COPY: keep one' });
      if (q.pattern !== undefined && s.pattern !== undefined) throw floeError('INVALID_PARAMETER', { name: 'PATTERN', detail: 'given both in the SELECT\'s FROM and on the COPY: keep one' });
      if (s.matchByColumnName !== undefined && s.matchByColumnName !== 'NONE') {
        throw floeError('INVALID_PARAMETER', { name: 'MATCH_BY_COLUMN_NAME', detail: 'does not combine with a transformation (the SELECT names the file\'s columns itself)' });
      }
      return { path: q.path, fileFormat: q.fileFormat ?? s.fileFormat ?? [], pattern: q.pattern ?? s.pattern, transform: q };
    }
    default: {
      const never: never = s.source;
      throw new Error(`unknown COPY source ${String(never)}`);
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
  const badCase = badCaseSql(plan.checks);
  const lists = checkListsSql(plan.checks);
  if (format.type === 'CSV') {
    // Every column is projected (hash over all of them), so every value is parsed and every bad one rejected.
    const cols = plan.reader.map((c) => quoteIdent(c.name)).join(', ');
    // The reader's column_idx counts from 0 or 1 depending on the error type; the column's name does not.
    const position = `coalesce(list_position([${plan.reader.map((c) => sqlString(c.name)).join(', ')}]::VARCHAR[], column_name), column_idx + 1)`;
    const reader = readerSql(format, path, key, plan.reader, [`store_rejects = true`, `rejects_table = '__floe_copy_rejects'`, `rejects_scan = '__floe_copy_scans'`, `rejects_limit = ${MAX_REJECTS_KEPT}`]);
    const rejects = `SELECT line, ${position} AS position, column_name, error_type || ': ' || error_message AS reason, csv_line FROM __floe_copy_rejects`;
    if (plan.checks.length === 0) {
      return [
        'DROP TABLE IF EXISTS __floe_copy_rejects', 'DROP TABLE IF EXISTS __floe_copy_scans',
        `CREATE OR REPLACE TEMP TABLE __floe_copy_parsed AS SELECT count(*) AS n, bit_xor(hash(${cols})) AS h FROM ${reader}`,
        `${head('SELECT n FROM __floe_copy_parsed', 'SELECT count(DISTINCT line) FROM __floe_copy_rejects', 'SELECT count(*) FROM __floe_copy_rejects')}
         UNION ALL SELECT *, NULL, NULL, NULL FROM (${rejects} ORDER BY line, position LIMIT ${MAX_ERRORS_PER_FILE})`,
      ].join(';\n');
    }
    // A transformation: the reader's rejects, and the rows whose expressions fail. A row's line is its
    // number among the parsed rows after the skipped lines (a quoted field over several lines, or a
    // rejected line before it, moves it: docs/loading.md).
    const skipped = format.skipHeader + (format.parseHeader ? 1 : 0);
    return [
      'DROP TABLE IF EXISTS __floe_copy_rejects', 'DROP TABLE IF EXISTS __floe_copy_scans',
      `CREATE OR REPLACE TEMP TABLE __floe_copy_parsed AS SELECT row_number() OVER () AS __row, ${badCase} AS __bad, hash(${cols}) AS __h FROM ${reader} AS __floe_file`,
      `${head('SELECT count(*) FILTER (WHERE __bad IS NULL) FROM __floe_copy_parsed',
        '(SELECT count(DISTINCT line) FROM __floe_copy_rejects) + (SELECT count(*) FILTER (WHERE __bad IS NOT NULL) FROM __floe_copy_parsed)',
        '(SELECT count(*) FROM __floe_copy_rejects) + (SELECT count(*) FILTER (WHERE __bad IS NOT NULL) FROM __floe_copy_parsed)')}
       UNION ALL SELECT * FROM (SELECT line, position, column_name, reason, csv_line, NULL, NULL, NULL FROM (
         ${rejects}
         UNION ALL SELECT __row + ${skipped}, (${lists.columns})[__bad + 1], (${lists.names})[__bad + 1], (${lists.reasons})[__bad + 1], NULL FROM __floe_copy_parsed WHERE __bad IS NOT NULL
       ) ORDER BY line, position LIMIT ${MAX_ERRORS_PER_FILE})`,
    ].join(';\n');
  }
  const reader = readerSql(format, path, key, plan.reader);
  const rows = `SELECT row_number() OVER () AS __row, ${badCase} AS __bad FROM ${reader} AS __floe_file`;
  return `WITH __floe_rows AS (${rows})
    ${head('SELECT count(*) FILTER (WHERE __bad IS NULL) FROM __floe_rows', 'SELECT count(*) FILTER (WHERE __bad IS NOT NULL) FROM __floe_rows', 'SELECT count(*) FILTER (WHERE __bad IS NOT NULL) FROM __floe_rows')}
    UNION ALL SELECT * FROM (SELECT __row, (${lists.columns})[__bad + 1], (${lists.names})[__bad + 1], (${lists.reasons})[__bad + 1], NULL, NULL, NULL, NULL FROM __floe_rows WHERE __bad IS NOT NULL ORDER BY __row LIMIT ${MAX_ERRORS_PER_FILE})`;
}

/**
 * The rows of one file as the table's columns. `skipBad`: the file has bad rows to leave out (ON_ERROR
 * = CONTINUE): the CSV reader skips what it rejects, and rows failing a check are filtered out
 * before the columns are computed (a filter runs before the projection above it).
 */
function fileSelect(schema: ReturnType<typeof currentSchema>, format: LoadFormat, path: string, key: string, plan: ColumnPlan, skipBad: boolean): string {
  const exprs = schema.fields.map((f) => `${columnValue(plan.sources.get(f.id) ?? writeDefaultSql(f), f)} AS ${quoteIdent(f.name)}`);
  const reader = readerSql(format, path, key, plan.reader, skipBad && format.type === 'CSV' ? ['ignore_errors = true'] : []);
  const where = skipBad && plan.checks.length > 0 ? ` WHERE NOT (${plan.checks.map((x) => x.bad).join(' OR ')})` : '';
  return `SELECT ${exprs.join(', ')} FROM ${reader} AS __floe_file${where}`;
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
