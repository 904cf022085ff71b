/**
 * SQL writes into Iceberg tables: INSERT (VALUES or SELECT, column lists), CREATE TABLE AS,
 * DELETE [… USING], UPDATE [… FROM] and MERGE (copy-on-write, or merge-on-read when the table's
 * `write.<operation>.mode` says so), and CREATE [OR REPLACE] VIEW. Each write:
 *
 *   bind the rows' query → one fragment → a worker writes Parquet files with field ids (one set per
 *   partition value, full column statistics) → manifests and a snapshot (engine/iceberg-io) →
 *   the catalog's commit function with `assert-ref-snapshot-id` (the same function the REST
 *   catalog uses). Appends re-base and retry when another writer committed first; a DELETE,
 *   UPDATE or MERGE whose table changed under it fails with COMMIT_CONFLICT (40001) rather than
 *   lose a row.
 *
 * Statements built here from IR are unparsed and parsed again (`grammar/` round-trips), so the
 * binder validates every name, and the planner's isolation checks apply to every piece.
 */
import { floeError, isFloeError } from '../../grammar/errors.js';
import type { Parser } from '../../grammar/parser.js';
import type { CreateTableAs, CreateView, Delete, Insert, Merge, MergeAction, MergeClause, Statement, Update } from '../../grammar/ir.js';
import { identSql, quoteIdent, unparseExpr, unparseFrom, unparseQuery } from '../../grammar/unparse.js';
import { toCatalogError } from '../../catalog/rest/errors.js';
import type { CatalogService } from '../../catalog/rest/service.js';
import type { LoadedTable } from '../../catalog/rest/loaded.js';
import { currentSchema, currentSnapshot, type TableMetadata } from '../../catalog/iceberg/table-metadata.js';
import type { DataFile } from '../../catalog/iceberg/manifest.js';
import type { FileScanTask } from '../../catalog/iceberg/scan.js';
import type { TableRequirement } from '../../catalog/iceberg/table-updates.js';
import { schema as makeSchema } from '../../catalog/iceberg/schema.js';
import { findFieldByName } from '../../catalog/iceberg/schema.js';
import { estimatedRows, formatTableName, fragmentQuery, type BoundQuery, type PlannedScan } from '../planner/index.js';
import { NamespaceLookup } from './namespace-lookup.js';
import { identName } from '../planner/names.js';
import { caseCollidingFieldIds, scanRelation, type Fragment, type FragmentPlan, type TableScanInput } from '../fragments.js';
import type { Executor } from '../exec/index.js';
import type { QueryLease } from '../wlm/index.js';
import {
  appendWriteRequest, commitChange, dataFilesFromWritten, deleteFilesFromWritten, duckdbType, isMergeOnRead, positionDeleteWriteRequest,
  sqlString, stageAppend, stageOverwrite, stageRowDelta, type StagedChange,
} from '../iceberg-io/index.js';
import type { NestedField } from '../../catalog/iceberg/types.js';
import { defaultValueSql } from '../iceberg-io/defaults.js';
import { catalogContextOf, sqlErrorOf, statementStorage } from './catalog-statements.js';
import { partitionSpecFromSql } from './schema-from-ir.js';
import { schemaOfResult } from './result-schema.js';
import type { RowSet, StatementContext } from './query-service.js';
import type { QueryRunner, WorkloadShape } from './query-runner.js';

const ONE_FRAGMENT = { maxFragmentsPerScan: 1, minRowsPerFragment: Number.MAX_SAFE_INTEGER };

export interface WriteRunnerOptions {
  readonly catalog: CatalogService;
  readonly parser: Parser;
  readonly executor: Executor;
  readonly queries: QueryRunner;
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

  private async target(ctx: StatementContext, name: Insert['table']): Promise<Target> {
    const lookup = new NamespaceLookup(this.o.catalog, catalogContextOf(ctx));
    const t = await lookup.tableName(name, { catalog: ctx.session.catalog, namespace: [ctx.session.schema] });
    return { catalog: t.catalog, ident: { namespace: t.namespace, name: t.name }, display: [t.catalog, ...t.namespace, t.name].join('.') };
  }

  private async loadTarget(ctx: StatementContext, t: Target): Promise<LoadedTable> {
    let loaded: LoadedTable;
    try {
      loaded = await this.o.catalog.loadTable(catalogContextOf(ctx), t.catalog, t.ident);
    } catch (e) {
      throw sqlErrorOf(e, t.display);
    }
    // Writes name target columns case-insensitively; with columns that differ only in case that
    // could write the wrong one. Refused until writes resolve exact names (reads do).
    if (caseCollidingFieldIds(currentSchema(loaded.metadata)).size > 0) {
      throw floeError('UNSUPPORTED_STATEMENT', { what: `writing ${t.display}, whose column names differ only in case` });
    }
    return loaded;
  }

  private parse(sql: string): Statement {
    return this.o.parser.parse(sql);
  }

  /** The single fragment that yields a bound query's rows (writes run in one worker). */
  private async oneFragment(ctx: StatementContext, bound: BoundQuery): Promise<Fragment> {
    return this.fragmentOf(ctx, bound, await this.o.queries.plannedScans(ctx, bound), false);
  }

  /** Column names and DuckDB types of a fragment's result, by running it with LIMIT 0. */
  private async describe(ctx: StatementContext, fragment: Fragment): Promise<{ columns: readonly string[]; types: readonly string[] }> {
    const probe: FragmentPlan = { fragments: [{ ...fragment, sql: `SELECT * FROM (${fragment.sql}) AS __floe_probe LIMIT 0` }] };
    const r = await this.o.executor.execute(probe, { storage: statementStorage(this.o.catalog, ctx), ...(ctx.cancellation ? { signal: ctx.cancellation.signal } : {}) });
    return { columns: r.columns, types: r.types };
  }

  private shape(bound: BoundQuery, rows: number): WorkloadShape {
    return { features: bound.features, estimatedRows: rows };
  }

  // ------------------------------------------------------------------ INSERT and CREATE TABLE AS

  private async insert(ctx: StatementContext, s: Insert): Promise<RowSet> {
    const t = await this.target(ctx, s.table);
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
      return `${columnValue(i >= 0 ? `__floe_src.c${i}` : writeDefaultSql(f), f)} AS ${quoteIdent(f.name)}`;
    });
    const sql = source.columns.length === 0
      ? `SELECT ${exprs.join(', ')} FROM (${source.fragment.sql}) AS __floe_src`
      : `SELECT ${exprs.join(', ')} FROM (${source.fragment.sql}) AS __floe_src(${aliases.join(', ')})`;
    return this.o.queries.withLease(ctx, statement, this.shape(source.bound, 0), async (lease) => {
      const cc = catalogContextOf(ctx);
      const catalogRecord = await this.o.catalog.loadCatalog(cc, t.catalog);
      const { request, dataLocation } = appendWriteRequest(loaded.metadata, sql, source.fragment.scans, { locationMappings: catalogRecord.locationMappings, catalog: t.catalog });
      const written = await this.o.executor.write(request, { storage: statementStorage(this.o.catalog, ctx), signal: lease.signal, memoryLimitBytes: lease.memoryLimitBytes, onMemory: (bytes) => lease.reportMemory(bytes) });
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

  /** Commits a staged change; appends are re-based onto newer snapshots after a conflict (`commitChange`). */
  private async commitWithRebase(ctx: StatementContext, t: Target, metadata: TableMetadata, staged: StagedChange): Promise<void> {
    const cc = catalogContextOf(ctx);
    const io = await this.o.catalog.fileIOFor(cc, t.catalog);
    await commitChange(io, {
      load: async () => (await this.loadTarget(ctx, t)).metadata,
      commit: async (requirements, updates) => {
        try {
          await this.o.catalog.commitTable(cc, t.catalog, t.ident, requirements, updates);
          return 'committed';
        } catch (e) {
          if (toCatalogError(e)?.type === 'CommitFailedException') return 'conflict';
          throw sqlErrorOf(e, t.display);
        }
      },
    }, staged, { metadata, display: t.display });
  }

  private async createTableAs(ctx: StatementContext, s: CreateTableAs): Promise<RowSet> {
    const t = await this.target(ctx, s.name);
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

  // ------------------------------------------------------------------ DELETE and UPDATE

  /** The target as a FROM item, and the qualifier its columns go by (its alias, or the table's own name). */
  private targetRef(s: Delete | Update): { readonly from: string; readonly qualifier: string } {
    return {
      from: `${s.table.parts.map(identSql).join('.')}${s.alias ? ` AS ${identSql(s.alias)}` : ''}`,
      qualifier: identSql(s.alias ?? s.table.parts[s.table.parts.length - 1]!),
    };
  }

  /** DELETE FROM t [USING …] [WHERE …]: with USING, a target row goes when at least one row of USING matches it (PostgreSQL). */
  private async deleteRows(ctx: StatementContext, s: Delete): Promise<RowSet> {
    const t = await this.target(ctx, s.table);
    const loaded = await this.loadTarget(ctx, t);
    const schema = currentSchema(loaded.metadata);
    const target = this.targetRef(s);
    const hit = `coalesce((${s.where === undefined ? 'TRUE' : unparseExpr(s.where)}), false)`;
    const from = s.using === undefined ? target.from : `${target.from}, ${unparseFrom(s.using)}`;
    return this.changeRows(ctx, s, t, loaded, {
      operation: 'delete', label: 'rows_deleted',
      matchSql: `SELECT ${target.qualifier}.* FROM ${from} WHERE ${hit}`,
      pairs: s.using === undefined ? 'one' : 'collapse',
      rewrite: s.using === undefined
        ? { kind: 'keep', sql: `SELECT * FROM ${target.from} WHERE NOT ${hit}` }
        : { kind: 'join', sql: (scan, match) => `SELECT ${schema.fields.map((f) => `__floe_t.${quoteIdent(f.name)}`).join(', ')} FROM ${scan} AS __floe_t WHERE NOT EXISTS (SELECT 1 FROM (${match}) AS __floe_m WHERE ${SAME_ROW})` },
    });
  }

  /**
   * UPDATE t SET … [FROM …] [WHERE …]. With FROM, each target row is joined to the FROM rows
   * (PostgreSQL's semantics) and updated from the row it pairs with; a target row that pairs with
   * more than one row is CARDINALITY_VIOLATION, as in MERGE, rather than PostgreSQL's arbitrary pick.
   */
  private async update(ctx: StatementContext, s: Update): Promise<RowSet> {
    const t = await this.target(ctx, s.table);
    const loaded = await this.loadTarget(ctx, t);
    const schema = currentSchema(loaded.metadata);
    const sets = new Map<number, string>();
    for (const a of s.assignments) {
      if (a.column.length !== 1) throw floeError('UNSUPPORTED_STATEMENT', { what: 'assigning a nested field' });
      const f = findFieldByName(schema, identName(a.column[0]!), false);
      if (!f) throw floeError('UNDEFINED_COLUMN', { name: a.column[0]!.name });
      if (sets.has(f.id)) throw floeError('INVALID_PARAMETER', { name: f.name, detail: 'assigned twice' });
      sets.set(f.id, a.value === undefined ? writeDefaultSql(f) : unparseExpr(a.value));
    }
    const target = this.targetRef(s);
    const hit = `coalesce((${s.where === undefined ? 'TRUE' : unparseExpr(s.where)}), false)`;
    const from = s.from === undefined ? target.from : `${target.from}, ${unparseFrom(s.from)}`;
    const assigned = schema.fields.filter((f) => sets.has(f.id));
    const newValues = assigned.map((f) => `${columnValue(sets.get(f.id)!, f)} AS ${valueColumn(f)}`);
    const keepItems = schema.fields.map((f) => (sets.has(f.id)
      ? `CASE WHEN ${hit} THEN ${columnValue(sets.get(f.id)!, f)} ELSE ${quoteIdent(f.name)} END AS ${quoteIdent(f.name)}`
      : quoteIdent(f.name)));
    const joinItems = schema.fields.map((f) => (sets.has(f.id)
      ? `CASE WHEN __floe_m.__floe_pos IS NULL THEN __floe_t.${quoteIdent(f.name)} ELSE __floe_m.${valueColumn(f)} END AS ${quoteIdent(f.name)}`
      : `__floe_t.${quoteIdent(f.name)}`));
    return this.changeRows(ctx, s, t, loaded, {
      operation: 'update', label: 'rows_updated',
      matchSql: `SELECT ${[`${target.qualifier}.*`, ...newValues].join(', ')} FROM ${from} WHERE ${hit}`,
      pairs: s.from === undefined ? 'one' : 'refuse',
      rewrite: s.from === undefined
        ? { kind: 'keep', sql: `SELECT ${keepItems.join(', ')} FROM ${target.from}` }
        : { kind: 'join', sql: (scan, match) => `SELECT ${joinItems.join(', ')} FROM ${scan} AS __floe_t LEFT JOIN (${match}) AS __floe_m ON ${SAME_ROW}` },
      newRows: (match) => `SELECT ${schema.fields.map((f) => `${sets.has(f.id) ? valueColumn(f) : quoteIdent(f.name)} AS ${quoteIdent(f.name)}`).join(', ')} FROM (${match}) AS __floe_m`,
    });
  }

  /**
   * A DELETE or UPDATE. One pass over the files pruning leaves finds the target rows it changes, by
   * data file and position (and refuses a row paired twice when the statement says so); then
   * copy-on-write rewrites only the files holding them (overwrite snapshot), or merge-on-read
   * (`write.delete.mode` / `write.update.mode`) writes their positions as delete files, one per
   * data file, plus an UPDATE's new row versions (row-delta snapshot). No data file is rewritten
   * under merge-on-read.
   */
  private async changeRows(ctx: StatementContext, s: Delete | Update, t: Target, loaded: LoadedTable, change: RowChange): Promise<RowSet> {
    const answer = (n: number): RowSet => ({ columns: [change.label], types: ['BIGINT'], rows: [[n]] });
    const metadata = loaded.metadata;
    if (currentSnapshot(metadata) === undefined) return answer(0);
    const mor = isMergeOnRead(metadata, change.operation);
    if (mor) requireRowDeltas(metadata);
    const bound = await this.bindOverTarget(ctx, t, metadata, change.matchSql);
    const planned = await this.o.queries.plannedScans(ctx, bound);
    const targetTasks = planned[0]!.tasks;
    if (targetTasks.length === 0) return answer(0);
    const keepBound = !mor && change.rewrite.kind === 'keep' ? await this.bindOverTarget(ctx, t, metadata, change.rewrite.sql) : undefined;
    return this.o.queries.withLease(ctx, s, this.shape(bound, estimatedRows(planned)), async (lease) => {
      const all = await this.fragmentOf(ctx, bound, planned);
      const summary = change.pairs === 'one'
        ? `SELECT __floe_file_path, count(*), 1 FROM (${all.sql}) AS __floe_m GROUP BY __floe_file_path`
        : `SELECT __floe_file_path, count(*), max(n) FROM (SELECT __floe_file_path, __floe_pos, count(*) AS n FROM (${all.sql}) AS __floe_m GROUP BY __floe_file_path, __floe_pos) AS __floe_r GROUP BY __floe_file_path`;
      const counted = await this.rowsOf(ctx, lease, all, summary);
      let count = 0;
      const affected = new Set<string>();
      for (const [path, n, most] of counted) {
        if (change.pairs === 'refuse' && Number(most) > 1) throw floeError('CARDINALITY_VIOLATION', { detail: 'UPDATE … FROM: a target row matched more than one row of FROM' });
        count += Number(n);
        affected.add(String(path));
      }
      if (count === 0) return answer(0);
      const files = targetTasks.filter((x) => affected.has(x.file.filePath));
      const match = await this.fragmentOf(ctx, bound, withTargetTasks(planned, files));
      const w = await this.writerFor(ctx, t, metadata, lease);
      let staged: StagedChange;
      let read: readonly Fragment[];
      if (mor) {
        const positions = `SELECT ${change.pairs === 'collapse' ? 'DISTINCT ' : ''}__floe_file_path AS file_path, __floe_pos AS pos FROM (${match.sql}) AS __floe_m`;
        const deletes = await w.positionDeletes(positions, match.scans, files);
        const added = change.newRows === undefined ? [] : await w.dataFiles(change.newRows(match.sql), match.scans);
        staged = await stageRowDelta(w.io, metadata, deletes, added);
        read = change.newRows === undefined ? [all, match] : [all, match, match];
      } else {
        // The keep statement may read other tables too (a subquery in WHERE or SET): only the target narrows.
        const rewrite = change.rewrite.kind === 'join'
          ? { ...match, sql: change.rewrite.sql(TARGET_SCAN, match.sql) }
          : await this.fragmentOf(ctx, keepBound!, withTargetTasks(await this.o.queries.plannedScans(ctx, keepBound!), files), false);
        staged = await stageOverwrite(w.io, metadata, affected, await w.dataFiles(rewrite.sql, rewrite.scans));
        read = [all, rewrite];
      }
      await this.commitWithRebase(ctx, t, metadata, staged);
      return { ...answer(count), bytesScanned: bytesOf(read), fragments: read.length };
    });
  }

  /**
   * Binds a statement whose first scan is the target (the write reads and changes that scan), and
   * checks that it reads the snapshot the statement started from: the commit asserts that snapshot,
   * so a newer one would only fail later.
   */
  private async bindOverTarget(ctx: StatementContext, t: Target, metadata: TableMetadata, sql: string): Promise<BoundQuery> {
    const bound = await this.o.queries.bind(ctx, this.parse(sql));
    const first = bound.scans[0];
    if (first === undefined || formatTableName(first.table) !== formatTableName({ catalog: t.catalog, namespace: t.ident.namespace, name: t.ident.name })) {
      throw new Error('Bug: a row-level write whose first scan is not its target');
    }
    if (first.snapshot?.snapshotId !== currentSnapshot(metadata)?.snapshotId) {
      throw floeError('COMMIT_CONFLICT', { detail: `${t.display} changed while the statement ran; run it again` });
    }
    return bound;
  }

  /** The one fragment of a bound query over planned scans; with `positions`, the target scan (the first) yields row positions. */
  private async fragmentOf(ctx: StatementContext, bound: BoundQuery, planned: readonly PlannedScan[], positions = true): Promise<Fragment> {
    const plan = await this.o.queries.prepare(ctx, bound, fragmentQuery(bound, planned, ONE_FRAGMENT));
    if (plan.fragments.length !== 1) throw new Error('Bug: a write source planned as more than one fragment');
    const f = plan.fragments[0]!;
    return positions ? { ...f, scans: f.scans.map((x) => (x.relation === TARGET_SCAN ? { ...x, rowPositions: true } : x)) } : f;
  }

  /** Runs `sql` over a fragment's scans under the lease (time-sliced like a query) and returns its rows. */
  private async rowsOf(ctx: StatementContext, lease: QueryLease, fragment: Fragment, sql: string): Promise<readonly (readonly unknown[])[]> {
    const r = await this.o.executor.execute({ fragments: [{ ...fragment, sql }] }, {
      storage: statementStorage(this.o.catalog, ctx),
      signal: lease.signal, memoryLimitBytes: lease.memoryLimitBytes, schedule: (run) => lease.runFragment(run), onMemory: (bytes) => lease.reportMemory(bytes),
    });
    return r.rows;
  }

  /** Data files and position delete files written under a lease into the target's data folder. */
  private async writerFor(ctx: StatementContext, t: Target, metadata: TableMetadata, lease: QueryLease): Promise<TableWriter> {
    const cc = catalogContextOf(ctx);
    const catalogRecord = await this.o.catalog.loadCatalog(cc, t.catalog);
    const options = { locationMappings: catalogRecord.locationMappings, catalog: t.catalog };
    const limits = { storage: statementStorage(this.o.catalog, ctx), signal: lease.signal, memoryLimitBytes: lease.memoryLimitBytes, onMemory: (bytes: number) => lease.reportMemory(bytes) };
    return {
      io: await this.o.catalog.fileIOFor(cc, t.catalog),
      dataFiles: async (sql, scans) => {
        const { request, dataLocation } = appendWriteRequest(metadata, sql, scans, options);
        const written = await this.o.executor.write(request, limits);
        lease.chargeCpu(written.metrics.cpuMs);
        return dataFilesFromWritten(metadata, written.files, dataLocation);
      },
      positionDeletes: async (sql, scans, files) => {
        const { request, dataLocation } = positionDeleteWriteRequest(metadata, sql, scans, options);
        const written = await this.o.executor.write(request, limits);
        lease.chargeCpu(written.metrics.cpuMs);
        return deleteFilesFromWritten(written.files, dataLocation, new Map(files.map((f) => [f.file.filePath, f] as const)));
      },
    };
  }

  // ------------------------------------------------------------------ MERGE

  /**
   * MERGE INTO target USING source ON … WHEN [NOT] MATCHED [AND …] THEN UPDATE | DELETE | INSERT | DO
   * NOTHING, clauses tried in order, the first whose condition holds acts.
   *
   * One query pairs the rows: target FULL JOIN source ON …, each row tagged with its kind (a target
   * row alone, a matched pair, a source row alone), its acting clause and its values after that
   * clause. A first pass counts, per data file, the rows each kind of clause changes, and refuses a
   * target row that more than one source row matches when one of those pairs updates or deletes it
   * (CARDINALITY_VIOLATION, as the SQL standard, Snowflake and Trino do, rather than pick one). Then
   * one snapshot, by the table's `write.merge.mode`:
   * - copy-on-write: one more pass writes the rows of the files holding changed rows (updated, kept,
   *   deleted ones left out) and the inserted rows; an overwrite snapshot replaces those files;
   * - merge-on-read: the changed rows' positions become position deletes (a pass over the changed
   *   files only) and the updated and inserted rows one data file set, in a row-delta snapshot.
   * A MERGE that only inserts appends (in either mode), not re-based on conflict: a row committed
   * meanwhile could have matched.
   */
  private async merge(ctx: StatementContext, s: Merge): Promise<RowSet> {
    const t = await this.target(ctx, s.target);
    const loaded = await this.loadTarget(ctx, t);
    const metadata = loaded.metadata;
    const schema = currentSchema(metadata);
    const mor = isMergeOnRead(metadata, 'merge');
    const T = s.alias ? identSql(s.alias) : quoteIdent(identName(s.target.parts[s.target.parts.length - 1]!));
    const sourceAlias: string | undefined = s.source.kind === 'Scan' ? (s.source.alias?.name.name ?? identName(s.source.table.parts[s.source.table.parts.length - 1]!))
      : s.source.kind === 'Derived' ? s.source.alias?.name.name : undefined;
    if (sourceAlias === undefined) throw floeError('INVALID_PARAMETER', { name: 'USING', detail: 'give the source an alias' });
    const S = quoteIdent(sourceAlias);
    const column = (name: string) => findFieldByName(schema, name, false);
    const setsOf = (c: MergeClause): Map<number, string> => {
      const out = new Map<number, string>();
      if (c.action.kind === 'MergeUpdate') {
        for (const a of c.action.assignments) {
          const name = a.column[a.column.length - 1]!;
          const f = column(identName(name));
          if (!f || a.column.length > 2) throw floeError('UNDEFINED_COLUMN', { name: a.column.map((p) => p.name).join('.') });
          out.set(f.id, a.value === undefined ? writeDefaultSql(f) : unparseExpr(a.value));
        }
      }
      if (c.action.kind === 'MergeInsert') {
        const names = c.action.columns.length > 0 ? c.action.columns.map((x) => identName(x)) : schema.fields.map((f) => f.name);
        if (names.length !== c.action.values.length) throw floeError('DATATYPE_MISMATCH', { detail: `INSERT names ${names.length} columns and gives ${c.action.values.length} values` });
        names.forEach((n, k) => {
          const f = column(n);
          if (!f) throw floeError('UNDEFINED_COLUMN', { name: n });
          const v = c.action.kind === 'MergeInsert' ? c.action.values[k] : undefined;
          out.set(f.id, v === undefined ? writeDefaultSql(f) : unparseExpr(v));
        });
      }
      return out;
    };
    // Clauses are numbered from 1 in statement order; 0 is "no clause acts".
    const clauses = s.clauses.map((c, i) => ({ c, k: i + 1, sets: setsOf(c) }));
    const cond = (c: MergeClause) => (c.condition === undefined ? 'TRUE' : `coalesce((${unparseExpr(c.condition)}), false)`);
    const firstActing = (matched: boolean) => `CASE ${clauses.filter((x) => x.c.matched === matched).map(({ c, k }) => `WHEN ${cond(c)} THEN ${k}`).join(' ') || 'WHEN FALSE THEN 0'} ELSE 0 END`;
    const numbers = (kind: MergeAction['kind']) => clauses.filter((x) => x.c.action.kind === kind).map((x) => x.k);
    const U = inList(numbers('MergeUpdate')), D = inList(numbers('MergeDelete')), I = inList(numbers('MergeInsert'));
    const act = `(CASE WHEN ${T}.__floe_t IS NULL THEN ${firstActing(false)} WHEN ${S}.__floe_s IS NULL THEN 0 ELSE ${firstActing(true)} END)`;
    const kind = `(CASE WHEN ${T}.__floe_t IS NULL THEN ${SOURCE_ONLY} WHEN ${S}.__floe_s IS NULL THEN ${TARGET_ONLY} ELSE ${MATCHED} END)`;
    const values = schema.fields.map((f) => {
      const whens = clauses.flatMap(({ c, k, sets }) => {
        if (c.action.kind === 'MergeUpdate' && sets.has(f.id)) return [`WHEN ${k} THEN ${columnValue(sets.get(f.id)!, f)}`];
        if (c.action.kind === 'MergeInsert') return [`WHEN ${k} THEN ${columnValue(sets.get(f.id) ?? writeDefaultSql(f), f)}`];
        return [];
      });
      const kept = `${T}.${quoteIdent(f.name)}`;
      return `${whens.length > 0 ? `CASE ${act} ${whens.join(' ')} ELSE ${kept} END` : kept} AS ${valueColumn(f)}`;
    });
    const matchSql = `SELECT ${T}.*, ${kind} AS __floe_kind, ${act} AS __floe_act, ${values.join(', ')}
      FROM (SELECT *, TRUE AS __floe_t FROM ${s.target.parts.map(identSql).join('.')} AS ${T}) AS ${T}
      FULL JOIN (SELECT *, TRUE AS __floe_s FROM (${unparseQuery(s.source)}) AS __floe_src) AS ${S} ON ${unparseExpr(s.on)}`;
    if (mor) requireRowDeltas(metadata);
    const bound = await this.bindOverTarget(ctx, t, metadata, matchSql);
    const planned = await this.o.queries.plannedScans(ctx, bound);
    const targetTasks = planned[0]!.tasks;
    const rowsOut = (inserted: number, updated: number, deleted: number): RowSet => ({
      columns: ['rows_inserted', 'rows_updated', 'rows_deleted'], types: ['BIGINT', 'BIGINT', 'BIGINT'], rows: [[inserted, updated, deleted]],
    });
    const out = schema.fields.map((f) => `${valueColumn(f)} AS ${quoteIdent(f.name)}`).join(', ');
    return this.o.queries.withLease(ctx, s, this.shape(bound, estimatedRows(planned)), async (lease) => {
      const all = await this.fragmentOf(ctx, bound, planned);
      // Per data file: rows updated, rows deleted, the most source rows paired with a changed row,
      // and rows paired more than once that stay unchanged; the row without a file counts inserts.
      const counted = await this.rowsOf(ctx, lease, all, `SELECT fp, CAST(sum(ins) AS BIGINT), count(*) FILTER (WHERE u > 0), count(*) FILTER (WHERE d > 0),
          coalesce(max(n) FILTER (WHERE u + d > 0), 0), count(*) FILTER (WHERE fp IS NOT NULL AND u + d = 0 AND n > 1)
        FROM (SELECT __floe_file_path AS fp, count(*) AS n,
            count(*) FILTER (WHERE __floe_kind = ${MATCHED} AND __floe_act IN (${U})) AS u,
            count(*) FILTER (WHERE __floe_kind = ${MATCHED} AND __floe_act IN (${D})) AS d,
            count(*) FILTER (WHERE __floe_kind = ${SOURCE_ONLY} AND __floe_act IN (${I})) AS ins
          FROM (${all.sql}) AS __floe_m WHERE __floe_kind <> ${TARGET_ONLY} GROUP BY __floe_file_path, __floe_pos) AS __floe_r
        GROUP BY fp`);
      let inserted = 0, updated = 0, deleted = 0, pairedUnchanged = 0;
      const affected = new Set<string>();
      for (const [path, ins, upd, del, most, dup] of counted) {
        if (Number(most) > 1) throw floeError('CARDINALITY_VIOLATION', { detail: 'MERGE: a target row matched more than one source row' });
        inserted += Number(ins ?? 0);
        updated += Number(upd);
        deleted += Number(del);
        if (path !== null && Number(upd) + Number(del) > 0) {
          affected.add(String(path));
          pairedUnchanged += Number(dup);
        }
      }
      if (inserted + updated + deleted === 0) return rowsOut(0, 0, 0);
      const w = await this.writerFor(ctx, t, metadata, lease);
      const files = targetTasks.filter((x) => affected.has(x.file.filePath));
      const changed = affected.size > 0 ? await this.fragmentOf(ctx, bound, withTargetTasks(planned, files)) : undefined;
      // Inserts need every target file (a source row inserts only when no target row matches it).
      const rowsSource = inserted > 0 ? all : changed!;
      const insertedRows = `__floe_kind = ${SOURCE_ONLY} AND __floe_act IN (${I})`;
      let staged: StagedChange;
      let read: Fragment[] = [all];
      if (changed === undefined) {
        const added = await w.dataFiles(`SELECT ${out} FROM (${all.sql}) AS __floe_m WHERE ${insertedRows}`, all.scans);
        staged = { ...await stageAppend(w.io, metadata, added), rebaseable: false };
        read = [all, all];
      } else if (mor) {
        const deletes = await w.positionDeletes(`SELECT __floe_file_path AS file_path, __floe_pos AS pos FROM (${changed.sql}) AS __floe_m
          WHERE __floe_kind = ${MATCHED} AND __floe_act IN (${U}, ${D})`, changed.scans, files);
        read.push(changed);
        let added: readonly DataFile[] = [];
        if (updated + inserted > 0) {
          added = await w.dataFiles(`SELECT ${out} FROM (${rowsSource.sql}) AS __floe_m
            WHERE (__floe_kind = ${MATCHED} AND __floe_act IN (${U})) OR (${insertedRows})`, rowsSource.scans);
          read.push(rowsSource);
        }
        staged = await stageRowDelta(w.io, metadata, deletes, added);
      } else {
        // The rows of the changed files that stay (updated or not), and the inserted rows. A target
        // row paired with several source rows, none changing it, appears once per pair: keep one.
        const kept = `__floe_kind <> ${SOURCE_ONLY} AND __floe_act NOT IN (${D})${inserted > 0 ? ` AND __floe_file_path IN (${[...affected].map(sqlString).join(', ')})` : ''}`;
        const once = pairedUnchanged > 0 ? ` QUALIFY __floe_kind = ${SOURCE_ONLY} OR row_number() OVER (PARTITION BY __floe_file_path, __floe_pos) = 1` : '';
        const added = await w.dataFiles(`SELECT ${out} FROM (${rowsSource.sql}) AS __floe_m WHERE (${kept})${inserted > 0 ? ` OR (${insertedRows})` : ''}${once}`, rowsSource.scans);
        staged = await stageOverwrite(w.io, metadata, affected, added);
        read.push(rowsSource);
      }
      await this.commitWithRebase(ctx, t, metadata, staged);
      return { ...rowsOut(inserted, updated, deleted), bytesScanned: bytesOf(read), fragments: read.length };
    });
  }

  // ------------------------------------------------------------------ views

  private async createView(ctx: StatementContext, s: CreateView): Promise<RowSet> {
    const t = await this.target(ctx, s.name);
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
 * What a writer stores in column `f` when the statement gives it no value (an omitted INSERT column,
 * `SET c = DEFAULT`): its v3 `write-default`, else NULL.
 */
function writeDefaultSql(f: NestedField): string {
  return f.writeDefault === undefined ? 'NULL' : (defaultValueSql(f.type, f.writeDefault, duckdbType) ?? 'NULL');
}

/**
 * A value written into column `f`: cast to its type, and an error instead of a NULL in a NOT NULL
 * column (INSERT, UPDATE and MERGE alike).
 */
function columnValue(expr: string, f: NestedField): string {
  const value = `CAST((${expr}) AS ${duckdbType(f.type)})`;
  return f.required ? `CASE WHEN ${value} IS NULL THEN error(${sqlString(`NULL value in column ${f.name}, which is NOT NULL`)}) ELSE ${value} END` : value;
}

/** The relation of a row-level write's target: the first scan of the statements built here. */
const TARGET_SCAN = scanRelation(0);
/** A target row (`__floe_t`) and the match row (`__floe_m`) that carries its data file and position. */
const SAME_ROW = '__floe_m.__floe_file_path = __floe_t.__floe_file_path AND __floe_m.__floe_pos = __floe_t.__floe_pos';
/** The kinds of MERGE's joined rows: a target row no source row matches, a matched pair, a source row that matches nothing. */
const TARGET_ONLY = 0, MATCHED = 1, SOURCE_ONLY = 2;

/** How a DELETE or UPDATE finds the rows it changes and writes them. */
interface RowChange {
  readonly operation: 'delete' | 'update';
  readonly label: 'rows_deleted' | 'rows_updated';
  /**
   * One row per (target row, matching row of FROM/USING) pair: the target's columns (and, through
   * its scan, the row's data file and position), and an UPDATE's new values as `__floe_v<id>`.
   * The target is the statement's first scan.
   */
  readonly matchSql: string;
  /** Whether a target row pairs with one row (no FROM/USING), counts once however many (DELETE … USING), or is an error when paired twice (UPDATE … FROM). */
  readonly pairs: 'one' | 'collapse' | 'refuse';
  /**
   * Copy-on-write: the rows of the changed files that stay, changed or not; `keep` is a statement
   * over the target alone, `join` wraps the match query (`scan` is the target's relation).
   */
  readonly rewrite: { readonly kind: 'keep'; readonly sql: string } | { readonly kind: 'join'; readonly sql: (scan: string, match: string) => string };
  /** Merge-on-read: an UPDATE's new row versions, from the match query's rows. */
  readonly newRows?: (match: string) => string;
}

/** Writes into one table under one lease. */
interface TableWriter {
  readonly io: Awaited<ReturnType<CatalogService['fileIOFor']>>;
  /** Data files of `sql`'s rows (the table's columns in schema order). */
  dataFiles(sql: string, scans: readonly TableScanInput[]): Promise<readonly DataFile[]>;
  /** Position delete files of `sql`'s `(file_path, pos)` rows, one per data file of `files`. */
  positionDeletes(sql: string, scans: readonly TableScanInput[], files: readonly FileScanTask[]): Promise<ReturnType<typeof deleteFilesFromWritten>>;
}

/** The column of a match query that carries field `f`'s new value. */
function valueColumn(f: NestedField): string {
  return quoteIdent(`__floe_v${f.id}`);
}

/** A SQL IN list of clause numbers (`-1`, which no clause has, when empty). */
function inList(xs: readonly number[]): string {
  return xs.length > 0 ? xs.join(', ') : '-1';
}

/** A planned scan's task fields for `files`. */
function tasksOf(files: readonly FileScanTask[]): Pick<PlannedScan, 'tasks' | 'prunedFiles' | 'estimatedRows' | 'estimatedBytes'> {
  return {
    tasks: files, prunedFiles: 0,
    estimatedRows: files.reduce((n, x) => n + x.file.recordCount, 0),
    estimatedBytes: files.reduce((n, x) => n + x.file.fileSizeInBytes, 0),
  };
}

/** The planned scans with the target's (the first) narrowed to `files`. */
function withTargetTasks(planned: readonly PlannedScan[], files: readonly FileScanTask[]): readonly PlannedScan[] {
  return planned.map((p, i) => (i === 0 ? { ...p, ...tasksOf(files) } : p));
}

/** Bytes of the data files the fragments read (history's `bytes_scanned`). */
function bytesOf(fragments: readonly Fragment[]): number {
  return fragments.reduce((n, f) => n + f.scans.reduce((m, x) => m + x.estimatedBytes, 0), 0);
}

/** Merge-on-read needs format v2 (delete files); refused before anything is written. */
function requireRowDeltas(metadata: TableMetadata): void {
  if (metadata.formatVersion < 2) throw floeError('UNSUPPORTED_STATEMENT', { what: 'merge-on-read on a format v1 table (set the write mode to copy-on-write)' });
}
