import t from 'tap';
import { QueryIds } from '../../engine/session/query-id.js';

const UUID_V7 = /^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

t.test('query ids: UUIDv7 with the millisecond in front, ordered within one millisecond, unique past the random pool', async (t) => {
  let now = 1_700_000_000_000;
  const ids = new QueryIds(() => now);
  const made: string[] = [];
  // More than one draw of random bytes (256 ids per draw), several milliseconds.
  for (let ms = 0; ms < 4; ms++) {
    for (let i = 0; i < 300; i++) made.push(ids.next());
    now++;
  }
  for (const id of made) t.match(id, UUID_V7);
  t.equal(new Set(made).size, made.length, 'every id is different');
  t.same([...made].sort(), made, 'ids sort in the order they were made');
  t.equal(parseInt(made[0]!.replace(/-/g, '').slice(0, 12), 16), 1_700_000_000_000, 'the first 48 bits are the millisecond');
  // The random tail differs between consecutive ids (it is not reused from the pool).
  const tails = new Set(made.map((id) => id.slice(19)));
  t.equal(tails.size, made.length, 'random parts are not repeated');
});

t.test('query ids: a clock that goes back does not reorder ids', async (t) => {
  let now = 2_000;
  const ids = new QueryIds(() => now);
  const a = ids.next();
  now = 1_000;
  const b = ids.next();
  t.ok(b > a, 'an id made after a clock step back still sorts later');
});
