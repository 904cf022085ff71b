import t from 'tap';
import { tableFromIPC } from 'apache-arrow';
import { toArrowIpc, uniqueNames } from './arrow.js';

t.test('repeated column names get suffixes in Arrow, each column keeps its own type and values', async (t) => {
  t.same(uniqueNames(['a', 'b', 'a', 'a_1', 'a']), ['a', 'b', 'a_2', 'a_1', 'a_3']);
  t.same(uniqueNames(['1', '1']), ['1', '1_1']);
  const table = tableFromIPC(toArrowIpc(['c', 'c', 'c_1'], ['INTEGER', 'VARCHAR', 'BIGINT'], [[0, '', 7], [5, 'x', '9007199254740993']]));
  t.same(table.schema.fields.map((f) => `${f.name}: ${String(f.type)}`), ['c: Int32', 'c_2: Utf8', 'c_1: Int64']);
  t.same([...table.getChildAt(0)!.toArray()], [0, 5]);
  t.same(table.getChildAt(1)!.toArray(), ['', 'x']);
  t.same([...table.getChildAt(2)!.toArray()], [7n, 9007199254740993n]);
});
