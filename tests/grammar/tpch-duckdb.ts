/**
 * The TPC-H SF0.01 tables of ../shared/data/tpch/sf0.01 loaded into an in-memory DuckDB (once per
 * process), with the standard TPC-H column types. Used by the differential test and the parse bench.
 */
import * as path from 'node:path';
import { DuckDBInstance, type DuckDBConnection } from '@duckdb/node-api';
import { TPCH_DIR } from './corpus.js';

/** Column name → DuckDB type, per table, in file order. */
export const TPCH_TABLES: Readonly<Record<string, readonly (readonly [string, string])[]>> = {
  region: [['r_regionkey', 'INTEGER'], ['r_name', 'VARCHAR'], ['r_comment', 'VARCHAR']],
  nation: [['n_nationkey', 'INTEGER'], ['n_name', 'VARCHAR'], ['n_regionkey', 'INTEGER'], ['n_comment', 'VARCHAR']],
  part: [
    ['p_partkey', 'INTEGER'], ['p_name', 'VARCHAR'], ['p_mfgr', 'VARCHAR'], ['p_brand', 'VARCHAR'], ['p_type', 'VARCHAR'],
    ['p_size', 'INTEGER'], ['p_container', 'VARCHAR'], ['p_retailprice', 'DECIMAL(15,2)'], ['p_comment', 'VARCHAR'],
  ],
  supplier: [
    ['s_suppkey', 'INTEGER'], ['s_name', 'VARCHAR'], ['s_address', 'VARCHAR'], ['s_nationkey', 'INTEGER'],
    ['s_phone', 'VARCHAR'], ['s_acctbal', 'DECIMAL(15,2)'], ['s_comment', 'VARCHAR'],
  ],
  partsupp: [
    ['ps_partkey', 'INTEGER'], ['ps_suppkey', 'INTEGER'], ['ps_availqty', 'INTEGER'], ['ps_supplycost', 'DECIMAL(15,2)'],
    ['ps_comment', 'VARCHAR'],
  ],
  customer: [
    ['c_custkey', 'INTEGER'], ['c_name', 'VARCHAR'], ['c_address', 'VARCHAR'], ['c_nationkey', 'INTEGER'],
    ['c_phone', 'VARCHAR'], ['c_acctbal', 'DECIMAL(15,2)'], ['c_mktsegment', 'VARCHAR'], ['c_comment', 'VARCHAR'],
  ],
  orders: [
    ['o_orderkey', 'INTEGER'], ['o_custkey', 'INTEGER'], ['o_orderstatus', 'VARCHAR'], ['o_totalprice', 'DECIMAL(15,2)'],
    ['o_orderdate', 'DATE'], ['o_orderpriority', 'VARCHAR'], ['o_clerk', 'VARCHAR'], ['o_shippriority', 'INTEGER'],
    ['o_comment', 'VARCHAR'],
  ],
  lineitem: [
    ['l_orderkey', 'INTEGER'], ['l_partkey', 'INTEGER'], ['l_suppkey', 'INTEGER'], ['l_linenumber', 'INTEGER'],
    ['l_quantity', 'DECIMAL(15,2)'], ['l_extendedprice', 'DECIMAL(15,2)'], ['l_discount', 'DECIMAL(15,2)'],
    ['l_tax', 'DECIMAL(15,2)'], ['l_returnflag', 'VARCHAR'], ['l_linestatus', 'VARCHAR'], ['l_shipdate', 'DATE'],
    ['l_commitdate', 'DATE'], ['l_receiptdate', 'DATE'], ['l_shipinstruct', 'VARCHAR'], ['l_shipmode', 'VARCHAR'],
    ['l_comment', 'VARCHAR'],
  ],
};

const quote = (s: string): string => `'${s.replaceAll("'", "''")}'`;

/** A connection to a fresh in-memory DuckDB holding the eight TPC-H tables. */
export async function openTpch(): Promise<{ instance: DuckDBInstance; connection: DuckDBConnection }> {
  const instance = await DuckDBInstance.create(':memory:');
  const connection = await instance.connect();
  for (const [table, columns] of Object.entries(TPCH_TABLES)) {
    // .tbl lines end with "|": the extra empty field is read as _end and dropped.
    const spec = [...columns, ['_end', 'VARCHAR'] as const].map(([n, ty]) => `${quote(n)}: ${quote(ty)}`).join(', ');
    const file = path.join(TPCH_DIR, 'sf0.01', `${table}.tbl.gz`);
    await connection.run(`CREATE TABLE ${table} AS SELECT * EXCLUDE (_end) FROM read_csv(${quote(file)}, delim = '|', header = false, columns = {${spec}})`);
  }
  return { instance, connection };
}
