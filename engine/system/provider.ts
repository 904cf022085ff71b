/**
 * System tables: one provider per table yields its rows for whoever asks, SQL (`SELECT … FROM
 * system.query_history`) and the REST endpoints (`GET /api/query-history`, …) alike. SQL names
 * are snake_case; the HTTP layer only changes the case of the keys (`camelCaseKeys`).
 */

/** DuckDB type names of system-table columns. */
export type SystemColumnType = 'VARCHAR' | 'BIGINT' | 'INTEGER' | 'DOUBLE' | 'BOOLEAN' | 'TIMESTAMPTZ' | 'VARCHAR[]';

export interface SystemColumn {
  readonly name: string;
  readonly type: SystemColumnType;
}

/** Who is reading: rows are filtered to what this principal may see before anything else. */
export interface SystemViewer {
  readonly tenantId: string;
  readonly principalId: string;
  /** tenant_admin sees the tenant's rows where a user sees only their own. */
  readonly isTenantAdmin: boolean;
}

/** Filters, order and limit a provider applies in the metadata store instead of in DuckDB. */
export interface SystemPushdown {
  /** Equality filters by column name. */
  readonly equals?: ReadonlyMap<string, string>;
  readonly limit?: number;
  readonly offset?: number;
}

/** A row: column name → value (string, number, bigint, boolean, Date, string[] or null). */
export type SystemRow = Readonly<Record<string, unknown>>;

export interface SystemTableProvider {
  /** The table's name inside the `system` schema. */
  readonly name: string;
  readonly columns: readonly SystemColumn[];
  rows(viewer: SystemViewer, pushdown?: SystemPushdown): Promise<readonly SystemRow[]>;
}

/** `query_id` → `queryId`: the HTTP JSON form of a system-table row. */
export function camelCaseKeys(row: SystemRow): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(row)) out[k.replace(/_([a-z0-9])/g, (_, c: string) => c.toUpperCase())] = jsonValue(v);
  return out;
}

/** JSON has no bigint or Date: bigints that fit become numbers, others strings; dates ISO 8601. */
export function jsonValue(v: unknown): unknown {
  if (typeof v === 'bigint') return Number.isSafeInteger(Number(v)) ? Number(v) : v.toString();
  if (v instanceof Date) return v.toISOString();
  return v;
}
