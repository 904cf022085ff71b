/**
 * Catalogs never share or nest their warehouses, across tenants too (docs/catalog.md "Catalog
 * locations"; issue 18: a user of the outer catalog could otherwise create a table inside the inner
 * one's warehouse and be vended keys for its files). On both store backends, over `/v1/catalogs`
 * with two tenants: equal warehouses and nested ones (both ways) are refused with a 400 that names
 * only the location, never the other catalog or its tenant; siblings whose names share a prefix
 * (`wh`, `wh2`), other buckets and other stores are fine; the spellings of one place (s3/s3a,
 * trailing slashes, ADLS hosts) are one place; `.`/`..` are refused. A dropped catalog frees its
 * warehouse. Two creations of nested catalogs at once: exactly one is stored (on PostgreSQL both
 * pass the early check and wait for the lock). Catalogs stored before the rule (planted in the
 * store, without their key) are found by the checks, and the tables of an overlapping catalog get
 * no credential and no signature (what vending and signing ask: `locationConflict`). The operator
 * file stops the start naming the location, and `floe admin create-catalog` exits 2 with it.
 */
import t, { type Test } from 'tap';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { Floe } from '../../index.js';
import { openStore } from '../../catalog/store/open-store.js';
import { ConfigError } from '../../server/config.js';
import { runCli } from '../helpers/cli.js';
import type { TableMetadata } from '../../catalog/iceberg/table-metadata.js';
import { createTenantWithAdmin } from '../../engine/principals/bootstrap.js';
import { CatalogClient, startCatalogServer, type Reply } from './helpers.js';
import { onEachBackend } from '../helpers/stores.js';

const ADMIN = { tenantId: 'default', principalId: 'test', roles: ['tenant_admin'] };

await onEachBackend(t, async (t, store, backend) => {
  const { client, server } = await startCatalogServer(t, store);
  const other = await createTenantWithAdmin(store, 'acme');
  const form = new URLSearchParams({ grant_type: 'client_credentials', client_id: other.credentials.clientId, client_secret: other.credentials.clientSecret });
  const tok = await server.app.inject({ method: 'POST', url: '/v1/oauth/tokens', headers: { 'content-type': 'application/x-www-form-urlencoded' }, payload: form.toString() });
  const acme = new CatalogClient(client.send, tok.json().access_token);
  const create = (as: CatalogClient, name: string, location: string): Promise<Reply> => as.post('/v1/catalogs', { name, 'warehouse-location': location });
  /** A 400 that names the location as in use and nothing of the catalog it meets. */
  const refused = (t: Test, r: Reply, what: string): void => {
    t.equal(r.status, 400, `${what}: ${r.text.slice(0, 300)}`);
    t.equal(r.body?.error?.type, 'BadRequestException', `${what}: BadRequestException`);
    const message = String(r.body?.error?.message);
    t.match(message, /is in use: it (is|contains|lies inside) another catalog's warehouse/, `${what}: says the location is in use`);
    for (const secret of ['finance', 'acme', 'default']) t.notOk(message.includes(secret), `${what}: the message does not name ${secret}`);
  };

  t.equal((await create(client, 'finance', 's3://shared/wh')).status, 201, 'tenant default: s3://shared/wh');

  await t.test('equal and nested warehouses are refused, across tenants and within one', async (t) => {
    for (const [what, as, location] of [
      ['equal, another tenant', acme, 's3://shared/wh'],
      ['equal, same tenant', client, 's3://shared/wh'],
      ['equal with a trailing slash', acme, 's3://shared/wh/'],
      ['equal as s3a', acme, 's3a://shared/wh'],
      ['equal as s3a with doubled slashes', acme, 's3a://shared//wh//'],
      ['inside it', acme, 's3://shared/wh/mine'],
      ['deep inside it', client, 's3a://shared/wh/a/b/c'],
      ['holding it', acme, 's3://shared'],
      ['holding it, the bucket with a slash', acme, 's3://shared/'],
    ] as const) {
      refused(t, await create(as, 'grab', location), what);
    }
    t.equal((await acme.get('/v1/catalogs')).body.catalogs.length, 0, 'acme has no catalog');
    t.same((await client.get('/v1/catalogs')).body.catalogs.map((c: { name: string }) => c.name).sort(), ['default', 'finance'], 'nor has default a new one');
  });

  await t.test('siblings, other buckets and other stores are apart', async (t) => {
    for (const [name, location] of [
      ['wh2', 's3://shared/wh2'],
      ['wh_old', 's3://shared/wh_old'],
      ['w', 's3://shared/w'],
      ['otherbucket', 's3://shared2/wh'],
      ['gcs', 'gs://shared/wh'],
    ] as const) {
      const r = await create(acme, name, location);
      t.equal(r.status, 201, `${location} beside s3://shared/wh: ${r.text.slice(0, 200)}`);
    }
    refused(t, await create(client, 'under_wh2', 's3://shared/wh2/x'), 'inside the sibling just created');
  });

  await t.test('ADLS: every host of an account is one place', async (t) => {
    t.equal((await create(client, 'adls', 'abfss://fs@acct.dfs.core.windows.net/lake')).status, 201);
    refused(t, await create(acme, 'adls_blob', 'wasbs://fs@acct.blob.core.windows.net/lake/x'), 'inside it through the blob host');
    refused(t, await create(acme, 'adls_up', 'abfs://fs@ACCT.dfs.core.windows.net'), 'the container above it, account in capitals');
    t.equal((await create(acme, 'adls_other', 'abfss://other@acct.dfs.core.windows.net/lake')).status, 201, 'another container is apart');
  });

  await t.test('file warehouses, and `.` / `..` segments', async (t) => {
    t.equal((await create(client, 'local', 'file:///srv/lakes/one')).status, 201);
    refused(t, await create(acme, 'local_in', 'file://localhost/srv/lakes/one/mine'), 'inside it, spelled with localhost');
    t.equal((await create(acme, 'local_sib', 'file:///srv/lakes/one2')).status, 201, 'a sibling');
    for (const location of ['s3://shared/wh2/../wh', 'file:///srv/lakes/./two', 's3://shared/x/%2e%2e/wh']) {
      const r = await create(acme, 'dots', location);
      t.equal(r.status, 400, `${location}: refused`);
      t.match(r.body.error.message, /`\.` or `\.\.` segment/, `${location}: saying why`);
    }
  });

  await t.test('the name is checked before the warehouse', async (t) => {
    const again = await create(client, 'finance', 's3://shared/wh');
    t.equal(again.status, 409, 'the same catalog again is a conflict of names, not of places');
    t.equal(again.body.error.type, 'AlreadyExistsException');
  });

  await t.test('a dropped catalog frees its warehouse', async (t) => {
    t.equal((await create(acme, 'temp', 's3://temp/wh')).status, 201);
    refused(t, await create(client, 'temp2', 's3://temp/wh/sub'), 'while it exists');
    t.equal((await acme.delete('/v1/catalogs/temp')).status, 204);
    t.equal((await create(client, 'temp2', 's3://temp/wh/sub')).status, 201, 'after its drop');
  });

  await t.test('two creations of nested catalogs at once: exactly one is stored', async (t) => {
    const race = (round: string): Promise<number[]> => Promise.all([
      create(client, `race_outer_${round}`, `s3://race-${round}/wh`).then((r) => r.status),
      create(acme, `race_inner_${round}`, `s3a://race-${round}/wh/inner`).then((r) => r.status),
    ]);
    if (backend === 'pglite') {
      // One transaction at a time: the creations are serialised anyway.
      t.same((await race('a')).sort(), [201, 400], 'exactly one of the nested catalogs is stored');
      return;
    }
    // Hold the catalogs' location lock so that both pass their early check, then wait for it.
    let release!: () => void;
    const held = new Promise<void>((r) => { release = r; });
    let locked!: () => void;
    const isLocked = new Promise<void>((r) => { locked = r; });
    const holder = store.transaction(async (tx) => {
      await tx.query("SELECT pg_advisory_xact_lock(hashtextextended('floe.catalog-locations', 0))");
      locked();
      await held;
    });
    await isLocked;
    const statuses = race('b');
    // Event-driven: until both wait for the lock (generous bound for a loaded machine).
    const deadline = Date.now() + 120_000;
    for (;;) {
      const waiting = await store.query<{ n: number }>(
        "SELECT count(*)::int AS n FROM pg_locks WHERE locktype = 'advisory' AND NOT granted AND database = (SELECT oid FROM pg_database WHERE datname = current_database())",
      );
      if ((waiting.rows[0]?.n ?? 0) >= 2) break;
      if (Date.now() > deadline) throw new Error('the two creations never waited for the catalogs\' location lock');
      await new Promise((r) => setTimeout(r, 20));
    }
    release();
    await holder;
    t.same((await statuses).sort(), [201, 400], 'exactly one of the nested catalogs is stored');
    const stored = await store.query<{ n: number }>("SELECT count(*)::int AS n FROM catalogs WHERE warehouse_location LIKE 's3%://race-b/%'");
    t.equal(stored.rows[0]?.n, 1, 'one row');
  });

  await t.test('catalogs stored before the rule', async (t) => {
    // As a catalog stored before migration 0013 (or by a replica without it): no key.
    t.equal((await create(acme, 'legacy', 's3://legacy/acme')).status, 201);
    await store.query("UPDATE catalogs SET warehouse_key = NULL WHERE name = 'legacy'");
    refused(t, await create(client, 'legacy2', 's3://legacy'), 'a warehouse holding one without a key');
    const key = await store.query<{ warehouse_key: string }>("SELECT warehouse_key FROM catalogs WHERE name = 'legacy'");
    t.equal(key.rows[0]?.warehouse_key, 's3://legacy/acme/', 'its key was taken from its warehouse');

    // An overlap already stored: two catalogs of two tenants, one inside the other.
    t.equal((await create(client, 'outer', 's3://planted/outer')).status, 201);
    await store.query("UPDATE catalogs SET warehouse_location = 's3://planted', warehouse_key = NULL WHERE name = 'outer'");
    await store.query("UPDATE catalogs SET warehouse_location = 's3://planted/inner', warehouse_key = NULL WHERE name = 'legacy'");
    const ident = { namespace: ['db'], name: 't' };
    // What the checks read of a table: its location and location properties.
    const metadataAt = (location: string): TableMetadata => ({ location, properties: new Map<string, string>() }) as unknown as TableMetadata;
    const outer = await server.state.catalog.loadCatalog(ADMIN, 'outer');
    const inner = await server.state.catalog.loadCatalog({ ...ADMIN, tenantId: 'acme' }, 'legacy');
    const outerConflict = await server.state.catalog.locationConflict(outer, ident, metadataAt('s3://planted/inner/db/t'));
    t.match(outerConflict, /the warehouse s3:\/\/planted is in use: it contains another catalog's warehouse/, 'the outer catalog\'s tables get nothing');
    t.notOk(outerConflict?.includes('legacy') || outerConflict?.includes('acme'), 'naming only its own location');
    const innerConflict = await server.state.catalog.locationConflict(inner, ident, metadataAt('s3://planted/inner/db/t'));
    t.match(innerConflict, /the warehouse s3:\/\/planted\/inner is in use: it lies inside another catalog's warehouse/, 'nor do the inner one\'s');
    t.notOk(innerConflict?.includes('outer') || innerConflict?.includes('default'), 'naming only its own location');
    const apart = await server.state.catalog.loadCatalog(ADMIN, 'finance');
    t.equal(await server.state.catalog.locationConflict(apart, ident, metadataAt('s3://shared/wh/db/t')), undefined, 'a catalog apart from the others is not refused');

    // Repaired (the outer catalog moved back): an overlap is never kept, both get theirs again.
    await store.query("UPDATE catalogs SET warehouse_location = 's3://planted/outer', warehouse_key = NULL WHERE name = 'outer'");
    t.equal(await server.state.catalog.locationConflict({ ...outer, warehouseLocation: 's3://planted/outer' }, ident, metadataAt('s3://planted/outer/db/t')), undefined, 'the outer catalog is apart again');
    t.equal(await server.state.catalog.locationConflict(inner, ident, metadataAt('s3://planted/inner/db/t')), undefined, 'and the inner one');
  });
});

t.test('the operator file and the CLI refuse an overlapping catalog, naming the location', async (t) => {
  const dir = mkdtempSync(path.join(tmpdir(), 'floe-xcat-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const lakes = `file://${dir}/lakes`;
  const startWith = async (name: string, catalogs: readonly { name: string; warehouse_location: string }[]): Promise<unknown> => {
    const file = path.join(dir, name);
    writeFileSync(file, JSON.stringify({ catalogs }));
    const store = await openStore({ kind: 'pglite-memory' });
    t.teardown(() => store.close());
    return Floe.open({ store, configFile: file, dataDir: path.join(dir, `data-${name}`) })
      .then(async (f) => { await f.close(); return undefined; }, (e: unknown) => e);
  };
  const nested = await startWith('nested.json', [{ name: 'outer', warehouse_location: lakes }, { name: 'inner', warehouse_location: `${lakes}/inner` }]);
  t.ok(nested instanceof ConfigError, 'the start is refused');
  t.match((nested as Error).message, new RegExp(`catalog inner in the configuration: Invalid warehouse location "${lakes}/inner": the warehouse ${lakes}/inner is in use: it lies inside another catalog's warehouse`));
  t.equal(await startWith('apart.json', [{ name: 'one', warehouse_location: `${lakes}/one` }, { name: 'one2', warehouse_location: `${lakes}/one2` }]), undefined, 'siblings start');
  // A declared catalog inside the data directory's warehouse: the first start's `default` would hold it.
  const underDefault = await startWith('default.json', [{ name: 'scratch', warehouse_location: `file://${dir}/data-default.json/warehouse/scratch` }]);
  t.match((underDefault as Error | undefined)?.message, /the first start's catalog default cannot be created: .* is in use: it contains another catalog's warehouse/, 'the first start\'s default may not hold a declared catalog');

  const dataDir = path.join(dir, 'cli');
  const quiet = { AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: 'true' };
  const first = runCli(['admin', 'create-catalog', 'outer', '--warehouse', lakes, '--data-dir', dataDir], quiet);
  t.equal(first.status, 0, `create-catalog outer: ${first.stderr}`);
  const second = runCli(['admin', 'create-catalog', 'inner', '--tenant', 'default', '--warehouse', `s3://x/y/../z`, '--data-dir', dataDir], quiet);
  t.equal(second.status, 2, 'a `..` segment: exit 2');
  t.match(second.stderr, /`\.` or `\.\.` segment/);
  const third = runCli(['admin', 'create-catalog', 'inner', '--warehouse', `${lakes}/inner/`, '--data-dir', dataDir], quiet);
  t.equal(third.status, 2, 'inside another catalog\'s warehouse: exit 2');
  t.match(third.stderr, new RegExp(`Invalid warehouse location "${lakes}/inner": the warehouse ${lakes}/inner is in use: it lies inside another catalog's warehouse`));
  t.notMatch(third.stderr, /outer|usage:/, 'neither the other catalog nor a usage text');
});
