/**
 * Robustness over the grammar's statement corpus: every valid statement either plans (bind, prune,
 * fragment, unparse) or is refused with a registry error; nothing throws anything else (the unparse
 * hook throws a plain Error on any table reference the binder did not replace).
 */
import t from 'tap';
import { FloeError, Parser } from '../../grammar/index.js';
import type { Statement } from '../../grammar/index.js';
import { newTableMetadata } from '../../catalog/iceberg/table-metadata.js';
import { schema } from '../../catalog/iceberg/schema.js';
import { nestedField, Types } from '../../catalog/iceberg/types.js';
import { bindStatement, checkIsolation, fragmentQuery, planScans, statementQuery, tableKey } from '../../engine/planner/index.js';
import type { BindRequest, RelationFacts } from '../../engine/planner/index.js';
import { loadValidCorpus } from '../grammar/corpus.js';
import { SYSTEM_TABLES } from './planner-fixtures.js';

const COLUMNS = ['a', 'b', 'c', 'd', 'e', 'x', 'y', 'z', 'id', 'k', 'v', 'name', 'n', 's', 't', 'ts', 'amount', 'region', 'price', 'qty'];
const metadata = newTableMetadata({
  schema: schema(0, COLUMNS.map((c, i) => nestedField(i + 1, c, i % 2 === 0 ? Types.long : Types.string))),
  location: '/w/any', now: 0, tableUuid: '00000000-0000-4000-8000-000000000001',
});

t.test('every corpus statement plans or is refused with a registry error', async (t) => {
  const parser = new Parser();
  let planned = 0;
  let refused = 0;
  let other = 0;
  const refusals: string[] = [];
  for (const item of loadValidCorpus()) {
    const parsed = parser.tryParse(item.sql);
    if (!parsed.ok) continue;
    const statement = parsed.statement;
    const facts = new Map<string, RelationFacts>();
    const request: BindRequest = { defaults: { catalog: 'lake', namespace: ['main'] }, facts, systemTables: SYSTEM_TABLES, parse: (s: string): Statement => parser.parse(s) };
    try {
      if (statementQuery(statement) === undefined) {
        checkIsolation(statement);
        other++;
        continue;
      }
      let r = bindStatement(statement, request);
      for (let round = 0; r.kind === 'needs' && round < 5; round++) {
        for (const n of r.tables) facts.set(tableKey(n), { kind: 'table', metadata });
        r = bindStatement(statement, request);
      }
      if (r.kind !== 'bound') throw new Error(`${item.id}: still needs tables`);
      const plan = fragmentQuery(r.query, planScans(r.query, r.query.scans.map(() => [])), { maxFragmentsPerScan: 2, minRowsPerFragment: 1 });
      // The unparse hook throws (a plain Error, failing this test) on any table reference the binder did not replace.
      t.ok(plan.fragments.length >= 1);
      planned++;
    } catch (e) {
      if (!(e instanceof FloeError)) {
        t.fail(`${item.id}: ${(e as Error).stack ?? String(e)}\n${item.sql}`);
        continue;
      }
      t.not(e.sqlState, 'XX000', `${item.id}: ${e.message}`);
      refusals.push(`${e.sqlState} ${e.message} ← ${item.sql.replace(/\s+/g, ' ').slice(0, 100)}`);
      refused++;
    }
  }
  t.comment(refusals.join('\n'));
  t.ok(planned > 50, `${planned} planned, ${refused} refused with a registry error, ${other} not queries`);
});
