/**
 * The load history is atomic with the Iceberg commit (docs/loading.md "Load history"), on both
 * store backends, with a failure injected at each point of a COPY's commit:
 * - the commit itself fails (the pointer swap): nothing is recorded, so the retry loads the file;
 * - the history write fails: the commit is rolled back with it, so the table has no rows from the
 *   file and the retry loads it once;
 * - the check inside the commit for files loaded meanwhile fails: nothing is committed either;
 * - a bad row under ABORT_STATEMENT: the one-pass load's files are deleted, nothing recorded;
 * - two COPYs of the same file at once: the rows are in the table once.
 */
import t from 'tap';
import { Floe } from '../../index.js';
import type { MetaStore, SqlExecutor } from '../../catalog/store/meta-store.js';
import { onEachBackend } from '../helpers/stores.js';

/** The store with one statement made to fail: the next one matching `failOn.pattern`, once. */
function faultyStore(store: MetaStore): { store: MetaStore; failNext: (pattern: RegExp) => void; pending: () => boolean } {
  let failOn: RegExp | undefined;
  const check = (sql: string): void => {
    if (failOn !== undefined && failOn.test(sql)) {
      failOn = undefined;
      throw Object.assign(new Error('injected store failure'), { code: 'XX000' });
    }
  };
  const wrap = (ex: SqlExecutor): SqlExecutor => ({
    query: async (sql, params) => {
      check(sql);
      return ex.query(sql, params);
    },
  });
  const proxy = new Proxy(store, {
    get(target, prop, receiver) {
      if (prop === 'query') return wrap(target).query;
      if (prop === 'transaction') return <T>(fn: (tx: SqlExecutor) => Promise<T>) => target.transaction((tx) => fn(wrap(tx)));
      const v = Reflect.get(target, prop, receiver) as unknown;
      return typeof v === 'function' ? (v as (...a: unknown[]) => unknown).bind(target) : v;
    },
  });
  return { store: proxy, failNext: (p) => { failOn = p; }, pending: () => failOn !== undefined };
}

await onEachBackend(t, async (t, base) => {
  const faults = faultyStore(base);
  const floe = await Floe.open({ store: faults.store });
  t.teardown(() => floe.close());
  const sql = (text: string) => floe.sql(text);
  const rows = async (text: string) => (await floe.sql(text)).rows;
  const failure = async (p: Promise<unknown>) => {
    const e = await p.then(() => undefined, (x: unknown) => x);
    if (e === undefined) throw new Error('expected a failure');
    return e;
  };
  const admin = { tenantId: 'default', principalId: 'x', roles: ['tenant_admin'] };
  const io = await floe.state.catalog.fileIOFor(admin, 'default');
  await sql('CREATE SCHEMA shop');
  await sql('CREATE STAGE raw');
  const stageUrl = (await rows('SHOW STAGES'))[0]![2] as string;
  const put = (key: string, text: string) => io.write(stageUrl + key, Buffer.from(text), { overwrite: true });
  const snapshots = async (name: string) => (await floe.state.catalog.loadTable(admin, 'default', { namespace: ['shop'], name })).metadata.snapshots.length;
  const history = async (file: string) => (await rows(`SELECT status FROM system.copy_history WHERE file_name = '${file}'`)).length;

  await t.test('the commit fails: nothing recorded, the retry loads', async (t) => {
    await sql('CREATE TABLE shop.a (id bigint)');
    await put('a/1.csv', '1\n2\n');
    faults.failNext(/UPDATE catalog_entities SET metadata_location/);
    const e = await failure(sql('COPY INTO shop.a FROM @raw/a/'));
    t.notOk(faults.pending(), 'the failure was injected');
    t.match(e, { code: 'INTERNAL_ERROR' }, 'a store failure is an internal error to the caller');
    t.equal(await snapshots('a'), 0, 'no snapshot');
    t.equal(await history('@raw/a/1.csv'), 0, 'nothing recorded as loaded');
    t.same((await rows('COPY INTO shop.a FROM @raw/a/')).map((r) => r[1]), ['LOADED'], 'the retry loads the file');
    t.same(await rows('SELECT count(*) FROM shop.a'), [[2]]);
    t.equal(await history('@raw/a/1.csv'), 1);
  });

  await t.test('the history write fails: the commit is rolled back with it', async (t) => {
    await sql('CREATE TABLE shop.b (id bigint)');
    await put('b/1.csv', '1\n2\n3\n');
    faults.failNext(/INSERT INTO copy_history/);
    await failure(sql('COPY INTO shop.b FROM @raw/b/'));
    t.notOk(faults.pending(), 'the failure was injected');
    t.equal(await snapshots('b'), 0, 'the append was not committed');
    t.same(await rows('SELECT count(*) FROM shop.b'), [[0]]);
    t.equal(await history('@raw/b/1.csv'), 0);
    t.same((await rows('COPY INTO shop.b FROM @raw/b/')).map((r) => r[1]), ['LOADED']);
    t.same((await rows('COPY INTO shop.b FROM @raw/b/')).map((r) => r[1]), ['LOAD_SKIPPED'], 'and only once');
    t.same(await rows('SELECT count(*) FROM shop.b'), [[3]]);
  });

  await t.test('the history check inside the commit fails: nothing committed either', async (t) => {
    await sql('CREATE TABLE shop.c (id bigint)');
    await put('c/1.csv', '1\n');
    faults.failNext(/FROM copy_history h JOIN unnest/);
    await failure(sql('COPY INTO shop.c FROM @raw/c/'));
    t.notOk(faults.pending());
    t.equal(await snapshots('c'), 0);
    t.equal(await history('@raw/c/1.csv'), 0);
  });

  await t.test('a bad row under ABORT_STATEMENT: the one-pass load deletes what it wrote', async (t) => {
    await sql('CREATE TABLE shop.f (id bigint, n int)');
    await put('f/1.csv', '1,1\n2,2\n');
    await put('f/2.csv', '3,3\n4,x\n');
    const e = await failure(sql('COPY INTO shop.f FROM @raw/f/'));
    t.match(e, { code: 'LOAD_FILE_ERROR', message: /@raw\/f\/2\.csv at line 2, column 2/ }, 'the checks report the bad row');
    const table = await floe.state.catalog.loadTable(admin, 'default', { namespace: ['shop'], name: 'f' });
    t.same((await io.list(`${table.metadata.location}/data/`)).map((f) => f.location), [], 'no data file left behind');
    t.equal(await snapshots('f'), 0);
    t.equal(await history('@raw/f/1.csv'), 0);
  });

  await t.test('two COPYs of the same files at once load them once', async (t) => {
    await sql('CREATE TABLE shop.e (id bigint)');
    for (let i = 0; i < 4; i++) await put(`e/${i}.csv`, `${i}\n${i + 10}\n`);
    const results = await Promise.allSettled([sql('COPY INTO shop.e FROM @raw/e/'), sql('COPY INTO shop.e FROM @raw/e/')]);
    for (const r of results) {
      if (r.status === 'rejected') t.match(r.reason, { code: 'COMMIT_CONFLICT', message: /another COPY/ }, 'the loser is told, and loaded nothing');
    }
    t.ok(results.some((r) => r.status === 'fulfilled'));
    t.same(await rows('SELECT count(*) FROM shop.e'), [[8]], 'every row once');
    t.equal((await rows("SELECT file_name FROM system.copy_history WHERE table_name = 'default.shop.e'")).length, 4);
    t.same((await rows('COPY INTO shop.e FROM @raw/e/ FORCE = TRUE')).map((r) => r[1]), ['LOADED', 'LOADED', 'LOADED', 'LOADED'], 'FORCE still reloads');
    t.same(await rows('SELECT count(*) FROM shop.e'), [[16]]);
  });

});
