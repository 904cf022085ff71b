import t from 'tap';
import { FailureLimiter } from './failure-limiter.js';

t.test('sliding window', async (t) => {
  let now = 1_000_000;
  const limiter = new FailureLimiter({ windowMs: 60_000, maxFailures: 3 }, { now: () => now });
  t.equal(limiter.retryAfterSeconds('k'), 0);
  limiter.recordFailure('k');
  now += 10_000;
  limiter.recordFailure('k');
  limiter.recordFailure('k');
  t.equal(limiter.retryAfterSeconds('k'), 50, 'the oldest counted failure leaves the window in 50 s');
  t.equal(limiter.retryAfterSeconds('other'), 0, 'keys are independent');
  now += 50_001;
  t.equal(limiter.retryAfterSeconds('k'), 0, 'one failure left the window');
  limiter.recordFailure('k');
  t.ok(limiter.retryAfterSeconds('k') > 0);
});
