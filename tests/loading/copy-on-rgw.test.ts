/**
 * Stages and COPY INTO on a catalog whose warehouse is a bucket on a real Ceph RGW: the stage's
 * files live under `<warehouse>/stages/` in the bucket, LIST and REMOVE go through the S3 FileIO,
 * and COPY fetches the files into the workers' staging folder, loads CSV (plain and gzip), keeps
 * the load history and PURGEs what it loaded. Then issue 19's acceptance end to end on the same
 * RGW (load-acceptance.ts): `floe sql` PUTs through RGW's presigned URLs, COPY, history, FORCE,
 * ON_ERROR, VALIDATION_MODE, PURGE (gone from the bucket), GET.
 */
import t from 'tap';
import { gzipSync } from 'node:zlib';
import { ListObjectsV2Command } from '@aws-sdk/client-s3';
import { Floe } from '../../index.js';
import { openStore } from '../../catalog/store/open-store.js';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { onRgw } from '../helpers/rgw.js';
import { startTestServer, TEST_CLIENT_ID, TEST_CLIENT_SECRET } from '../helpers/server.js';
import { listenOnLoopback } from '../helpers/http.js';
import { loadAcceptance } from './load-acceptance.js';

await onRgw(t, 'COPY INTO on RGW', async (t, rgw) => {
  await rgw.createBucket('copywh');
  const store = await openStore({ kind: 'pglite-memory' });
  const floe = await Floe.open({ store });
  t.teardown(() => floe.close());
  const admin = { tenantId: 'default', principalId: 'test', roles: ['tenant_admin'] };
  await floe.state.catalog.createCatalog(admin, {
    name: 'lake', warehouseLocation: 's3://copywh/wh',
    storage: {
      profile: { type: 's3', bucket: 'copywh', keyPrefix: 'wh', region: rgw.region, endpoint: rgw.endpoint, pathStyleAccess: true, credentialSource: 'access-key' },
      secret: { type: 's3-keys', accessKeyId: rgw.accessKeyId, secretAccessKey: rgw.secretAccessKey },
    },
  });
  const rows = async (text: string) => (await floe.sql(text, { catalog: 'lake', schema: 'shop' })).rows;
  await rows('CREATE SCHEMA lake.shop');
  await rows('CREATE TABLE lake.shop.t (id bigint, name string)');
  await rows('CREATE STAGE s3land FILE_FORMAT = (SKIP_HEADER = 1)');
  const url = (await rows('SHOW STAGES'))[0]![2] as string;
  t.match(url, /^s3:\/\/copywh\/wh\/stages\/[0-9a-f-]{36}\/$/);
  const io = await floe.state.catalog.fileIOFor(admin, 'lake');
  await io.write(`${url}in/a.csv`, Buffer.from('id,name\n1,apple\n2,pear\n'));
  await io.write(`${url}in/b.csv.gz`, gzipSync('id,name\n3,plum\n'));
  t.same((await rows('LIST @s3land')).map((r) => [r[0], r[1]]), [['s3land/in/a.csv', 23], ['s3land/in/b.csv.gz', gzipSync('id,name\n3,plum\n').length]]);
  const r = await rows('COPY INTO t FROM @s3land/in/ PURGE = TRUE');
  t.same(r.map((x) => [x[0], x[1], x[3]]), [['@s3land/in/a.csv', 'LOADED', 2], ['@s3land/in/b.csv.gz', 'LOADED', 1]]);
  t.same(await rows('SELECT id, name FROM t ORDER BY id'), [[1, 'apple'], [2, 'pear'], [3, 'plum']]);
  t.same(await rows('LIST @s3land'), [], 'PURGE removed them from the bucket');
  const s3 = rgw.client();
  t.teardown(() => s3.destroy());
  const keys = ((await s3.send(new ListObjectsV2Command({ Bucket: 'copywh', Prefix: 'wh/stages/' }))).Contents ?? []).map((o) => o.Key ?? '');
  t.same(keys, [], 'nothing left under the stage area');
  await io.write(`${url}x.csv`, Buffer.from('id,name\n4,fig\n'));
  t.same((await rows('COPY INTO t FROM @s3land')).map((x) => [x[0], x[1]]), [['@s3land/x.csv', 'LOADED']]);
  t.same((await rows('COPY INTO t FROM @s3land')).map((x) => [x[0], x[1]]), [['@s3land/x.csv', 'LOAD_SKIPPED']], 'the history holds on object storage too');

  await t.test('the acceptance through floe sql on RGW', async (t) => {
    await rgw.createBucket('accwh');
    const dir = mkdtempSync(join(tmpdir(), 'floe-acc-rgw-'));
    t.teardown(() => rmSync(dir, { recursive: true, force: true }));
    const server = await startTestServer(await openStore({ kind: 'pglite-memory' }), { config: (c) => ({ ...c, data_dir: join(dir, 'data') }) });
    t.teardown(() => server.close());
    const http = await listenOnLoopback(server);
    await server.state.catalog.createCatalog(admin, {
      name: 'lake', warehouseLocation: 's3://accwh/wh',
      storage: {
        profile: { type: 's3', bucket: 'accwh', keyPrefix: 'wh', region: rgw.region, endpoint: rgw.endpoint, pathStyleAccess: true, credentialSource: 'access-key' },
        secret: { type: 's3-keys', accessKeyId: rgw.accessKeyId, secretAccessKey: rgw.secretAccessKey },
      },
    });
    await loadAcceptance(t, {
      url: http.url, clientId: TEST_CLIENT_ID, clientSecret: TEST_CLIENT_SECRET, catalog: 'lake', dir,
      async storeFiles(stageUrl) {
        const prefix = stageUrl.slice('s3://accwh/'.length);
        const listed = await s3.send(new ListObjectsV2Command({ Bucket: 'accwh', Prefix: prefix }));
        return (listed.Contents ?? []).map((o) => (o.Key ?? '').slice(prefix.length));
      },
    });
  });
});
