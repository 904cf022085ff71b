/**
 * `query(sql, params, { prepared: true })` on both store backends: the same rows as the plain
 * statement, on the pool and in a transaction, with parameters changing between runs, two texts
 * side by side, and after the table's schema changed. On PostgreSQL the statement really is a
 * named prepared statement of its connection (`pg_prepared_statements`).
 */
import t from 'tap';
import { onEachBackend } from './helpers/stores.js';

await onEachBackend(t, async (t, store, backend) => {
  await store.exec(`CREATE TABLE prep_probe (k text PRIMARY KEY, v integer NOT NULL)`);
  await store.query(`INSERT INTO prep_probe (k, v) VALUES ('a', 1), ('b', 2), ('c', 3)`);
  const byKey = 'SELECT k, v FROM prep_probe WHERE k = $1';
  const above = 'SELECT k FROM prep_probe WHERE v > $1 ORDER BY k';

  await t.test('prepared runs answer as plain ones, parameters changing, two texts side by side', async (t) => {
    for (const k of ['a', 'b', 'zz', 'c', 'a']) {
      const plain = await store.query(byKey, [k]);
      const prepared = await store.query(byKey, [k], { prepared: true });
      t.same(prepared.rows, plain.rows, `k = ${k}`);
      t.same((await store.query(above, [k === 'zz' ? 0 : 1], { prepared: true })).rows.map((r) => r.k), k === 'zz' ? ['a', 'b', 'c'] : ['b', 'c']);
    }
    // Many at once: the pool hands them to several connections, each preparing its own.
    const all = await Promise.all(Array.from({ length: 40 }, (_, i) => store.query<{ v: number }>(byKey, [['a', 'b', 'c'][i % 3]], { prepared: true })));
    t.same(all.map((r) => r.rows[0]?.v), Array.from({ length: 40 }, (_, i) => (i % 3) + 1));
  });

  await t.test('in a transaction, and (PostgreSQL) prepared on its connection', async (t) => {
    const names = await store.transaction(async (tx) => {
      t.same((await tx.query(byKey, ['b'], { prepared: true })).rows, [{ k: 'b', v: 2 }]);
      await tx.query(`UPDATE prep_probe SET v = 20 WHERE k = $1`, ['b']);
      t.same((await tx.query(byKey, ['b'], { prepared: true })).rows, [{ k: 'b', v: 20 }], 'sees the transaction\'s own write');
      return backend === 'postgres' ? (await tx.query<{ name: string; statement: string }>('SELECT name, statement FROM pg_prepared_statements')).rows : [];
    });
    if (backend === 'postgres') {
      const mine = names.filter((n) => n.statement === byKey);
      t.equal(mine.length, 1, 'the connection holds the statement prepared once');
      t.match(mine[0]?.name, /^floe_[0-9a-f]{24}$/);
    }
    t.same((await store.query(byKey, ['b'], { prepared: true })).rows, [{ k: 'b', v: 20 }], 'committed');
  });

  await t.test('after the table changed shape, the prepared statement is planned afresh', async (t) => {
    await store.exec(`ALTER TABLE prep_probe ADD COLUMN note text`);
    await store.query(`INSERT INTO prep_probe (k, v, note) VALUES ('d', 4, 'new')`);
    t.same((await store.query(byKey, ['d'], { prepared: true })).rows, [{ k: 'd', v: 4 }]);
    t.same((await store.query(above, [3], { prepared: true })).rows.map((r) => r.k), ['b', 'd']);
  });
});
