/**
 * Fixtures for the planner tests: the TPC-H tables as Iceberg table metadata (schemas only, no
 * files), bind requests over them, and loading SF0.01 into an in-memory DuckDB.
 */
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { dirname, join, resolve } from 'node:path';
import { Parser } from '../../grammar/index.js';
import type { Statement } from '../../grammar/index.js';
import { newTableMetadata } from '../../catalog/iceberg/table-metadata.js';
import type { TableMetadata } from '../../catalog/iceberg/table-metadata.js';
import { schema } from '../../catalog/iceberg/schema.js';
import { nestedField, Types } from '../../catalog/iceberg/types.js';
import type { PrimitiveType } from '../../catalog/iceberg/types.js';
import { tableKey } from '../../engine/planner/names.js';
import type { BindRequest, RelationFacts } from '../../engine/planner/bind.js';

const here = dirname(fileURLToPath(import.meta.url));
/** `../shared/data` from the project root (tests run from dist/tests/engine). */
export const SHARED_DATA = resolve(here, '../../../../shared/data');
export const TPCH_QUERIES = join(SHARED_DATA, 'tpch/queries');
export const TPCH_SF001 = join(SHARED_DATA, 'tpch/sf0.01');

const dec = Types.decimal(15, 2);
const S = Types.string;
const L = Types.long;
const I = Types.int;
const D = Types.date;

/** TPC-H columns with the types DuckDB's dbgen uses. */
export const TPCH_COLUMNS: Readonly<Record<string, readonly (readonly [string, PrimitiveType])[]>> = {
  lineitem: [['l_orderkey', L], ['l_partkey', L], ['l_suppkey', L], ['l_linenumber', L], ['l_quantity', dec], ['l_extendedprice', dec], ['l_discount', dec], ['l_tax', dec], ['l_returnflag', S], ['l_linestatus', S], ['l_shipdate', D], ['l_commitdate', D], ['l_receiptdate', D], ['l_shipinstruct', S], ['l_shipmode', S], ['l_comment', S]],
  orders: [['o_orderkey', L], ['o_custkey', L], ['o_orderstatus', S], ['o_totalprice', dec], ['o_orderdate', D], ['o_orderpriority', S], ['o_clerk', S], ['o_shippriority', I], ['o_comment', S]],
  customer: [['c_custkey', L], ['c_name', S], ['c_address', S], ['c_nationkey', I], ['c_phone', S], ['c_acctbal', dec], ['c_mktsegment', S], ['c_comment', S]],
  part: [['p_partkey', L], ['p_name', S], ['p_mfgr', S], ['p_brand', S], ['p_type', S], ['p_size', I], ['p_container', S], ['p_retailprice', dec], ['p_comment', S]],
  partsupp: [['ps_partkey', L], ['ps_suppkey', L], ['ps_availqty', L], ['ps_supplycost', dec], ['ps_comment', S]],
  supplier: [['s_suppkey', L], ['s_name', S], ['s_address', S], ['s_nationkey', I], ['s_phone', S], ['s_acctbal', dec], ['s_comment', S]],
  nation: [['n_nationkey', I], ['n_name', S], ['n_regionkey', I], ['n_comment', S]],
  region: [['r_regionkey', I], ['r_name', S], ['r_comment', S]],
};

export const TPCH_TABLES = Object.keys(TPCH_COLUMNS);

/** DuckDB type of an Iceberg primitive used by the fixtures. */
export function duckType(t: PrimitiveType): string {
  switch (t.kind) {
    case 'long': return 'BIGINT';
    case 'int': return 'INTEGER';
    case 'decimal': return `DECIMAL(${t.precision},${t.scale})`;
    case 'date': return 'DATE';
    case 'string': return 'VARCHAR';
    case 'double': return 'DOUBLE';
    default: throw new Error(`fixture type ${t.kind}`);
  }
}

/** Table metadata (no snapshots) for a TPC-H table. */
export function tpchMetadata(table: string): TableMetadata {
  const cols = TPCH_COLUMNS[table]!;
  return newTableMetadata({
    schema: schema(0, cols.map(([n, t], i) => nestedField(i + 1, n, t, true))),
    location: `/warehouse/tpch/${table}`,
    now: 1_700_000_000_000,
    tableUuid: '00000000-0000-4000-8000-000000000000',
  });
}

/** The facts of the TPC-H tables in catalog `lake`, schema `tpch`. */
export function tpchFacts(metadata: (table: string) => TableMetadata = tpchMetadata): Map<string, RelationFacts> {
  const facts = new Map<string, RelationFacts>();
  for (const t of TPCH_TABLES) facts.set(tableKey({ catalog: 'lake', namespace: ['tpch'], name: t }), { kind: 'table', metadata: metadata(t) });
  return facts;
}

export const SYSTEM_TABLES = new Map([
  ['query_history', { columns: ['query_id', 'status', 'sql', 'user_id', 'tenant_id', 'query_type', 'duration_ms'] }],
  ['tables', { columns: ['catalog', 'schema', 'name'] }],
  ['namespaces', { columns: ['catalog', 'namespace'] }],
  ['resource_groups', { columns: ['path', 'running', 'queued'] }],
  ['audit_log', { columns: ['event', 'actor', 'at'] }],
]);

/** A bind request over the TPC-H facts with `lake.tpch` current. */
export function tpchRequest(parser: Parser, facts: Map<string, RelationFacts> = tpchFacts()): BindRequest {
  return { defaults: { catalog: 'lake', namespace: ['tpch'] }, facts, systemTables: SYSTEM_TABLES, parse: (sql: string): Statement => parser.parse(sql) };
}

/** The text of TPC-H query n (1-22). */
export function tpchQuery(n: number): string {
  return readFileSync(join(TPCH_QUERIES, `q${String(n).padStart(2, '0')}.sql`), 'utf8');
}
