/**
 * A deterministic SF1-shaped TPC-H data set generated with DuckDB (no dbgen here): the eight tables
 * at the SF1 row counts (part 200,000; supplier 10,000; partsupp 800,000; customer 150,000; orders
 * 1,500,000; lineitem ≈ 6,000,000), with the TPC-H value domains the 22 queries filter on (types,
 * brands, containers, colours, segments, ship modes, date ranges, phone country codes, the
 * partsupp supplier formula, customers with no orders), so every query returns rows.
 *
 * Randomness is `hash(key, salt)`: the same rows on every run and any thread count (DuckDB's
 * `random()` after `setseed` depends on how rows are spread over threads). Region and nation come
 * from the shared SF0.01 files (they are the same at every scale factor).
 */
import { join } from 'node:path';
import { DuckDBInstance } from '@duckdb/node-api';

const COLOURS = [
  'almond', 'antique', 'aquamarine', 'azure', 'beige', 'bisque', 'black', 'blanched', 'blue', 'blush', 'brown', 'burlywood',
  'burnished', 'chartreuse', 'chiffon', 'chocolate', 'coral', 'cornflower', 'cornsilk', 'cream', 'cyan', 'dark', 'deep', 'dim',
  'dodger', 'drab', 'firebrick', 'floral', 'forest', 'frosted', 'gainsboro', 'ghost', 'goldenrod', 'green', 'grey', 'honeydew',
  'hot', 'indian', 'ivory', 'khaki', 'lace', 'lavender', 'lawn', 'lemon', 'light', 'lime', 'linen', 'magenta', 'maroon', 'medium',
  'metallic', 'midnight', 'mint', 'misty', 'moccasin', 'navajo', 'navy', 'olive', 'orange', 'orchid', 'pale', 'papaya', 'peach',
  'peru', 'pink', 'plum', 'powder', 'puff', 'purple', 'red', 'rose', 'rosy', 'royal', 'saddle', 'salmon', 'sandy', 'seashell',
  'sienna', 'sky', 'slate', 'smoke', 'snow', 'spring', 'steel', 'tan', 'thistle', 'tomato', 'turquoise', 'violet', 'wheat', 'white',
  'yellow',
];
const WORDS = [
  'furiously', 'special', 'requests', 'quickly', 'final', 'deposits', 'carefully', 'regular', 'accounts', 'blithely', 'ironic',
  'packages', 'slyly', 'express', 'pending', 'theodolites', 'bold', 'foxes', 'even', 'instructions', 'unusual', 'pinto', 'beans',
  'asymptotes', 'silent', 'platelets', 'Customer', 'Complaints', 'dependencies', 'courts',
];

const list = (xs: readonly string[]): string => `[${xs.map((x) => `'${x}'`).join(', ')}]`;

/** `n` words of filler text keyed by `key` and `salt`. */
function words(key: string, salt: number, n: number): string {
  return Array.from({ length: n }, (_, i) => `W(1 + (hash(${key}, ${salt * 16 + i}) % ${WORDS.length})::INTEGER)`).join(` || ' ' || `);
}

/** Writes `<table>.parquet` for the eight tables into `folder`; returns the row counts. */
export async function generateSf1(folder: string, sharedTpch: string, threads: number): Promise<Record<string, number>> {
  const instance = await DuckDBInstance.create(':memory:', { threads: String(threads) });
  const c = await instance.connect();
  const run = (sql: string) => c.run(sql);
  const r = (key: string, salt: number, n: number) => `(hash(${key}, ${salt}) % ${n})::BIGINT`;
  try {
    await run(`SELECT setseed(0.42)`);
    await run(`CREATE MACRO W(i) AS ${list(WORDS)}[i]`);
    // Region and nation: the fixed TPC-H rows.
    await run(`CREATE TABLE region AS SELECT column0::INTEGER AS r_regionkey, column1 AS r_name, column2 AS r_comment
      FROM read_csv('${join(sharedTpch, 'region.tbl.gz')}', delim = '|', header = false, quote = '', columns = {'column0': 'VARCHAR', 'column1': 'VARCHAR', 'column2': 'VARCHAR', 'column3': 'VARCHAR'})`);
    await run(`CREATE TABLE nation AS SELECT column0::INTEGER AS n_nationkey, column1 AS n_name, column2::INTEGER AS n_regionkey, column3 AS n_comment
      FROM read_csv('${join(sharedTpch, 'nation.tbl.gz')}', delim = '|', header = false, quote = '', columns = {'column0': 'VARCHAR', 'column1': 'VARCHAR', 'column2': 'VARCHAR', 'column3': 'VARCHAR', 'column4': 'VARCHAR'})`);
    await run(`CREATE TABLE part AS SELECT
        k::INTEGER AS p_partkey,
        list_aggregate([${list(COLOURS)}[1 + ${r('k', 1, COLOURS.length)}], ${list(COLOURS)}[1 + ${r('k', 2, COLOURS.length)}], ${list(COLOURS)}[1 + ${r('k', 3, COLOURS.length)}], ${list(COLOURS)}[1 + ${r('k', 4, COLOURS.length)}], ${list(COLOURS)}[1 + ${r('k', 5, COLOURS.length)}]], 'string_agg', ' ') AS p_name,
        'Manufacturer#' || (1 + ${r('k', 6, 5)}) AS p_mfgr,
        'Brand#' || (1 + ${r('k', 6, 5)}) || (1 + ${r('k', 7, 5)}) AS p_brand,
        ['STANDARD', 'SMALL', 'MEDIUM', 'LARGE', 'ECONOMY', 'PROMO'][1 + ${r('k', 8, 6)}] || ' ' ||
          ['ANODIZED', 'BURNISHED', 'PLATED', 'POLISHED', 'BRUSHED'][1 + ${r('k', 9, 5)}] || ' ' ||
          ['TIN', 'NICKEL', 'BRASS', 'STEEL', 'COPPER'][1 + ${r('k', 10, 5)}] AS p_type,
        (1 + ${r('k', 11, 50)})::INTEGER AS p_size,
        ['SM', 'LG', 'MED', 'JUMBO', 'WRAP'][1 + ${r('k', 12, 5)}] || ' ' || ['CASE', 'BOX', 'BAG', 'JAR', 'PKG', 'PACK', 'CAN', 'DRUM'][1 + ${r('k', 13, 8)}] AS p_container,
        ((90000 + ((k // 10) % 20001) + 100 * (k % 1000)) / 100)::DECIMAL(15,2) AS p_retailprice,
        ${words('k', 14, 3)} AS p_comment
      FROM range(1, 200001) t(k)`);
    await run(`CREATE TABLE supplier AS SELECT
        k::INTEGER AS s_suppkey,
        'Supplier#' || lpad(k::VARCHAR, 9, '0') AS s_name,
        md5(k::VARCHAR)[1:20] AS s_address,
        ${r('k', 20, 25)}::INTEGER AS s_nationkey,
        (10 + ${r('k', 20, 25)}) || '-' || (100 + ${r('k', 21, 900)}) || '-' || (100 + ${r('k', 22, 900)}) || '-' || (1000 + ${r('k', 23, 9000)}) AS s_phone,
        ((${r('k', 24, 1099999)} - 99999) / 100)::DECIMAL(15,2) AS s_acctbal,
        CASE WHEN k % 1000 = 7 THEN 'wake Customer slyly Complaints' ELSE ${words('k', 25, 4)} END AS s_comment
      FROM range(1, 10001) t(k)`);
    // The TPC-H supplier formula: part k is sold by four suppliers, and lineitem picks one of them.
    await run(`CREATE MACRO ps_supp(p, i) AS ((p + i * (10000 // 4 + (p - 1) // 10000)) % 10000 + 1)::INTEGER`);
    await run(`CREATE TABLE partsupp AS SELECT
        p::INTEGER AS ps_partkey, ps_supp(p, i) AS ps_suppkey,
        (1 + ${r('p * 4 + i', 30, 9999)})::INTEGER AS ps_availqty,
        ((100 + ${r('p * 4 + i', 31, 99901)}) / 100)::DECIMAL(15,2) AS ps_supplycost,
        ${words('p * 4 + i', 32, 5)} AS ps_comment
      FROM range(1, 200001) a(p), range(0, 4) b(i)`);
    await run(`CREATE TABLE customer AS SELECT
        k::INTEGER AS c_custkey,
        'Customer#' || lpad(k::VARCHAR, 9, '0') AS c_name,
        md5(k::VARCHAR)[1:16] AS c_address,
        ${r('k', 40, 25)}::INTEGER AS c_nationkey,
        (10 + ${r('k', 40, 25)}) || '-' || (100 + ${r('k', 41, 900)}) || '-' || (100 + ${r('k', 42, 900)}) || '-' || (1000 + ${r('k', 43, 9000)}) AS c_phone,
        ((${r('k', 44, 1099999)} - 99999) / 100)::DECIMAL(15,2) AS c_acctbal,
        ['AUTOMOBILE', 'BUILDING', 'FURNITURE', 'MACHINERY', 'HOUSEHOLD'][1 + ${r('k', 45, 5)}] AS c_mktsegment,
        ${words('k', 46, 5)} AS c_comment
      FROM range(1, 150001) t(k)`);
    // Orders: customers whose key is a multiple of 3 have none (Q22 needs such customers).
    await run(`CREATE TABLE orders_base AS SELECT
        k::INTEGER AS o_orderkey,
        (CASE WHEN ${r('k', 50, 150000)} % 3 = 2 THEN ${r('k', 50, 150000)} ELSE ${r('k', 50, 150000)} + 1 END)::INTEGER AS o_custkey,
        (DATE '1992-01-01' + ${r('k', 51, 2405)}::INTEGER) AS o_orderdate,
        ['1-URGENT', '2-HIGH', '3-MEDIUM', '4-NOT SPECIFIED', '5-LOW'][1 + ${r('k', 52, 5)}] AS o_orderpriority,
        'Clerk#' || lpad((1 + ${r('k', 53, 1000)})::VARCHAR, 9, '0') AS o_clerk,
        0::INTEGER AS o_shippriority,
        CASE WHEN k % 97 = 3 THEN 'carefully special pending requests wake' ELSE ${words('k', 54, 5)} END AS o_comment,
        (1 + ${r('k', 55, 7)})::INTEGER AS lines
      FROM range(1, 1500001) t(k)`);
    await run(`CREATE TABLE lineitem AS SELECT
        o.o_orderkey AS l_orderkey, p AS l_partkey, ps_supp(p, ${r('o.o_orderkey * 8 + n', 61, 4)}) AS l_suppkey, n::INTEGER AS l_linenumber,
        q::DECIMAL(15,2) AS l_quantity,
        (q * ((90000 + ((p // 10) % 20001) + 100 * (p % 1000)) / 100))::DECIMAL(15,2) AS l_extendedprice,
        (${r('o.o_orderkey * 8 + n', 62, 11)} / 100)::DECIMAL(15,2) AS l_discount,
        (${r('o.o_orderkey * 8 + n', 63, 9)} / 100)::DECIMAL(15,2) AS l_tax,
        CASE WHEN receipt <= DATE '1995-06-17' THEN ['R', 'A'][1 + ${r('o.o_orderkey * 8 + n', 64, 2)}] ELSE 'N' END AS l_returnflag,
        CASE WHEN ship > DATE '1995-06-17' THEN 'O' ELSE 'F' END AS l_linestatus,
        ship AS l_shipdate, commit AS l_commitdate, receipt AS l_receiptdate,
        ['DELIVER IN PERSON', 'COLLECT COD', 'NONE', 'TAKE BACK RETURN'][1 + ${r('o.o_orderkey * 8 + n', 65, 4)}] AS l_shipinstruct,
        ['REG AIR', 'AIR', 'RAIL', 'SHIP', 'TRUCK', 'MAIL', 'FOB'][1 + ${r('o.o_orderkey * 8 + n', 66, 7)}] AS l_shipmode,
        ${words('o.o_orderkey * 8 + n', 67, 3)} AS l_comment
      FROM orders_base o, range(1, 8) l(n),
        LATERAL (SELECT (1 + ${r('o.o_orderkey * 8 + n', 60, 200000)})::INTEGER AS p, 1 + ${r('o.o_orderkey * 8 + n', 68, 50)} AS q,
          o.o_orderdate + (1 + ${r('o.o_orderkey * 8 + n', 69, 121)})::INTEGER AS ship,
          o.o_orderdate + (30 + ${r('o.o_orderkey * 8 + n', 70, 61)})::INTEGER AS commit) x,
        LATERAL (SELECT ship + (1 + ${r('o.o_orderkey * 8 + n', 71, 30)})::INTEGER AS receipt) y
      WHERE n <= o.lines`);
    await run(`CREATE TABLE orders AS SELECT
        o.o_orderkey, o.o_custkey,
        CASE WHEN t.f = t.n THEN 'F' WHEN t.f = 0 THEN 'O' ELSE 'P' END AS o_orderstatus,
        t.total::DECIMAL(15,2) AS o_totalprice, o.o_orderdate, o.o_orderpriority, o.o_clerk, o.o_shippriority, o.o_comment
      FROM orders_base o JOIN (
        SELECT l_orderkey, count(*) AS n, count(*) FILTER (WHERE l_linestatus = 'F') AS f,
          sum(l_extendedprice * (1 + l_tax) * (1 - l_discount)) AS total
        FROM lineitem GROUP BY l_orderkey) t ON t.l_orderkey = o.o_orderkey
      ORDER BY o.o_orderkey`);
    const counts: Record<string, number> = {};
    for (const table of ['region', 'nation', 'part', 'supplier', 'partsupp', 'customer', 'orders', 'lineitem']) {
      await run(`COPY ${table} TO '${join(folder, `${table}.parquet`)}' (FORMAT parquet)`);
      counts[table] = Number((await c.runAndReadAll(`SELECT count(*) FROM ${table}`)).getRowsJS()[0]![0]);
    }
    return counts;
  } finally {
    c.closeSync();
    instance.closeSync();
  }
}
