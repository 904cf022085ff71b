/**
 * Where a table or view may keep its files (docs/catalog.md "Table locations"), on both store
 * backends: create, stage-create, register, commit (location, write.data.path and the other
 * location properties), multi-table transactions, views, namespaces and SQL refuse a location that
 * is the warehouse root, a namespace's folder, or overlaps another table's or view's location
 * (400, naming it); siblings whose names share a prefix (`orders`, `orders_old`) and default
 * locations are fine. Rows stored before the rule are taken from the metadata files when needed.
 * On PostgreSQL, two creates at nested locations racing past the early check are serialised by
 * the catalog's location lock: exactly one wins.
 */
import t, { type Test } from 'tap';
import { CAT, createNamespace, createTable, nsPath, sampleSchema, startCatalogServer } from './helpers.js';
import { onEachBackend } from '../helpers/stores.js';

await onEachBackend(t, async (t, store, backend) => {
  const { client, server, warehouse } = await startCatalogServer(t, store);
  const W = `file://${warehouse}`;
  await createNamespace(client, 'db');
  await createNamespace(client, 'db', 'sub');
  const victim = await createTable(client, ['db'], 'victim');
  const victimLocation: string = victim.body.metadata.location;
  t.match(victimLocation, new RegExp(`^${W}/db/victim-[0-9a-f]{32}$`), 'default location: warehouse/namespace/name-uuid');
  const tables = `${CAT}/namespaces/db/tables`;
  const refused = (r: { status: number; body: any; text: string }, location: string, what: string, t: Test): void => {
    t.equal(r.status, 400, `${what}: ${r.text.slice(0, 300)}`);
    t.equal(r.body?.error?.type, 'BadRequestException', `${what}: BadRequestException`);
    t.ok(String(r.body?.error?.message).includes(location), `${what}: the message names ${location}`);
  };

  await t.test('create refuses the warehouse, namespace folders and other tables', async (t) => {
    const parent = W.slice(0, W.lastIndexOf('/'));
    for (const [what, location, named] of [
      ['the warehouse root', W, W],
      ['the warehouse root with a slash', `${W}/`, W],
      ['a folder holding the warehouse', parent, parent],
      ['the namespace folder', `${W}/db`, `${W}/db`],
      ['a nested namespace folder', `${W}/db/sub`, `${W}/db/sub`],
      ['another table\'s location', victimLocation, victimLocation],
      ['another table\'s location, spelled differently', `${victimLocation.replace('file://', 'file://localhost')}//`, victimLocation],
      ['inside another table', `${victimLocation}/data/mine`, victimLocation],
      ['a .. segment', `${W}/db/x/../victim`, '..'],
    ] as const) {
      refused(await client.post(tables, { name: 'bad', schema: sampleSchema(), location }), named, what, t);
    }
    refused(await client.post(tables, { name: 'bad', schema: sampleSchema(), location: W, 'stage-create': true }), W, 'a staged create', t);
    refused(await client.post(tables, { name: 'bad', schema: sampleSchema(), properties: { 'write.data.path': `${W}/db` } }), `${W}/db`, 'write.data.path in a create', t);
    t.equal((await client.get(`${tables}/bad`)).status, 404, 'nothing was created');

    await createTable(client, ['db'], 'orders', { location: `${W}/db/shop/orders` });
    await createTable(client, ['db'], 'orders_old', { location: `${W}/db/shop/orders_old` });
    t.pass('orders and orders_old are siblings, not nested');
    refused(await client.post(tables, { name: 'shop', schema: sampleSchema(), location: `${W}/db/shop` }), `${W}/db/shop/orders`, 'a folder holding other tables', t);
  });

  await t.test('commits that move files onto others are refused, their own moves are not', async (t) => {
    await createTable(client, ['db'], 'mine');
    const commit = (updates: unknown[]) => client.post(`${tables}/mine`, { requirements: [], updates });
    for (const [property, location, named] of [
      ['write.data.path', W, W],
      ['write.data.path', `${W}/db`, `${W}/db`],
      ['write.metadata.path', `${W}/db/sub`, `${W}/db/sub`],
      ['write.object-storage.path', `${victimLocation}/data`, victimLocation],
      ['write.folder-storage.path', `${W}/db/shop`, `${W}/db/shop/orders`],
    ] as const) {
      refused(await commit([{ action: 'set-properties', updates: { [property]: location } }]), named, `${property} = ${location}`, t);
    }
    refused(await commit([{ action: 'set-location', location: victimLocation }]), victimLocation, 'set-location onto another table', t);
    const before = await client.get(`${tables}/mine`);
    t.equal(before.body.metadata.properties['write.data.path'], undefined, 'nothing was committed');

    const own = await commit([{ action: 'set-properties', updates: { 'write.data.path': `${before.body.metadata.location}/data2`, 'write.metadata.path': `${W}/db/mine-metadata` } }]);
    t.equal(own.status, 200, `inside its own location, or a free folder: ${own.text.slice(0, 200)}`);
    refused(await client.post(tables, { name: 'squatter', schema: sampleSchema(), location: `${W}/db/mine-metadata/x` }), `${W}/db/mine-metadata`, 'a create inside the moved metadata path', t);
    t.equal((await commit([{ action: 'set-properties', updates: { owner: 'me' } }])).status, 200, 'a commit that moves nothing');
  });

  await t.test('register and multi-table transactions', async (t) => {
    const again = await client.post(`${CAT}/namespaces/db/register`, { name: 'alias', 'metadata-location': victim.body['metadata-location'] });
    refused(again, victimLocation, 'the same table registered under another name', t);
    const over = await client.post(`${CAT}/namespaces/db/register`, { name: 'victim', 'metadata-location': victim.body['metadata-location'], overwrite: true });
    t.equal(over.status, 200, `re-registering a table over itself: ${over.text.slice(0, 200)}`);

    await createTable(client, ['db'], 'a');
    await createTable(client, ['db'], 'b');
    const tx = await client.post(`${CAT}/transactions/commit`, {
      'table-changes': [
        { identifier: { namespace: ['db'], name: 'a' }, requirements: [], updates: [{ action: 'set-location', location: `${W}/db/pair` }] },
        { identifier: { namespace: ['db'], name: 'b' }, requirements: [], updates: [{ action: 'set-location', location: `${W}/db/pair/inner` }] },
      ],
    });
    refused(tx, `${W}/db/pair`, 'two tables of one transaction moved into each other', t);
    t.not((await client.get(`${tables}/a`)).body.metadata.location, `${W}/db/pair`, 'all or nothing');
  });

  await t.test('views and namespaces', async (t) => {
    const view = (name: string, location?: string) => client.post(`${CAT}/namespaces/db/views`, {
      name, schema: sampleSchema(), properties: {}, ...(location !== undefined ? { location } : {}),
      'view-version': { 'version-id': 1, 'timestamp-ms': Date.now(), 'schema-id': 0, summary: { engine: 'floe' }, 'default-namespace': ['db'], representations: [{ type: 'sql', sql: 'SELECT 1', dialect: 'spark' }] },
    });
    refused(await view('v_root', W), W, 'a view at the warehouse root', t);
    refused(await view('v_victim', `${victimLocation}/v`), victimLocation, 'a view inside a table', t);
    const ok = await view('v');
    t.equal(ok.status, 200, ok.text.slice(0, 200));
    const replaced = await client.post(`${CAT}/namespaces/db/views/v`, { requirements: [], updates: [{ action: 'set-location', location: `${W}/db` }] });
    refused(replaced, `${W}/db`, 'a view moved onto the namespace folder', t);
    refused(await client.post(tables, { name: 'under_view', schema: sampleSchema(), location: `${ok.body.metadata.location}/t` }), ok.body.metadata.location, 'a table inside a view', t);

    // A table outside every namespace folder is fine; a namespace whose folder would lie in it is not.
    await createTable(client, ['db'], 'loose', { location: `${W}/loose` });
    const ns = await client.post(`${CAT}/namespaces`, { namespace: ['loose'], properties: {} });
    t.equal(ns.status, 400, ns.text.slice(0, 300));
    t.match(ns.body.error.message, `${W}/loose`);
    t.equal((await client.post(`${CAT}/namespaces`, { namespace: ['db', 'victim2'], properties: {} })).status, 200, 'other namespaces are fine');
  });

  await t.test('SQL: CREATE TABLE, CTAS and ALTER TABLE go through the same check', async (t) => {
    const token = await server.token();
    const sql = async (text: string) => {
      const r = await server.app.inject({ method: 'POST', url: '/api/query', headers: { authorization: `Bearer ${token}` }, payload: { sql: text } });
      return { status: r.statusCode, body: r.json() as { error?: string; message?: string } };
    };
    for (const text of [
      `CREATE TABLE db.s1 (x int) LOCATION '${W}/db'`,
      `CREATE TABLE db.s2 LOCATION '${victimLocation}/s2' AS SELECT 1 AS x`,
      `ALTER TABLE db.mine SET TBLPROPERTIES ('write.data.path' = '${W}')`,
    ]) {
      const r = await sql(text);
      t.equal(r.status, 400, `${text}: ${JSON.stringify(r.body).slice(0, 300)}`);
      t.match(r.body, { error: 'INVALID_REQUEST', message: /Invalid location/ }, text);
    }
    t.equal((await client.get(`${tables}/s2`)).status, 404, 'CTAS left no table behind');
    const fine = await sql('CREATE TABLE db.s3 AS SELECT 1 AS x');
    t.equal(fine.status, 200, `a default location: ${JSON.stringify(fine.body).slice(0, 200)}`);
  });

  await t.test('rows stored before the rule are taken from the metadata files', async (t) => {
    // As after migration 0012 on an existing catalog: no entity has its locations stored yet.
    await store.query('DELETE FROM catalog_entity_locations');
    await store.query('UPDATE catalog_entities SET locations_of = NULL');
    refused(await client.post(tables, { name: 'late', schema: sampleSchema(), location: `${victimLocation}/late` }), victimLocation, 'a create inside an old table', t);
    const stale = await store.query<{ n: number }>('SELECT count(*)::int AS n FROM catalog_entities WHERE locations_of IS DISTINCT FROM metadata_location');
    t.equal(stale.rows[0]?.n, 0, 'every row is current again');
    // An old table whose metadata file is missing: its path tells where it was.
    await createTable(client, ['db'], 'gone', { location: `${W}/db/gone-here` });
    await store.query('UPDATE catalog_entities SET metadata_location = $2, locations_of = NULL WHERE name = $1', ['gone', `${W}/db/gone-here/metadata/00009-missing.metadata.json`]);
    await store.query('DELETE FROM catalog_entity_locations');
    refused(await client.post(tables, { name: 'late2', schema: sampleSchema(), location: `${W}/db/gone-here/x` }), `${W}/db/gone-here`, 'a create inside a table whose metadata is missing', t);
  });

  await t.test('two creates at nested locations: one wins', { skip: backend === 'pglite' ? 'PGlite runs one transaction at a time' : false }, async (t) => {
    const catalogId = (await store.query<{ id: string }>("SELECT id FROM catalogs WHERE name = 'default'")).rows[0]!.id;
    let release!: () => void;
    const held = new Promise<void>((r) => { release = r; });
    let locked!: () => void;
    const isLocked = new Promise<void>((r) => { locked = r; });
    // Hold the catalog's location lock so that both creates pass their early check and then wait.
    const holder = store.transaction(async (tx) => {
      await tx.query("SELECT pg_advisory_xact_lock(hashtextextended('floe.entity-locations:' || $1::text, 0))", [catalogId]);
      locked();
      await held;
    });
    await isLocked;
    const outer = client.post(tables, { name: 'race_outer', schema: sampleSchema(), location: `${W}/db/race` });
    const inner = client.post(tables, { name: 'race_inner', schema: sampleSchema(), location: `${W}/db/race/inner` });
    // Event-driven: until both wait for the lock (generous bound for a loaded machine).
    const deadline = Date.now() + 120_000;
    for (;;) {
      const waiting = await store.query<{ n: number }>(
        "SELECT count(*)::int AS n FROM pg_locks WHERE locktype = 'advisory' AND NOT granted AND database = (SELECT oid FROM pg_database WHERE datname = current_database())",
      );
      if ((waiting.rows[0]?.n ?? 0) >= 2) break;
      if (Date.now() > deadline) throw new Error('the two creates never waited for the location lock');
      await new Promise((r) => setTimeout(r, 20));
    }
    release();
    await holder;
    const statuses = [(await outer).status, (await inner).status].sort();
    t.same(statuses, [200, 400], 'exactly one of the nested creates is stored');
  });
});
