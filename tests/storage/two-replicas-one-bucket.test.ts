/**
 * Two Floe instances on one PostgreSQL database and one RGW bucket, as two replicas would run
 * (each with its own store connection pool, metadata caches and file cache): sixteen writers split
 * across both insert into one table at once, every acknowledged INSERT is there afterwards, and
 * each instance reads what the other wrote. Skipped without PostgreSQL locally, failed in CI.
 */
import t from 'tap';
import { Floe } from '../../index.js';
import { openStore } from '../../catalog/store/open-store.js';
import { onRgw } from '../helpers/rgw.js';
import { createPostgresDatabase, POSTGRES_ADMIN_URL } from '../helpers/stores.js';

const WRITERS = 16;
const INSERTS_PER_WRITER = 2;

await onRgw(t, 'two replicas, one bucket', async (t, rgw) => {
  const db = await createPostgresDatabase();
  if (db === undefined) {
    if (process.env.CI === 'true') t.fail(`PostgreSQL is not reachable at ${POSTGRES_ADMIN_URL} (required in CI)`);
    else await t.test('two replicas', { skip: 'PostgreSQL is not reachable at 127.0.0.1:5432' }, async () => {});
    return;
  }
  t.teardown(() => db.drop());
  await rgw.createBucket('shared');
  const storeA = await openStore({ kind: 'postgres', connectionString: db.url, poolSize: 8 });
  const a = await Floe.open({ store: storeA });
  t.teardown(async () => {
    await a.close();
    await storeA.close();
  });
  const storeB = await openStore({ kind: 'postgres', connectionString: db.url, poolSize: 8 });
  const b = await Floe.open({ store: storeB });
  t.teardown(async () => {
    await b.close();
    await storeB.close();
  });

  const admin = { tenantId: 'default', principalId: 'test', roles: ['tenant_admin'] };
  await a.state.catalog.createCatalog(admin, {
    name: 'lake', warehouseLocation: 's3://shared/wh',
    storage: {
      profile: { type: 's3', bucket: 'shared', keyPrefix: 'wh', region: rgw.region, endpoint: rgw.endpoint, pathStyleAccess: true, credentialSource: 'access-key' },
      secret: { type: 's3-keys', accessKeyId: rgw.accessKeyId, secretAccessKey: rgw.secretAccessKey },
    },
  });
  await a.sql('CREATE SCHEMA lake.app');
  await b.sql('CREATE TABLE lake.app.events (writer int, n int)');
  t.same((await a.sql('SELECT count(*) FROM lake.app.events')).rows, [[0]], 'A sees the table B created');

  const acknowledged: [number, number][] = [];
  const failures: unknown[] = [];
  await Promise.all(Array.from({ length: WRITERS }, (_, w) => (async () => {
    const floe = w % 2 === 0 ? a : b;
    for (let n = 0; n < INSERTS_PER_WRITER; n++) {
      try {
        await floe.sql(`INSERT INTO lake.app.events VALUES (${w}, ${n})`);
        acknowledged.push([w, n]);
      } catch (e) {
        failures.push(e);
      }
    }
  })()));
  t.same(failures, [], 'no write failed');
  const expected = acknowledged.map(([w, n]) => [w, n]).sort((x, y) => x[0]! - y[0]! || x[1]! - y[1]!);
  t.same((await a.sql('SELECT writer, n FROM lake.app.events ORDER BY writer, n')).rows, expected, 'A reads every acknowledged insert');
  t.same((await b.sql('SELECT writer, n FROM lake.app.events ORDER BY writer, n')).rows, expected, 'so does B');
  const snapshots = (await a.state.catalog.loadTable(admin, 'lake', { namespace: ['app'], name: 'events' })).metadata.snapshots.length;
  t.equal(snapshots, WRITERS * INSERTS_PER_WRITER, 'one snapshot per acknowledged insert');

  await b.sql('INSERT INTO lake.app.events VALUES (99, 0)');
  t.same((await a.sql('SELECT count(*) FROM lake.app.events WHERE writer = 99')).rows, [[1]], 'a write through B is read through A at once');
});
