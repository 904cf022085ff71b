/** What a statement that must fail failed with, for tests that check its code and message. */
import { isFloeError, type FloeError } from '../../index.js';

/**
 * The `FloeError` that `p` rejects with. A promise that resolves, or rejects with anything else
 * (a bug's plain Error), throws, failing the test with what happened; `what` names the call.
 */
export async function floeErrorOf(p: Promise<unknown>, what = 'the call'): Promise<FloeError> {
  const e = await p.then(() => undefined, (x: unknown) => x);
  if (!isFloeError(e)) throw new Error(`expected a FloeError from ${what}, got ${String(e)}`);
  return e;
}
