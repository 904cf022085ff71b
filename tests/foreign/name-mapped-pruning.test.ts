/**
 * Issue 16, class 4: name-mapped files (written without Parquet field ids, as migrated tables are).
 * Pruning by manifest statistics and the reader must resolve a column the same way: a file whose
 * writer computed statistics for a column the name mapping does not resolve (the reader reads NULL)
 * must not be skipped by `WHERE b IS NULL`. And the property, over random predicates on tables that
 * mix files with and without ids, identity partitions and honest or misleading statistics: pruning
 * never removes a row the unpruned scan returns.
 */
import t from 'tap';
import * as path from 'node:path';
import { craftTable, openForeignCatalog, seededRandom } from '../helpers/foreign-tables.js';

const { root, duck, floe, admin } = await openForeignCatalog(t, 'namemap');

const schema = {
  type: 'struct', 'schema-id': 0,
  fields: [
    { id: 1, name: 'a', required: false, type: 'int' },
    { id: 2, name: 'b', required: false, type: 'long' },
    { id: 3, name: 's', required: false, type: 'string' },
    { id: 4, name: 'p', required: false, type: 'int' },
  ],
};
// The mapping names b `b` only; a file that calls it `B` (another engine's case folding) reads NULL for b.
const nameMapping = JSON.stringify([
  { 'field-id': 1, names: ['a'] }, { 'field-id': 2, names: ['b'] }, { 'field-id': 3, names: ['s', 'str'] }, { 'field-id': 4, names: ['p'] },
]);
const all = { a: { id: 1, type: 'int' }, b: { id: 2, type: 'long' }, s: { id: 3, type: 'string' } } as const;

const location = await craftTable(duck, {
  dir: path.join(root, 'mapped'),
  formatVersion: 2,
  schemas: [schema],
  specs: [{ 'spec-id': 0, fields: [{ 'source-id': 4, 'field-id': 1000, name: 'p', transform: 'identity' }] }],
  properties: { 'schema.name-mapping.default': nameMapping },
  files: [
    // With field ids, honest statistics.
    { select: "SELECT range::INTEGER AS a, (range * 10)::BIGINT AS b, 'x' || range AS s FROM range(0, 5)", fieldIds: { a: 1, b: 2, s: 3 }, partition: [1], metricsFrom: all },
    // Without ids, honest statistics, `str` for s.
    { select: "SELECT (range)::INTEGER AS a, (range * 10)::BIGINT AS b, 'y' || range AS str FROM range(5, 10)", partition: [2], metricsFrom: { a: all.a, b: all.b, str: all.s } },
    // Without ids, `B` instead of `b`: the writer counted B as field 2 (no nulls, 100..140); the reader reads NULL.
    { select: "SELECT (range)::INTEGER AS a, (100 + range * 10)::BIGINT AS B, 'z' || range AS s FROM range(10, 15)", partition: [3], metricsFrom: { a: all.a, B: all.b, s: all.s } },
    // Without ids and without b at all, but statistics claiming values for it.
    { select: "SELECT (range)::INTEGER AS a, 'w' || range AS s FROM range(15, 18)", partition: [null], metricsFrom: { a: all.a, s: all.s },
      valueCounts: new Map([[2, 3]]), nullValueCounts: new Map([[2, 0]]) },
    // With ids again, some nulls.
    { select: "SELECT range::INTEGER AS a, CASE WHEN range % 2 = 0 THEN NULL ELSE range END::BIGINT AS b, NULL::VARCHAR AS s FROM range(18, 24)", fieldIds: { a: 1, b: 2, s: 3 }, partition: [1], metricsFrom: all },
  ],
});
await floe.state.catalog.registerTable(admin, 'ext', ['ns'], { name: 'mapped', metadataLocation: location });

t.test('WHERE b IS NULL returns the rows that read b as NULL', async (t) => {
  const unfiltered = await floe.sql('SELECT a FROM ext.ns.mapped WHERE coalesce(b IS NULL, false) ORDER BY a');
  const filtered = await floe.sql('SELECT a FROM ext.ns.mapped WHERE b IS NULL ORDER BY a');
  t.same(filtered.rows, unfiltered.rows);
  t.same(filtered.rows.map((r) => r[0]), [10, 11, 12, 13, 14, 15, 16, 17, 18, 20, 22]);
  t.same((await floe.sql('SELECT count(*) FROM ext.ns.mapped WHERE b >= 100')).rows, [[0]], 'B is not b');
  t.same((await floe.sql("SELECT a FROM ext.ns.mapped WHERE s = 'y7'")).rows, [[7]], 'str is s by the mapping');
});

function randomPredicate(r: () => number): string {
  const pick = <T>(xs: readonly T[]): T => xs[Math.floor(r() * xs.length)]!;
  const op = pick(['=', '<', '<=', '>', '>=', '<>']);
  switch (pick(['a', 'b', 's', 'p', 'null', 'in', 'like'])) {
    case 'a': return `a ${op} ${Math.floor(r() * 26) - 1}`;
    case 'b': return `b ${op} ${Math.floor(r() * 160) - 5}`;
    case 's': return `s ${op} '${pick(['w', 'x', 'y', 'z'])}${Math.floor(r() * 25)}'`;
    case 'p': return `p ${op} ${Math.floor(r() * 5)}`;
    case 'null': return `${pick(['a', 'b', 's', 'p'])} IS ${r() < 0.5 ? 'NOT ' : ''}NULL`;
    case 'in': return `${pick(['a', 'b', 'p'])} IN (${[1, 2, 3].map(() => Math.floor(r() * 150)).join(', ')})`;
    default: return `s LIKE '${pick(['w', 'x', 'y', 'z', 'x1', 'q'])}%'`;
  }
}

t.test('property: pruning never removes a row the unpruned scan returns', async (t) => {
  const r = seededRandom(0x5eed);
  let prunedSomething = 0;
  for (let i = 0; i < 80; i++) {
    const n = 1 + Math.floor(r() * 3);
    const where = Array.from({ length: n }, () => randomPredicate(r)).join(' AND ');
    // coalesce(...) hides the predicate from pushdown: the reference reads every file.
    const reference = await floe.sql(`SELECT a, b, s, p FROM ext.ns.mapped WHERE coalesce((${where}), false) ORDER BY a`);
    const pruned = await floe.sql(`SELECT a, b, s, p FROM ext.ns.mapped WHERE ${where} ORDER BY a`);
    t.same(pruned.rows, reference.rows, where);
    const plan = (await floe.sql(`EXPLAIN SELECT a FROM ext.ns.mapped WHERE ${where}`)).rows.map((row) => String(row[0])).join('\n');
    if (!/: 5 files/.test(plan)) prunedSomething++;
  }
  t.ok(prunedSomething > 10, `pruning took part (${prunedSomething} of 80 plans dropped files)`);
});
