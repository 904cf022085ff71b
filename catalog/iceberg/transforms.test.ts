import t from 'tap';
import fc from 'fast-check';
import { bigintFromBytes, bigintToMinimalBytes, decimalToString, fromByteBuffer, parseDecimal, toByteBuffer, uuidToBytes } from './conversions.js';
import type { IcebergValue } from './conversions.js';
import { parseDate, parseTime, parseTimestampMicros } from './datetime.js';
import { hashInt, hashLong, murmur3Hash32 } from './murmur3.js';
import { applyTransform, bucketHash, parseTransform, toHumanString, transformResultType, transformToString, Transforms, urlEncodePathSegment } from './transforms.js';
import { Types } from './types.js';
import type { PrimitiveType } from './types.js';

// Every hash vector of ../shared/spec/test-vectors.md (Iceberg spec Appendix B).
t.test('Appendix B hash vectors', async (t) => {
  t.equal(hashInt(34), 2017239379, 'int 34');
  t.equal(hashLong(34n), 2017239379, 'long 34L');
  t.equal(bucketHash(Types.int, 34), 2017239379);
  t.equal(bucketHash(Types.long, 34n), 2017239379);
  t.equal(bucketHash(Types.decimal(9, 2), parseDecimal('14.20', 2)), -500754589, 'decimal(9,2) 14.20');
  t.equal(bucketHash(Types.date, parseDate('2017-11-16')), -653330422, 'date 2017-11-16');
  t.equal(bucketHash(Types.time, parseTime('22:31:08')), -662762989, 'time 22:31:08');
  t.equal(bucketHash(Types.timestamp, parseTimestampMicros('2017-11-16T22:31:08')), -2047944441, 'timestamp');
  t.equal(bucketHash(Types.timestamp, parseTimestampMicros('2017-11-16T22:31:08.000001')), -1207196810, 'timestamp µs');
  t.equal(bucketHash(Types.timestamptz, parseTimestampMicros('2017-11-16T14:31:08-08:00')), -2047944441, 'timestamptz');
  t.equal(bucketHash(Types.timestamptz, parseTimestampMicros('2017-11-16T14:31:08.000001-08:00')), -1207196810, 'timestamptz µs');
  t.equal(bucketHash(Types.string, 'iceberg'), 1210000089, 'string');
  t.equal(bucketHash(Types.uuid, 'f79c3e09-677c-4bbd-a479-3f349cb785e7'), 1488055340, 'uuid');
  t.equal(murmur3Hash32(uuidToBytes('f79c3e09-677c-4bbd-a479-3f349cb785e7')), 1488055340, 'uuid bytes');
  t.equal(bucketHash(Types.fixed(4), Uint8Array.of(0, 1, 2, 3)), -188683207, 'fixed');
  t.equal(bucketHash(Types.binary, Uint8Array.of(0, 1, 2, 3)), -188683207, 'binary');
  // nanosecond timestamps hash as microseconds
  t.equal(bucketHash(Types.timestampNs, parseTimestampMicros('2017-11-16T22:31:08.000001') * 1000n), -1207196810);
});

t.test('bucket values', async (t) => {
  t.equal(applyTransform(Transforms.bucket(16), Types.int, 34), 3, 'bucket[16](34) = 3');
  t.equal(applyTransform(Transforms.bucket(10), Types.int, 34), 9, 'bucket[10] int 34 = 9');
  t.equal(applyTransform(Transforms.bucket(10), Types.long, 34n), 9, 'bucket[10] long 34 = 9');
  t.equal(applyTransform(Transforms.bucket(10), Types.int, null), null);
});

t.test('truncate values', async (t) => {
  t.equal(applyTransform(Transforms.truncate(10), Types.int, 1), 0);
  t.equal(applyTransform(Transforms.truncate(10), Types.int, -1), -10);
  t.equal(applyTransform(Transforms.truncate(10), Types.long, 1n), 0n);
  t.equal(applyTransform(Transforms.truncate(10), Types.long, -1n), -10n);
  const d = applyTransform(Transforms.truncate(50), Types.decimal(9, 2), parseDecimal('10.65', 2));
  t.equal(d, 1050n);
  t.equal(decimalToString(d as bigint, 2), '10.50');
  t.equal(applyTransform(Transforms.truncate(3), Types.string, 'iceberg'), 'ice');
  t.equal(applyTransform(Transforms.truncate(3), Types.string, 'a😀bc'), 'a😀b', 'truncates by code point');
  t.same(applyTransform(Transforms.truncate(2), Types.binary, Uint8Array.of(1, 2, 3)), Uint8Array.of(1, 2));
});

t.test('time transforms', async (t) => {
  const day = parseDate('2017-11-16');
  const ts = parseTimestampMicros('2017-11-16T22:31:08');
  t.equal(applyTransform(Transforms.year, Types.date, day), 47);
  t.equal(applyTransform(Transforms.month, Types.date, day), 47 * 12 + 10);
  t.equal(applyTransform(Transforms.day, Types.date, day), day);
  t.equal(applyTransform(Transforms.day, Types.timestamp, ts), day);
  t.equal(applyTransform(Transforms.hour, Types.timestamp, ts), day * 24 + 22);
  t.equal(applyTransform(Transforms.hour, Types.timestampNs, ts * 1000n), day * 24 + 22);
  // floor semantics before the epoch
  t.equal(applyTransform(Transforms.year, Types.date, -1), -1);
  t.equal(applyTransform(Transforms.month, Types.date, -1), -1);
  t.equal(applyTransform(Transforms.day, Types.timestamp, -1n), -1);
  t.equal(applyTransform(Transforms.hour, Types.timestamp, -1n), -1);
  t.equal(toHumanString(Transforms.day, Types.timestamp, day), '2017-11-16');
  t.equal(toHumanString(Transforms.year, Types.timestamp, 47), '2017');
  t.equal(toHumanString(Transforms.month, Types.timestamp, 47 * 12 + 10), '2017-11');
  t.equal(toHumanString(Transforms.hour, Types.timestamp, day * 24 + 22), '2017-11-16-22');
  t.equal(toHumanString(Transforms.month, Types.date, -1), '1969-12');
  t.equal(toHumanString(Transforms.identity, Types.timestamptz, ts), '2017-11-16T22:31:08Z');
  t.equal(toHumanString(Transforms.identity, Types.timestamp, ts + 1n), '2017-11-16T22:31:08.000001');
  t.equal(toHumanString(Transforms.identity, Types.decimal(9, 2), 1420n), '14.20');
  t.equal(toHumanString(Transforms.identity, Types.binary, Uint8Array.of(0, 1, 2, 3)), 'AAECAw==');
  t.equal(toHumanString(Transforms.identity, Types.string, null), 'null');
  t.equal(`ts_day=${urlEncodePathSegment(toHumanString(Transforms.day, Types.timestamp, day))}`, 'ts_day=2017-11-16');
  t.equal(urlEncodePathSegment('a b/c:é'), 'a+b%2Fc%3A%C3%A9');
});

t.test('parse and print transforms, result types', async (t) => {
  for (const s of ['identity', 'bucket[16]', 'truncate[3]', 'year', 'month', 'day', 'hour', 'void']) t.equal(transformToString(parseTransform(s)), s);
  t.same(parseTransform('bucket[16]'), { kind: 'bucket', numBuckets: 16 });
  t.same(parseTransform('zorder'), { kind: 'unknown', text: 'zorder' });
  t.throws(() => parseTransform('bucket[0]'));
  t.same(transformResultType(Transforms.bucket(4), Types.string), Types.int);
  t.same(transformResultType(Transforms.day, Types.timestamptz), Types.date);
  t.same(transformResultType(Transforms.year, Types.date), Types.int);
  t.same(transformResultType(Transforms.truncate(4), Types.string), Types.string);
  t.same(transformResultType(Transforms.identity, Types.decimal(9, 2)), Types.decimal(9, 2));
  t.throws(() => transformResultType(Transforms.hour, Types.date), { name: 'ValidationException' });
  t.throws(() => transformResultType(Transforms.bucket(2), Types.double), { name: 'ValidationException' });
  t.throws(() => transformResultType(Transforms.truncate(2), Types.uuid), { name: 'ValidationException' });
});

const hex = (b: Uint8Array): string => Buffer.from(b).toString('hex');

// Single-value serialization vectors (Appendix D).
t.test('Appendix D single-value serialization', async (t) => {
  t.equal(hex(toByteBuffer(Types.int, 1)), '01000000', 'int 4-byte LE');
  t.equal(hex(toByteBuffer(Types.int, -2)), 'feffffff');
  t.equal(hex(toByteBuffer(Types.date, parseDate('2017-11-16'))), hex(Buffer.from([0x4e, 0x44, 0, 0])), 'date = days 17486 LE');
  t.equal(hex(toByteBuffer(Types.long, 34n)), '2200000000000000', 'long 8-byte LE');
  t.equal(hex(toByteBuffer(Types.time, parseTime('22:31:08'))), hex(bufLE(81068000000n)), 'time micros');
  t.equal(hex(toByteBuffer(Types.timestamp, 1510871468000000n)), hex(bufLE(1510871468000000n)), 'timestamp micros');
  t.equal(hex(toByteBuffer(Types.timestamptz, parseTimestampMicros('2017-11-16T14:31:08-08:00'))), hex(bufLE(1510871468000000n)));
  t.equal(hex(toByteBuffer(Types.float, 1.5)), '0000c03f', 'float LE');
  t.equal(hex(toByteBuffer(Types.double, 1.5)), '000000000000f83f', 'double LE');
  t.equal(hex(toByteBuffer(Types.string, 'iceberg')), Buffer.from('iceberg').toString('hex'), 'utf-8 without length');
  t.equal(hex(toByteBuffer(Types.uuid, 'f79c3e09-677c-4bbd-a479-3f349cb785e7')), 'f79c3e09677c4bbda4793f349cb785e7', 'uuid big-endian');
  t.equal(hex(toByteBuffer(Types.fixed(4), Uint8Array.of(0, 1, 2, 3))), '00010203');
  t.equal(hex(toByteBuffer(Types.binary, Uint8Array.of(0, 1, 2, 3))), '00010203');
  t.equal(hex(toByteBuffer(Types.decimal(9, 2), 1420n)), '058c', 'decimal minimal two\'s complement');
  t.equal(hex(toByteBuffer(Types.decimal(9, 2), -1n)), 'ff');
  t.equal(hex(toByteBuffer(Types.decimal(9, 2), 0n)), '00');
  t.equal(hex(toByteBuffer(Types.decimal(9, 2), 128n)), '0080');
  t.equal(hex(toByteBuffer(Types.decimal(9, 2), -128n)), '80');
  t.equal(hex(toByteBuffer(Types.boolean, false)), '00');
  t.equal(hex(toByteBuffer(Types.boolean, true)), '01');
  t.equal(fromByteBuffer(Types.boolean, Uint8Array.of(7)), true, 'non-zero is true');
  t.equal(fromByteBuffer(Types.boolean, Uint8Array.of(0)), false);
  t.equal(fromByteBuffer(Types.long, Uint8Array.of(1, 0, 0, 0)), 1n, 'int bound read as long after promotion');
  t.equal(fromByteBuffer(Types.date, Uint8Array.from(Buffer.from('794e0000', 'hex'))), parseDate('2025-01-01'), 'bound from the equality_deletes table');
});

function bufLE(v: bigint): Buffer {
  const b = Buffer.alloc(8);
  b.writeBigInt64LE(v);
  return b;
}

const arbitraryTypedValue: fc.Arbitrary<[PrimitiveType, IcebergValue]> = fc.oneof(
  fc.boolean().map((v) => [Types.boolean, v] as [PrimitiveType, IcebergValue]),
  fc.integer().map((v) => [Types.int, v] as [PrimitiveType, IcebergValue]),
  fc.integer({ min: -1_000_000, max: 1_000_000 }).map((v) => [Types.date, v] as [PrimitiveType, IcebergValue]),
  fc.bigInt({ min: -(2n ** 63n), max: 2n ** 63n - 1n }).map((v) => [Types.long, v] as [PrimitiveType, IcebergValue]),
  fc.bigInt({ min: -(2n ** 63n), max: 2n ** 63n - 1n }).map((v) => [Types.timestamptz, v] as [PrimitiveType, IcebergValue]),
  fc.double({ noNaN: true }).map((v) => [Types.double, v] as [PrimitiveType, IcebergValue]),
  fc.float({ noNaN: true }).map((v) => [Types.float, v] as [PrimitiveType, IcebergValue]),
  fc.string({ unit: 'grapheme' }).map((v) => [Types.string, v] as [PrimitiveType, IcebergValue]),
  fc.uuid().map((v) => [Types.uuid, v] as [PrimitiveType, IcebergValue]),
  fc.uint8Array().map((v) => [Types.binary, v] as [PrimitiveType, IcebergValue]),
  fc.bigInt({ min: -(10n ** 38n) + 1n, max: 10n ** 38n - 1n }).map((v) => [Types.decimal(38, 4), v] as [PrimitiveType, IcebergValue]),
);

t.test('property: single-value serialization round trips', async (t) => {
  fc.assert(
    fc.property(arbitraryTypedValue, ([type, value]) => {
      const back = fromByteBuffer(type, toByteBuffer(type, value));
      if (value instanceof Uint8Array) return Buffer.compare(back as Uint8Array, value) === 0;
      return Object.is(back, value) || (typeof value === 'number' && back === value);
    }),
    { numRuns: 2000 },
  );
  fc.assert(fc.property(fc.bigInt({ min: -(2n ** 200n), max: 2n ** 200n }), (v) => bigintFromBytes(bigintToMinimalBytes(v)) === v));
  t.pass('round trips hold');
});

t.test('property: bucket is in range and int/long agree', async (t) => {
  fc.assert(
    fc.property(fc.integer(), fc.integer({ min: 1, max: 1000 }), (v, n) => {
      const a = applyTransform(Transforms.bucket(n), Types.int, v) as number;
      const b = applyTransform(Transforms.bucket(n), Types.long, BigInt(v)) as number;
      return a === b && a >= 0 && a < n;
    }),
  );
  fc.assert(
    fc.property(fc.bigInt({ min: -(2n ** 62n), max: 2n ** 62n }), fc.integer({ min: 1, max: 1000 }), (v, w) => {
      const r = applyTransform(Transforms.truncate(w), Types.long, v) as bigint;
      return r <= v && v - r < BigInt(w) && r % BigInt(w) === 0n;
    }),
  );
  t.pass();
});
