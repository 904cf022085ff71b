/**
 * Routing: which resource group a query goes to. Rules are read top to bottom and the first whose
 * every given `match_*` equals the request wins; no match sends the query to the root group.
 *
 * Where the request fields come from (documented in docs/workload.md):
 * - tenant and user: the authenticated principal;
 * - source: the `X-Floe-Source` request header (a dashboard or job names itself), else the
 *   session setting `svc.query_source`;
 * - resource pool: the session setting `SET svc.resource_pool = '<name>'`;
 * - query type: the statement kind (select, insert, update, delete, …).
 */
import type { ResolvedRoutingRule } from './config.js';

/** The request fields a rule can match. Absent source or pool never match a rule that names one. */
export interface RoutingRequest {
  readonly tenant: string;
  readonly user: string;
  readonly source: string | null;
  readonly resourcePool: string | null;
  readonly queryType: string;
}

/** The HTTP header that carries the query source. */
export const SOURCE_HEADER = 'x-floe-source';
/** The session setting that carries the resource pool. */
export const RESOURCE_POOL_SETTING = 'svc.resource_pool';
/** The session setting that carries the source when no header does. */
export const SOURCE_SETTING = 'svc.query_source';

/** The dotted path of the group a request goes to: the first matching rule's target, else `root`. */
export function route(rules: readonly ResolvedRoutingRule[], request: RoutingRequest): string {
  for (const rule of rules) {
    if (ruleMatches(rule, request)) return rule.targetGroup;
  }
  return 'root';
}

/** True when every field the rule names equals the request's (query type compared without case). */
export function ruleMatches(rule: ResolvedRoutingRule, r: RoutingRequest): boolean {
  return (
    (rule.matchTenant === null || rule.matchTenant === r.tenant) &&
    (rule.matchUser === null || rule.matchUser === r.user) &&
    (rule.matchSource === null || rule.matchSource === r.source) &&
    (rule.matchResourcePool === null || rule.matchResourcePool === r.resourcePool) &&
    (rule.matchQueryType === null || rule.matchQueryType === r.queryType.toLowerCase())
  );
}
