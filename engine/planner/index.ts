/**
 * Public surface of the planner (pure, synchronous, no I/O; `planQuery` is the loop at the edge that
 * awaits the catalog and file loaders it is given). The session drives it:
 *
 *   parse → bindStatement (loop while it answers {kind:'needs'}: load those tables/views, add facts)
 *         → caller loads each bound scan's files (planScan(metadata, io, scan.selector).tasks)
 *         → planScans (prune, estimate) → classifyWorkload → fragmentQuery → executor
 *
 * `refuseEngineStatement(sql)` turns DuckDB-only statements that did not parse into 42501.
 */
export { bindQuery, bindStatement, looksLikeFilePath, scanPlaceholder, snapshotSelector, statementQuery, systemPlaceholder } from './bind.js';
export type { BindRequest, BindResult, BoundQuery, BoundScan, BoundSystemScan, ForbiddenFacts, MissingFacts, RelationFacts, SystemTableFacts, TableFacts, ViewFacts } from './bind.js';
export { checkIsolation, isFloeSetting, refuseEngineStatement } from './isolation.js';
export { ALLOWED_FUNCTIONS, ALLOWED_TABLE_FUNCTIONS } from './function-allowlist.js';
export { formatTableName, resolveTableName, resolveTableRef, resolveNamespacePath, namespaceKey, tableKey, isSystemTableName, SYSTEM_SCHEMA } from './names.js';
export type { NameDefaults, TableName, NamespaceFacts, NamespaceRef, PathResolution, TableResolution } from './names.js';
export type { ScanPredicate } from './predicates.js';
export { fileMayMatch, pruneFiles, summaryRecords } from './prune.js';
export type { PruneContext, PrunedFiles, PrunableFile } from './prune.js';
export { automaticClass, classifyWorkload, classLimits, DEFAULT_CLASS_LIMITS, PRIORITY_VALUES, priorityLevel } from './classify.js';
export type { ClassificationOverrides, ClassLimitsOverride, PriorityLevel, WorkloadClassification, WorkloadClassLimits } from './classify.js';
export { constantResult } from './constant.js';
export type { ConstantResult } from './constant.js';
export { DEFAULT_FRAGMENT_OPTIONS, estimatedRows, fragmentQuery, groupTasks, planScans } from './fragment.js';
export type { FragmentOptions, PlannedScan } from './fragment.js';

import type { BoundQuery } from './bind.js';
import { summaryRecords } from './prune.js';

/**
 * Rows the query's scans hold by their snapshot summaries (`total-records`), before any manifest is
 * read: a first estimate for classification. Tables without a summary count 0.
 */
export function summaryEstimate(query: BoundQuery): number {
  return query.scans.reduce((n, s) => n + (summaryRecords(s.snapshot?.summary) ?? 0), 0);
}
export { explainPlan } from './explain.js';
export { planQuery } from './plan-query.js';
export type { PlannedQuery, PlanningSource, PlanQueryOptions } from './plan-query.js';
