/**
 * The metadata store lost in the middle of a commit's COMMIT, on a real PostgreSQL reached through
 * a proxy that reads the wire protocol (tests/helpers/pg-fault-proxy.ts) and breaks the connection
 * at the COMMIT of the transaction that swapped the table's pointer:
 *
 * - the COMMIT forwarded and answered, the answer dropped: the server committed, Floe cannot know;
 * - the COMMIT never forwarded: the server rolls the transaction back when the connection closes.
 *
 * Either way Floe answers what it knows, that the outcome is unknown: /v1 500
 * CommitStateUnknownException (Iceberg REST's answer; the written metadata file is kept, since it
 * may now be the table's), /api COMMIT_STATE_UNKNOWN (500, SQLSTATE 08007). A client that reloads
 * finds a consistent table, with or without the change, and its retry is refused (the change is
 * there, 409) or goes through (it is not, 200). tests/catalog/commit-state-unknown.test.ts covers
 * the same answers with a store wrapper on both backends; this one proves them on the wire.
 */
import t from 'tap';
import { readdirSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { openStore } from '../../catalog/store/open-store.js';
import { startPgFaultProxy } from '../helpers/pg-fault-proxy.js';
import { createPostgresDatabase, POSTGRES_ADMIN_URL } from '../helpers/stores.js';
import { CAT, appendCommit, createNamespace, createTable, startCatalogServer } from './helpers.js';

/** The statement that swaps a table's pointer (catalog/rest/store.ts `swapMetadataLocation`). */
const POINTER_SWAP = /^\s*UPDATE catalog_entities SET metadata_location/;

const db = await createPostgresDatabase();
if (db === undefined && process.env.CI === 'true') t.fail(`PostgreSQL is not reachable at ${POSTGRES_ADMIN_URL} (required in CI)`);

t.test('a commit whose COMMIT is lost on the wire to PostgreSQL', { skip: db === undefined ? 'PostgreSQL is not reachable at 127.0.0.1:5432' : false }, async (t) => {
  if (db === undefined) return;
  const target = new URL(db.url);
  const proxy = await startPgFaultProxy(target.hostname, Number(target.port || 5432));
  const store = await openStore({ kind: 'postgres', connectionString: proxy.via(db.url), poolSize: 4 });
  t.teardown(async () => {
    await store.close();
    await proxy.close();
    await db.drop();
  });
  const { server, client } = await startCatalogServer(t, store);
  await createNamespace(client, 'db');
  const created = await createTable(client, ['db'], 't');
  const url = `${CAT}/namespaces/db/tables/t`;
  const metadataDir = `${fileURLToPath(created.body.metadata.location)}/metadata`;
  const metadataFiles = (): string[] => readdirSync(metadataDir).filter((f) => f.endsWith('.metadata.json')).sort();
  const fileOf = (location: string): string => location.slice(location.lastIndexOf('/') + 1);

  await t.test('the COMMIT reaches PostgreSQL, its answer is lost', async (t) => {
    const before = metadataFiles();
    const lost = proxy.interruptCommit('lose-answer', POINTER_SWAP);
    const change = appendCommit(created.body, 1n);
    const r = await client.post(url, change);
    t.equal(r.status, 500, '500');
    t.equal(r.body.error.type, 'CommitStateUnknownException');
    t.match(r.body.error.message, /^Commit state unknown: the metadata store failed while committing/);
    t.equal((await lost.hit).serverTag, 'COMMIT', 'the server had committed');

    const after = await client.get(url);
    t.equal(after.status, 200, 'the table loads');
    const written = metadataFiles().filter((f) => !before.includes(f));
    t.equal(written.length, 1, 'the commit wrote one metadata file, and it is kept');
    t.equal(fileOf(after.body['metadata-location']), written[0], 'the table points at it: the commit happened');
    t.equal(BigInt(after.body.metadata['current-snapshot-id']), 1n, 'with the new snapshot');
    const retried = await client.post(url, change);
    t.equal(retried.status, 409, 'the client\'s retry is refused: its change is already there');
    t.equal(retried.body.error.type, 'CommitFailedException');
  });

  await t.test('the COMMIT never reaches PostgreSQL', async (t) => {
    const current = (await client.get(url)).body;
    const before = metadataFiles();
    const dropped = proxy.interruptCommit('drop-before-forward', POINTER_SWAP);
    const change = appendCommit(current, 2n);
    const r = await client.post(url, change);
    t.equal(r.status, 500, '500: Floe cannot tell this case from the one above');
    t.equal(r.body.error.type, 'CommitStateUnknownException');
    await dropped.hit;

    const after = await client.get(url);
    t.equal(after.body['metadata-location'], current['metadata-location'], 'the server rolled back: the pointer did not move');
    t.equal(metadataFiles().length, before.length + 1, 'the written file is kept (it might have been the table\'s)');
    t.ok(before.includes(fileOf(after.body['metadata-location'])), 'the table points at a file that exists');
    const retried = await client.post(url, change);
    t.equal(retried.status, 200, 'the client\'s retry goes through');
    t.equal(BigInt(retried.body.metadata['current-snapshot-id']), 2n);
  });

  await t.test('an INSERT over /api whose COMMIT answer is lost', async (t) => {
    const token = await server.token();
    const sql = async (text: string) => {
      const r = await server.app.inject({ method: 'POST', url: '/api/query', headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' }, payload: JSON.stringify({ sql: text }) });
      return { status: r.statusCode, body: r.json() as Record<string, unknown> };
    };
    t.equal((await sql('CREATE TABLE db.w (id int)')).status, 200);
    t.equal((await sql('INSERT INTO db.w VALUES (1)')).status, 200);
    const lost = proxy.interruptCommit('lose-answer', POINTER_SWAP);
    const r = await sql('INSERT INTO db.w VALUES (2)');
    t.equal(r.status, 500, '500');
    t.equal(r.body.error, 'COMMIT_STATE_UNKNOWN', 'COMMIT_STATE_UNKNOWN, not an internal error');
    t.equal(r.body.sql_state, '08007');
    t.match(r.body.message, /commit state unknown: the metadata store failed while committing .*read the table before running it again/);
    t.equal((await lost.hit).serverTag, 'COMMIT');
    const rows = await sql('SELECT id FROM db.w ORDER BY id');
    t.equal(rows.status, 200);
    t.same(rows.body.rows, [[1], [2]], 'reading the table shows the INSERT took effect, once');
  });
});
