/** Keyset pagination: every item exactly once, in order, for any page size; tokens are opaque and round-trip. */
import t from 'tap';
import fc from 'fast-check';
import { decodePageToken, encodePageToken, keysetPage, MAX_PAGE_SIZE } from './paging.js';

const sortedUnique = (keys: string[]): string[] => [...new Set(keys)].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));

t.test('walking the pages yields every key once, in order', async (t) => {
  await fc.assert(fc.asyncProperty(fc.array(fc.string({ unit: 'grapheme' }), { maxLength: 60 }), fc.integer({ min: 1, max: 25 }), async (raw, pageSize) => {
    const keys = sortedUnique(raw);
    const fetch = async (after: string | undefined, limit: number) => keys.filter((k) => after === undefined || k > after).slice(0, limit);
    const seen: string[] = [];
    let token: string | undefined;
    for (let i = 0; i <= keys.length + 1; i++) {
      const page = await keysetPage({ pageSize, ...(token !== undefined ? { pageToken: token } : {}) }, fetch, (k) => k);
      t.ok(page.items.length <= pageSize);
      seen.push(...page.items);
      token = page.nextPageToken;
      if (token === undefined) break;
    }
    t.same(seen, keys);
    const all = await keysetPage({}, fetch, (k) => k);
    t.same(all.items, keys, 'no page size: everything');
    t.equal(all.nextPageToken, undefined);
  }), { numRuns: 60 });
});

t.test('tokens round-trip and malformed ones are refused', async (t) => {
  fc.assert(fc.property(fc.string({ unit: 'grapheme' }).filter((s) => s !== ''), (key) => decodePageToken(encodePageToken(key)) === key));
  t.throws(() => decodePageToken('%%'), { name: 'BadRequestException' });
  t.equal(decodePageToken(''), undefined);
});

t.test('an unpaged listing larger than one chunk is fetched completely', async (t) => {
  const keys = Array.from({ length: MAX_PAGE_SIZE * 2 + 5 }, (_, i) => `k${String(i).padStart(5, '0')}`);
  let calls = 0;
  const page = await keysetPage({}, async (after, limit) => {
    calls++;
    return keys.filter((k) => after === undefined || k > after).slice(0, limit);
  }, (k) => k);
  t.equal(page.items.length, keys.length);
  t.equal(calls, 3);
});
