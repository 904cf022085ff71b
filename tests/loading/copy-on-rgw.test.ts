/**
 * Stages and COPY INTO on a catalog whose warehouse is a bucket on a real Ceph RGW: the stage's
 * files live under `<warehouse>/stages/` in the bucket, LIST and REMOVE go through the S3 FileIO,
 * and COPY fetches the files into the workers' staging folder, loads CSV (plain and gzip), keeps
 * the load history and PURGEs what it loaded.
 */
import t from 'tap';
import { gzipSync } from 'node:zlib';
import { ListObjectsV2Command } from '@aws-sdk/client-s3';
import { Floe } from '../../index.js';
import { openStore } from '../../catalog/store/open-store.js';
import { onRgw } from '../helpers/rgw.js';

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
});
