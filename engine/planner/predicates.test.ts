import t from 'tap';
import fc from 'fast-check';
import { Parser } from '../../grammar/index.js';
import type { Expr } from '../../grammar/index.js';
import { Types } from '../../catalog/iceberg/types.js';
import type { PrimitiveType } from '../../catalog/iceberg/types.js';
import { conjuncts, literalForType, timestampMicros } from './predicates.js';

const parser = new Parser();
function expr(sql: string): Expr {
  const s = parser.parse(`SELECT ${sql}`);
  if (s.kind !== 'Query' || s.body.kind !== 'Project' || s.body.items[0]!.kind !== 'SelectExpr') throw new Error('not an expression');
  return s.body.items[0]!.expr;
}
const lit = (sql: string, type: PrimitiveType): unknown => literalForType(expr(sql), type);

t.test('literals convert only when the comparison is exact', async (t) => {
  t.equal(lit('42', Types.int), 42);
  t.equal(lit('-42', Types.long), -42n);
  t.equal(lit('2147483648', Types.int), undefined, 'out of int range');
  t.equal(lit('1.5', Types.int), undefined);
  t.equal(lit('0.05', Types.decimal(15, 2)), 5n);
  t.equal(lit('24', Types.decimal(15, 2)), 2400n);
  t.equal(lit('0.055', Types.decimal(15, 2)), undefined, 'more digits than the scale');
  t.equal(lit('3', Types.double), 3);
  t.equal(lit('0.1', Types.double), undefined, 'binary floating point');
  t.equal(lit("'x'", Types.string), 'x');
  t.equal(lit('1', Types.string), undefined);
  t.equal(lit("DATE '1970-01-02'", Types.date), 1);
  t.equal(lit("CAST('1970-01-02' AS DATE)", Types.date), 1);
  t.equal(lit("'1970-01-02'", Types.date), 1);
  t.equal(lit("DATE '1970-01-02' + INTERVAL 1 DAY", Types.date), 2, 'date + interval folds (a midnight TIMESTAMP)');
  t.equal(lit("DATE '1970-01-02' + INTERVAL 1 HOUR", Types.date), undefined, 'not midnight: a date column compares differently');
  t.equal(lit("DATE '1970-01-02' + INTERVAL 1 HOUR", Types.timestamp), 86_400_000_000n + 3_600_000_000n);
  t.equal(lit("DATE '1970-01-31' + INTERVAL '1' MONTH", Types.date), 58, 'clamped to Feb 28th');
  t.equal(lit("DATE '1994-01-01' + INTERVAL '1 year'", Types.date), 9131, '1995-01-01');
  t.equal(lit("CAST('1970-01-10' AS DATE) - 3", Types.date), 6);
  t.equal(lit("DATE '1970-01-10' * 3", Types.date), undefined);
  t.equal(lit('x + INTERVAL 1 DAY', Types.date), undefined);
  t.equal(lit("TIMESTAMP '1970-01-01 00:00:01'", Types.timestamp), 1_000_000n);
  t.equal(lit("DATE '1970-01-02'", Types.timestamp), 86_400_000_000n);
  t.equal(lit("'1970-01-01 00:00:01+01'", Types.timestamp), undefined, 'a zoned literal against a naive column');
  t.equal(lit("TIMESTAMPTZ '1970-01-01 01:00:00+01'", Types.timestamptz), 0n);
  t.equal(lit("'1970-01-01T00:00:00Z'", Types.timestamptz), 0n);
  t.equal(lit("'1970-01-01 00:00:00'", Types.timestamptz), undefined, 'naive against timestamptz depends on the session zone');
  t.equal(lit('TRUE', Types.boolean), true);
  t.equal(lit('x', Types.int), undefined, 'a column is not a literal');
});

t.test('timestamp texts', async (t) => {
  t.same(timestampMicros('1970-01-02'), { micros: 86_400_000_000n, zoned: false });
  t.same(timestampMicros('1970-01-01 00:00:01.5'), { micros: 1_500_000n, zoned: false });
  t.same(timestampMicros('1970-01-01T02:00:00+02'), { micros: 0n, zoned: true });
  t.same(timestampMicros('1970-01-01 02:00:00 +02:00'), { micros: 0n, zoned: true });
  t.same(timestampMicros('1969-12-31 23:00:00-01:00'), { micros: 0n, zoned: true });
  fc.assert(fc.property(fc.integer({ min: -62_000_000_000_000, max: 253_000_000_000_000 }), (ms) => {
    const iso = new Date(ms).toISOString();
    return timestampMicros(iso).micros === BigInt(ms) * 1000n && timestampMicros(iso.replace('T', ' ').replace('Z', '')).micros === BigInt(ms) * 1000n;
  }));
});

t.test('conjuncts split AND only', async (t) => {
  t.equal(conjuncts(expr('a = 1 AND (b = 2 AND c = 3)')).length, 3);
  t.equal(conjuncts(expr('a = 1 OR b = 2')).length, 1);
});
