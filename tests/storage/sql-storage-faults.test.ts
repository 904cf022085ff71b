/**
 * Object-store faults under SQL (issue 17 acceptance; tests/storage/catalog-storage-faults covers
 * /v1): a catalog on RGW reached through a proxy that answers chosen requests itself or breaks
 * them in flight. Throttling (503 SlowDown) of the data upload, of the manifest writes and of the
 * commit's metadata write is retried and the INSERT succeeds; a store failing every data upload,
 * every manifest write or the metadata write of the commit makes the statement fail with a 5xx
 * registry error that names the cause; so does the gateway stopping while an INSERT's data upload
 * is in flight, and the store going down in the middle of a CTAS's upload. After each, every row an
 * INSERT acknowledged is there, every file the table's metadata references (metadata log, manifest
 * lists, manifests, data files) exists in the bucket, nothing of the failed statement is committed,
 * and once the store is back the same statement succeeds.
 */
import t, { type Test } from 'tap';
import { Floe, isFloeError } from '../../index.js';
import { openStore } from '../../catalog/store/open-store.js';
import { onRgw } from '../helpers/rgw.js';
import { startS3FaultProxy } from '../helpers/s3-fault-proxy.js';
import { loadLiveEntries, loadManifestFiles } from '../../catalog/iceberg/scan.js';
import type { TableMetadata } from '../../catalog/iceberg/table-metadata.js';
import type { FileIO } from '../../storage-creds/file-io.js';

/** A registry error's fields, as the statement's caller sees them. */
interface StatementError {
  readonly code: string;
  readonly httpStatus: number;
  readonly message: string;
}

await onRgw(t, 'object-store faults under SQL', async (t, rgw) => {
  await rgw.createBucket('sqlfaults');
  const proxy = await startS3FaultProxy(rgw.endpoint);
  t.teardown(() => proxy.close());
  const store = await openStore({ kind: 'pglite-memory' });
  const floe = await Floe.open({ store });
  t.teardown(() => floe.close());
  const admin = { tenantId: 'default', principalId: 'test', roles: ['tenant_admin'] };
  const secretPattern = new RegExp(rgw.secretAccessKey.replace(/[^A-Za-z0-9]/g, '.'));
  // Each catalog has its own S3 client, and so its own retry budget (the SDK's retry token bucket,
  // which every retried failure draws on): the in-flight faults run on a catalog of their own, so
  // their retries do not depend on what the failures before them spent.
  const catalogOn = async (name: string, keyPrefix: string): Promise<FileIO> => {
    await floe.state.catalog.createCatalog(admin, {
      name, warehouseLocation: `s3://sqlfaults/${keyPrefix}`,
      storage: {
        profile: { type: 's3', bucket: 'sqlfaults', keyPrefix, region: rgw.region, endpoint: proxy.endpoint, pathStyleAccess: true, credentialSource: 'access-key' },
        secret: { type: 's3-keys', accessKeyId: rgw.accessKeyId, secretAccessKey: rgw.secretAccessKey },
      },
    });
    return floe.state.catalog.fileIOFor(admin, name);
  };
  const errorOf = async (t: Test, what: string, statement: Promise<unknown>): Promise<StatementError> => {
    const e = await statement.then(() => undefined, (x: unknown) => x);
    t.ok(isFloeError(e), `${what}: a registry error`);
    return e as StatementError;
  };
  /** The statement failed because the store is unreachable: 503 SERVICE_UNAVAILABLE naming the location, no secret. */
  const unavailable = (t: Test, e: StatementError, location: RegExp): void => {
    t.equal(e.code, 'SERVICE_UNAVAILABLE', `SERVICE_UNAVAILABLE (${e.message})`);
    t.equal(e.httpStatus, 503);
    t.match(e.message, location, 'the message names the location');
    t.notMatch(e.message, secretPattern, 'no secret in the message');
  };

  /** A table `<catalog>.s.<name>` (id int, v string) and what its INSERTs acknowledged. */
  const tableOn = async (catalog: string, io: FileIO, name: string) => {
    const display = `${catalog}.s.${name}`;
    await floe.sql(`CREATE SCHEMA IF NOT EXISTS ${catalog}.s`);
    await floe.sql(`CREATE TABLE ${display} (id int, v string)`);
    const acknowledged: number[] = [];
    let next = 0;
    const insertSql = (): { sql: string; ids: readonly number[] } => {
      const ids = [next++, next++];
      return { sql: `INSERT INTO ${display} VALUES (${ids[0]}, 'a'), (${ids[1]}, 'b')`, ids };
    };
    const loaded = () => floe.state.catalog.loadTable(admin, catalog, { namespace: ['s'], name });
    return {
      insertSql,
      /** Runs an INSERT; its rows count as acknowledged once it resolves. */
      async run(statement: { sql: string; ids: readonly number[] }): Promise<void> {
        await floe.sql(statement.sql);
        acknowledged.push(...statement.ids);
      },
      async insert(): Promise<void> {
        await this.run(insertSql());
      },
      async metadata(): Promise<{ location: string; metadata: TableMetadata }> {
        const l = await loaded();
        return { location: l.metadataLocation!, metadata: l.metadata };
      },
      /** Every file the committed metadata refers to is in the bucket; exactly the acknowledged rows are read. */
      async consistent(t: Test, what: string): Promise<void> {
        const { metadataLocation, metadata: m } = await loaded();
        const referenced = new Set<string>([metadataLocation!, ...m.metadataLog.map((e) => e.metadataFile)]);
        for (const s of m.snapshots) {
          referenced.add(s.manifestList!);
          for (const mf of await loadManifestFiles(io, s)) referenced.add(mf.manifestPath);
          for (const { entry } of await loadLiveEntries(io, s)) referenced.add(entry.dataFile.filePath);
        }
        const missing = [];
        for (const l of referenced) if (!(await io.exists(l))) missing.push(l);
        t.same(missing, [], `${what}: every one of ${referenced.size} referenced files exists`);
        t.same((await floe.sql(`SELECT id FROM ${display} ORDER BY id`)).rows.map((r) => r[0]), [...acknowledged].sort((a, b) => a - b), `${what}: exactly the acknowledged rows are there`);
      },
    };
  };

  const lakeIO = await catalogOn('lake', 'wh');
  const lake = await tableOn('lake', lakeIO, 't');
  await lake.insert();
  // Each write of an INSERT in turn is throttled twice (the proxy reads the upload's body, then
  // answers SlowDown): the data file, the manifests and manifest list, the commit's metadata file.
  for (const [what, pathIncludes] of [['the data upload', '.parquet'], ['the manifest writes', '.avro'], ['the metadata write', '.metadata.json']] as const) {
    await t.test(`throttling of ${what} is retried and the INSERT succeeds`, async (t) => {
      proxy.failNext(2, { status: 503, code: 'SlowDown', method: 'PUT', pathIncludes });
      const before = proxy.faults;
      await lake.insert();
      t.equal(proxy.faults - before, 2, `two throttled answers to ${what}`);
      await lake.consistent(t, `after throttling of ${what}`);
    });
  }

  for (const [name, fault] of [
    ['every data upload fails', { method: 'PUT', pathIncludes: '.parquet' }],
    ['every manifest write fails (mid-commit)', { method: 'PUT', pathIncludes: '.avro' }],
    ['the commit\'s metadata write fails', { method: 'PUT', pathIncludes: '.metadata.json' }],
  ] as const) {
    await t.test(name, async (t) => {
      proxy.failNext(1000, { status: 500, code: 'InternalError', ...fault });
      const e = await errorOf(t, name, lake.insert());
      proxy.failNext(0);
      t.ok(e.httpStatus >= 500 && e.httpStatus < 600, `a 5xx (${e.httpStatus} ${e.code})`);
      t.not(e.code, 'INTERNAL_ERROR', 'a store failure, not a bug with a reference');
      t.match(e.message, /s3:\/\/sqlfaults\//, 'the message names the location');
      await lake.consistent(t, `after "${name}"`);
      await lake.insert();
      await lake.consistent(t, `an INSERT after "${name}"`);
    });
  }

  const midIO = await catalogOn('mid', 'mid');
  const mid = await tableOn('mid', midIO, 't');
  await mid.insert();

  await t.test('the gateway stops while an INSERT\'s data upload is in flight', async (t) => {
    const before = await mid.metadata();
    // The data file's PUT reaches the gateway with half its body; the gateway is stopped with the
    // request open, then the rest of the body is sent into the stopped gateway's connection.
    const inFlight = proxy.interrupt({ method: 'PUT', pathIncludes: '.parquet' }, { kind: 'hold-after-bytes', bytes: 256 });
    const statement = mid.insertSql();
    const running = errorOf(t, 'stopped mid-upload', mid.run(statement));
    await inFlight.hit;
    await rgw.stopGateway();
    inFlight.release();
    unavailable(t, await running, /write failed for s3:\/\/sqlfaults\/mid\/s\/t-[0-9a-f]+\/data\/.*\.parquet/);
    t.equal(inFlight.hits, 1, 'one upload was cut in flight');

    await rgw.startGateway();
    const after = await mid.metadata();
    t.equal(after.location, before.location, 'nothing was committed');
    t.equal(after.metadata.snapshots.length, before.metadata.snapshots.length);
    await mid.consistent(t, 'the gateway back');
    await mid.run(statement);
    await mid.consistent(t, 'the same INSERT run again');
  });

  await t.test('the store goes down while a CTAS uploads its data', async (t) => {
    // The first data PUT reaches the store with 100 bytes of its body; then the proxy cuts it and
    // every connection after it until restored: to Floe, the store has gone away mid-upload.
    const cut = proxy.interrupt({ method: 'PUT', pathIncludes: '.parquet' }, { kind: 'reset-after-bytes', bytes: 100 }, { thenOutage: true });
    const ctas = `CREATE TABLE mid.s.c AS SELECT id, v FROM mid.s.t`;
    const e = await errorOf(t, 'CTAS mid-upload', floe.sql(ctas));
    unavailable(t, e, /s3:\/\/sqlfaults\/mid\/s\/c-[0-9a-f]+\/data\/.*\.parquet/);
    t.equal(cut.hits, 1, 'one upload was cut in flight');
    proxy.restore();
    t.notOk(await floe.state.catalog.tableExists(admin, 'mid', { namespace: ['s'], name: 'c' }), 'no half-made table is left (CTAS is all or nothing)');
    await mid.consistent(t, 'the source after the failed CTAS');
    t.same((await floe.sql(ctas)).rows, [[(await floe.sql('SELECT count(*) FROM mid.s.t')).rows[0]![0]]], 'the same CTAS run again fills the table');
    t.same((await floe.sql('SELECT id FROM mid.s.c ORDER BY id')).rows, (await floe.sql('SELECT id FROM mid.s.t ORDER BY id')).rows, 'with the source\'s rows');
  });

  await t.test('a stopped gateway', async (t) => {
    await rgw.stopGateway();
    unavailable(t, await errorOf(t, 'stopped', lake.insert()), /s3:\/\/sqlfaults\/wh\//);
  });
});
