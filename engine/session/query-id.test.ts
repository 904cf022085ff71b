import t from 'tap';
import fc from 'fast-check';
import { QueryIds } from './query-id.js';

const UUID_V7 = /^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

t.test('ids are version-7 UUIDs in creation order, also within one millisecond and across a clock step back', async (t) => {
  fc.assert(fc.property(fc.array(fc.integer({ min: 0, max: 3 }), { minLength: 1, maxLength: 6000 }), fc.integer({ min: 1_600_000_000_000, max: 1_900_000_000_000 }), (steps, start) => {
    let now = start;
    const ids = new QueryIds(() => now);
    let previous = '';
    for (const step of steps) {
      now += step - 1; // forward, still, or one millisecond back
      const id = ids.next();
      if (!UUID_V7.test(id) || id <= previous) return false;
      previous = id;
    }
    return true;
  }), { numRuns: 50 });
  const id = new QueryIds(() => 1_700_000_000_123).next();
  t.equal(parseInt(id.replaceAll('-', '').slice(0, 12), 16), 1_700_000_000_123, 'the first 48 bits are the milliseconds');
});
