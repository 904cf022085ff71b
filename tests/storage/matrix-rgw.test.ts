/**
 * The warehouse matrix on Ceph RGW (issue 17 acceptance): the existing SQL and catalog suites
 * (tests/helpers/warehouse-matrix.ts lists them) run unchanged with catalog `default` in a bucket,
 * declared in an operator file whose keys are environment references; one RGW serves the whole run.
 * Beside them, the Spark-written tables of ../shared/data/iceberg are copied into the bucket,
 * registered from there in a catalog on the same store, and answer through SQL as the data's README
 * says (equality deletes, both snapshots of lineitem).
 *
 * FLOE_TEST_MATRIX_SUITES=sql-ddl,tpch runs only the suites whose path contains one of the words.
 */
import t from 'tap';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import * as path from 'node:path';
import { PutObjectCommand } from '@aws-sdk/client-s3';
import { Floe } from '../../index.js';
import { onRgw } from '../helpers/rgw.js';
import { runSuitesOn, writeMatrixConfig, type MatrixWarehouse } from '../helpers/warehouse-matrix.js';
import { ICEBERG_DATA, SHARED_TABLES, sharedTable } from '../iceberg/helpers.js';
import { parseExposition } from '../helpers/prometheus.js';

const BUCKET = 'matrix';

function filesUnder(dir: string): string[] {
  return readdirSync(dir).flatMap((f) => {
    const p = path.join(dir, f);
    return statSync(p).isDirectory() ? filesUnder(p) : [p];
  });
}

// Ten suites one after another, two at a time: more than tap's default per-file limit.
t.setTimeout(20 * 60_000);

await onRgw(t, 'suites with catalog default on RGW', async (t, rgw) => {
  await rgw.createBucket(BUCKET);
  const warehouse: MatrixWarehouse = {
    name: 'rgw',
    storageProfile: {
      type: 's3', bucket: BUCKET, 'key-prefix': 'wh', region: rgw.region, endpoint: rgw.endpoint, 'path-style-access': true,
      credentials: { type: 'access-key', 'access-key-id': { env: 'FLOE_TEST_MATRIX_KEY_ID' }, 'secret-access-key': { env: 'FLOE_TEST_MATRIX_SECRET' } },
    },
    env: { FLOE_TEST_MATRIX_KEY_ID: rgw.accessKeyId, FLOE_TEST_MATRIX_SECRET: rgw.secretAccessKey },
  };

  await t.test('the Spark-written tables copied into the bucket, registered and read through SQL', async (t) => {
    const s3 = rgw.client();
    t.teardown(() => s3.destroy());
    for (const table of SHARED_TABLES) {
      const root = path.join(ICEBERG_DATA, table.dir);
      for (const file of filesUnder(root)) {
        await s3.send(new PutObjectCommand({ Bucket: BUCKET, Key: `spark/${table.dir}/${path.relative(root, file)}`, Body: readFileSync(file) }));
      }
    }
    const config = writeMatrixConfig(warehouse);
    t.teardown(() => config.remove());
    for (const [k, v] of Object.entries(warehouse.env)) process.env[k] = v;
    t.teardown(() => {
      for (const k of Object.keys(warehouse.env)) delete process.env[k];
    });
    const floe = await Floe.open({ configFile: config.file });
    t.teardown(() => floe.close());
    const admin = { tenantId: 'default', principalId: 'test', roles: ['tenant_admin'] };
    t.equal((await floe.state.catalog.loadCatalog(admin, 'default')).warehouseLocation, `s3://${BUCKET}/wh`, 'the declared default catalog is in the bucket');
    // Metadata written by Spark names its own (relative) prefixes: mapped onto the copies.
    await floe.state.catalog.createCatalog(admin, {
      name: 'spark', warehouseLocation: `s3://${BUCKET}/spark`,
      locationMappings: SHARED_TABLES.flatMap((table) => table.originalPrefixes.map((from) => ({ from, to: `s3://${BUCKET}/spark/${table.dir}/` }))),
      storage: {
        profile: { type: 's3', bucket: BUCKET, keyPrefix: 'spark', region: rgw.region, endpoint: rgw.endpoint, pathStyleAccess: true, credentialSource: 'access-key' },
        secret: { type: 's3-keys', accessKeyId: rgw.accessKeyId, secretAccessKey: rgw.secretAccessKey },
      },
    });
    await floe.state.catalog.createNamespace(admin, 'spark', ['tables']);
    const register = async (name: string, table: string, metadataFile: string) => {
      await floe.state.catalog.registerTable(admin, 'spark', ['tables'], { name, metadataLocation: `s3://${BUCKET}/spark/${sharedTable(table).dir}/metadata/${metadataFile}` });
    };
    const latest = (table: string) => readdirSync(path.join(ICEBERG_DATA, sharedTable(table).dir, 'metadata')).filter((f) => f.endsWith('.metadata.json'))
      .sort((a, b) => Number(/^v?(\d+)/.exec(a)?.[1]) - Number(/^v?(\d+)/.exec(b)?.[1])).at(-1)!;
    for (const name of ['lineitem_iceberg', 'mytable', 'mytable_partitioned', 'partition_integer', 'partition_timestamptz']) await register(name, name, latest(name));
    const one = async (sql: string) => (await floe.sql(sql)).rows;
    // The README's answers: lineitem has 51,793 live rows now and 60,175 at its first snapshot.
    t.same(await one('SELECT count(*) FROM spark.tables.lineitem_iceberg'), [[51793]]);
    t.same(await one('SELECT count(*) FROM spark.tables.lineitem_iceberg FOR VERSION AS OF 7817332053627255703'), [[60175]], 'time travel');
    t.equal(Number((await one(`SELECT sum(l_extendedprice * l_discount) FROM spark.tables.lineitem_iceberg
      WHERE l_shipdate >= DATE '1994-01-01' AND l_shipdate < DATE '1995-01-01' AND l_discount BETWEEN 0.05 AND 0.07 AND l_quantity < 24`))[0]![0]).toFixed(4), '1077536.9101', 'TPC-H Q6');
    // Equality deletes, as tests/sql-queries.test.ts reads them from local disk.
    t.same(await one('SELECT id, name, bir FROM spark.tables.mytable ORDER BY id'), [[4, 'd', '2025-01-04'], [5, 'e', '2025-01-05']]);
    t.same(await one("SELECT id FROM spark.tables.mytable_partitioned WHERE name IN ('d', 'e', 'a', 'b') ORDER BY id"), [[1], [4], [5]]);
    // partition_integer's and partition_timestamptz's manifests give their data files 950/936 and
    // 1353/1338 bytes; the files in ../shared/data have 502 and 487 (rewritten after the manifests
    // were). Fetched from the bucket they are read as stored, exactly as on local disk (the
    // README's rows), and each disagreement is counted in floe_file_cache_size_mismatch_total.
    const mismatches = async (): Promise<number> => Number(parseExposition(await floe.state.metrics.registry.metrics()).samples.find((s) => s.name === 'floe_file_cache_size_mismatch_total')?.value);
    const before = await mismatches();
    t.same(await one('SELECT partition_col, user_id, event_type FROM spark.tables.partition_integer ORDER BY partition_col'), [[42, 12345, 'click'], [1337, 67890, 'purchase']], 'partition_integer: the README\'s rows');
    t.same(await one('SELECT user_id FROM spark.tables.partition_integer WHERE partition_col = 42'), [[12345]]);
    t.same(await one('SELECT user_id, event_type FROM spark.tables.partition_timestamptz ORDER BY user_id'), [[12345, 'click'], [67890, 'purchase']], 'partition_timestamptz: the README\'s rows');
    t.same(await one("SELECT user_id FROM spark.tables.partition_timestamptz WHERE partition_col = TIMESTAMPTZ '2023-08-22 09:15:20+00'"), [[67890]]);
    t.ok(await mismatches() > before, 'the size disagreements are counted');
    // Every data file was fetched from the bucket (the local copies were never named).
    const history = await one("SELECT max(bytes_scanned) FROM system.query_history WHERE sql LIKE '%lineitem_iceberg%'");
    t.ok(Number(history[0]![0]) > 0, 'bytes were fetched from the bucket');
  });

  const runs = await runSuitesOn(t, warehouse);
  t.comment(`matrix on rgw: ${runs.length} suites, ${(runs.reduce((s, r) => s + r.ms, 0) / 1000).toFixed(0)} s of suite time`);
});
