/**
 * The comparable form of locations behind the overlap checks: one form for every spelling of a
 * place (s3/s3a/s3n, trailing and doubled slashes, ADLS hosts of one account, file URIs and plain
 * paths), `.`/`..` refused, and "lies under" decided by whole segments (`orders` vs `orders_old`).
 */
import t from 'tap';
import fc from 'fast-check';
import { comparableLocation, sameClaims } from './locations.js';

const keyOf = (l: string): string => {
  const c = comparableLocation(l);
  if (c.kind === 'invalid') throw new Error(`${l}: ${c.why}`);
  return c.key;
};
/** Whether `a` is `b` or lies under it, as the checks decide it (key prefix). */
const within = (a: string, b: string): boolean => keyOf(a).startsWith(keyOf(b));

t.test('one form for every spelling of a place', async (t) => {
  for (const [a, b] of [
    ['s3://b/warehouse/db', 's3a://b/warehouse/db/'],
    ['s3n://b/warehouse//db', 's3://b/warehouse/db'],
    ['s3://b', 's3://b/'],
    ['abfss://fs@acct.dfs.core.windows.net/w/t', 'wasbs://fs@acct.blob.core.windows.net/w/t/'],
    ['abfs://fs@acct.dfs.core.windows.net/w/t', 'abfss://fs@ACCT.dfs.core.windows.net/w/t'],
    ['gs://b/w/t/', 'gs://b/w/t'],
    ['/data/w/t', 'file:///data/w/t'],
    ['file:/data/w/t', 'file://localhost/data/w/t/'],
    ['./data/t', 'data/t/'],
  ] as const) {
    t.equal(keyOf(a), keyOf(b), `${a} = ${b}`);
  }
  t.equal(keyOf('s3://b/w/t'), 's3://b/w/t/', 'keys end with one slash');
  t.not(keyOf('s3://b/w/t'), keyOf('gs://b/w/t'), 'another store is another place');
  t.not(keyOf('abfss://fs@acct.dfs.core.windows.net/w'), keyOf('abfss://other@acct.dfs.core.windows.net/w'), 'another container');
  t.not(keyOf('s3://b/w/T'), keyOf('s3://b/w/t'), 'keys are case-sensitive');
  t.not(keyOf('data/t'), keyOf('/data/t'), 'a relative path is not an absolute one');
});

t.test('segments, not characters', async (t) => {
  t.ok(within('s3://b/w/db/orders/data', 's3://b/w/db/orders'));
  t.ok(within('s3://b/w/db/orders', 's3://b/w/db/orders'));
  t.notOk(within('s3://b/w/db/orders_old', 's3://b/w/db/orders'), 'orders_old is not under orders');
  t.notOk(within('s3://b/w/db/orders', 's3://b/w/db/orders_old'));
  t.ok(within('s3://b/w/db/orders', 's3://b'), 'the bucket holds everything in it');
  // Range below a key: [key, key with its last '/' made '0') holds exactly the keys under it.
  fc.assert(fc.property(fc.array(fc.stringMatching(/^[a-z0-9_.\-]{1,4}$/), { minLength: 1, maxLength: 4 }), fc.array(fc.stringMatching(/^[a-z0-9_.\-]{1,4}$/), { minLength: 1, maxLength: 4 }), (a, b) => {
    const ka = comparableLocation(`s3://b/${a.join('/')}`);
    const kb = comparableLocation(`s3://b/${b.join('/')}`);
    if (ka.kind === 'invalid' || kb.kind === 'invalid') return true;
    const under = ka.key.startsWith(kb.key);
    const inRange = ka.key >= kb.key && ka.key < `${kb.key.slice(0, -1)}0`;
    const segmentwise = b.length <= a.length && b.every((s, i) => a[i] === s);
    return under === inRange && under === segmentwise;
  }));
});

t.test('places a client would read as another place are refused', async (t) => {
  for (const l of ['s3://b/w/db/../other', 's3://b/w/./db', 's3://b/w/%2E%2E/x', 's3://b/w/%2e/x', 'data/../x', 's3://', 'abfss://nocontainer/w']) {
    t.equal(comparableLocation(l).kind, 'invalid', l);
  }
  t.equal(comparableLocation('s3://b/w/..data/x').kind, 'ok', 'a name that only starts with dots is a name');
});

t.test('claim lists compare by what and where, in order', async (t) => {
  const a = [{ what: 'location', location: 's3://b/w/t' }, { what: 'write.data.path', location: 's3://b/w/t/d' }];
  t.ok(sameClaims(a, [...a]));
  t.notOk(sameClaims(a, [a[0]!]));
  t.notOk(sameClaims(a, [a[0]!, { what: 'write.data.path', location: 's3://b/w' }]));
});
