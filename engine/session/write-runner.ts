/**
 * SQL writes into Iceberg tables: INSERT (VALUES or SELECT, column lists), CREATE TABLE AS,
 * DELETE and UPDATE (copy-on-write), and CREATE [OR REPLACE] VIEW. Each write:
 *
 *   bind the rows' query → one fragment → a worker writes Parquet files with field ids (one set per
 *   partition value, full column statistics) → manifests and a snapshot (engine/iceberg-io) →
 *   the catalog's commit function with `assert-ref-snapshot-id` (the same function the REST
 *   catalog uses). Appends re-base and retry when another writer committed first; a DELETE or
 *   UPDATE whose table changed under it fails with COMMIT_CONFLICT (40001) rather than lose a row.
 *
 * Statements built here from IR are unparsed and parsed again (`grammar/` round-trips), so the
 * binder validates every name, and the planner's isolation checks apply to every piece.
 */
import { floeError, isFloeError } from '../../grammar/errors.js';
import type { Parser } from '../../grammar/parser.js';
import type { CreateTableAs, CreateView, Delete, Insert, Merge, MergeClause, Statement, Update } from '../../grammar/ir.js';
import { identSql, quoteIdent, unparseExpr, unparseQuery } from '../../grammar/unparse.js';
import { toCatalogError } from '../../catalog/rest/errors.js';
import type { CatalogService } from '../../catalog/rest/service.js';
import type { LoadedTable } from '../../catalog/rest/loaded.js';
import { currentSchema, currentSnapshot, type TableMetadata } from '../../catalog/iceberg/table-metadata.js';
import type { FileScanTask } from '../../catalog/iceberg/scan.js';
import type { TableRequirement } from '../../catalog/iceberg/table-updates.js';
import { schema as makeSchema } from '../../catalog/iceberg/schema.js';
import { findFieldByName } from '../../catalog/iceberg/schema.js';
import { formatTableName, fragmentQuery, resolveTableName, type BoundQuery, type PlannedScan } from '../planner/index.js';
import { identName } from '../planner/names.js';
import type { Fragment, FragmentPlan } from '../fragments.js';
import type { Executor } from '../exec/index.js';
import {
  appendWriteRequest, commitUpdates, dataFilesFromWritten, deleteFilesFromWritten, duckdbType, isMergeOnRead, positionDeleteWriteRequest,
  sqlString, stageAppend, stageOverwrite, stageRowDelta, type StagedChange,
} from '../iceberg-io/index.js';
import type { NestedField } from '../../catalog/iceberg/types.js';
import { catalogContextOf, sqlErrorOf } from './catalog-statements.js';
import { partitionSpecFromSql } from './schema-from-ir.js';
import { schemaOfResult } from './result-schema.js';
import type { RowSet, StatementContext } from './query-service.js';
import type { QueryRunner, WorkloadShape } from './query-runner.js';

/** Appends re-based this many times before giving up with COMMIT_CONFLICT. */
const MAX_APPEND_ATTEMPTS = 20;

const ONE_FRAGMENT = { maxFragmentsPerScan: 1, minRowsPerFragment: Number.MAX_SAFE_INTEGER };

export interface WriteRunnerOptions {
  readonly catalog: CatalogService;
  readonly parser: Parser;
  readonly executor: Executor;
  readonly queries: QueryRunner;
}

/** What a merge-on-read DELETE or UPDATE writes besides position deletes. */
interface MergeOnRead {
  readonly operation: 'delete' | 'update';
  /** The matching rows (their positions become delete files). */
  readonly matchedSql: string;
  /** An UPDATE's new row versions, appended. */
  readonly newRowsSql?: string;
}

interface Target {
  readonly catalog: string;
  readonly ident: { readonly namespace: readonly string[]; readonly name: string };
  readonly display: string;
}

export class WriteRunner {
  constructor(private readonly o: WriteRunnerOptions) {}

  async run(ctx: StatementContext, s: Statement): Promise<RowSet> {
    // Every write but CREATE VIEW runs under a lease: a full queue answers before any planning.
    if (s.kind !== 'CreateView') this.o.queries.rejectIfQueueFull(ctx, s);
    switch (s.kind) {
      case 'Insert': return this.insert(ctx, s);
      case 'CreateTableAs': return this.createTableAs(ctx, s);
      case 'Delete': return this.deleteRows(ctx, s);
      case 'Update': return this.update(ctx, s);
      case 'CreateView': return this.createView(ctx, s);
      case 'Merge': return this.merge(ctx, s);
      default: throw floeError('UNSUPPORTED_STATEMENT', { what: s.kind });
    }
  }

  private target(ctx: StatementContext, name: Insert['table']): Target {
    const t = resolveTableName(name, { catalog: ctx.session.catalog, namespace: [ctx.session.schema] });
    return { catalog: t.catalog, ident: { namespace: t.namespace, name: t.name }, display: [t.catalog, ...t.namespace, t.name].join('.') };
  }

  private async loadTarget(ctx: StatementContext, t: Target): Promise<LoadedTable> {
    try {
      return await this.o.catalog.loadTable(catalogContextOf(ctx), t.catalog, t.ident);
    } catch (e) {
      throw sqlErrorOf(e, t.display);
    }
  }

  private parse(sql: string): Statement {
    return this.o.parser.parse(sql);
  }

  /** The single fragment that yields a bound query's rows (writes run in one worker). */
  private async oneFragment(ctx: StatementContext, bound: BoundQuery, override?: readonly (readonly FileScanTask[])[]): Promise<Fragment> {
    const planned: PlannedScan[] = override
      ? bound.scans.map((scan, i) => {
        const tasks = override[i]!;
        return { scan, tasks, prunedFiles: 0, estimatedRows: tasks.reduce((n, x) => n + x.file.recordCount, 0), estimatedBytes: tasks.reduce((n, x) => n + x.file.fileSizeInBytes, 0) };
      })
      : [...await this.o.queries.plannedScans(ctx, bound)];
    const plan = await this.o.queries.prepare(ctx, bound, fragmentQuery(bound, planned, ONE_FRAGMENT));
    const fragment = plan.fragments[plan.fragments.length - 1]!;
    if (plan.fragments.length !== 1) throw new Error('Bug: a write source planned as more than one fragment');
    return fragment;
  }

  /** Column names and DuckDB types of a fragment's result, by running it with LIMIT 0. */
  private async describe(ctx: StatementContext, fragment: Fragment): Promise<{ columns: readonly string[]; types: readonly string[] }> {
    const probe: FragmentPlan = { fragments: [{ ...fragment, sql: `SELECT * FROM (${fragment.sql}) AS __floe_probe LIMIT 0` }] };
    const r = await this.o.executor.execute(probe, ctx.signal ? { signal: ctx.signal } : {});
    return { columns: r.columns, types: r.types };
  }

  private shape(bound: BoundQuery, rows: number): WorkloadShape {
    return { features: bound.features, estimatedRows: rows };
  }

  // ------------------------------------------------------------------ INSERT and CREATE TABLE AS

  private async insert(ctx: StatementContext, s: Insert): Promise<RowSet> {
    const t = this.target(ctx, s.table);
    const loaded = await this.loadTarget(ctx, t);
    const schema = currentSchema(loaded.metadata);
    const targetColumns = s.columns.length > 0 ? s.columns.map((c) => {
      const f = findFieldByName(schema, identName(c), false);
      if (!f) throw floeError('UNDEFINED_COLUMN', { name: `${t.display}.${c.name}` });
      return f.name;
    }) : schema.fields.map((f) => f.name);
    if (new Set(targetColumns).size !== targetColumns.length) throw floeError('INVALID_PARAMETER', { name: 'INSERT', detail: 'a column is named twice' });
    if (s.source === undefined) {
      // DEFAULT VALUES: one row of nulls.
      return this.appendRows(ctx, t, loaded, { ...(await this.sourceOf(ctx, this.parse('SELECT NULL AS __floe_default'))), columns: [] }, [], s);
    }
    const source = await this.sourceOf(ctx, s);
    return this.appendRows(ctx, t, loaded, source, targetColumns, s);
  }

  private async sourceOf(ctx: StatementContext, s: Statement): Promise<{ fragment: Fragment; bound: BoundQuery; columns: readonly string[]; types: readonly string[] }> {
    const bound = await this.o.queries.bind(ctx, s);
    const fragment = await this.oneFragment(ctx, bound);
    const d = await this.describe(ctx, fragment);
    return { fragment, bound, ...d };
  }

  /** Writes the source's rows into the table (positional onto `targetColumns`) and commits an append. */
  private async appendRows(
    ctx: StatementContext, t: Target, loaded: LoadedTable,
    source: { fragment: Fragment; bound: BoundQuery; columns: readonly string[] }, targetColumns: readonly string[], statement: Statement,
  ): Promise<RowSet> {
    const schema = currentSchema(loaded.metadata);
    if (source.columns.length !== targetColumns.length) {
      throw floeError('DATATYPE_MISMATCH', { detail: `${t.display} has ${targetColumns.length} target columns but the query yields ${source.columns.length}` });
    }
    const aliases = source.columns.map((_, i) => `c${i}`);
    const exprs = schema.fields.map((f) => {
      const i = targetColumns.indexOf(f.name);
      return `${columnValue(i >= 0 ? `__floe_src.c${i}` : 'NULL', f)} AS ${quoteIdent(f.name)}`;
    });
    const sql = source.columns.length === 0
      ? `SELECT ${exprs.join(', ')} FROM (${source.fragment.sql}) AS __floe_src`
      : `SELECT ${exprs.join(', ')} FROM (${source.fragment.sql}) AS __floe_src(${aliases.join(', ')})`;
    return this.o.queries.withLease(ctx, statement, this.shape(source.bound, 0), async (lease) => {
      const cc = catalogContextOf(ctx);
      const catalogRecord = await this.o.catalog.loadCatalog(cc, t.catalog);
      const { request, dataLocation } = appendWriteRequest(loaded.metadata, sql, source.fragment.scans, { locationMappings: catalogRecord.locationMappings });
      const written = await this.o.executor.write(request, { signal: lease.signal, memoryLimitBytes: lease.memoryLimitBytes });
      lease.chargeCpu(written.metrics.cpuMs);
      const dataFiles = dataFilesFromWritten(loaded.metadata, written.files, dataLocation);
      const rows = dataFiles.reduce((n, f) => n + f.recordCount, 0);
      if (dataFiles.length > 0) {
        const io = await this.o.catalog.fileIOFor(cc, t.catalog);
        const staged = await stageAppend(io, loaded.metadata, dataFiles);
        await this.commitWithRebase(ctx, t, loaded.metadata, staged);
      }
      return { columns: ['rows_inserted'], types: ['BIGINT'], rows: [[rows]], bytesScanned: source.fragment.scans.reduce((n, x) => n + x.estimatedBytes, 0), fragments: 1 };
    });
  }

  /** Commits a staged change; appends are re-based onto newer snapshots after a conflict. */
  private async commitWithRebase(ctx: StatementContext, t: Target, metadata: TableMetadata, staged: StagedChange): Promise<void> {
    const cc = catalogContextOf(ctx);
    const io = await this.o.catalog.fileIOFor(cc, t.catalog);
    let current = metadata;
    const schemaId = currentSchema(metadata).schemaId;
    for (let attempt = 1; ; attempt++) {
      if (currentSchema(current).schemaId !== schemaId) throw floeError('COMMIT_CONFLICT', { detail: `the schema of ${t.display} changed while the statement ran; run it again` });
      const commit = await commitUpdates(io, current, staged);
      const requirements: TableRequirement[] = [...commit.requirements, { type: 'assert-current-schema-id', currentSchemaId: schemaId }];
      try {
        await this.o.catalog.commitTable(cc, t.catalog, t.ident, requirements, commit.updates);
        return;
      } catch (e) {
        const c = toCatalogError(e);
        if (c?.type !== 'CommitFailedException' || !staged.rebaseable || attempt >= MAX_APPEND_ATTEMPTS) throw sqlErrorOf(e, t.display);
        // Someone else committed first: re-base the append on their snapshot (jittered backoff).
        await new Promise((r) => setTimeout(r, Math.random() * Math.min(100, 5 * attempt)));
        current = (await this.loadTarget(ctx, t)).metadata;
      }
    }
  }

  private async createTableAs(ctx: StatementContext, s: CreateTableAs): Promise<RowSet> {
    const t = this.target(ctx, s.name);
    if (s.orReplace) throw floeError('UNSUPPORTED_STATEMENT', { what: 'CREATE OR REPLACE TABLE … AS (drop the table first)' });
    const cc = catalogContextOf(ctx);
    if (await this.o.catalog.tableExists(cc, t.catalog, t.ident).catch((e: unknown) => { throw sqlErrorOf(e, t.display); })) {
      if (s.ifNotExists) return { columns: ['rows_inserted'], types: ['BIGINT'], rows: [[0]] };
      throw floeError('DUPLICATE_TABLE', { name: t.display });
    }
    const source = await this.sourceOf(ctx, s);
    const names: readonly string[] = s.columnNames.length > 0 ? s.columnNames.map((c) => identName(c)) : source.columns;
    if (names.length !== source.columns.length) throw floeError('DATATYPE_MISMATCH', { detail: `${names.length} column names for ${source.columns.length} columns` });
    const schema = schemaOfResult(names, source.types);
    const properties = new Map(s.properties.map((e) => [e.key, String(e.value)] as const));
    if (s.comment !== undefined) properties.set('comment', s.comment);
    let loaded: LoadedTable;
    try {
      loaded = await this.o.catalog.createTable(cc, t.catalog, t.ident.namespace, {
        name: t.ident.name, schema, partitionSpec: partitionSpecFromSql(s.partitionBy, schema), properties,
        ...(s.location !== undefined ? { location: s.location } : {}),
      });
    } catch (e) {
      const err = sqlErrorOf(e, t.display);
      if (isFloeError(err) && err.code === 'DUPLICATE_OBJECT') throw floeError('DUPLICATE_TABLE', { name: t.display });
      throw err;
    }
    try {
      return await this.appendRows(ctx, t, loaded, source, currentSchema(loaded.metadata).fields.map((f) => f.name), s);
    } catch (e) {
      // CREATE TABLE AS is all or nothing: a failed fill leaves no empty table behind.
      await this.o.catalog.dropTable(cc, t.catalog, t.ident, { purge: true }).catch(() => undefined);
      throw e;
    }
  }

  // ------------------------------------------------------------------ DELETE and UPDATE (copy-on-write)

  private targetSql(s: Delete | Update): string {
    return `${s.table.parts.map(identSql).join('.')}${s.alias ? ` AS ${identSql(s.alias)}` : ''}`;
  }

  /** Rows that match, and the data files that may hold them (after pruning). */
  private async matches(ctx: StatementContext, s: Delete | Update): Promise<{ count: number; files: readonly FileScanTask[]; bound: BoundQuery }> {
    const where = s.where === undefined ? 'TRUE' : unparseExpr(s.where);
    const count = this.parse(`SELECT count(*) AS n FROM ${this.targetSql(s)} WHERE ${where}`);
    const bound = await this.o.queries.bind(ctx, count);
    const planned = await this.o.queries.plannedScans(ctx, bound);
    const files = planned[0]?.tasks ?? [];
    if (files.length === 0) return { count: 0, files, bound };
    const fragment = await this.oneFragment(ctx, bound);
    const r = await this.o.executor.execute({ fragments: [fragment] }, ctx.signal ? { signal: ctx.signal } : {});
    return { count: Number(r.rows[0]?.[0] ?? 0), files, bound };
  }

  private async deleteRows(ctx: StatementContext, s: Delete): Promise<RowSet> {
    if (s.using !== undefined) throw floeError('UNSUPPORTED_STATEMENT', { what: 'DELETE … USING (use WHERE … IN (SELECT …))' });
    const where = s.where === undefined ? 'TRUE' : unparseExpr(s.where);
    return this.rewrite(ctx, s, `SELECT * FROM ${this.targetSql(s)} WHERE NOT coalesce((${where}), false)`, 'rows_deleted', {
      operation: 'delete', matchedSql: `SELECT * FROM ${this.targetSql(s)} WHERE coalesce((${where}), false)`,
    });
  }

  private async update(ctx: StatementContext, s: Update): Promise<RowSet> {
    if (s.from !== undefined) throw floeError('UNSUPPORTED_STATEMENT', { what: 'UPDATE … FROM (use a subquery in SET or WHERE, or MERGE)' });
    const t = this.target(ctx, s.table);
    const schema = currentSchema((await this.loadTarget(ctx, t)).metadata);
    const sets = new Map<number, string>();
    for (const a of s.assignments) {
      if (a.column.length !== 1) throw floeError('UNSUPPORTED_STATEMENT', { what: 'assigning a nested field' });
      const f = findFieldByName(schema, identName(a.column[0]!), false);
      if (!f) throw floeError('UNDEFINED_COLUMN', { name: a.column[0]!.name });
      if (sets.has(f.id)) throw floeError('INVALID_PARAMETER', { name: f.name, detail: 'assigned twice' });
      sets.set(f.id, a.value === undefined ? 'NULL' : unparseExpr(a.value));
    }
    const where = s.where === undefined ? 'TRUE' : unparseExpr(s.where);
    const items = schema.fields.map((f) => {
      const v = sets.get(f.id);
      return v === undefined ? quoteIdent(f.name) : `CASE WHEN coalesce((${where}), false) THEN ${columnValue(v, f)} ELSE ${quoteIdent(f.name)} END AS ${quoteIdent(f.name)}`;
    });
    return this.rewrite(ctx, s, `SELECT ${items.join(', ')} FROM ${this.targetSql(s)}`, 'rows_updated', {
      operation: 'update', matchedSql: `SELECT * FROM ${this.targetSql(s)} WHERE coalesce((${where}), false)`,
      newRowsSql: `SELECT ${items.join(', ')} FROM ${this.targetSql(s)} WHERE coalesce((${where}), false)`,
    });
  }

  /**
   * Copy-on-write: the data files that may hold matching rows are rewritten through `keepSql` (the
   * rows to keep, changed or not) and replaced in one overwrite snapshot.
   */
  private async rewrite(ctx: StatementContext, s: Delete | Update, keepSql: string, label: string, mor: MergeOnRead): Promise<RowSet> {
    const t = this.target(ctx, s.table);
    const loaded = await this.loadTarget(ctx, t);
    if (currentSnapshot(loaded.metadata) === undefined) return { columns: [label], types: ['BIGINT'], rows: [[0]] };
    const matched = await this.matches(ctx, s);
    if (matched.count === 0) return { columns: [label], types: ['BIGINT'], rows: [[0]] };
    if (isMergeOnRead(loaded.metadata, mor.operation)) return this.mergeOnRead(ctx, s, t, loaded, matched, mor, label);
    const keepBound = await this.o.queries.bind(ctx, this.parse(keepSql));
    if (keepBound.scans.length !== 1) throw new Error('Bug: a rewrite reads more than its table');
    const fragment = await this.oneFragment(ctx, keepBound, [matched.files]);
    const rows = { columns: [label], types: ['BIGINT'], rows: [[matched.count]] };
    return this.overwrite(ctx, s, t, loaded, fragment, matched.files, this.shape(matched.bound, matched.files.reduce((n, f) => n + f.file.recordCount, 0)), rows);
  }

  /**
   * Copy-on-write under a lease: a worker writes `fragment`'s rows as new data files, and one
   * overwrite snapshot replaces `replaced` with them.
   */
  private async overwrite(
    ctx: StatementContext, s: Statement, t: Target, loaded: LoadedTable, fragment: Fragment,
    replaced: readonly FileScanTask[], shape: WorkloadShape, answer: RowSet,
  ): Promise<RowSet> {
    return this.o.queries.withLease(ctx, s, shape, async (lease) => {
      const cc = catalogContextOf(ctx);
      const catalogRecord = await this.o.catalog.loadCatalog(cc, t.catalog);
      const { request, dataLocation } = appendWriteRequest(loaded.metadata, fragment.sql, fragment.scans, { locationMappings: catalogRecord.locationMappings });
      const written = await this.o.executor.write(request, { signal: lease.signal, memoryLimitBytes: lease.memoryLimitBytes });
      lease.chargeCpu(written.metrics.cpuMs);
      const added = dataFilesFromWritten(loaded.metadata, written.files, dataLocation);
      const io = await this.o.catalog.fileIOFor(cc, t.catalog);
      const staged = await stageOverwrite(io, loaded.metadata, new Set(replaced.map((f) => f.file.filePath)), added);
      await this.commitWithRebase(ctx, t, loaded.metadata, staged);
      return { ...answer, bytesScanned: fragment.scans.reduce((n, x) => n + x.estimatedBytes, 0), fragments: 2 };
    });
  }

  /**
   * Merge-on-read (the table's `write.delete.mode` / `write.update.mode` is `merge-on-read`): the
   * matching rows' positions are written as position delete files (one per data file), an UPDATE's
   * new row versions appended, both in one row-delta snapshot. No data file is rewritten.
   */
  private async mergeOnRead(
    ctx: StatementContext, s: Delete | Update, t: Target, loaded: LoadedTable,
    matched: { count: number; files: readonly FileScanTask[]; bound: BoundQuery }, mor: MergeOnRead, label: string,
  ): Promise<RowSet> {
    const positionsBound = await this.o.queries.bind(ctx, this.parse(mor.matchedSql));
    const positions = await this.oneFragment(ctx, positionsBound, [matched.files]);
    const scans = positions.scans.map((x) => ({ ...x, rowPositions: true }));
    const positionsSql = `SELECT __floe_file_path AS file_path, __floe_pos AS pos FROM (${positions.sql}) AS __floe_d`;
    const newRows = mor.newRowsSql === undefined ? undefined
      : await this.oneFragment(ctx, await this.o.queries.bind(ctx, this.parse(mor.newRowsSql)), [matched.files]);
    return this.o.queries.withLease(ctx, s, this.shape(matched.bound, matched.files.reduce((n, f) => n + f.file.recordCount, 0)), async (lease) => {
      const cc = catalogContextOf(ctx);
      const catalogRecord = await this.o.catalog.loadCatalog(cc, t.catalog);
      const options = { locationMappings: catalogRecord.locationMappings };
      const del = positionDeleteWriteRequest(loaded.metadata, positionsSql, scans, options);
      const writtenDeletes = await this.o.executor.write(del.request, { signal: lease.signal, memoryLimitBytes: lease.memoryLimitBytes });
      lease.chargeCpu(writtenDeletes.metrics.cpuMs);
      const deleteFiles = deleteFilesFromWritten(writtenDeletes.files, del.dataLocation, new Map(matched.files.map((f) => [f.file.filePath, f] as const)));
      let added: ReturnType<typeof dataFilesFromWritten> = [];
      if (newRows !== undefined) {
        const app = appendWriteRequest(loaded.metadata, newRows.sql, newRows.scans, options);
        const writtenRows = await this.o.executor.write(app.request, { signal: lease.signal, memoryLimitBytes: lease.memoryLimitBytes });
        lease.chargeCpu(writtenRows.metrics.cpuMs);
        added = dataFilesFromWritten(loaded.metadata, writtenRows.files, app.dataLocation);
      }
      const io = await this.o.catalog.fileIOFor(cc, t.catalog);
      const staged = await stageRowDelta(io, loaded.metadata, deleteFiles, added);
      await this.commitWithRebase(ctx, t, loaded.metadata, staged);
      return { columns: [label], types: ['BIGINT'], rows: [[matched.count]], bytesScanned: scans.reduce((n, x) => n + x.estimatedBytes, 0), fragments: 2 };
    });
  }

  // ------------------------------------------------------------------ MERGE (copy-on-write)

  /**
   * MERGE INTO target USING source ON … WHEN [NOT] MATCHED [AND …] THEN UPDATE | DELETE | INSERT | DO
   * NOTHING, clauses tried in order, the first whose condition holds acts. The whole target is
   * rewritten in one overwrite snapshot: its rows (updated, deleted or kept) from a LEFT JOIN on the
   * source, then the source rows that match nothing, through the NOT MATCHED clauses. A target row
   * that more than one source row matches is an error, as the SQL standard says.
   */
  private async merge(ctx: StatementContext, s: Merge): Promise<RowSet> {
    const t = this.target(ctx, s.target);
    const loaded = await this.loadTarget(ctx, t);
    const schema = currentSchema(loaded.metadata);
    const T = s.alias ? identSql(s.alias) : quoteIdent(identName(s.target.parts[s.target.parts.length - 1]!));
    const sourceAlias: string | undefined = s.source.kind === 'Scan' ? (s.source.alias?.name.name ?? identName(s.source.table.parts[s.source.table.parts.length - 1]!))
      : s.source.kind === 'Derived' ? s.source.alias?.name.name : undefined;
    if (sourceAlias === undefined) throw floeError('INVALID_PARAMETER', { name: 'USING', detail: 'give the source an alias' });
    const S = quoteIdent(sourceAlias);
    const targetSql = `${s.target.parts.map(identSql).join('.')} AS ${T}`;
    const sourceSql = `(SELECT *, TRUE AS __floe_matched FROM (${unparseQuery(s.source)}) AS __floe_src) AS ${S}`;
    const on = unparseExpr(s.on);
    const cond = (c: MergeClause) => (c.condition === undefined ? 'TRUE' : `coalesce((${unparseExpr(c.condition)}), false)`);
    const matchedClauses = s.clauses.map((c, i) => ({ c, i })).filter((x) => x.c.matched);
    const notMatched = s.clauses.map((c, i) => ({ c, i })).filter((x) => !x.c.matched);
    const matchedAction = `(CASE ${matchedClauses.map(({ c, i }) => `WHEN ${cond(c)} THEN ${i + 1}`).join(' ') || 'WHEN FALSE THEN 0'} ELSE 0 END)`;
    const notMatchedAction = `(CASE ${notMatched.map(({ c, i }) => `WHEN ${cond(c)} THEN ${i + 1}`).join(' ') || 'WHEN FALSE THEN 0'} ELSE 0 END)`;
    const column = (name: string) => findFieldByName(schema, name, false);
    const setsOf = (c: MergeClause): Map<number, string> => {
      const out = new Map<number, string>();
      if (c.action.kind === 'MergeUpdate') {
        for (const a of c.action.assignments) {
          const name = a.column[a.column.length - 1]!;
          const f = column(identName(name));
          if (!f || a.column.length > 2) throw floeError('UNDEFINED_COLUMN', { name: a.column.map((p) => p.name).join('.') });
          out.set(f.id, a.value === undefined ? 'NULL' : unparseExpr(a.value));
        }
      }
      if (c.action.kind === 'MergeInsert') {
        const names = c.action.columns.length > 0 ? c.action.columns.map((x) => identName(x)) : schema.fields.map((f) => f.name);
        if (names.length !== c.action.values.length) throw floeError('DATATYPE_MISMATCH', { detail: `INSERT names ${names.length} columns and gives ${c.action.values.length} values` });
        names.forEach((n, k) => {
          const f = column(n);
          if (!f) throw floeError('UNDEFINED_COLUMN', { name: n });
          const v = c.action.kind === 'MergeInsert' ? c.action.values[k] : undefined;
          out.set(f.id, v === undefined ? 'NULL' : unparseExpr(v));
        });
      }
      return out;
    };
    const sets = new Map(s.clauses.map((c, i) => [i + 1, setsOf(c)] as const));
    const cast = columnValue;
    // The acting clause of each row, inline: the values refer to both the target and the source.
    const A = `(CASE WHEN coalesce(${S}.__floe_matched, false) THEN ${matchedAction} ELSE 0 END)`;
    const N = notMatchedAction;
    const updatedColumns = schema.fields.map((f) => {
      const whens = matchedClauses.filter(({ c, i }) => c.action.kind === 'MergeUpdate' && sets.get(i + 1)!.has(f.id))
        .map(({ i }) => `WHEN ${A} = ${i + 1} THEN ${cast(sets.get(i + 1)!.get(f.id)!, f)}`);
      return `${whens.length > 0 ? `CASE ${whens.join(' ')} ELSE ${T}.${quoteIdent(f.name)} END` : `${T}.${quoteIdent(f.name)}`} AS ${quoteIdent(f.name)}`;
    });
    const deleteActions = matchedClauses.filter(({ c }) => c.action.kind === 'MergeDelete').map(({ i }) => i + 1);
    const insertActions = notMatched.filter(({ c }) => c.action.kind === 'MergeInsert').map(({ i }) => i + 1);
    const insertedColumns = schema.fields.map((f) => {
      const whens = insertActions.map((k) => `WHEN ${N} = ${k} THEN ${cast(sets.get(k)!.get(f.id) ?? 'NULL', f)}`);
      return `${whens.length > 0 ? `CASE ${whens.join(' ')} END` : `CAST(NULL AS ${duckdbType(f.type)})`} AS ${quoteIdent(f.name)}`;
    });
    // The rewritten table: target rows (minus deleted ones) and the inserted source rows.
    const targetRows = `SELECT ${updatedColumns.join(', ')} FROM ${targetSql} LEFT JOIN ${sourceSql} ON ${on}
      WHERE ${deleteActions.length > 0 ? `${A} NOT IN (${deleteActions.join(', ')})` : 'TRUE'}`;
    const sourceRows = `SELECT ${insertedColumns.join(', ')} FROM ${sourceSql}
      WHERE NOT EXISTS (SELECT 1 FROM ${targetSql} WHERE ${on}) AND ${N} IN (${insertActions.length > 0 ? insertActions.join(', ') : '-1'})`;
    const updateActions = matchedClauses.filter(({ c }) => c.action.kind === 'MergeUpdate').map(({ i }) => i + 1);
    const inList = (xs: number[]) => (xs.length > 0 ? xs.join(', ') : '-1');
    const counts = `SELECT
        (SELECT count(*) FROM ${sourceSql} WHERE NOT EXISTS (SELECT 1 FROM ${targetSql} WHERE ${on}) AND ${N} IN (${inList(insertActions)})) AS inserted,
        (SELECT count(*) FROM ${targetSql} LEFT JOIN ${sourceSql} ON ${on} WHERE ${A} IN (${inList(updateActions)})) AS updated,
        (SELECT count(*) FROM ${targetSql} LEFT JOIN ${sourceSql} ON ${on} WHERE ${A} IN (${inList(deleteActions)})) AS deleted`;
    const countBound = await this.o.queries.bind(ctx, this.parse(counts));
    const countFragment = await this.oneFragment(ctx, countBound);
    const c = await this.o.executor.execute({ fragments: [countFragment] }, ctx.signal ? { signal: ctx.signal } : {});
    const [inserted, updated, deleted] = (c.rows[0] ?? []).map((v) => Number(v));
    if (updated || deleted) await this.refuseMultipleMatches(ctx, t, `SELECT * FROM ${targetSql} JOIN ${sourceSql} ON ${on}`);
    const rowsOut = { columns: ['rows_inserted', 'rows_updated', 'rows_deleted'], types: ['BIGINT', 'BIGINT', 'BIGINT'], rows: [[inserted ?? 0, updated ?? 0, deleted ?? 0]] };
    if (!inserted && !updated && !deleted) return rowsOut;
    const bound = await this.o.queries.bind(ctx, this.parse(`${targetRows} UNION ALL ${sourceRows}`));
    const targetFiles = currentSnapshot(loaded.metadata) === undefined ? []
      : (await this.o.queries.plannedScans(ctx, await this.o.queries.bind(ctx, this.parse(`SELECT * FROM ${targetSql}`))))[0]?.tasks ?? [];
    const fragment = await this.oneFragment(ctx, bound);
    return this.overwrite(ctx, s, t, loaded, fragment, targetFiles, this.shape(bound, targetFiles.reduce((n, f) => n + f.file.recordCount, 0)), rowsOut);
  }

  /** A target row (by data file and position) that several source rows match is an error. */
  private async refuseMultipleMatches(ctx: StatementContext, t: Target, joinSql: string): Promise<void> {
    const bound = await this.o.queries.bind(ctx, this.parse(joinSql));
    const fragment = await this.oneFragment(ctx, bound);
    const targetName = formatTableName({ catalog: t.catalog, namespace: t.ident.namespace, name: t.ident.name });
    const scans = fragment.scans.map((x) => (x.tableName === targetName ? { ...x, rowPositions: true } : x));
    const check: Fragment = { ...fragment, scans, sql: `SELECT coalesce(max(n), 0) FROM (SELECT count(*) AS n FROM (${fragment.sql}) AS j GROUP BY __floe_file_path, __floe_pos) AS m` };
    const r = await this.o.executor.execute({ fragments: [check] }, ctx.signal ? { signal: ctx.signal } : {});
    if (Number(r.rows[0]?.[0] ?? 0) > 1) throw floeError('DATA_EXCEPTION', { detail: 'MERGE: a target row matched more than one source row' });
  }

  // ------------------------------------------------------------------ views

  private async createView(ctx: StatementContext, s: CreateView): Promise<RowSet> {
    const t = this.target(ctx, s.name);
    const cc = catalogContextOf(ctx);
    const source = await this.sourceOf(ctx, s);
    const names: readonly string[] = s.columnNames.length > 0 ? s.columnNames.map((c) => identName(c)) : source.columns;
    if (names.length !== source.columns.length) throw floeError('DATATYPE_MISMATCH', { detail: `${names.length} column names for ${source.columns.length} columns` });
    const body = unparseQuery(s.query);
    const sql = s.columnNames.length > 0 ? `SELECT * FROM (${body}) AS __floe_view(${names.map(quoteIdent).join(', ')})` : body;
    const resultSchema = schemaOfResult(names, source.types);
    const version = (versionId: number, schemaId: number) => ({
      versionId, timestampMs: Date.now(), schemaId,
      summary: new Map([['engine-name', 'floe']]),
      representations: [{ type: 'sql' as const, sql, dialect: 'floe' }],
      defaultCatalog: ctx.session.catalog, defaultNamespace: [ctx.session.schema],
    });
    const properties = new Map<string, string>(s.comment !== undefined ? [['comment', s.comment]] : []);
    try {
      await this.o.catalog.createView(cc, t.catalog, t.ident.namespace, { name: t.ident.name, schema: resultSchema, viewVersion: version(1, 0), properties });
      return { columns: ['status'], types: ['VARCHAR'], rows: [['OK']] };
    } catch (e) {
      const err = sqlErrorOf(e, t.display);
      if (!(isFloeError(err) && err.code === 'DUPLICATE_OBJECT')) throw err;
      if (s.ifNotExists) return { columns: ['status'], types: ['VARCHAR'], rows: [['view already exists']] };
      if (!s.orReplace) throw floeError('DUPLICATE_OBJECT', { kind: 'view', name: t.display });
    }
    // OR REPLACE: a new version of the same view (its history is kept).
    const current = await this.o.catalog.loadView(cc, t.catalog, t.ident).catch((e: unknown) => { throw sqlErrorOf(e, t.display); });
    const nextSchemaId = Math.max(...current.metadata.schemas.map((x) => x.schemaId)) + 1;
    const nextVersion = Math.max(...current.metadata.versions.map((v) => v.versionId)) + 1;
    await this.o.catalog.replaceView(cc, t.catalog, t.ident, [{ type: 'assert-view-uuid', uuid: current.metadata.viewUuid }], [
      { action: 'add-schema', schema: makeSchema(nextSchemaId, resultSchema.fields) },
      { action: 'add-view-version', viewVersion: version(nextVersion, -1) },
      { action: 'set-current-view-version', viewVersionId: -1 },
    ]).catch((e: unknown) => { throw sqlErrorOf(e, t.display); });
    return { columns: ['status'], types: ['VARCHAR'], rows: [['OK']] };
  }
}

/**
 * A value written into column `f`: cast to its type, and an error instead of a NULL in a NOT NULL
 * column (INSERT, UPDATE and MERGE alike).
 */
function columnValue(expr: string, f: NestedField): string {
  const value = `CAST((${expr}) AS ${duckdbType(f.type)})`;
  return f.required ? `CASE WHEN ${value} IS NULL THEN error(${sqlString(`NULL value in column ${f.name}, which is NOT NULL`)}) ELSE ${value} END` : value;
}
