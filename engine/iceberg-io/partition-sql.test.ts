/** Partition transforms in SQL agree with the catalog's `applyTransform` (DuckDB evaluates the SQL). */
import t from 'tap';
import fc from 'fast-check';
import { DuckDBDateValue, DuckDBDecimalValue, DuckDBInstance, DuckDBTimestampTZValue, DuckDBTimestampValue } from '@duckdb/node-api';
import { applyTransform, Transforms } from '../../catalog/iceberg/transforms.js';
import type { Transform } from '../../catalog/iceberg/transforms.js';
import { Types } from '../../catalog/iceberg/types.js';
import type { PrimitiveType } from '../../catalog/iceberg/types.js';
import { decimalToString } from '../../catalog/iceberg/conversions.js';
import { transformSql } from './partition-sql.js';
import { isoDate, isoTimestampNanos } from '../exec/values.js';

const db = await DuckDBInstance.create(':memory:');
const conn = await db.connect();
t.teardown(() => conn.closeSync());

function literal(type: PrimitiveType, v: number | bigint | string): string {
  switch (type.kind) {
    case 'int': return `${v}::INTEGER`;
    case 'long': return `${v}::BIGINT`;
    case 'string': return `'${String(v).replace(/'/g, "''")}'`;
    case 'date': return `DATE '${isoDate(v as number)}'`;
    case 'timestamp': return `TIMESTAMP '${isoTimestampNanos((v as bigint) * 1000n, false)}'`;
    case 'timestamptz': return `CAST('${isoTimestampNanos((v as bigint) * 1000n, false)}+00' AS TIMESTAMPTZ)`;
    case 'decimal': return `CAST('${decimalToString(v as bigint, type.scale)}' AS DECIMAL(${type.precision},${type.scale}))`;
    default: throw new Error(type.kind);
  }
}

function plain(v: unknown): unknown {
  if (v instanceof DuckDBDecimalValue) return v.value;
  if (v instanceof DuckDBDateValue) return v.days;
  if (v instanceof DuckDBTimestampValue || v instanceof DuckDBTimestampTZValue) return v.micros;
  if (typeof v === 'bigint') return v;
  return v;
}

async function check(t: { fail(m: string): void; pass(m: string): void }, transform: Transform, type: PrimitiveType, values: readonly (number | bigint | string)[]): Promise<void> {
  const selects = values.map((v) => `SELECT ${transformSql('c', transform, type)} AS r FROM (SELECT ${literal(type, v)} AS c)`).join(' UNION ALL ');
  const got = (await conn.runAndReadAll(selects)).getRows().map((r) => plain(r[0]));
  values.forEach((v, i) => {
    const want = applyTransform(transform, type, v as never);
    const g = got[i];
    const same = typeof want === 'bigint' || typeof g === 'bigint' ? BigInt(want as never) === BigInt(g as never) : want === g;
    if (!same) t.fail(`${JSON.stringify(transform)} ${type.kind} ${String(v)}: sql ${String(g)} != ${String(want)}`);
  });
  t.pass(`${transform.kind} on ${type.kind}: ${values.length} values agree`);
}

const micros = fc.bigInt({ min: -2208988800000000n, max: 4102444800000000n });
const days = fc.integer({ min: -25567, max: 47482 });

t.test('time transforms', async (t) => {
  for (const tr of [Transforms.year, Transforms.month, Transforms.day, Transforms.hour]) {
    await check(t, tr, Types.timestamp, fc.sample(micros, 60));
    await check(t, tr, Types.timestamptz, fc.sample(micros, 60));
  }
  for (const tr of [Transforms.year, Transforms.month, Transforms.day]) await check(t, tr, Types.date, fc.sample(days, 60));
});

t.test('truncate', async (t) => {
  await check(t, Transforms.truncate(10), Types.int, fc.sample(fc.integer({ min: -1_000_000, max: 1_000_000 }), 60));
  await check(t, Transforms.truncate(7), Types.long, fc.sample(fc.bigInt({ min: -(2n ** 60n), max: 2n ** 60n }), 60));
  await check(t, Transforms.truncate(3), Types.string, fc.sample(fc.string({ maxLength: 8 }), 60));
  await check(t, Transforms.truncate(50), Types.decimal(12, 2), fc.sample(fc.bigInt({ min: -(10n ** 11n), max: 10n ** 11n }), 60));
});

t.test('identity and void', async (t) => {
  await check(t, Transforms.identity, Types.long, [1n, -5n, 2n ** 62n]);
  const r = (await conn.runAndReadAll(`SELECT ${transformSql('c', Transforms.void, Types.int)} FROM (SELECT 1 AS c)`)).getRows();
  t.same(r, [[null]]);
});
