/**
 * COPY INTO … FROM (SELECT … FROM @stage): transformations (casts, expressions, reordering, a
 * subset of the columns), `$n` for CSV, names for CSV with a header, Parquet and JSON; FILE_FORMAT
 * and PATTERN in the FROM; FILES, ON_ERROR, FORCE (the load history), PURGE and VALIDATION_MODE as
 * for the plain form; bad rows reported with file, line and column; refusals with clear errors.
 */
import t from 'tap';
import { Floe } from '../../index.js';
import { floeErrorOf } from '../helpers/floe-error.js';
import { openStore } from '../../catalog/store/open-store.js';

const store = await openStore({ kind: 'pglite-memory' });
const floe = await Floe.open({ store });
t.teardown(async () => {
  await floe.close();
  await store.close();
});
const sql = (text: string) => floe.sql(text);
const rows = async (text: string) => (await floe.sql(text)).rows;
const failure = (p: Promise<unknown>) => floeErrorOf(p);
const admin = { tenantId: 'default', principalId: 'x', roles: ['tenant_admin'] };
const snapshots = async (name: string) => (await floe.state.catalog.loadTable(admin, 'default', { namespace: ['shop'], name })).metadata.snapshots.length;
const io = await floe.state.catalog.fileIOFor(admin, 'default');
let stageUrl = '';
const put = async (key: string, bytes: string | Buffer) => {
  await io.write(stageUrl + key, typeof bytes === 'string' ? Buffer.from(bytes) : bytes, { overwrite: true });
};
const status = (answer: readonly (readonly unknown[])[]) => answer.map((r) => [r[0], r[1], r[2], r[3]]);

await sql('CREATE SCHEMA shop');
await sql('CREATE STAGE raw');
stageUrl = (await rows('SHOW STAGES'))[0]![2] as string;

await t.test('CSV by position: casts, expressions, reordering, a subset, METADATA$FILENAME', async (t) => {
  await sql('CREATE TABLE shop.orders (id bigint NOT NULL, name string, total decimal(10,2), placed date, src string)');
  // Columns: placed (d/m/Y), name, id, quantity, price, an unused note.
  await put('csv/a.csv', 'placed,name,id,qty,price,note\n01/02/2024,apple,1,3,1.25,x\n02/02/2024, Pear ,2,2,2.50,y\n');
  const r = await rows(`COPY INTO shop.orders (id, name, total, placed, src)
    FROM (SELECT $3::bigint, upper(trim($2)), $4::int * $5::decimal(10,2), strptime($1, '%d/%m/%Y')::date, METADATA$FILENAME
          FROM @raw/csv/ (FILE_FORMAT => (TYPE = CSV, SKIP_HEADER = 1), PATTERN => '.*[.]csv'))`);
  t.same(status(r), [['@raw/csv/a.csv', 'LOADED', 2, 2]]);
  t.same(await rows('SELECT id, name, total, placed, src FROM shop.orders ORDER BY id'), [
    [1, 'APPLE', '3.75', '2024-02-01', '@raw/csv/a.csv'], [2, 'PEAR', '5.00', '2024-02-02', '@raw/csv/a.csv'],
  ]);
  // A subset of the target's columns, reordered, with an alias; the others get their default (NULL).
  const sub = await rows("COPY INTO shop.orders (name, id) FROM (SELECT f.$2, f.$3 FROM @raw/csv/ f) FILE_FORMAT = (TYPE = CSV, SKIP_HEADER = 1) FORCE = TRUE");
  t.same(status(sub), [['@raw/csv/a.csv', 'LOADED', 2, 2]], 'FILE_FORMAT on the COPY applies to the SELECT\'s files');
  t.same(await rows('SELECT id, name, total FROM shop.orders WHERE total IS NULL ORDER BY id'), [[1, 'apple', null], [2, ' Pear ', null]]);
  t.equal(await snapshots('orders'), 2, 'one commit per COPY');
});

await t.test('the load history and FORCE; PURGE', async (t) => {
  const again = await rows("COPY INTO shop.orders (name, id) FROM (SELECT $2, $3 FROM @raw/csv/) FILE_FORMAT = (TYPE = CSV, SKIP_HEADER = 1)");
  t.same(status(again), [['@raw/csv/a.csv', 'LOAD_SKIPPED', 0, 0]], 'a file loaded into the table is skipped, whatever the SELECT');
  await put('purge/p.csv', '7,seven\n');
  const p = await rows('COPY INTO shop.orders (id, name) FROM (SELECT $1::bigint, $2 FROM @raw/purge/) PURGE = TRUE');
  t.same(status(p), [['@raw/purge/p.csv', 'LOADED', 1, 1]]);
  t.same(await rows('LIST @raw/purge/'), [], 'PURGE removed the file');
  t.same(await rows('SELECT name FROM shop.orders WHERE id = 7'), [['seven']]);
});

await t.test('names: CSV with PARSE_HEADER, Parquet and JSON', async (t) => {
  await sql('CREATE TABLE shop.items (sku string, price double, label string)');
  await put('h/a.csv', 'Price,SKU,Name\n1.5,a1,first\n2.5,a2,second\n');
  const r = await rows("COPY INTO shop.items FROM (SELECT sku, price::double * 2, f.name || '!' FROM @raw/h/ (FILE_FORMAT => (TYPE = CSV, PARSE_HEADER = TRUE)) f)");
  t.same(status(r), [['@raw/h/a.csv', 'LOADED', 2, 2]], 'header names, case-insensitive');
  await put('j/a.json', '{"sku": "j1", "p": 10, "tags": ["x", "y"]}\n{"sku": "j2", "p": 20, "tags": []}\n');
  t.same(status(await rows("COPY INTO shop.items FROM (SELECT sku, p / 4, array_to_string(tags, '+') FROM @raw/j/)")), [['@raw/j/a.json', 'LOADED', 2, 2]]);
  await sql("CREATE TABLE shop.src AS SELECT 'q1' AS code, 7.0::DOUBLE AS amount, 'pq' AS what");
  const src = await floe.state.catalog.loadTable(admin, 'default', { namespace: ['shop'], name: 'src' });
  const dataFile = (await io.list(`${src.metadata.location}/data/`)).find((f) => f.location.endsWith('.parquet'))!;
  await put('p/a.parquet', await io.read(dataFile.location));
  t.same(status(await rows('COPY INTO shop.items (label, sku, price) FROM (SELECT $3, CODE, amount + 1 FROM @raw/p/)')), [['@raw/p/a.parquet', 'LOADED', 1, 1]], 'Parquet by name and by position');
  t.same(await rows('SELECT sku, price, label FROM shop.items ORDER BY sku'), [
    ['a1', 3, 'first!'], ['a2', 5, 'second!'], ['j1', 2.5, 'x+y'], ['j2', 5, ''], ['q1', 8, 'pq'],
  ]);
});

await t.test('bad rows: file, line and column; ON_ERROR; VALIDATION_MODE', async (t) => {
  await sql('CREATE TABLE shop.m (id int, amount double, d date)');
  await put('bad/good.csv', '1|1.5|2024-01-01\n');
  // line 2: amount is no number (an expression's cast); line 3: a bad date in a whole-column item (the reader's own check); line 4: one column short.
  await put('bad/bad.csv', '1|1.5|2024-01-01\n2|x|2024-01-02\n3|3.5|2024-13-45\n4|4.5\n5|5.5|2024-01-05\n');
  const q = (opts: string) => `COPY INTO shop.m FROM (SELECT $1::int, $2::double * 1, $3 FROM @raw/bad/ (FILE_FORMAT => (TYPE = CSV, FIELD_DELIMITER = '|'))) ${opts}`;
  const before = await snapshots('m');
  const e = await failure(sql(q('')));
  t.match(e, { code: 'LOAD_FILE_ERROR', message: /@raw\/bad\/bad\.csv at line 2, column 2: the expression for column amount/ });
  t.equal(await snapshots('m'), before, 'nothing committed under ABORT_STATEMENT');
  const v = await rows(q('VALIDATION_MODE = RETURN_ERRORS'));
  t.same(v.map((r) => [r[0], r[1], r[2], r[3]]), [['@raw/bad/bad.csv', 2, 2, 'amount'], ['@raw/bad/bad.csv', 3, 3, '$3'], ['@raw/bad/bad.csv', 4, 3, '$3']],
    'an expression\'s error names the target column; the reader\'s, the file\'s column');
  t.match(v[1]![4], /CAST/);
  t.match(v[2]![4], /MISSING COLUMNS/);
  t.equal(await snapshots('m'), before, 'VALIDATION_MODE loads nothing');
  const cont = await rows(q('ON_ERROR = CONTINUE'));
  t.same(cont.map((r) => [r[0], r[1], r[2], r[3], r[4], r[6], r[7]]), [['@raw/bad/bad.csv', 'PARTIALLY_LOADED', 5, 2, 3, 2, 2], ['@raw/bad/good.csv', 'LOADED', 1, 1, 0, null, null]]);
  t.same(await rows('SELECT id FROM shop.m ORDER BY id'), [[1], [1], [5]]);
  const skip = await rows(q('ON_ERROR = SKIP_FILE FORCE = TRUE'));
  t.same(skip.map((r) => [r[0], r[1], r[3]]), [['@raw/bad/bad.csv', 'LOAD_FAILED', 0], ['@raw/bad/good.csv', 'LOADED', 1]]);
  // A column the file does not have: a whole-file problem, named.
  const missing = await rows("COPY INTO shop.m (id) FROM (SELECT $9::int FROM @raw/bad/) FILE_FORMAT = (FIELD_DELIMITER = '|') FILES = ('good.csv') ON_ERROR = CONTINUE FORCE = TRUE");
  t.match(missing[0], ['@raw/bad/good.csv', 'LOAD_FAILED', 0, 0, 1, /has 3 columns, so \$9 does not exist/]);
});

await t.test('refusals', async (t) => {
  await put('r/a.csv', '1,a\n');
  const c = 'COPY INTO shop.orders (id, name)';
  t.match(await failure(sql(`${c} FROM (SELECT $1 FROM @raw/r/)`)), { code: 'INVALID_PARAMETER', message: /1 expressions for 2 target columns/ });
  t.match(await failure(sql(`${c} FROM (SELECT $1::bigint, count(*) FROM @raw/r/)`)), { code: 'UNSUPPORTED_STATEMENT', message: /aggregates/ });
  t.match(await failure(sql(`${c} FROM (SELECT $1::bigint, (SELECT 1) FROM @raw/r/)`)), { code: 'UNSUPPORTED_STATEMENT', message: /subquery/ });
  t.match(await failure(sql(`${c} FROM (SELECT $1::bigint, read_text('/etc/passwd') FROM @raw/r/)`)), { sqlState: '42501' });
  t.match(await failure(sql(`${c} FROM (SELECT $1::bigint, name FROM @raw/r/)`)), { code: 'INVALID_PARAMETER', message: /PARSE_HEADER/ });
  t.match(await failure(sql(`${c} FROM (SELECT x.$1::bigint, $2 FROM @raw/r/ f)`)), { code: 'INVALID_PARAMETER', message: /alias is f/ });
  t.match(await failure(sql(`${c} FROM (SELECT $1::bigint, $2 FROM @raw/r/ (FILE_FORMAT => 'csv_format'))`)), { code: 'INVALID_PARAMETER', message: /named file formats/ });
  t.match(await failure(sql(`${c} FROM (SELECT $1::bigint, $2 FROM @raw/r/ (PATTERN => '.*')) PATTERN = '.*'`)), { code: 'INVALID_PARAMETER', message: /PATTERN/ });
  t.match(await failure(sql(`${c} FROM (SELECT $1::bigint, $2 FROM @raw/r/) MATCH_BY_COLUMN_NAME = CASE_INSENSITIVE`)), { code: 'INVALID_PARAMETER' });
  t.match(await failure(sql(`${c} FROM (SELECT $1::bigint, $2 + 1 FROM @raw/r/)`)), { sqlState: /^42/ }, 'an expression DuckDB cannot bind fails the statement');
  t.match(await failure(sql(`${c} FROM (SELECT $1::bigint, $2 FROM @raw/../x)`)), { code: 'INVALID_PARAMETER' });
  t.match(await failure(sql('SELECT $1')), { code: 'UNDEFINED_COLUMN' }, '$n outside COPY is no column');
});
