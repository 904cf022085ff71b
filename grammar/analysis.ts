/**
 * What the planner and workload manager read from a statement without binding it: the statement's
 * `query_type` for history and routing, and the plan-shape features of workload classification.
 */
import type { Statement, Relation, FunctionCall } from './ir.js';
import { unreachable } from './ir.js';
import { isAggregateCall } from './semantics.js';

export type QueryType = 'select' | 'insert' | 'update' | 'delete' | 'merge' | 'ddl' | 'copy' | 'show' | 'set' | 'principal' | 'explain';

/** The query_type recorded in history and matched by routing rules. */
export function queryType(s: Statement): QueryType {
  switch (s.kind) {
    case 'Query': return 'select';
    case 'Explain': return 'explain';
    case 'Insert': return 'insert';
    case 'Update': return 'update';
    case 'Delete': return 'delete';
    case 'Merge': return 'merge';
    case 'CopyInto': return 'copy';
    case 'CreateSchema': case 'DropSchema': case 'CreateTable': case 'CreateTableAs': case 'DropTable':
    case 'AlterTable': case 'CreateView': case 'DropView': case 'CreateIndex': case 'DropIndex':
      return 'ddl';
    case 'ShowCatalogs': case 'ShowSchemas': case 'ShowTables': case 'ShowViews': case 'DescribeTable':
    case 'ShowUsers': case 'DescribeUser': case 'ShowServiceAccounts': case 'ShowPats': case 'ShowWebhooks':
    case 'ShowQueryHistory': case 'ShowResourceGroups': case 'ShowStages': case 'ListStage':
      return 'show';
    case 'CreateStage': case 'DropStage': case 'RemoveStage': case 'GrantStage': case 'RevokeStage':
      return 'ddl';
    case 'Use': case 'SetWorkloadClass': case 'SetSession': case 'ResetSession':
      return 'set';
    case 'CreateUser': case 'AlterUserSet': case 'AlterUserUnset': case 'AlterUserSuspend': case 'AlterUserUnsuspend':
    case 'AlterUserUnlock': case 'AlterUserRename': case 'AlterUserSetLegalHold': case 'AlterUserClearLegalHold':
    case 'AlterSelfPassword': case 'AlterSelfEnrollMfa': case 'AlterSelfVerifyMfa': case 'AlterSelfDisableMfa':
    case 'DropUser': case 'UndropUser': case 'ExpungeUser': case 'RedeemInvitation': case 'CreateServiceAccount':
    case 'DropServiceAccount': case 'AddKeypair': case 'DropKeypair': case 'CreatePat': case 'DropPat':
    case 'CreateWebhook': case 'DropWebhook': case 'GrantManage': case 'RevokeManage': case 'CreateRole':
    case 'DropRole': case 'GrantRole': case 'RevokeRole':
      return 'principal';
    default: return unreachable(s);
  }
}

/** Plan-shape counts used by workload classification. */
export interface PlanFeatures {
  /** Join operators of any kind, implicit comma joins included. */
  readonly joins: number;
  /** Table references read: catalog tables and table functions (CTE references are not scans;
   *  the CTE's own scans count once). The target of UPDATE, DELETE and MERGE counts as a scan. */
  readonly scans: number;
  /** Window function calls. */
  readonly windowFunctions: number;
  /** Aggregate function calls (outside window calls). */
  readonly aggregates: number;
}

/** Counts joins, scans, window functions and aggregates over the whole statement, subqueries included. */
export function planFeatures(s: Statement): PlanFeatures {
  let joins = 0;
  let scans = 0;
  let windowFunctions = 0;
  let aggregates = 0;
  const visit = (v: unknown): void => {
    if (Array.isArray(v)) {
      for (const x of v) visit(x);
      return;
    }
    if (v === null || typeof v !== 'object') return;
    const n = v as { kind?: string };
    switch (n.kind) {
      case 'Join': joins++; break;
      case 'Scan': case 'TableFunction': scans++; break;
      case 'FunctionCall': {
        const call = n as FunctionCall;
        if (call.over !== undefined) windowFunctions++;
        else if (isAggregateCall(call)) aggregates++;
        break;
      }
      // Aggregate and Window nodes repeat the calls found in expressions: skip those lists.
      case 'Aggregate': {
        const a = n as Extract<Relation, { kind: 'Aggregate' }>;
        visit(a.input);
        visit(a.groupBy);
        return;
      }
      case 'Window': {
        const w = n as Extract<Relation, { kind: 'Window' }>;
        visit(w.input);
        visit(w.windows);
        return;
      }
      default: break;
    }
    for (const [k, x] of Object.entries(n)) if (k !== 'span' && x !== null && typeof x === 'object') visit(x);
  };
  visit(s);
  if (s.kind === 'Update' || s.kind === 'Delete') scans++;
  if (s.kind === 'Merge') scans++;
  return { joins, scans, windowFunctions, aggregates };
}
