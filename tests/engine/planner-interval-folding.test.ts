/**
 * Date and timestamp arithmetic in pushed-down predicates is folded exactly as DuckDB evaluates it:
 * random `DATE|TIMESTAMP ± INTERVAL n unit` and `DATE ± n` against DuckDB itself.
 */
import t from 'tap';
import fc from 'fast-check';
import { DuckDBInstance } from '@duckdb/node-api';
import { Parser } from '../../grammar/index.js';
import { formatDate, formatTimestamp } from '../../catalog/iceberg/datetime.js';
import { Types } from '../../catalog/iceberg/types.js';
import { literalForType } from '../../engine/planner/predicates.js';

t.test('folded arithmetic equals DuckDB', async (t) => {
  const db = await DuckDBInstance.create(':memory:');
  const c = await db.connect();
  const parser = new Parser();
  const cases = fc.record({
    days: fc.integer({ min: -20_000, max: 40_000 }),
    secondOfDay: fc.option(fc.integer({ min: 0, max: 86_399 }), { nil: undefined }),
    op: fc.constantFrom('+', '-'),
    n: fc.integer({ min: 0, max: 400 }),
    unit: fc.constantFrom('DAY', 'WEEK', 'MONTH', 'YEAR', 'HOUR', 'MINUTE', 'SECOND', ''),
    form: fc.constantFrom('number', 'string', 'string-unit'),
  });
  let compared = 0;
  await fc.assert(
    fc.asyncProperty(cases, async ({ days, secondOfDay, op, n, unit, form }) => {
      const base = secondOfDay === undefined ? `DATE '${formatDate(days)}'` : `TIMESTAMP '${formatTimestamp(BigInt(days) * 86_400_000_000n + BigInt(secondOfDay) * 1_000_000n, 'micros', false).replace('T', ' ')}'`;
      let rhs: string;
      if (unit === '') rhs = String(n);
      else if (form === 'number') rhs = `INTERVAL ${n} ${unit}`;
      else if (form === 'string') rhs = `INTERVAL '${n}' ${unit}`;
      else rhs = `INTERVAL '${n} ${unit.toLowerCase()}s'`;
      if (unit === '' && secondOfDay !== undefined) return; // timestamp ± integer is not SQL
      const sql = `${base} ${op} ${rhs}`;
      const s = parser.parse(`SELECT ${sql}`);
      if (s.kind !== 'Query' || s.body.kind !== 'Project' || s.body.items[0]!.kind !== 'SelectExpr') throw new Error('shape');
      const folded = literalForType(s.body.items[0]!.expr, Types.timestamp);
      const duck = (await c.runAndReadAll(`SELECT epoch_us(CAST(${sql} AS TIMESTAMP))`)).getRows()[0]![0];
      if (folded === undefined) throw new Error(`not folded: ${sql}`);
      compared++;
      if (BigInt(duck as bigint) !== folded) throw new Error(`${sql}: DuckDB ${String(duck)}, folded ${String(folded)}`);
    }),
    { numRuns: 300 },
  );
  t.ok(compared > 200, `${compared} expressions compared`);
  c.closeSync();
});
