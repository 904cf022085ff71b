import t from 'tap';
import { appendRetryDelayMs } from './append-retry.js';

t.test('the wait grows with the attempt up to 1 s, is random within it, and the retries end', async (t) => {
  const most = (attempt: number) => appendRetryDelayMs(attempt, 0, 0, () => 1);
  t.same([1, 2, 3, 6, 7, 20].map(most), [20, 40, 80, 640, 1000, 1000], 'the most an attempt waits');
  t.equal(appendRetryDelayMs(5, 0, 0, () => 0), 0, 'the least is no wait');
  t.equal(appendRetryDelayMs(5, 0, 0, () => 0.5), 160, 'a draw scales it');
  t.equal(appendRetryDelayMs(59, 0, 0, () => 1), 1000, 'attempt 59 still retries');
  t.equal(appendRetryDelayMs(60, 0, 0, () => 1), undefined, 'not after 60 attempts');
  t.equal(appendRetryDelayMs(3, 0, 59_999, () => 1), 80, 'within the minute');
  t.equal(appendRetryDelayMs(3, 0, 60_000, () => 1), undefined, 'not after a minute');
});
