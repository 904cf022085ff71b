/** The metadata cache stays within its entry count and byte budget, evicting least recently used first. */
import t from 'tap';
import fc from 'fast-check';
import { LruCache } from './deps.js';

t.test('bounded by count and weight, most recent kept', async (t) => {
  fc.assert(fc.property(fc.array(fc.tuple(fc.integer({ min: 0, max: 20 }), fc.integer({ min: 1, max: 50 })), { maxLength: 200 }), (ops) => {
    const cache = new LruCache<number, number>(8, 100);
    const weights = new Map<number, number>();
    for (const [k, w] of ops) {
      cache.set(k, w, w);
      weights.set(k, w);
      if (cache.size > 8) return false;
      // The entry just written is always present (every weight here fits the budget).
      if (cache.get(k) !== w) return false;
    }
    return true;
  }));
  const c = new LruCache<string, string>(10, 10);
  c.set('a', 'x', 4);
  c.set('b', 'y', 4);
  c.get('a');
  c.set('c', 'z', 4);
  t.equal(c.get('b'), undefined, 'least recently used evicted by weight');
  t.equal(c.get('a'), 'x');
  c.set('huge', 'h', 11);
  t.equal(c.get('huge'), undefined, 'an entry above the budget is not cached');
  t.equal(c.get('c'), 'z');
});
