/**
 * Queries (SELECT, EXPLAIN) from bound IR to rows:
 *
 *   bind (loop: the binder names tables it needs, we load them through the catalog service)
 *   → plan each scan's files (manifests read through the catalog's FileIO) → prune and estimate
 *   → classify → fragment → admit (workload manager: route, queue or reject) → execute on the
 *   DuckDB workers under the lease's signal and memory cap, each fragment time-sliced through the
 *   lease's MLFQ (`lease.runFragment`) → rows.
 *
 * The planner does no I/O and the workers touch no store: this module is the I/O between them.
 */
import { NamespaceLookup } from './namespace-lookup.js';
import { floeError, isFloeError, FloeError } from '../../grammar/errors.js';
import type { Parser } from '../../grammar/parser.js';
import type { Query, Statement } from '../../grammar/ir.js';
import { planFeatures, queryType } from '../../grammar/analysis.js';
import type { FileScanTask } from '../../catalog/iceberg/scan.js';
import type { CatalogService } from '../../catalog/rest/service.js';
import type { CatalogRecord } from '../../catalog/rest/store.js';
import { toCatalogError } from '../../catalog/rest/errors.js';
import {
  bindStatement, classifyWorkload, constantResult, estimatedRows, formatTableName, fragmentQuery, planScans, tableKey, isSystemTableName,
  type BoundQuery, type ConstantResult, type FragmentOptions, type WorkloadClassification, type PlannedScan, type RelationFacts, type SystemTableFacts, type TableName,
} from '../planner/index.js';
import type { FragmentPlan } from '../fragments.js';
import type { Executor, QueryResult } from '../exec/index.js';
import type { ClassLimits, WorkloadManager, QueryLease, RoutingRequest } from '../wlm/index.js';
import type { SystemTableProvider } from '../system/provider.js';
import { rowsSql } from '../system/rows-sql.js';
import { catalogContextOf, sqlErrorOf, statementStorage } from './catalog-statements.js';
import { guardDivisions } from './division-guard.js';
import { viewerOf, type RowSet, type StatementContext } from './query-service.js';

/** What classification reads of a statement: its plan features and estimated rows. */
export interface WorkloadShape {
  readonly features: BoundQuery['features'];
  readonly estimatedRows: number;
}

export interface QueryRunnerOptions {
  readonly catalog: CatalogService;
  readonly parser: Parser;
  readonly executor: Executor;
  readonly wlm: WorkloadManager;
  /** Floe's system tables by name (`query_history`, …). */
  readonly systemTables: ReadonlyMap<string, SystemTableProvider>;
  readonly fragmentOptions: FragmentOptions;
  readonly maxResultRows: number;
}

/** A constant query's answer and workload shape, and its classifications by session class. */
interface ConstantQuery {
  readonly answer: ConstantResult;
  readonly shape: WorkloadShape;
  readonly classifications: Map<string, WorkloadClassification>;
}

/** The plan of a query no worker runs. */
const NO_FRAGMENTS: FragmentPlan = { fragments: [] };

/** Binding gives up after this many rounds of loading (deep view chains are cut off earlier). */
const MAX_BIND_ROUNDS = 40;

export class QueryRunner {
  /**
   * The catalogs a statement reads, by name, read once per statement: loading a table brings its
   * catalog along, and planning files and location mappings reuse it instead of reading the
   * catalog again (two store round trips per query; one record per statement is also the
   * consistent view of it). Keyed by the statement's context, so it goes with the statement.
   */
  readonly #catalogs = new WeakMap<StatementContext, Map<string, Promise<CatalogRecord>>>();

  constructor(private readonly o: QueryRunnerOptions) {}

  private catalogsOf(ctx: StatementContext): Map<string, Promise<CatalogRecord>> {
    let m = this.#catalogs.get(ctx);
    if (m === undefined) this.#catalogs.set(ctx, m = new Map());
    return m;
  }

  /** The catalog record of `name` for this statement (its error as the SQL error of that name). */
  private catalogRecord(ctx: StatementContext, name: string): Promise<CatalogRecord> {
    const m = this.catalogsOf(ctx);
    let p = m.get(name);
    if (p === undefined) {
      p = this.o.catalog.loadCatalog(catalogContextOf(ctx), name).catch((e: unknown) => {
        m.delete(name);
        throw sqlErrorOf(e, name);
      });
      m.set(name, p);
    }
    return p;
  }

  async run(ctx: StatementContext, statement: Statement): Promise<RowSet> {
    switch (statement.kind) {
      case 'Query':
        this.rejectIfQueueFull(ctx, statement);
        return this.select(ctx, statement, false);
      case 'Explain':
        if (statement.statement.kind !== 'Query') throw floeError('UNSUPPORTED_STATEMENT', { what: `EXPLAIN of ${statement.statement.kind}` });
        if (statement.analyze) this.rejectIfQueueFull(ctx, statement);
        return this.select(ctx, statement, true, statement.analyze);
      default:
        throw floeError('UNSUPPORTED_STATEMENT', { what: statement.kind });
    }
  }

  /** Binds a query statement, loading every table and view it names. */
  async bind(ctx: StatementContext, statement: Statement): Promise<BoundQuery> {
    const facts = new Map<string, RelationFacts>();
    const systemTables = new Map<string, SystemTableFacts>([...this.o.systemTables].map(([name, p]) => [name, { columns: p.columns.map((c) => c.name) }]));
    const namespaces = new NamespaceLookup(this.o.catalog, catalogContextOf(ctx));
    const request = {
      defaults: { catalog: ctx.session.catalog, namespace: [ctx.session.schema] },
      facts, systemTables, parse: (sql: string) => guardDivisions(this.o.parser.parse(sql)), namespaces: namespaces.facts,
    };
    const guarded = guardDivisions(statement);
    for (let round = 0; round < MAX_BIND_ROUNDS; round++) {
      const r = bindStatement(guarded, request);
      if (r.kind === 'bound') return r.query;
      await Promise.all([
        ...r.tables.map(async (name) => facts.set(tableKey(name), await this.load(ctx, name))),
        namespaces.learn(r.namespaces),
      ]);
    }
    throw floeError('INVALID_REQUEST', { detail: 'views nest too deeply' });
  }

  private async load(ctx: StatementContext, name: TableName): Promise<RelationFacts> {
    if (isSystemTableName(name)) return { kind: 'missing' };
    const cc = catalogContextOf(ctx);
    const ident = { namespace: name.namespace, name: name.name };
    try {
      const t = await this.o.catalog.loadTable(cc, name.catalog, ident);
      const catalogs = this.catalogsOf(ctx);
      if (t.catalog !== undefined && !catalogs.has(name.catalog)) catalogs.set(name.catalog, Promise.resolve(t.catalog));
      return { kind: 'table', metadata: t.metadata };
    } catch (e) {
      const c = toCatalogError(e);
      if (!c || !['NoSuchTableException', 'NoSuchNamespaceException', 'NoSuchWarehouseException', 'NotFoundException'].includes(c.type)) throw sqlErrorOf(e, name.name);
      if (c.type === 'NotFoundException') throw sqlErrorOf(e, name.name);
    }
    try {
      const v = await this.o.catalog.loadView(cc, name.catalog, ident);
      const version = v.metadata.versions.find((x) => x.versionId === v.metadata.currentVersionId);
      const sql = version?.representations.find((r) => r.type === 'sql' && (r.dialect === 'floe' || r.dialect === 'duckdb'))
        ?? version?.representations.find((r) => r.type === 'sql');
      if (!version || !sql || sql.type !== 'sql') throw floeError('UNSUPPORTED_STATEMENT', { what: `view ${name.name} has no SQL representation` });
      return {
        kind: 'view', sql: sql.sql, defaultNamespace: version.defaultNamespace,
        ...(version.defaultCatalog !== undefined ? { defaultCatalog: version.defaultCatalog } : {}),
      };
    } catch (e) {
      if (isFloeError(e)) throw e;
      const c = toCatalogError(e);
      if (c && ['NoSuchViewException', 'NoSuchNamespaceException', 'NoSuchWarehouseException'].includes(c.type)) return { kind: 'missing' };
      throw sqlErrorOf(e, name.name);
    }
  }

  /** The files of each scan, after pruning: manifests are read through the catalog's FileIO. */
  private async planFiles(ctx: StatementContext, bound: BoundQuery): Promise<(readonly FileScanTask[])[]> {
    return Promise.all(bound.scans.map(async (scan) => {
      if (scan.snapshot === undefined) return [];
      const catalog = await this.catalogRecord(ctx, scan.table.catalog);
      try {
        return (await this.o.catalog.planScan(catalog, scan.metadata, scan.selector)).tasks;
      } catch (e) {
        throw sqlErrorOf(e, scan.table.name);
      }
    }));
  }

  /** Each bound scan's files after pruning. */
  async plannedScans(ctx: StatementContext, bound: BoundQuery): Promise<readonly PlannedScan[]> {
    return planScans(bound, await this.planFiles(ctx, bound));
  }

  /** A plan ready for the workers: location mappings on every scan, system-table rows filled in. */
  async prepare(ctx: StatementContext, bound: BoundQuery, plan: FragmentPlan): Promise<FragmentPlan> {
    return this.fillSystemScans(ctx, await this.withLocationMappings(ctx, bound, plan));
  }

  private async select(ctx: StatementContext, statement: Statement, explain: boolean, analyze = false): Promise<RowSet> {
    // A constant select list is answered here, without a worker (engine/planner/constant.ts): it
    // names nothing to bind and reads no file. An Arrow answer is the worker's to encode.
    const query = statement.kind === 'Explain' ? statement.statement : statement;
    if (ctx.arrow !== true && query.kind === 'Query') {
      const constant = this.constantOf(query);
      if (constant !== undefined) return this.selectConstant(ctx, statement, constant, explain, analyze);
    }
    const bound = await this.bind(ctx, statement);
    const planned = await this.plannedScans(ctx, bound);
    const rows = estimatedRows(planned);
    const shape: WorkloadShape = { features: bound.features, estimatedRows: rows };
    const classified = this.classify(ctx, shape);
    const { classification, limits } = classified;
    const plan = await this.withLocationMappings(ctx, bound, fragmentQuery(bound, planned, this.o.fragmentOptions));
    const bytes = plan.fragments.flatMap((f) => f.scans).reduce((n, s) => n + s.estimatedBytes, 0);

    if (explain && !analyze) {
      return explainRows(plan, classification.workloadClass, classification.reason, rows, limits);
    }
    const withRows = await this.fillSystemScans(ctx, plan);
    const result = await this.withLease(ctx, statement, shape, async (lease) => {
      // Each fragment goes through the MLFQ quantum by quantum; CPU is charged per quantum there.
      return this.o.executor.execute(withRows, {
        storage: statementStorage(this.o.catalog, ctx),
        signal: lease.signal, memoryLimitBytes: lease.memoryLimitBytes, maxRows: this.o.maxResultRows, arrow: ctx.arrow === true,
        schedule: (run) => lease.runFragment(run),
        // Its memory, sampled from the workers, counts against its groups' soft memory limits.
        onMemory: (bytes) => lease.reportMemory(bytes),
      });
    }, classified);
    if (explain) {
      const text = explainRows(plan, classification.workloadClass, classification.reason, rows, limits);
      const m = result.metrics;
      return { ...text, rows: [...text.rows, [`executed: ${m.rows} rows, ${m.fragments} fragments, cpu ${Math.round(m.cpuMs)} ms, wall ${Math.round(m.wallMs)} ms`]], bytesScanned: bytes, fragments: m.fragments };
    }
    return {
      columns: result.columns, types: result.types, rows: result.rows,
      ...(result.arrow ? { arrow: result.arrow } : {}),
      bytesScanned: result.metrics.bytesScanned, fragments: result.metrics.fragments,
    };
  }

  /**
   * A query's constant answer with its shape, or undefined when a worker must run it; worked out
   * once per parsed statement (the parse cache hands back the same object for the same text, and
   * constant queries are the connection probes and health checks that repeat most).
   */
  private constantOf(query: Query): ConstantQuery | undefined {
    let c = this.#constants.get(query);
    if (c === undefined) {
      const answer = constantResult(query.body);
      c = answer === undefined ? null : { answer, shape: { features: planFeatures(query), estimatedRows: 0 }, classifications: new Map() };
      this.#constants.set(query, c);
    }
    return c ?? undefined;
  }

  readonly #constants = new WeakMap<Query, ConstantQuery | null>();

  /** A constant query: classified (no scans, no rows) and admitted like any other, answered here. */
  private async selectConstant(ctx: StatementContext, statement: Statement, query: ConstantQuery, explain: boolean, analyze: boolean): Promise<RowSet> {
    const { answer: constant, shape } = query;
    const classified = this.classify(ctx, shape, query.classifications);
    const { classification, limits } = classified;
    if (explain && !analyze) return explainRows(NO_FRAGMENTS, classification.workloadClass, classification.reason, 0, limits, constant);
    const result = await this.withLease(ctx, statement, shape, async (lease) => constantAnswer(constant, lease), classified);
    if (!explain) return { columns: result.columns, types: result.types, rows: result.rows, bytesScanned: 0, fragments: 0 };
    const text = explainRows(NO_FRAGMENTS, classification.workloadClass, classification.reason, 0, limits, constant);
    return { ...text, rows: [...text.rows, [`executed: ${result.rows.length} rows, 0 fragments, cpu 0 ms, wall 0 ms`]], bytesScanned: 0, fragments: 0 };
  }

  /**
   * The statement's class and the operator's limits of that class (read live: a reload applies to
   * the next statement). `memo` keeps classifications of a fixed shape by session class.
   */
  private classify(ctx: StatementContext, shape: WorkloadShape, memo?: Map<string, WorkloadClassification>): { classification: WorkloadClassification; limits: ClassLimits } {
    const sessionClass = ctx.session.settings.get('svc.workload_class') as 'interactive' | 'medium' | 'batch' | undefined;
    let classification = memo?.get(sessionClass ?? '');
    if (classification === undefined) {
      classification = classifyWorkload(shape.features, shape.estimatedRows, sessionClass === undefined ? {} : { session: sessionClass });
      memo?.set(sessionClass ?? '', classification);
    }
    return { classification, limits: this.o.wlm.classLimits(classification.workloadClass) };
  }

  /**
   * Answers a full queue before any planning, as Trino rejects at submission: no catalog load,
   * manifest read or store round trip is spent on a statement admission would refuse. Routing
   * needs only the request (principal, source, pool, statement kind), not the plan. `withLease`
   * decides again after planning (the queue may have filled meanwhile). History shows the group.
   */
  rejectIfQueueFull(ctx: StatementContext, statement: Statement): void {
    const early = this.o.wlm.rejectEarly(routingOf(ctx, statement));
    if (early === null) return;
    ctx.lifecycle.classified({ resourceGroup: early.groupPath });
    throw early.error;
  }

  /**
   * Classifies, routes and admits a statement, runs `work` under the lease (its signal carries the
   * killer's reason: timeout, memory cap, cancel) and releases it. History shows group and class.
   */
  async withLease<T>(
    ctx: StatementContext, statement: Statement, shape: WorkloadShape, work: (lease: QueryLease) => Promise<T>,
    classified: ReturnType<QueryRunner['classify']> = this.classify(ctx, shape),
  ): Promise<T> {
    const { classification, limits } = classified;
    const c = classification.workloadClass;
    const ticket = this.o.wlm.admit({
      queryId: ctx.queryId, ...routingOf(ctx, statement), workloadClass: c, priority: limits.priority,
      timeoutMs: limits.timeoutMs, memoryCapBytes: limits.memoryCapBytes, requestTimeoutMs: ctx.timeoutMs ?? null,
    }, ctx.cancellation ? { cancellation: ctx.cancellation } : {});
    ctx.lifecycle.classified({ workloadClass: c, resourceGroup: ticket.groupPath, priority: limits.priority });
    if (ticket.kind === 'rejected') throw ticket.error;
    const lease: QueryLease = await ticket.lease;
    ctx.lifecycle.running({ workloadClass: c, resourceGroup: lease.groupPath, priority: limits.priority });
    try {
      return await work(lease);
    } catch (e) {
      // The workload manager's reason (timeout, memory cap, cancel) names the limit; prefer it.
      const reason: unknown = lease.signal.aborted ? lease.signal.reason : undefined;
      if (reason instanceof FloeError) throw reason;
      if (isFloeError(e) && e.code === 'OUT_OF_MEMORY') throw lease.reportOutOfMemory(e.message);
      throw e;
    } finally {
      lease.release();
    }
  }

  /** Each scan carries its catalog's location mappings, so workers read registered tables in place. */
  private async withLocationMappings(ctx: StatementContext, bound: BoundQuery, plan: FragmentPlan): Promise<FragmentPlan> {
    const catalogOfTable = new Map(bound.scans.map((b) => [formatTableName(b.table), b.table.catalog] as const));
    const byName = (name: string) => this.catalogRecord(ctx, name);
    const fragments = await Promise.all(plan.fragments.map(async (f) => ({
      ...f,
      scans: await Promise.all(f.scans.map(async (s) => {
        const catalogName = catalogOfTable.get(s.tableName);
        if (catalogName === undefined) throw new Error(`Bug: scan of ${s.tableName} has no bound table`);
        const mappings = (await byName(catalogName)).locationMappings;
        return mappings.length > 0 ? { ...s, locationMappings: mappings } : s;
      })),
    })));
    return { fragments };
  }

  /** Reads each system table the plan uses, as the principal may see it, into the fragments. */
  private async fillSystemScans(ctx: StatementContext, plan: FragmentPlan): Promise<FragmentPlan> {
    if (!plan.fragments.some((f) => (f.systemScans?.length ?? 0) > 0)) return plan;
    const viewer = viewerOf(ctx.principal);
    const fragments = await Promise.all(plan.fragments.map(async (f) => {
      if (!f.systemScans || f.systemScans.length === 0) return f;
      const systemScans = await Promise.all(f.systemScans.map(async (s) => {
        const provider = this.o.systemTables.get(s.table);
        if (!provider) throw floeError('UNDEFINED_TABLE', { name: `system.${s.table}` });
        const rows = await provider.rows(viewer);
        return { ...s, sql: rowsSql(provider.columns, rows) };
      }));
      return { ...f, systemScans };
    }));
    return { fragments };
  }
}

/** The request fields routing rules match (docs/workload.md, Routing rule). */
function routingOf(ctx: StatementContext, statement: Statement): RoutingRequest {
  return {
    tenant: ctx.principal.tenantId, user: ctx.principal.name,
    source: ctx.source ?? ctx.session.settings.get('svc.query_source') ?? null,
    resourcePool: ctx.session.settings.get('svc.resource_pool') ?? null,
    queryType: queryType(statement),
  };
}

/**
 * The result of a constant query under its lease: no fragment runs, so nothing but a cancel that
 * came before can stop it (the lease's signal carries the killer's reason).
 */
function constantAnswer(constant: ConstantResult, lease: QueryLease): QueryResult {
  if (lease.killedWith !== null) throw lease.killedWith;
  return {
    columns: constant.columns, types: constant.types, rows: constant.rows,
    metrics: { rows: constant.rows.length, bytesScanned: 0, fragments: 0, perFragment: [], cpuMs: 0, wallMs: 0 },
  };
}

function explainRows(plan: FragmentPlan, cls: string, reason: string, rows: number, limits: { priority: number; timeoutMs: number; memoryCapBytes: number }, constant?: ConstantResult): RowSet {
  const lines: string[] = [
    `workload class: ${cls} (${reason}); priority ${limits.priority}, timeout ${limits.timeoutMs} ms, memory cap ${limits.memoryCapBytes} bytes`,
    `estimated rows: ${rows}`,
  ];
  if (constant !== undefined) lines.push('answered by the coordinator: a constant select list, no fragment runs');
  for (const f of plan.fragments) {
    lines.push(`fragment ${f.id}${f.inputs.length > 0 ? ` (reads fragments ${f.inputs.join(', ')})` : ''}: ${f.sql}`);
    for (const s of f.scans) lines.push(`  scan ${s.relation} = ${s.tableName}: ${s.tasks.length} files, ${s.estimatedRows} rows, ${s.estimatedBytes} bytes`);
    for (const s of f.systemScans ?? []) lines.push(`  system ${s.relation} = system.${s.table}`);
  }
  return { columns: ['plan'], types: ['VARCHAR'], rows: lines.map((l) => [l]) };
}

