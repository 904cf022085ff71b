import t from 'tap';
import fc from 'fast-check';
import { formatDate } from '../../catalog/iceberg/datetime.js';
import { isoDate, isoTimestampNanos, wireFloat, wireInteger } from './values.js';

t.test('integers stay numbers only while exact', async (t) => {
  t.equal(wireInteger(9007199254740991n), 9007199254740991);
  t.equal(wireInteger(-9007199254740991n), -9007199254740991);
  t.equal(wireInteger(9007199254740992n), '9007199254740992');
  t.equal(wireInteger(-170141183460469231731687303715884105728n), '-170141183460469231731687303715884105728');
  fc.assert(fc.property(fc.bigInt({ min: -(2n ** 127n), max: 2n ** 127n - 1n }), (v) => BigInt(wireInteger(v)) === v));
});

t.test('floats: NaN and infinities as strings', async (t) => {
  t.same([wireFloat(NaN), wireFloat(Infinity), wireFloat(-Infinity), wireFloat(1.5)], ['NaN', 'Infinity', '-Infinity', 1.5]);
});

t.test('dates agree with the catalog calendar and with Date for ordinary years', async (t) => {
  fc.assert(fc.property(fc.integer({ min: -719162, max: 2932896 }), (days) => isoDate(days) === formatDate(days)));
  fc.assert(
    fc.property(fc.integer({ min: -62135596800000, max: 253402300799999 }), (ms) => {
      const micros = BigInt(ms) * 1000n;
      const iso = new Date(ms).toISOString(); // yyyy-mm-ddThh:mm:ss.sssZ
      const ours = isoTimestampNanos(micros * 1000n, true);
      const expected = iso.endsWith('.000Z') ? iso.replace('.000Z', 'Z') : iso;
      return ours === expected;
    }),
  );
  t.equal(isoTimestampNanos(-1000n, false), '1969-12-31T23:59:59.999999');
});
