/**
 * Fixtures for the planner tests: the TPC-H tables as Iceberg table metadata (schemas only, no
 * files), bind requests over them, and loading SF0.01 into an in-memory DuckDB.
 */
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { dirname, join, resolve } from 'node:path';
import type { DuckDBConnection } from '@duckdb/node-api';
import { Parser } from '../../grammar/index.js';
import type { Statement } from '../../grammar/index.js';
import { parseDecimal, toByteBuffer } from '../../catalog/iceberg/conversions.js';
import type { IcebergValue } from '../../catalog/iceberg/conversions.js';
import { parseDate } from '../../catalog/iceberg/datetime.js';
import type { DataFile } from '../../catalog/iceberg/manifest.js';
import type { FileScanTask } from '../../catalog/iceberg/scan.js';
import { newTableMetadata } from '../../catalog/iceberg/table-metadata.js';
import type { TableMetadata } from '../../catalog/iceberg/table-metadata.js';
import { schema } from '../../catalog/iceberg/schema.js';
import { nestedField, Types } from '../../catalog/iceberg/types.js';
import type { PrimitiveType } from '../../catalog/iceberg/types.js';
import { tableKey } from '../../engine/planner/names.js';
import type { BindRequest, RelationFacts } from '../../engine/planner/bind.js';
import type { FragmentPlan } from '../../engine/fragments.js';
import { fragmentRelation } from '../../engine/fragments.js';

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

/** Tables split into one "file" per year of this column. */
const SPLIT_BY: Readonly<Record<string, string>> = { lineitem: 'l_shipdate', orders: 'o_orderdate' };

/** Rows as text; a fractional double is `~` and 10 significant digits (`~` tells it from a DECIMAL). */
export async function rows(c: DuckDBConnection, sql: string): Promise<string[][]> {
  const reader = await c.runAndReadAll(sql);
  return reader.getRows().map((r) => r.map((v) => (typeof v === 'number' ? (Number.isInteger(v) ? String(v) : `~${v.toPrecision(10)}`) : v === null ? 'NULL' : String(v))));
}

function boundValue(type: PrimitiveType, text: string): IcebergValue {
  switch (type.kind) {
    case 'long': return BigInt(text);
    case 'int': return Number(text);
    case 'decimal': return parseDecimal(text, type.scale);
    case 'date': return parseDate(text);
    default: return text;
  }
}

/** Loads SF0.01 (lineitem and orders split into one table per year) and builds the data files (DuckDB tables) with their manifest facts. */
/**
 * Loads SF0.01 into `c` and describes each table's "files" (one per year for lineitem and orders).
 * With `parquetDir`, each file is also written there as Parquet with Iceberg field ids, and the
 * tasks point at those files (for the real executor).
 */
export async function loadTpch(c: DuckDBConnection, tables: readonly string[] = TPCH_TABLES, parquetDir?: string): Promise<{ files: Map<string, FileScanTask[]>; fileTables: Map<string, string> }> {
  const files = new Map<string, FileScanTask[]>();
  const fileTables = new Map<string, string>();
  for (const table of tables) {
    const cols = TPCH_COLUMNS[table]!;
    const columns = `{${cols.map(([n, ty]) => `'${n}': '${duckType(ty)}'`).join(', ')}}`;
    await c.run(`CREATE TABLE ${table} AS SELECT * FROM read_csv('${join(TPCH_SF001, `${table}.tbl.gz`)}', delim='|', header=false, columns=${columns})`);
    const split = SPLIT_BY[table];
    const parts = split === undefined ? [{ name: `${table}_f0`, where: 'true' }] : (await rows(c, `SELECT DISTINCT year(${split}) FROM ${table} ORDER BY 1`)).map(([y]) => ({ name: `${table}_f${y}`, where: `year(${split}) = ${y}` }));
    const tasks: FileScanTask[] = [];
    for (const part of parts) {
      await c.run(`CREATE TABLE ${part.name} AS SELECT * FROM ${table} WHERE ${part.where}`);
      const stats = (await rows(c, `SELECT count(*), ${cols.map(([n]) => `min(${n})::VARCHAR, max(${n})::VARCHAR`).join(', ')} FROM ${part.name}`))[0]!;
      const recordCount = Number(stats[0]);
      const lowerBounds = new Map<number, Uint8Array>();
      const upperBounds = new Map<number, Uint8Array>();
      cols.forEach(([, ty], i) => {
        lowerBounds.set(i + 1, toByteBuffer(ty, boundValue(ty, stats[1 + 2 * i]!)));
        upperBounds.set(i + 1, toByteBuffer(ty, boundValue(ty, stats[2 + 2 * i]!)));
      });
      const counts = new Map(cols.map((_, i) => [i + 1, recordCount] as const));
      let filePath = `memory:///${part.name}.parquet`;
      if (parquetDir !== undefined) {
        filePath = `file://${join(parquetDir, `${part.name}.parquet`)}`;
        await c.run(`COPY ${part.name} TO '${join(parquetDir, `${part.name}.parquet`)}' (FORMAT parquet, FIELD_IDS {${cols.map(([n], i) => `${n}: ${i + 1}`).join(', ')}})`);
      }
      const file: DataFile = {
        content: 'data', filePath, fileFormat: 'PARQUET', partition: [], recordCount, fileSizeInBytes: recordCount * 100,
        valueCounts: counts, nullValueCounts: new Map(cols.map((_, i) => [i + 1, 0] as const)), lowerBounds, upperBounds,
      };
      fileTables.set(file.filePath, part.name);
      tasks.push({ file, specId: 0, sequenceNumber: 1, snapshotId: 1n, positionDeletes: [], equalityDeletes: [] });
    }
    files.set(table, tasks);
  }
  return { files, fileTables };
}

/** Runs a fragment plan the way the executor would, in one connection. */
export async function runPlan(c: DuckDBConnection, plan: FragmentPlan, fileTables: Map<string, string>, tableOf: Map<string, string>): Promise<string[][]> {
  let result: string[][] = [];
  for (const f of plan.fragments) {
    for (const s of f.scans) {
      const names = s.columns === 'all' ? s.schema.fields.map((x) => x.name) : s.columns.map((id) => s.schema.fields.find((x) => x.id === id)!.name);
      const sources = s.tasks.map((task) => `SELECT ${names.join(', ')} FROM ${fileTables.get(task.file.filePath)!}`);
      const body = sources.length > 0 ? sources.join(' UNION ALL ') : `SELECT ${names.join(', ')} FROM ${tableOf.get(s.tableName)!} WHERE false`;
      await c.run(`CREATE OR REPLACE TEMP VIEW ${s.relation} AS ${body}`);
    }
    const last = f.id === plan.fragments[plan.fragments.length - 1]!.id;
    if (last) result = await rows(c, f.sql);
    else await c.run(`CREATE OR REPLACE TEMP TABLE ${fragmentRelation(f.id)} AS ${f.sql}`);
  }
  return result;
}

