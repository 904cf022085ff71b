/**
 * Multi-level namespaces in SQL, over real HTTP: a namespace `a.b` and a table in it created through
 * the Iceberg REST routes (as Spark and PyIceberg do) are listed by `GET /api/tables` and
 * `system.tables`, read and written from SQL by path (`a.b.t`, `default.a.b.t`, a quoted level
 * holding a dot), and a name that reads two ways (catalog `a`, namespace `b` — and namespace `a.b`
 * of the current catalog) is refused as ambiguous, never guessed.
 */
import t from 'tap';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { onEachBackend } from './helpers/stores.js';
import { startTestServer } from './helpers/server.js';
import { listenOnLoopback } from './helpers/http.js';

const SCHEMA = {
  type: 'struct', 'schema-id': 0,
  fields: [{ id: 1, name: 'id', type: 'long', required: true }, { id: 2, name: 'note', type: 'string', required: false }],
};
const ns = (...levels: string[]) => levels.map(encodeURIComponent).join('%1F');

await onEachBackend(t, async (t, store) => {
  const server = await startTestServer(store, { keepStore: true });
  t.teardown(() => server.close());
  const token = await server.token();
  const http = await listenOnLoopback(server);
  const sql = async (text: string) => {
    const r = await http.query(token, { sql: text });
    return { status: r.status, body: r.json as { rows?: unknown[][]; columns?: string[]; error?: string; message?: string; sql_state?: string } };
  };
  const rest = async (path: string, body: unknown) => {
    const r = await http.request('POST', `/v1/default${path}`, { token, body });
    t.equal(r.status, 200, `POST ${path}: ${r.text.slice(0, 200)}`);
  };

  // Over REST, as Spark and PyIceberg create them: namespaces a, a.b, and "x.y" (one level with a dot).
  await rest('/namespaces', { namespace: ['a'] });
  await rest('/namespaces', { namespace: ['a', 'b'] });
  await rest('/namespaces', { namespace: ['x.y'] });
  await rest(`/namespaces/${ns('a', 'b')}/tables`, { name: 'events', schema: SCHEMA });
  await rest(`/namespaces/${ns('x.y')}/tables`, { name: 'dotted', schema: SCHEMA });

  await t.test('GET /api/tables and system.tables list tables of nested namespaces', async (t) => {
    const listed = await http.request('GET', '/api/tables', { token });
    t.equal(listed.status, 200);
    const tables = (listed.json as { tables: { catalog: string; schema: string; name: string }[] }).tables;
    t.match(tables, [{ catalog: 'default', schema: 'a.b', name: 'events' }, { catalog: 'default', schema: '"x.y"', name: 'dotted' }]);
    const rows = await sql(`SELECT schema, name FROM system.tables WHERE catalog = 'default' ORDER BY name`);
    t.equal(rows.status, 200, rows.body.message ?? '');
    t.same(rows.body.rows, [['"x.y"', 'dotted'], ['a.b', 'events']]);
    const one = await sql(`SELECT name FROM system.tables WHERE schema = 'a.b'`);
    t.same(one.body.rows, [['events']]);
    const schemas = await sql(`SELECT schema FROM system.namespaces WHERE catalog = 'default' ORDER BY schema`);
    t.same(schemas.body.rows, [['"x.y"'], ['a'], ['a.b']]);
    t.same((await sql('SHOW SCHEMAS')).body.rows, [['"x.y"'], ['a'], ['a.b']]);
    t.same((await sql('SHOW TABLES IN a.b')).body.rows, [['events']]);
  });

  await t.test('SQL reads and writes a table of a nested namespace by its path', async (t) => {
    t.equal((await sql(`INSERT INTO a.b.events VALUES (1, 'one'), (2, 'two')`)).status, 200);
    t.same((await sql('SELECT id, note FROM a.b.events ORDER BY id')).body.rows, [[1, 'one'], [2, 'two']]);
    t.same((await sql('SELECT count(*) FROM default.a.b.events')).body.rows, [[2]], 'catalog-qualified path');
    t.same((await sql('SELECT e.note FROM "a"."b".events AS e WHERE e.id = 2')).body.rows, [['two']], 'quoted levels');
    t.equal((await sql(`UPDATE a.b.events SET note = 'uno' WHERE id = 1`)).status, 200);
    t.equal((await sql('DELETE FROM default.a.b.events WHERE id = 2')).status, 200);
    t.same((await sql('SELECT id, note FROM a.b.events')).body.rows, [[1, 'uno']]);
    const described = await sql('DESCRIBE a.b.events');
    t.same(described.body.rows?.map((r) => r[0]), ['id', 'note']);
    t.equal((await sql('CREATE TABLE a.b.more (k int)')).status, 200, 'CREATE TABLE in a nested namespace');
    t.same((await sql('SHOW TABLES IN default.a.b')).body.rows, [['events'], ['more']]);
    // A quoted part is exactly one level: "x.y" is the namespace x.y, not x then y.
    t.equal((await sql(`INSERT INTO "x.y".dotted VALUES (7, 'seven')`)).status, 200);
    t.same((await sql('SELECT id FROM "x.y".dotted')).body.rows, [[7]]);
    const missing = await sql('SELECT * FROM x.y.dotted');
    t.match(missing.body, { error: 'UNDEFINED_TABLE', message: 'table or view does not exist: x.y.dotted' }, 'x.y.dotted is catalog x (there is none) or namespace x.y (two levels), not the one level "x.y"');
  });

  await t.test('a name that reads two ways is an error, never a guess', async (t) => {
    // A catalog named a with a namespace b makes a.b.events read two ways.
    const warehouse = mkdtempSync(join(tmpdir(), 'floe-catalog-a-'));
    t.teardown(() => rmSync(warehouse, { recursive: true, force: true }));
    const created = await http.request('POST', '/v1/catalogs', { token, body: { name: 'a', 'warehouse-location': `file://${warehouse}` } });
    t.equal(created.status, 201, `catalog a: ${created.text.slice(0, 200)}`);
    const b = await http.request('POST', '/v1/a/namespaces', { token, body: { namespace: ['b'] } });
    t.equal(b.status, 200, `namespace b of catalog a: ${b.text.slice(0, 200)}`);
    for (const text of ['SELECT * FROM a.b.events', `INSERT INTO a.b.events VALUES (3, 'x')`, 'DESCRIBE a.b.events', 'SHOW TABLES IN a.b']) {
      const r = await sql(text);
      t.equal(r.status, 400, text);
      t.match(r.body, { error: 'AMBIGUOUS_NAME', sql_state: '42P09', message: /ambiguous.*namespace b of catalog a.*namespace a\.b of the current catalog default/ }, text);
    }
    t.same((await sql('SELECT id FROM default.a.b.events')).body.rows, [[1]], 'the catalog-qualified path still reads one way');
  });
});
