/**
 * Credentials and signatures never reach beyond the one table they are for (issue 18; found by the
 * acceptance audit, /work/wt/_notes/audit-17-18.md), on RGW with STS and session policies.
 *
 * Vended keys and signatures cover everything under a table's locations. Before the rule a caller
 * who may commit one table set its write.data.path to the warehouse root or a namespace folder (or
 * created a table there) and got keys that read every table of the catalog, and Floe signed GETs of
 * other tables' files. Now:
 * - the commit or create is refused (400 naming the location);
 * - a table stored with such a location before the rule gets no credential and no signature (403
 *   naming the location), and neither do the tables it overlaps, until it is moved back by a commit
 *   (which the rule accepts), after which all of them get their own again.
 * Each "reaches" check uses what Floe returned on RGW itself: the vended keys try to read the
 * victim's metadata file, and the signing route is asked to sign a GET of it.
 */
import t from 'tap';
import { openStore } from '../../catalog/store/open-store.js';
import { onRgw } from '../helpers/rgw.js';
import { prepareVendingRole, reachOf, vendingProfile } from '../helpers/vending.js';
import { sampleSchema, startCatalogServer } from '../catalog/helpers.js';

const BUCKET = 'overlap';
const ADMIN = { tenantId: 'default', principalId: 'test', roles: ['tenant_admin'] };

await onRgw(t, 'a table location holding other tables gets no credential and no signature', async (t, rgw) => {
  await prepareVendingRole(rgw, BUCKET);
  const store = await openStore({ kind: 'pglite-memory' });
  t.teardown(() => store.close());
  const { client, server } = await startCatalogServer(t, store);
  const W = `s3://${BUCKET}/warehouse`;
  t.equal((await client.post('/v1/catalogs', { name: 'lake', 'storage-profile': vendingProfile(rgw, BUCKET, 'warehouse') })).status, 201);
  t.equal((await client.post('/v1/lake/namespaces', { namespace: ['db'], properties: {} })).status, 200);
  const tables = '/v1/lake/namespaces/db/tables';
  const victim = await client.post(tables, { name: 'victim', schema: sampleSchema() });
  const victimKey = (victim.body['metadata-location'] as string).slice(`s3://${BUCKET}/`.length);
  /** What `table`'s vended keys and Floe's signing reach of the victim's file. */
  const reaches = (table: string) => reachOf(client, rgw, BUCKET, `${tables}/${table}`, victimKey);

  t.equal((await client.post(tables, { name: 'mine', schema: sampleSchema() })).status, 200);
  await t.test('commits and creates at the warehouse root or a namespace folder are refused', async (t) => {
    for (const [what, path] of [['the warehouse root', W], ['the namespace folder', `${W}/db`], ['the victim\'s folder', victim.body.metadata.location as string]] as const) {
      const moved = await client.post(`${tables}/mine`, { requirements: [], updates: [{ action: 'set-properties', updates: { 'write.data.path': path } }] });
      t.equal(moved.status, 400, `write.data.path at ${what}: refused at commit`);
      t.match(moved.body.error.message, path, 'naming it');
    }
    const root = await client.post(tables, { name: 'root', schema: sampleSchema(), location: W });
    t.equal(root.status, 400, 'a table at the warehouse root: refused at creation');
    const r = await reaches('mine');
    t.equal(r.vend, 'refused by RGW (AccessDenied)', 'mine\'s own keys do not read the victim');
    t.equal(r.sign, 403, 'nor does Floe sign it for mine');
  });

  // A table stored before the rule: its metadata written and its pointer set behind the catalog's back.
  const lake = await server.state.catalog.loadCatalog(ADMIN, 'lake');
  let planted = 0;
  const plant = async (name: string, properties: Record<string, string>): Promise<void> => {
    const loaded = await server.state.catalog.loadTable(ADMIN, 'lake', { namespace: ['db'], name });
    const metadata = { ...loaded.metadata, properties: new Map([...loaded.metadata.properties, ...Object.entries(properties)]) };
    const next = `${loaded.metadata.location}/metadata/${String(90 + ++planted).padStart(5, '0')}-planted.metadata.json`;
    await server.state.catalog.deps.files.writeTable(lake, next, metadata);
    await store.query('UPDATE catalog_entities SET metadata_location = $2 WHERE name = $1', [name, next]);
  };
  for (const [what, path] of [['the warehouse root', W], ['the namespace folder', `${W}/db`]] as const) {
    await t.test(`a table stored before the rule with write.data.path at ${what}`, async (t) => {
      await plant('mine', { 'write.data.path': path });
      const mine = await reaches('mine');
      t.equal(mine.vend, 'status 403', 'no credentials for it');
      t.match(mine.message, path, 'the refusal names the location');
      t.equal(mine.sign, 403, 'no signature of another table\'s file');
      const credentials = await client.get(`${tables}/mine/credentials`);
      t.equal(credentials.status, 403, 'nor from the credentials endpoint');
      const victimNow = await reaches('victim');
      t.equal(victimNow.vend, 'status 403', 'the table it overlaps gets none either: Floe cannot tell whose files are whose');
      t.match(victimNow.message, path);

      // Moved back by a commit (the rule accepts it): every table gets its own again.
      const back = await client.post(`${tables}/mine`, { requirements: [], updates: [{ action: 'remove-properties', removals: ['write.data.path'] }] });
      t.equal(back.status, 200, `repaired by a commit: ${back.text.slice(0, 200)}`);
      const victimAfter = await reaches('victim');
      t.equal(victimAfter.vend, 'read the victim', 'the victim\'s own keys read its files again');
      t.equal(victimAfter.sign, 200, 'and Floe signs them for it');
      const mineAfter = await reaches('mine');
      t.equal(mineAfter.vend, 'refused by RGW (AccessDenied)', 'mine gets keys for its own files only');
      t.equal(mineAfter.sign, 403);
    });
  }
  await t.test('a table stored before the rule at another table\'s location', async (t) => {
    // As registering the victim's metadata a second time did: two tables, one folder.
    const twin = await client.post(tables, { name: 'twin', schema: sampleSchema() });
    t.equal(twin.status, 200);
    await store.query('UPDATE catalog_entities SET metadata_location = $2 WHERE name = $1', ['twin', victim.body['metadata-location']]);
    const r = await reaches('twin');
    t.equal(r.vend, 'status 403', 'no credentials');
    t.match(r.message, victim.body.metadata.location, 'naming the shared location');
    t.equal(r.sign, 403, 'no signature');
    t.equal((await client.delete(`${tables}/twin`)).status, 204, 'dropped (without purge)');
    t.equal((await reaches('victim')).vend, 'read the victim', 'and the victim has its keys back');
  });
});
