import t from 'tap';
import { CancellationSource } from '../../engine/wlm/cancellation.js';

t.test('listeners are called once, in order; a removed one is not', async (t) => {
  const c = new CancellationSource();
  const calls: string[] = [];
  c.onAbort(() => calls.push('a'));
  const removeB = c.onAbort(() => calls.push('b'));
  const same = () => calls.push('c');
  c.onAbort(same);
  const removeSecondC = c.onAbort(same);
  removeB();
  removeSecondC();
  removeSecondC();
  t.notOk(c.aborted);
  c.abort();
  c.abort();
  t.ok(c.aborted);
  t.same(calls, ['a', 'c'], 'removing one registration of a function leaves the other');
});

t.test('a listener added after the cancellation is never called, as with an AbortSignal', async (t) => {
  const c = new CancellationSource();
  c.abort();
  let called = false;
  const remove = c.onAbort(() => (called = true));
  remove();
  t.notOk(called);
});

t.test('the AbortSignal follows the cancellation whenever it is made', async (t) => {
  const before = new CancellationSource();
  const signal = before.signal;
  t.equal(before.signal, signal, 'made once');
  t.notOk(signal.aborted);
  let fired = 0;
  signal.addEventListener('abort', () => fired++);
  before.abort();
  t.ok(signal.aborted);
  t.equal(fired, 1);

  const after = new CancellationSource();
  after.abort();
  t.ok(after.signal.aborted, 'made after the cancellation: already aborted');
});

t.test('a listener that throws does not stop the others or the signal; its error reaches the caller', async (t) => {
  const c = new CancellationSource();
  const signal = c.signal;
  let later = false;
  c.onAbort(() => {
    throw new Error('listener failed');
  });
  c.onAbort(() => (later = true));
  t.throws(() => c.abort(), /listener failed/);
  t.ok(c.aborted);
  t.ok(later, 'the next listener ran');
  t.ok(signal.aborted, 'the signal aborted');
});
