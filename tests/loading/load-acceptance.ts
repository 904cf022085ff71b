/**
 * Issue 19's acceptance, run by `floe sql` as a real process against a server on loopback, on
 * whatever warehouse the caller set up (a `file://` folder or a bucket on RGW): PUT a CSV, a gzip
 * CSV, a multipart CSV and a Parquet file to a stage; COPY INTO loads them; a second COPY loads
 * nothing; FORCE reloads; ON_ERROR modes and VALIDATION_MODE on a file with bad rows; PURGE
 * removes the loaded files from the store itself; GET brings files back. Not a test file itself:
 * copy-on-rgw.test.ts and floe-sql-shell.test.ts call it.
 */
import type { Test } from 'tap';
import { spawn } from 'node:child_process';
import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { DuckDBInstance } from '@duckdb/node-api';
import { CLI } from '../helpers/cli.js';

export interface AcceptanceTarget {
  /** Floe's URL. */
  readonly url: string;
  readonly clientId: string;
  readonly clientSecret: string;
  readonly catalog: string;
  /** A scratch folder of the test's. */
  readonly dir: string;
  /** The files under a stage's folder as the store itself lists them, relative to it. */
  storeFiles(stageUrl: string): Promise<string[]>;
}

export interface ShellRun {
  readonly code: number | null;
  readonly stdout: string;
  readonly stderr: string;
}

/** Runs `floe sql` with `args`; stdin is not a terminal, so no prompt and no progress bar. */
export function floeSql(args: readonly string[], env: Record<string, string> = {}): Promise<ShellRun> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [CLI, 'sql', ...args], { env: { ...process.env, FLOE_CONFIG: '/nonexistent', ...env }, stdio: ['pipe', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    child.stdin.end('');
    child.on('exit', (code) => resolve({ code, stdout, stderr }));
  });
}

/** A multipart-sized CSV: `rows` lines `id,name` (no header), ids from 1000. */
function bigCsv(rows: number): string {
  let s = '';
  for (let i = 0; i < rows; i++) s += `${1000 + i},row number ${i} padded to be a little longer\n`;
  return s;
}

export async function loadAcceptance(t: Test, target: AcceptanceTarget): Promise<void> {
  const base = ['--url', target.url, '--client-id', target.clientId, '--client-secret', target.clientSecret, '--catalog', target.catalog, '--format', 'json'];
  /** Each statement's rows as objects (JSON output is one array per statement, one per line); one process for all. */
  const runAll = async (sql: string): Promise<Record<string, unknown>[][]> => {
    const r = await floeSql([...base, '-c', sql]);
    if (r.code !== 0) throw new Error(`floe sql -c ${sql}: exit ${r.code}: ${r.stderr}`);
    return r.stdout.split('\n').filter((l) => l.trim() !== '').map((l) => JSON.parse(l) as Record<string, unknown>[]);
  };
  const run = async (sql: string): Promise<Record<string, unknown>[]> => (await runAll(sql)).at(-1) ?? [];
  const fileStatus = (rows: Record<string, unknown>[]) => rows.map((r) => [r['file'], r['status'], r['rows_loaded']]);

  const local = join(target.dir, 'acceptance');
  rmSync(local, { recursive: true, force: true });
  mkdirSync(join(local, 'in'), { recursive: true });
  mkdirSync(join(local, 'pq'), { recursive: true });
  mkdirSync(join(local, 'bad'), { recursive: true });
  writeFileSync(join(local, 'in', 'a.csv'), 'id,name\n1,apple\n2,pear\n');
  writeFileSync(join(local, 'in', 'b.csv.gz'), gzipSync('id,name\n3,plum\n'));
  // Above the 5 MiB threshold given below: a multipart upload of 5 MiB parts (S3's smallest), 2 parts.
  const bigRows = 110_000;
  writeFileSync(join(local, 'in', 'big.csv'), `id,name\n${bigCsv(bigRows)}`);
  const duck = await DuckDBInstance.create(':memory:');
  const conn = await duck.connect();
  await conn.run(`COPY (SELECT 4::BIGINT AS id, 'fig' AS name UNION ALL SELECT 5, 'kiwi') TO '${join(local, 'pq', 'c.parquet')}' (FORMAT PARQUET)`);
  conn.closeSync();
  duck.closeSync();
  writeFileSync(join(local, 'bad', 'good.csv'), 'id,amount\n1,1.5\n');
  writeFileSync(join(local, 'bad', 'bad.csv'), 'id,amount\n1,1.5\n2,x\n3\n4,4.5\n5,five\n');

  const stageUrl = String((await run(`CREATE SCHEMA IF NOT EXISTS acc; CREATE TABLE acc.items (id bigint, name string); CREATE TABLE acc.nums (id bigint, amount double);
    CREATE STAGE acc_land FILE_FORMAT = (TYPE = CSV, SKIP_HEADER = 1); SHOW STAGES LIKE 'acc_land'`))[0]!['url']);

  await t.test('floe sql PUTs a CSV, a gzip CSV, a multipart CSV and a Parquet file; no progress bar off a terminal', async (t) => {
    const put = await floeSql([...base, '--format', 'csv', '--multipart-threshold', String(5 * 1024 * 1024), '--part-size', String(5 * 1024 * 1024), '-c',
      `PUT file://${local}/in/* @acc_land/in/;\nPUT file://${local}/pq/*.parquet @acc_land/pq;\nPUT file://${local}/bad/*.csv @acc_land/bad/`]);
    t.equal(put.code, 0, put.stderr);
    t.match(put.stdout, /a\.csv,@acc_land\/in\/a\.csv,23,UPLOADED\n/);
    t.match(put.stdout, /b\.csv\.gz,@acc_land\/in\/b\.csv\.gz,\d+,UPLOADED\n/);
    t.match(put.stdout, /big\.csv,@acc_land\/in\/big\.csv,\d+,UPLOADED \(\d+ parts\)\n/);
    t.match(put.stdout, /c\.parquet,@acc_land\/pq\/c\.parquet,\d+,UPLOADED\n/);
    t.equal(put.stderr, '', 'no progress bar when stderr is not a terminal');
    t.same((await target.storeFiles(stageUrl)).sort(), ['bad/bad.csv', 'bad/good.csv', 'in/a.csv', 'in/b.csv.gz', 'in/big.csv', 'pq/c.parquet'], 'in the store');
  });

  await t.test('COPY INTO loads them; a second COPY loads nothing; FORCE reloads', async (t) => {
    const [csv, parquet, n, firstRows] = await runAll(`COPY INTO acc.items FROM @acc_land/in/; COPY INTO acc.items FROM @acc_land/pq/ FILE_FORMAT = (TYPE = PARQUET);
      SELECT count(*) AS n FROM acc.items; SELECT id, name FROM acc.items WHERE id < 1000 ORDER BY id`);
    t.same(fileStatus(csv!), [['@acc_land/in/a.csv', 'LOADED', 2], ['@acc_land/in/b.csv.gz', 'LOADED', 1], ['@acc_land/in/big.csv', 'LOADED', bigRows]]);
    t.same(fileStatus(parquet!), [['@acc_land/pq/c.parquet', 'LOADED', 2]]);
    t.same(n, [{ n: 5 + bigRows }]);
    t.same(firstRows, [{ id: 1, name: 'apple' }, { id: 2, name: 'pear' }, { id: 3, name: 'plum' }, { id: 4, name: 'fig' }, { id: 5, name: 'kiwi' }]);
    const [csv2, parquet2, n2, forced, n3] = await runAll(`COPY INTO acc.items FROM @acc_land/in/; COPY INTO acc.items FROM @acc_land/pq/ FILE_FORMAT = (TYPE = PARQUET);
      SELECT count(*) AS n FROM acc.items; COPY INTO acc.items FROM @acc_land/in/ FILES = ('a.csv', 'b.csv.gz') FORCE = TRUE; SELECT count(*) AS n FROM acc.items`);
    t.same(fileStatus(csv2!).map((r) => r[1]), ['LOAD_SKIPPED', 'LOAD_SKIPPED', 'LOAD_SKIPPED'], 'the load history');
    t.same(fileStatus(parquet2!), [['@acc_land/pq/c.parquet', 'LOAD_SKIPPED', 0]]);
    t.same(n2, [{ n: 5 + bigRows }], 'nothing loaded twice');
    t.same(fileStatus(forced!), [['@acc_land/in/a.csv', 'LOADED', 2], ['@acc_land/in/b.csv.gz', 'LOADED', 1]]);
    t.same(n3, [{ n: 8 + bigRows }], 'FORCE loaded them again');
  });

  await t.test('bad rows: ABORT_STATEMENT, VALIDATION_MODE, SKIP_FILE, CONTINUE', async (t) => {
    const abort = await floeSql([...base, '-c', 'COPY INTO acc.nums FROM @acc_land/bad/']);
    t.equal(abort.code, 1, 'ON_ERROR = ABORT_STATEMENT (the default) fails the statement');
    t.match(abort.stderr, /bad row in @acc_land\/bad\/bad\.csv at line 3, column 2: .*22P04/);
    const [errors, none] = await runAll('COPY INTO acc.nums FROM @acc_land/bad/ VALIDATION_MODE = RETURN_ERRORS; SELECT count(*) AS n FROM acc.nums');
    t.same(errors!.map((e) => [e['file'], e['line'], e['column'], e['column_name']]), [
      ['@acc_land/bad/bad.csv', 3, 2, 'amount'], ['@acc_land/bad/bad.csv', 4, 2, 'amount'], ['@acc_land/bad/bad.csv', 6, 2, 'amount'],
    ], 'every error, with line and column');
    t.same(none, [{ n: 0 }], 'nothing committed by the abort, nothing loaded by VALIDATION_MODE');
    const [skip, cont, ids] = await runAll('COPY INTO acc.nums FROM @acc_land/bad/ ON_ERROR = SKIP_FILE; COPY INTO acc.nums FROM @acc_land/bad/ ON_ERROR = CONTINUE; SELECT id FROM acc.nums ORDER BY id');
    t.same(fileStatus(skip!), [['@acc_land/bad/bad.csv', 'LOAD_FAILED', 0], ['@acc_land/bad/good.csv', 'LOADED', 1]]);
    t.same(fileStatus(cont!), [['@acc_land/bad/bad.csv', 'PARTIALLY_LOADED', 2], ['@acc_land/bad/good.csv', 'LOAD_SKIPPED', 0]]);
    t.same(ids, [{ id: 1 }, { id: 1 }, { id: 4 }]);
  });

  await t.test('GET brings files back; PURGE removes loaded files from the store', async (t) => {
    const back = join(target.dir, 'back');
    const get = await floeSql([...base, '--format', 'csv', '-c', `GET @acc_land/in/ file://${back}`]);
    t.equal(get.code, 0, get.stderr);
    t.match(get.stdout, /@acc_land\/in\/big\.csv,.*big\.csv,\d+,DOWNLOADED/);
    t.ok(readFileSync(join(back, 'big.csv')).equals(readFileSync(join(local, 'in', 'big.csv'))), 'the multipart file came back whole');
    t.ok(readFileSync(join(back, 'b.csv.gz')).equals(readFileSync(join(local, 'in', 'b.csv.gz'))));
    const [purged, listed] = await runAll("COPY INTO acc.items FROM @acc_land/in/ FILES = ('a.csv', 'b.csv.gz') FORCE = TRUE PURGE = TRUE; LIST @acc_land");
    t.same(purged!.map((r) => [r['file'], r['status']]), [['@acc_land/in/a.csv', 'LOADED'], ['@acc_land/in/b.csv.gz', 'LOADED']]);
    t.same((await target.storeFiles(stageUrl)).sort(), ['bad/bad.csv', 'bad/good.csv', 'in/big.csv', 'pq/c.parquet'], 'the loaded files are gone from the store, the others stay');
    t.same(listed!.map((r) => r['name']), ['acc_land/bad/bad.csv', 'acc_land/bad/good.csv', 'acc_land/in/big.csv', 'acc_land/pq/c.parquet']);
  });
}
