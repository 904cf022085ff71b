/**
 * Catalog statements in SQL on both store backends: schemas, tables with Iceberg types and
 * partition transforms, ALTER TABLE evolution, SHOW and DESCRIBE, drops, and the errors users
 * get; the tables SQL creates are the catalog's own (visible to the REST catalog).
 */
import t from 'tap';
import { Floe } from '../index.js';
import { floeErrorOf } from './helpers/floe-error.js';
import { currentSchema, defaultPartitionSpec } from '../catalog/iceberg/table-metadata.js';
import { transformToString } from '../catalog/iceberg/transforms.js';
import { onEachBackend } from './helpers/stores.js';

await onEachBackend(t, async (t, store) => {
  const floe = await Floe.open({ store });
  t.teardown(() => floe.close());
  const sql = (text: string) => floe.sql(text);
  const fails = (text: string) => floeErrorOf(floe.sql(text), text);
  const ctx = { tenantId: 'default', principalId: 'test', roles: ['tenant_admin'] };

  await t.test('schemas', async (t) => {
    await sql('CREATE SCHEMA sales');
    await sql('CREATE SCHEMA IF NOT EXISTS sales');
    t.match(await fails('CREATE SCHEMA sales'), { code: 'DUPLICATE_OBJECT' });
    await sql('CREATE SCHEMA "default".staging');
    const schemas = await sql('SHOW SCHEMAS');
    t.same(schemas.rows.map((r) => r[0]), ['sales', 'staging']);
    t.same((await sql("SHOW SCHEMAS LIKE 'sal%'")).rows, [['sales']]);
    t.match(await fails('SHOW SCHEMAS IN nowhere'), { code: 'UNDEFINED_CATALOG', sqlState: '3D000' });
  });

  await t.test('create table with Iceberg types and partition transforms', async (t) => {
    await sql(`CREATE TABLE sales.orders (
      id bigint NOT NULL COMMENT 'order id', customer int, total decimal(12,2), placed timestamptz, day date,
      note string, tags list<string>, attrs map<string, string>, ship struct<city: string, zip: int>, code fixed(4), ref uuid, raw binary, ok boolean
    ) PARTITIONED BY (day(placed), bucket(8, customer), truncate(4, note)) TBLPROPERTIES ('write.delete.mode' = 'merge-on-read')`);
    const loaded = await floe.state.catalog.loadTable(ctx, 'default', { namespace: ['sales'], name: 'orders' });
    const schema = currentSchema(loaded.metadata);
    t.same(schema.fields.map((f) => f.name), ['id', 'customer', 'total', 'placed', 'day', 'note', 'tags', 'attrs', 'ship', 'code', 'ref', 'raw', 'ok']);
    t.match(schema.fields[0], { required: true, doc: 'order id', type: { kind: 'long' } });
    t.match(schema.fields[2], { type: { kind: 'decimal', precision: 12, scale: 2 } });
    t.same(defaultPartitionSpec(loaded.metadata).fields.map((f) => transformToString(f.transform)), ['day', 'bucket[8]', 'truncate[4]']);
    t.equal(loaded.metadata.properties.get('write.delete.mode'), 'merge-on-read');
    const ids = new Set<number>();
    const collect = (type: unknown): void => {
      const x = type as { kind: string; fields?: { id: number; type: unknown }[]; elementId?: number; element?: unknown; keyId?: number; valueId?: number; key?: unknown; value?: unknown };
      for (const f of x.fields ?? []) { ids.add(f.id); collect(f.type); }
      if (x.elementId !== undefined) { ids.add(x.elementId); collect(x.element); }
      if (x.keyId !== undefined) { ids.add(x.keyId); ids.add(x.valueId!); collect(x.key); collect(x.value); }
    };
    collect({ kind: 'struct', fields: schema.fields });
    t.equal(ids.size, loaded.metadata.lastColumnId, 'every field id is unique and counted');

    await sql('CREATE TABLE IF NOT EXISTS sales.orders (x int)');
    t.match(await fails('CREATE TABLE sales.orders (x int)'), { code: 'DUPLICATE_TABLE', sqlState: '42P07' });
    t.match(await fails('CREATE TABLE nowhere.t (x int)'), { code: 'UNDEFINED_SCHEMA' });
    t.match(await fails('CREATE TABLE sales.bad (x int, X bigint)'), { code: 'DUPLICATE_OBJECT' });
    t.match(await fails('CREATE TABLE sales.bad (x int) PARTITIONED BY (day(y))'), { code: 'UNDEFINED_COLUMN', sqlState: '42703' });
    t.match(await fails('CREATE TABLE sales.bad (x decimal(40,2))'), { code: 'INVALID_PARAMETER' });
  });

  await t.test('SHOW TABLES and DESCRIBE', async (t) => {
    await sql('CREATE TABLE sales.customers (id int, name string)');
    t.same((await sql('SHOW TABLES IN sales')).rows, [['customers'], ['orders']]);
    const use = await sql('USE sales');
    t.same((await floe.sql('SHOW TABLES', { schema: use.session!.schema })).rows, [['customers'], ['orders']]);
    const d = await sql('DESCRIBE sales.orders');
    t.same(d.columns, ['column', 'type', 'nullable', 'partition_key', 'primary_key', 'comment']);
    t.same(d.rows[0], ['id', 'bigint', false, false, false, 'order id']);
    t.same(d.rows.find((r) => r[0] === 'placed'), ['placed', 'timestamptz', true, true, false, null]);
    t.same(d.rows.find((r) => r[0] === 'ship')?.[1], 'struct<city: varchar, zip: int>');
    t.match(await fails('DESCRIBE sales.nothing'), { code: 'UNDEFINED_TABLE', sqlState: '42P01' });
  });

  await t.test('ALTER TABLE evolves the schema and properties', async (t) => {
    await sql('ALTER TABLE sales.customers ADD COLUMN email string');
    await sql('ALTER TABLE sales.customers RENAME COLUMN name TO full_name');
    await sql('ALTER TABLE sales.customers ALTER COLUMN id TYPE bigint');
    await sql("ALTER TABLE sales.customers SET TBLPROPERTIES ('owner' = 'finance')");
    let m = (await floe.state.catalog.loadTable(ctx, 'default', { namespace: ['sales'], name: 'customers' })).metadata;
    t.same(currentSchema(m).fields.map((f) => [f.id, f.name, f.type.kind]), [[1, 'id', 'long'], [2, 'full_name', 'string'], [3, 'email', 'string']]);
    t.equal(m.properties.get('owner'), 'finance');
    await sql('ALTER TABLE sales.customers DROP COLUMN email');
    await sql("ALTER TABLE sales.customers UNSET TBLPROPERTIES ('owner')");
    m = (await floe.state.catalog.loadTable(ctx, 'default', { namespace: ['sales'], name: 'customers' })).metadata;
    t.same(currentSchema(m).fields.map((f) => f.name), ['id', 'full_name']);
    t.equal(m.schemas.length, 5, 'each change is a new schema');
    t.notOk(m.properties.has('owner'));
    t.match(await fails('ALTER TABLE sales.customers ALTER COLUMN full_name TYPE int'), { code: 'DATATYPE_MISMATCH', sqlState: '42804' });
    t.match(await fails('ALTER TABLE sales.customers ADD COLUMN id int'), { code: 'DUPLICATE_OBJECT' });
    t.match(await fails('ALTER TABLE sales.customers DROP COLUMN nope'), { code: 'UNDEFINED_COLUMN' });
    await sql('ALTER TABLE sales.customers DROP COLUMN IF EXISTS nope');
    t.match(await fails('ALTER TABLE sales.orders DROP COLUMN placed'), { code: 'OBJECT_IN_USE' });
    await sql('ALTER TABLE sales.customers RENAME TO staging.clients');
    t.same((await sql('SHOW TABLES IN staging')).rows, [['clients']]);
  });

  await t.test('drops', async (t) => {
    t.match(await fails('DROP SCHEMA sales'), { code: 'OBJECT_IN_USE' });
    await sql('DROP TABLE sales.orders');
    await sql('DROP TABLE IF EXISTS sales.orders');
    t.match(await fails('DROP TABLE sales.orders'), { code: 'UNDEFINED_TABLE' });
    await sql('DROP SCHEMA sales');
    await sql('DROP SCHEMA staging CASCADE');
    await sql('DROP SCHEMA IF EXISTS staging');
    t.notOk((await sql('SHOW SCHEMAS')).rows.some((r) => r[0] === 'staging' || r[0] === 'sales'));
  });

  await t.test('every statement is in history with type ddl or show', async (t) => {
    const h = await floe.state.history.list({ tenantId: 'default', principalId: 'x', isTenantAdmin: true }, { limit: 500 });
    t.ok(h.some((r) => r.query_type === 'ddl' && r.status === 'completed'));
    t.ok(h.some((r) => r.query_type === 'ddl' && r.status === 'failed' && r.error_code === 'DUPLICATE_TABLE'));
    t.ok(h.some((r) => r.query_type === 'show' && r.status === 'completed'));
  });
});
