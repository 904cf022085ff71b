/**
 * COPY INTO from a stage on a file:// warehouse, on both store backends: CSV (plain and gzip),
 * Parquet and JSON into one table; the load history (a second COPY loads nothing, FORCE reloads);
 * ON_ERROR ABORT_STATEMENT / CONTINUE / SKIP_FILE on a file with bad rows; VALIDATION_MODE; PURGE;
 * FILES, PATTERN and column lists; the bad inputs (truncated gzip, empty file, over the size cap,
 * wrong column count, type mismatch) with file, line and column; one commit per COPY, none on abort.
 */
import t from 'tap';
import { gzipSync } from 'node:zlib';
import { Floe } from '../../index.js';
import { floeErrorOf } from '../helpers/floe-error.js';
import { currentSnapshot } from '../../catalog/iceberg/table-metadata.js';
import { onEachBackend } from '../helpers/stores.js';

await onEachBackend(t, async (t, store) => {
  const floe = await Floe.open({ store, config: (c) => ({ ...c, loading: { ...c.loading, max_file_bytes: 4096 } }) });
  t.teardown(() => floe.close());
  const sql = (text: string) => floe.sql(text);
  const rows = async (text: string) => (await floe.sql(text)).rows;
  const failure = (p: Promise<unknown>) => floeErrorOf(p);
  const admin = { tenantId: 'default', principalId: 'x', roles: ['tenant_admin'] };
  const snapshots = async (name: string) => (await floe.state.catalog.loadTable(admin, 'default', { namespace: ['shop'], name })).metadata.snapshots.length;
  let stageUrl = '';
  const put = async (key: string, bytes: string | Buffer) => {
    const io = await floe.state.catalog.fileIOFor(admin, 'default');
    await io.write(stageUrl + key, typeof bytes === 'string' ? Buffer.from(bytes) : bytes, { overwrite: true });
  };
  const status = (answer: readonly (readonly unknown[])[]) => answer.map((r) => [r[0], r[1], r[2], r[3]]);

  await sql('CREATE SCHEMA shop');
  await sql('CREATE TABLE shop.orders (id bigint NOT NULL, name string, amount decimal(10,2), placed date)');
  await sql("CREATE STAGE raw FILE_FORMAT = (TYPE = CSV, SKIP_HEADER = 1)");
  stageUrl = (await rows('SHOW STAGES'))[0]![2] as string;

  await t.test('CSV, gzip CSV, Parquet and JSON in one table; one commit per COPY', async (t) => {
    await put('csv/a.csv', 'id,name,amount,placed\n1,apple,1.25,2024-01-01\n2,"pear, green",2.50,2024-01-02\n');
    await put('csv/b.csv.gz', gzipSync('id,name,amount,placed\n3,plum,,2024-01-03\n'));
    const r = await rows('COPY INTO shop.orders FROM @raw/csv/');
    t.same(status(r), [['@raw/csv/a.csv', 'LOADED', 2, 2], ['@raw/csv/b.csv.gz', 'LOADED', 1, 1]]);
    t.equal(await snapshots('orders'), 1, 'one commit for two files');
    // Parquet and JSON written by DuckDB itself (a table's own Iceberg data file would do as well).
    await sql("CREATE TABLE shop.src AS SELECT 4::BIGINT AS ID, 'fig' AS name, 4.5 AS amount, DATE '2024-01-04' AS placed");
    const src = await floe.state.catalog.loadTable(admin, 'default', { namespace: ['shop'], name: 'src' });
    const io = await floe.state.catalog.fileIOFor(admin, 'default');
    const dataFile = (await io.list(`${src.metadata.location}/data/`)).find((f) => f.location.endsWith('.parquet'))!;
    await put('p/x.parquet', await io.read(dataFile.location));
    await put('j/y.json', '{"id": 5, "name": "kiwi", "amount": 5.75, "placed": "2024-01-05"}\n{"id": 6, "name": null, "placed": "2024-01-06"}\n');
    t.same(status(await rows('COPY INTO shop.orders FROM @raw/p/ FILE_FORMAT = (TYPE = PARQUET)')), [['@raw/p/x.parquet', 'LOADED', 1, 1]], 'Parquet by column name, case-insensitive');
    t.same(status(await rows('COPY INTO shop.orders FROM @raw/j/ FILE_FORMAT = (TYPE = JSON)')), [['@raw/j/y.json', 'LOADED', 2, 2]], 'JSON, the stage\'s CSV options left out');
    t.same(await rows('SELECT id, name, amount, placed FROM shop.orders ORDER BY id'), [
      [1, 'apple', '1.25', '2024-01-01'], [2, 'pear, green', '2.50', '2024-01-02'], [3, 'plum', null, '2024-01-03'],
      [4, 'fig', '4.50', '2024-01-04'], [5, 'kiwi', '5.75', '2024-01-05'], [6, null, null, '2024-01-06'],
    ]);
    t.equal(await snapshots('orders'), 3);
  });

  await t.test('load history: a second COPY loads nothing, FORCE reloads; system.copy_history', async (t) => {
    const again = await rows('COPY INTO shop.orders FROM @raw/csv/');
    t.same(status(again), [['@raw/csv/a.csv', 'LOAD_SKIPPED', 0, 0], ['@raw/csv/b.csv.gz', 'LOAD_SKIPPED', 0, 0]]);
    t.equal(await snapshots('orders'), 3, 'nothing committed');
    await put('csv/c.csv', 'id,name,amount,placed\n7,lime,7,2024-01-07\n');
    t.same(status(await rows('COPY INTO shop.orders FROM @raw/csv/')).map((r) => r[1]), ['LOADED', 'LOAD_SKIPPED', 'LOAD_SKIPPED'], 'only the new file');
    t.same(status(await rows("COPY INTO shop.orders FROM @raw/csv/ FILES = ('a.csv') FORCE = TRUE")), [['@raw/csv/a.csv', 'LOADED', 2, 2]]);
    t.same(await rows('SELECT count(*) FROM shop.orders WHERE id = 1'), [[2]], 'FORCE loaded it again');
    await put('csv/c.csv', 'id,name,amount,placed\n7,lime,7,2024-01-07\n8,lemon,8,2024-01-08\n');
    t.same(status(await rows("COPY INTO shop.orders FROM @raw/csv/ PATTERN = '.*c[.]csv'")), [['@raw/csv/c.csv', 'LOADED', 2, 2]], 'a changed file is new');
    const h = await rows("SELECT file_name, status, rows_loaded FROM system.copy_history WHERE table_name = 'default.shop.orders' ORDER BY loaded_at, file_name");
    t.ok(h.length >= 6);
    t.same(h[0], ['@raw/csv/a.csv', 'LOADED', 2]);
  });

  await t.test('bad rows: ABORT_STATEMENT loads nothing, CONTINUE and SKIP_FILE as documented, VALIDATION_MODE reports all', async (t) => {
    await sql('CREATE TABLE shop.t (id bigint, amount double, d date)');
    await put('bad/good.csv', 'id,amount,d\n1,1.5,2024-01-01\n');
    await put('bad/bad.csv', 'id,amount,d\n1,1.5,2024-01-01\n2,x,2024-01-02\n3,3.5\n4,4.5,2024-01-04\n5,5.5,notadate\n');
    const before = await snapshots('t');
    const e = await failure(sql('COPY INTO shop.t FROM @raw/bad/'));
    t.match(e, { code: 'LOAD_FILE_ERROR', sqlState: '22P04', message: /@raw\/bad\/bad\.csv at line 3, column 2: CAST: .*"x"/ });
    t.equal(await snapshots('t'), before, 'nothing committed under ABORT_STATEMENT');
    const v = await rows('COPY INTO shop.t FROM @raw/bad/ VALIDATION_MODE = RETURN_ERRORS');
    t.same(v.map((r) => [r[0], r[1], r[2], r[3]]), [['@raw/bad/bad.csv', 3, 2, 'amount'], ['@raw/bad/bad.csv', 4, 3, 'd'], ['@raw/bad/bad.csv', 6, 3, 'd']]);
    t.match(v[1]![4], /MISSING COLUMNS/);
    t.equal(await snapshots('t'), before, 'VALIDATION_MODE loads nothing');
    const skip = await rows('COPY INTO shop.t FROM @raw/bad/ ON_ERROR = SKIP_FILE');
    t.same(skip.map((r) => [r[0], r[1], r[3], r[4], r[6], r[7]]), [['@raw/bad/bad.csv', 'LOAD_FAILED', 0, 3, 3, 2], ['@raw/bad/good.csv', 'LOADED', 1, 0, null, null]]);
    t.same(await rows('SELECT count(*) FROM shop.t'), [[1]]);
    const cont = await rows('COPY INTO shop.t FROM @raw/bad/ ON_ERROR = CONTINUE');
    t.same(cont.map((r) => [r[0], r[1], r[2], r[3], r[4]]), [['@raw/bad/bad.csv', 'PARTIALLY_LOADED', 5, 2, 3], ['@raw/bad/good.csv', 'LOAD_SKIPPED', 0, 0, 0]], 'good.csv is in the history already');
    t.same(await rows('SELECT id FROM shop.t ORDER BY id'), [[1], [1], [4]]);
  });

  await t.test('whole-file problems: truncated gzip, empty file, over the size cap; PURGE', async (t) => {
    await sql('CREATE TABLE shop.f (id bigint)');
    await put('files/trunc.csv.gz', gzipSync('id\n' + '1\n'.repeat(1000)).subarray(0, 30));
    await put('files/empty.csv', '');
    await put('files/big.csv', 'id\n' + '1\n'.repeat(3000));
    await put('files/ok.csv', 'id\n42\n');
    t.match(await failure(sql("COPY INTO shop.f FROM @raw/files/ FILES = ('trunc.csv.gz')")), { code: 'LOAD_FILE_UNREADABLE', message: /trunc\.csv\.gz: not a complete gzip file/ });
    t.match(await failure(sql("COPY INTO shop.f FROM @raw/files/ FILES = ('empty.csv')")), { code: 'LOAD_FILE_UNREADABLE', message: /empty/ });
    t.match(await failure(sql("COPY INTO shop.f FROM @raw/files/ FILES = ('big.csv')")), { code: 'LOAD_FILE_TOO_LARGE', message: /over the limit of 4096/ });
    t.match(await failure(sql("COPY INTO shop.f FROM @raw/files/ FILES = ('nope.csv')")), { code: 'NOT_FOUND' });
    t.match(await failure(sql("COPY INTO shop.f FROM @raw/files/ FILES = ('../bad/good.csv')")), { code: 'INVALID_PARAMETER' });
    const r = await rows('COPY INTO shop.f FROM @raw/files/ ON_ERROR = CONTINUE PURGE = TRUE');
    t.same(r.map((x) => [x[0], x[1], x[3]]), [
      ['@raw/files/big.csv', 'LOAD_FAILED', 0], ['@raw/files/empty.csv', 'LOAD_FAILED', 0], ['@raw/files/ok.csv', 'LOADED', 1], ['@raw/files/trunc.csv.gz', 'LOAD_FAILED', 0],
    ]);
    t.same((await rows('LIST @raw/files/')).map((x) => x[0]), ['raw/files/big.csv', 'raw/files/empty.csv', 'raw/files/trunc.csv.gz'], 'PURGE removed what loaded');
    t.same(await rows('SELECT id FROM shop.f'), [[42]]);
  });

  await t.test('column lists, the user stage, refusals', async (t) => {
    await sql('CREATE TABLE shop.c (id bigint, name string, note string)');
    await put('cols/a.csv', 'x,1\ny,2\n');
    t.same(status(await rows("COPY INTO shop.c (name, id) FROM @raw/cols/ FILE_FORMAT = (SKIP_HEADER = 0)")), [['@raw/cols/a.csv', 'LOADED', 2, 2]]);
    t.same(await rows('SELECT id, name, note FROM shop.c ORDER BY id'), [[1, 'x', null], [2, 'y', null]]);
    await put('cols/semi.txt', 'id;name;note\n3;"a;b";n\n');
    t.same(status(await rows("COPY INTO shop.c FROM @raw/cols/semi.txt FILE_FORMAT = (TYPE = CSV, FIELD_DELIMITER = ';', SKIP_HEADER = 1)")), [['@raw/cols/semi.txt', 'LOADED', 1, 1]]);
    t.same(await rows('SELECT name FROM shop.c WHERE id = 3'), [['a;b']]);
    await put('named/h.csv', 'NOTE,extra,ID\nhello,zzz,9\nbye,,x\n');
    t.match(await failure(sql('COPY INTO shop.c FROM @raw/named/ MATCH_BY_COLUMN_NAME = CASE_INSENSITIVE')), { code: 'INVALID_PARAMETER', message: /PARSE_HEADER/ });
    const byName = await rows('COPY INTO shop.c FROM @raw/named/ FILE_FORMAT = (PARSE_HEADER = TRUE, SKIP_HEADER = 0) MATCH_BY_COLUMN_NAME = CASE_INSENSITIVE ON_ERROR = CONTINUE');
    t.same(byName.map((r) => [r[0], r[1], r[2], r[3], r[6], r[7]]), [['@raw/named/h.csv', 'PARTIALLY_LOADED', 2, 1, 3, 3]], 'CSV by header names; a bad value reported at its file column');
    t.same(await rows('SELECT id, name, note FROM shop.c WHERE id = 9'), [[9, null, 'hello']]);
    t.match(await failure(sql('COPY INTO shop.c FROM @raw FILE_FORMAT = (TYPE = XML)')), { code: 'INVALID_PARAMETER' });
    t.match(await failure(sql('COPY INTO shop.c FROM @raw FILE_FORMAT = (TYPE = PARQUET, FIELD_DELIMITER = \';\')')), { code: 'INVALID_PARAMETER', message: /FIELD_DELIMITER/ });
    t.match(await failure(sql("COPY INTO shop.c FROM 'file:///etc/'")), { sqlState: '42501' });
    t.match(await failure(sql('COPY INTO shop.nope FROM @raw')), { code: 'UNDEFINED_TABLE' });
    t.match(await failure(sql('COPY INTO shop.c FROM @nostage')), { code: 'NOT_FOUND' });
    t.match(await failure(sql('COPY INTO shop.c FROM @raw/../x')), { code: 'INVALID_PARAMETER' });
    t.same(await rows('COPY INTO shop.c FROM @~'), [], 'an empty user stage: nothing to load');
  });
});
