/**
 * The planning loop at the edge, for the session's query runner: bind (asking the injected source
 * for the tables and views the binder needs, round after round), load each scan's files, prune,
 * classify and fragment. The planner itself stays pure; this function only awaits what it is given.
 */
import type { Statement } from '../../grammar/index.js';
import { floeError } from '../../grammar/index.js';
import type { FileScanTask } from '../../catalog/iceberg/scan.js';
import type { FragmentPlan } from '../fragments.js';
import { bindStatement } from './bind.js';
import type { BindRequest, BoundQuery, BoundScan, RelationFacts, SystemTableFacts } from './bind.js';
import { classifyWorkload } from './classify.js';
import type { ClassificationOverrides, WorkloadClassification } from './classify.js';
import { explainPlan } from './explain.js';
import { DEFAULT_FRAGMENT_OPTIONS, estimatedRows, fragmentQuery, planScans } from './fragment.js';
import type { FragmentOptions, PlannedScan } from './fragment.js';
import { tableKey } from './names.js';
import type { NameDefaults, TableName } from './names.js';

/** Where planning gets catalog facts and files (the session wires the catalog service and FileIO). */
export interface PlanningSource {
  /** Facts for each name asked (a name without an answer counts as missing: 42P01). */
  relations(names: readonly TableName[]): Promise<ReadonlyMap<string, RelationFacts>>;
  /** The files of a bound scan: `(await planScan(scan.metadata, io, scan.selector)).tasks`. */
  tasks(scan: BoundScan): Promise<readonly FileScanTask[]>;
}

export interface PlanQueryOptions {
  readonly defaults: NameDefaults;
  readonly systemTables: ReadonlyMap<string, SystemTableFacts>;
  readonly parse: (sql: string) => Statement;
  /** The operator's class limits and the session's `svc.workload_class`. */
  readonly classification?: ClassificationOverrides;
  readonly fragments?: FragmentOptions;
  /** Most bind rounds (views within views); default 16. */
  readonly maxRounds?: number;
}

export interface PlannedQuery {
  readonly bound: BoundQuery;
  readonly scans: readonly PlannedScan[];
  /** Rows the query reads by the manifests, summed over scans. */
  readonly estimatedRows: number;
  readonly classification: WorkloadClassification;
  /** What the executor runs; `plan.fragments.length` is history's `fragments`. */
  readonly plan: FragmentPlan;
  /** Rounds of facts the binder asked for. */
  readonly rounds: number;
  /** EXPLAIN lines of this plan. */
  explain(): readonly string[];
}

/** Plans a statement that reads a query (see `statementQuery`). */
export async function planQuery(statement: Statement, source: PlanningSource, options: PlanQueryOptions): Promise<PlannedQuery> {
  const facts = new Map<string, RelationFacts>();
  const request: BindRequest = { defaults: options.defaults, facts, systemTables: options.systemTables, parse: options.parse };
  const maxRounds = options.maxRounds ?? 16;
  let rounds = 0;
  let result = bindStatement(statement, request);
  while (result.kind === 'needs') {
    if (rounds >= maxRounds) throw floeError('INVALID_STATE', { detail: `views nested more than ${maxRounds} levels deep` });
    rounds++;
    const answers = await source.relations(result.tables);
    for (const name of result.tables) {
      const key = tableKey(name);
      const answer = answers.get(key);
      facts.set(key, answer ?? { kind: 'missing' });
    }
    result = bindStatement(statement, request);
  }
  const bound = result.query;
  const tasks = await Promise.all(bound.scans.map((s) => source.tasks(s)));
  const scans = planScans(bound, tasks);
  const rows = estimatedRows(scans);
  const classification = classifyWorkload(bound.features, rows, options.classification ?? {});
  const plan = fragmentQuery(bound, scans, options.fragments ?? DEFAULT_FRAGMENT_OPTIONS);
  return { bound, scans, estimatedRows: rows, classification, plan, rounds, explain: () => explainPlan(bound, scans, classification, plan) };
}
