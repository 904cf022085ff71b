/**
 * Escape attempts: user SQL that would reach files, the network, extensions or DuckDB settings is
 * refused with PERMISSION_DENIED (42501) by the planner, whether our grammar parses it (then the IR
 * allowlist refuses it) or not (then `refuseEngineStatement` recognises the DuckDB statement).
 * Nothing here reaches DuckDB: the refusal happens before a fragment exists.
 */
import t from 'tap';
import { FloeError, Parser } from '../../grammar/index.js';
import { bindStatement, checkIsolation, refuseEngineStatement, tableKey } from '../../engine/planner/index.js';
import { tpchFacts, tpchRequest } from './planner-fixtures.js';

const parser = new Parser();

/** TPC-H facts, and another tenant's catalog, which the session answers as forbidden. */
function withOtherTenant(): ReturnType<typeof tpchFacts> {
  const facts = tpchFacts();
  facts.set(tableKey({ catalog: 'other_tenant', namespace: ['sales'], name: 'orders' }), { kind: 'forbidden' });
  return facts;
}

/** The error the planner gives a statement: from parsing, isolation or binding (undefined = accepted). */
function refusal(sql: string, facts = withOtherTenant()): FloeError | undefined {
  const parsed = parser.tryParse(sql);
  if (!parsed.ok) return refuseEngineStatement(sql) ?? parsed.error;
  try {
    const s = parsed.statement;
    if (s.kind === 'Query' || s.kind === 'Explain') {
      const r = bindStatement(s, tpchRequest(parser, facts));
      if (r.kind === 'needs') return undefined;
    } else checkIsolation(s);
    return undefined;
  } catch (e) {
    if (e instanceof FloeError) return e;
    throw e;
  }
}

const ESCAPES: readonly string[] = [
  "SELECT * FROM read_csv('/etc/passwd')",
  "SELECT * FROM read_csv_auto('/etc/passwd')",
  "SELECT * FROM read_parquet('/warehouse/other_tenant/*.parquet')",
  "SELECT * FROM read_json('/etc/x.json')",
  "SELECT * FROM read_text('/etc/passwd')",
  "SELECT * FROM read_blob('/etc/shadow')",
  "SELECT * FROM parquet_scan('/data/x.parquet')",
  "SELECT * FROM parquet_metadata('/data/x.parquet')",
  "SELECT * FROM iceberg_scan('/warehouse/t')",
  "SELECT * FROM sniff_csv('/etc/passwd')",
  "SELECT * FROM query_table('lineitem')",
  "SELECT * FROM query('SELECT * FROM read_text(''/etc/passwd'')')",
  "SELECT * FROM glob('/etc/*')",
  "SELECT getenv('HOME')",
  "SELECT current_setting('memory_limit')",
  "SELECT * FROM duckdb_settings()",
  "SELECT * FROM duckdb_extensions()",
  "SELECT database_name FROM duckdb_databases()",
  "SELECT * FROM pragma_database_list()",
  "SELECT * FROM main.range(3)",
  "SELECT * FROM 'data.csv'",
  "FROM '/etc/passwd'",
  "DESCRIBE '/etc/passwd'",
  "ATTACH '/tmp/evil.db' AS evil",
  "DETACH evil",
  "INSTALL httpfs",
  "LOAD httpfs",
  "FORCE INSTALL httpfs",
  "PRAGMA database_list",
  "COPY lineitem TO '/tmp/out.csv'",
  "COPY (SELECT * FROM lineitem) TO '/tmp/out.parquet' (FORMAT parquet)",
  "COPY lineitem FROM '/etc/passwd'",
  "EXPORT DATABASE '/tmp/dump'",
  "IMPORT DATABASE '/tmp/dump'",
  "CALL pragma_version()",
  "SET enable_external_access = true",
  "SET memory_limit = '100GB'",
  "SET lock_configuration = false",
  "SET GLOBAL allowed_directories = ['/']",
  "RESET threads",
  "CREATE SECRET s3secret (TYPE s3, KEY_ID 'x', SECRET 'y')",
  "CREATE OR REPLACE MACRO m(a) AS a",
  "CREATE TEMP TABLE x AS SELECT 1",
  "SELECT l_comment FROM lineitem WHERE l_comment = getenv('USER')",
  "SELECT (SELECT count(*) FROM read_csv('/etc/passwd')) AS n",
  "WITH f AS (SELECT * FROM read_text('/etc/passwd')) SELECT * FROM f",
  "SELECT * FROM lineitem, LATERAL read_csv(l_comment)",
  "SELECT * FROM lineitem WHERE EXISTS (SELECT 1 FROM read_parquet('x'))",
  "SELECT read_csv_auto('x')",
  "SELECT \"getenv\"('HOME')",
  "SELECT pg_catalog.current_setting('x')",
  "INSERT INTO lineitem SELECT * FROM read_csv('/etc/passwd')",
  "COPY INTO lineitem FROM 'file:///etc/passwd'",
  "COPY INTO lineitem FROM '/etc/passwd'",
  "EXPLAIN SELECT * FROM read_text('/etc/passwd')",
  "SELECT version()",
  "SELECT load_extension('x')",
  'SELECT * FROM "/etc/passwd"',
  'SELECT * FROM "data.csv"',
  'SELECT * FROM tpch."s3://bucket/key.parquet"',
  'SELECT * FROM other_tenant.sales.orders',
];

t.test('escape attempts are refused with 42501', async (t) => {
  t.ok(ESCAPES.length >= 20, `${ESCAPES.length} attempts`);
  for (const sql of ESCAPES) {
    const e = refusal(sql);
    t.equal(e?.sqlState, '42501', `${sql} → ${e?.message ?? 'accepted'}`);
  }
});

t.test('a view whose SQL escapes is refused when a query reads it', async (t) => {
  const facts = tpchFacts();
  facts.set(tableKey({ catalog: 'lake', namespace: ['tpch'], name: 'v_evil' }), { kind: 'view', sql: "SELECT * FROM read_text('/etc/passwd')" });
  facts.set(tableKey({ catalog: 'lake', namespace: ['tpch'], name: 'v_evil2' }), { kind: 'view', sql: "SELECT getenv('HOME') AS h FROM region" });
  t.equal(refusal('SELECT * FROM v_evil', facts)?.sqlState, '42501');
  t.equal(refusal('SELECT h FROM v_evil2', facts)?.sqlState, '42501');
});

t.test('ordinary SQL, Floe settings and generators pass', async (t) => {
  const fine = [
    'SELECT count(*) FROM lineitem',
    "SELECT upper(r_name), length(r_comment), coalesce(r_name, 'x'), date_trunc('month', DATE '2024-05-06') FROM region",
    'SELECT * FROM range(10) AS r(x)',
    'SELECT x FROM generate_series(1, 3) AS g(x)',
    "SET svc.workload_class = 'batch'",
    "SET svc.resource_pool = 'etl'",
    'RESET svc.resource_pool',
    'RESET ALL',
    "COPY INTO lineitem FROM @stage/path/",
    "COPY INTO lineitem FROM 's3://bucket/prefix/'",
    'SELECT row_number() OVER (ORDER BY r_name), lag(r_name) OVER (ORDER BY r_name) FROM region',
    'SELECT current_date, current_timestamp FROM region',
  ];
  for (const sql of fine) t.equal(refusal(sql), undefined, sql);
  t.equal(refuseEngineStatement('SELEC 1'), undefined, 'a plain syntax error stays a syntax error');
  t.equal(refuseEngineStatement('SELECT sum(x FROM t'), undefined);
});
