/**
 * Pruning against real manifests written by Spark (../shared/data/iceberg): partition values of
 * identity-partitioned int, string and timestamptz columns, and column bounds of lineitem.
 */
import t from 'tap';
import { readFileSync } from 'node:fs';
import { Parser } from '../../grammar/index.js';
import type { Statement } from '../../grammar/index.js';
import { planScan } from '../../catalog/iceberg/scan.js';
import { parseTableMetadata } from '../../catalog/iceberg/table-metadata.js';
import { bindStatement, planScans, tableKey } from '../../engine/planner/index.js';
import type { PlannedScan, RelationFacts } from '../../engine/planner/index.js';
import { metadataFiles, remappedIo, sharedTable } from '../iceberg/helpers.js';
import { SYSTEM_TABLES } from './planner-fixtures.js';

const parser = new Parser();

async function plan(table: string, sql: string): Promise<PlannedScan> {
  const shared = sharedTable(table);
  const metadata = parseTableMetadata(readFileSync(metadataFiles(shared).at(-1)!, 'utf8'));
  const facts = new Map<string, RelationFacts>([[tableKey({ catalog: 'spark', namespace: ['db'], name: table }), { kind: 'table', metadata }]]);
  const r = bindStatement(parser.parse(sql), { defaults: { catalog: 'spark', namespace: ['db'] }, facts, systemTables: SYSTEM_TABLES, parse: (s: string): Statement => parser.parse(s) });
  if (r.kind !== 'bound') throw new Error('unbound');
  const tasks = await Promise.all(r.query.scans.map(async (s) => (await planScan(s.metadata, remappedIo(shared), s.selector)).tasks));
  return planScans(r.query, tasks)[0]!;
}

t.test('identity partition on an int column', async (t) => {
  const p = await plan('partition_integer', 'SELECT user_id FROM partition_integer WHERE partition_col = 42');
  t.same(p.tasks.map((x) => x.file.partition), [[42]]);
  t.equal(p.prunedFiles, 1);
  t.equal(p.estimatedRows, 1);
  t.equal((await plan('partition_integer', 'SELECT user_id FROM partition_integer WHERE partition_col > 2000')).tasks.length, 0);
  t.equal((await plan('partition_integer', 'SELECT user_id FROM partition_integer WHERE partition_col IN (1337, 7)')).tasks.length, 1);
  t.equal((await plan('partition_integer', 'SELECT user_id FROM partition_integer WHERE partition_col IS NULL')).tasks.length, 0);
  t.equal((await plan('partition_integer', "SELECT user_id FROM partition_integer WHERE event_type = 'click'")).tasks.length, 1, 'by string bounds');
});

t.test('identity partition on a string column, and on timestamptz', async (t) => {
  const p = await plan('mytable_partitioned', "SELECT id FROM mytable_partitioned WHERE name IN ('d', 'e')");
  t.same(p.tasks.map((x) => x.file.partition[0]).sort(), ['d', 'e']);
  const tz = await plan('partition_timestamptz', "SELECT user_id FROM partition_timestamptz WHERE partition_col >= TIMESTAMPTZ '2023-06-01 00:00:00+00'");
  t.same(tz.tasks.map((x) => x.file.partition[0]), [1692695720000000n]);
  const naive = await plan('partition_timestamptz', "SELECT user_id FROM partition_timestamptz WHERE partition_col >= '2023-06-01 00:00:00'");
  t.equal(naive.tasks.length, 2, 'a naive literal against timestamptz depends on the session zone: not pushed');
});

t.test('lineitem bounds: the one file survives a matching filter, not an impossible one', async (t) => {
  t.equal((await plan('lineitem_iceberg', "SELECT count(*) FROM lineitem_iceberg WHERE l_shipdate >= DATE '1994-01-01'")).tasks.length, 1);
  const none = await plan('lineitem_iceberg', "SELECT count(*) FROM lineitem_iceberg WHERE l_shipdate >= DATE '2001-01-01'");
  t.equal(none.tasks.length, 0);
  t.equal(none.estimatedRows, 0);
  // v2 deleted l_extendedprice < 10000: the bounds say so.
  t.equal((await plan('lineitem_iceberg', 'SELECT count(*) FROM lineitem_iceberg WHERE l_extendedprice < 9999')).tasks.length, 0);
  t.equal((await plan('lineitem_iceberg', 'SELECT count(*) FROM lineitem_iceberg FOR VERSION AS OF 7817332053627255703 WHERE l_extendedprice < 9999')).tasks.length, 1, 'the first snapshot still holds them');
});
