/**
 * The planning loop: facts are asked for round by round (views within views), unanswered names are
 * missing (42P01), files are loaded once per scan, and the result carries class, plan and EXPLAIN.
 */
import t from 'tap';
import { FloeError, Parser } from '../../grammar/index.js';
import type { Statement } from '../../grammar/index.js';
import type { FileScanTask } from '../../catalog/iceberg/scan.js';
import { planQuery, tableKey } from '../../engine/planner/index.js';
import type { PlanningSource, RelationFacts, TableName } from '../../engine/planner/index.js';
import { SYSTEM_TABLES, tpchFacts } from './planner-fixtures.js';

const parser = new Parser();
const options = { defaults: { catalog: 'lake', namespace: ['tpch'] }, systemTables: SYSTEM_TABLES, parse: (s: string): Statement => parser.parse(s) };

function source(facts: Map<string, RelationFacts>, asked: TableName[][], files = 3): PlanningSource {
  return {
    relations: async (names) => {
      asked.push([...names]);
      return new Map(names.flatMap((n) => (facts.has(tableKey(n)) ? [[tableKey(n), facts.get(tableKey(n))!] as const] : [])));
    },
    tasks: async () =>
      Array.from({ length: files }, (_, i): FileScanTask => ({
        file: { content: 'data', filePath: `/w/f${i}.parquet`, fileFormat: 'PARQUET', partition: [], recordCount: 400_000, fileSizeInBytes: 1_000 },
        specId: 0, sequenceNumber: 1, snapshotId: 1n, positionDeletes: [], equalityDeletes: [],
      })),
  };
}

t.test('rounds, classification, plan and EXPLAIN', async (t) => {
  const facts = tpchFacts();
  facts.set(tableKey({ catalog: 'lake', namespace: ['tpch'], name: 'v_outer' }), { kind: 'view', sql: 'SELECT * FROM v_inner' });
  facts.set(tableKey({ catalog: 'lake', namespace: ['tpch'], name: 'v_inner' }), { kind: 'view', sql: 'SELECT l_returnflag, l_quantity FROM lineitem' });
  const asked: TableName[][] = [];
  const planned = await planQuery(parser.parse('SELECT l_returnflag, sum(l_quantity) FROM v_outer GROUP BY 1'), source(facts, asked), { ...options, fragments: { maxFragmentsPerScan: 3, minRowsPerFragment: 100_000 } });
  t.equal(planned.rounds, 3);
  t.same(asked.map((r) => r.map((n) => n.name)), [['v_outer'], ['v_inner'], ['lineitem']]);
  t.equal(planned.estimatedRows, 1_200_000);
  t.equal(planned.classification.workloadClass, 'medium', '1.2M rows');
  t.equal(planned.plan.fragments.length, 1, 'views are derived tables: one fragment');
  t.ok(planned.explain().some((l) => l.startsWith('Scan lake.tpch.lineitem')));
  const direct = await planQuery(parser.parse('SELECT l_returnflag, sum(l_quantity) FROM lineitem GROUP BY 1'), source(facts, []), { ...options, fragments: { maxFragmentsPerScan: 3, minRowsPerFragment: 100_000 }, classification: { session: 'batch' } });
  t.equal(direct.plan.fragments.length, 4, 'three partials and a final');
  t.match(direct.classification, { workloadClass: 'batch', source: 'session', automaticClass: 'medium' });
});

t.test('an unanswered name is missing', async (t) => {
  const e = await planQuery(parser.parse('SELECT * FROM nowhere'), source(tpchFacts(), []), options).catch((x: unknown) => x);
  t.ok(e instanceof FloeError && e.sqlState === '42P01');
});
