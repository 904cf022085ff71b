/**
 * The Spark / PyIceberg tables in ../shared/data/iceberg, registered in place through a catalog
 * whose location remappings map their writers' prefixes onto the folders here; they load over
 * REST (OpenAPI-valid), and their manifests, read through the catalog's FileIO, give the row counts
 * of the data README. The shared files are only read (never purged).
 */
import t from 'tap';
import * as path from 'node:path';
import { planScan } from '../../catalog/iceberg/scan.js';
import { parseTableMetadata, serializeTableMetadata } from '../../catalog/iceberg/table-metadata.js';
import { onEachBackend } from '../helpers/stores.js';
import { ICEBERG_DATA, SHARED_TABLES, metadataFiles, sharedTable } from '../iceberg/helpers.js';
import { startCatalogServer } from './helpers.js';

t.test('Spark-written tables register with location remapping and read back', async (t) => {
  await onEachBackend(t, async (t, store) => {
    const { server, client, dataDir } = await startCatalogServer(t, store);
    const mappings = SHARED_TABLES.flatMap((table) => table.originalPrefixes.map((from) => ({ from, to: `${path.join(ICEBERG_DATA, table.dir)}/` })));
    const created = await client.post('/v1/catalogs', { name: 'spark', 'warehouse-location': `file://${dataDir}/spark`, 'location-mappings': mappings });
    t.equal(created.status, 201, created.text);
    t.equal((await client.post('/v1/spark/namespaces', { namespace: ['shared'] })).status, 200);

    const register = async (name: string, file: string, overwrite = false) => {
      const r = await client.post('/v1/spark/namespaces/shared/register', { name, 'metadata-location': file, ...(overwrite ? { overwrite } : {}) });
      t.equal(r.status, 200, `${name} registers: ${r.text.slice(0, 200)}`);
      return r;
    };
    const ctx = { tenantId: 'default', principalId: 'test', roles: ['tenant_admin'] };
    const io = await server.state.catalog.fileIOFor(ctx, 'spark');
    /** Loads `name` over REST and checks its rows: live records before deletes (README) and delete files. */
    const check = async (name: string, records: number, deletes: number): Promise<void> => {
      const loaded = await client.get(`/v1/spark/namespaces/shared/tables/${name}`);
      t.equal(loaded.status, 200);
      const metadata = parseTableMetadata(loaded.text.slice(loaded.text.indexOf('"metadata":') + '"metadata":'.length, loaded.text.lastIndexOf(',"config"')));
      const service = await server.state.catalog.loadTable(ctx, 'spark', { namespace: ['shared'], name });
      t.same(serializeTableMetadata(metadata), serializeTableMetadata(service.metadata), `${name}: REST body is the stored metadata`);
      const plan = await planScan(service.metadata, io);
      t.equal(plan.totalRecords, records, `${name}: ${records} rows`);
      t.equal(plan.deleteFiles.length, deletes, `${name}: ${deletes} delete files`);
    };
    const lineitem = sharedTable('lineitem_iceberg');
    const [v1, v2] = metadataFiles(lineitem);
    // Its two metadata files share one folder, so they are one table (docs/catalog.md "Table
    // locations"): registered at v1, then pointed at v2.
    await register('lineitem', v1 as string);
    await check('lineitem', 60175, 0);
    const second = await client.post('/v1/spark/namespaces/shared/register', { name: 'lineitem_v2', 'metadata-location': v2 });
    t.equal(second.status, 400, 'not a second table in the same folder');
    await register('lineitem', v2 as string, true);
    for (const name of ['mytable', 'mytable_partitioned', 'partition_integer', 'partition_timestamptz']) await register(name, metadataFiles(sharedTable(name)).at(-1) as string);
    const listed = await client.get('/v1/spark/namespaces/shared/tables');
    t.equal(listed.body.identifiers.length, 5);

    const expected: [string, number, number][] = [
      ['lineitem', 51793, 0],
      ['mytable', 6, 4],
      ['mytable_partitioned', 6, 3],
      ['partition_integer', 2, 0],
      ['partition_timestamptz', 2, 0],
    ];
    for (const [name, records, deletes] of expected) await check(name, records, deletes);
    // Time travel within a registered table: v2 still knows the first snapshot.
    const lv2 = await server.state.catalog.loadTable(ctx, 'spark', { namespace: ['shared'], name: 'lineitem' });
    t.equal((await planScan(lv2.metadata, io, { kind: 'snapshot-id', snapshotId: 7817332053627255703n })).totalRecords, 60175);
    // Without the remapping the same registration cannot read the manifests.
    const plainIo = await server.state.catalog.fileIOFor(ctx, 'default');
    await t.rejects(planScan(lv2.metadata, plainIo));
  });
});
