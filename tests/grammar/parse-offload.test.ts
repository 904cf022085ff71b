/**
 * Long statements parse on a worker thread with the same outcome as on the event loop: the same
 * IR, the same syntax errors, the same secret spans and cache rules; and the event loop keeps
 * turning meanwhile.
 */
import t from 'tap';
import { Parser } from '../../grammar/parser.js';
import { ParseOffload } from '../../grammar/parse-offload.js';

const rows = (n: number): string => Array.from({ length: n }, (_, i) => `(${i}, 'name ${i}', ${i}.25, DATE '2024-01-0${(i % 9) + 1}')`).join(', ');
const longInsert = `INSERT INTO sales.orders (id, name, amount, day) VALUES ${rows(400)}`;

t.test('a long statement gives what the event-loop parser gives', async (t) => {
  const parser = new Parser({ cacheSize: 10 });
  const offload = new ParseOffload(parser, { thresholdChars: 1024 });
  t.teardown(() => offload.close());
  const reference = new Parser({ cacheSize: 0 });
  t.ok(longInsert.length > 1024);

  const r = await offload.tryParse(longInsert);
  const expected = reference.tryParse(longInsert);
  t.ok(r.ok && expected.ok);
  if (r.ok && expected.ok) t.same(r.statement, expected.statement, 'same IR');
  t.equal(parser.cacheStats.size, 1, 'kept in the shared cache');
  t.equal(await offload.tryParse(longInsert), r, 'the second parse is a cache hit');

  const broken = `${longInsert} ,, garbage`;
  const e = await offload.tryParse(broken);
  const eRef = reference.tryParse(broken);
  t.notOk(e.ok);
  if (!e.ok && !eRef.ok) {
    t.equal(e.error.message, eRef.error.message, 'same syntax error');
    t.equal(e.error.sqlState, '42601');
    t.same(e.error.params, eRef.error.params);
  }

  const secret = `CREATE USER alice EMAIL 'alice@example.com' PASSWORD 'Tr0ub4dor&3-correct-horse' COMMENT '${'x'.repeat(2000)}'`;
  const s = await offload.tryParse(secret);
  const sRef = reference.tryParse(secret);
  t.ok(s.ok && sRef.ok);
  if (s.ok && sRef.ok) {
    t.equal(s.secrets.length, 1);
    t.same(s.secrets, sRef.secrets, 'same secret spans');
  }
  t.equal(parser.cacheStats.size, 1, 'statements with secrets and failures are not kept');

  const short = await offload.tryParse('SELECT 1');
  t.ok(short.ok, 'short texts parse on the event loop');
});

t.test('the event loop turns while a long statement parses', async (t) => {
  const parser = new Parser({ cacheSize: 0 });
  const offload = new ParseOffload(parser);
  t.teardown(() => offload.close());
  await offload.tryParse(`SELECT 1 FROM t WHERE a IN (${Array.from({ length: 1000 }, (_, i) => i).join(', ')})`); // the worker's grammar loads
  const huge = `INSERT INTO t VALUES ${rows(3000)}`;
  let turns = 0;
  let parsing = true;
  const spin = (): void => {
    turns++;
    if (parsing) setImmediate(spin);
  };
  setImmediate(spin);
  const r = await offload.tryParse(huge);
  parsing = false;
  t.ok(r.ok);
  t.ok(turns > 10, `the event loop turned ${turns} times during the parse`);
});
