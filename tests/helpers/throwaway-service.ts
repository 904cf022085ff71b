/**
 * A daemon a test file starts for itself (Ceph RGW, Azurite) and stops after it: `body` runs as a
 * subtest with the started service, stopped in the subtest's teardown. When the service cannot run
 * here (not installed, or its start failed), the subtest is skipped with the reason, except with
 * CI=true, where it fails: CI must not pass by testing nothing, as the PostgreSQL variant of the
 * store-backed suites does.
 */
import type { Test } from 'tap';

export interface ThrowawayService<S extends { stop(): Promise<void> }> {
  /** What the service is, in the reasons (`Ceph RGW`, `Azurite`). */
  readonly what: string;
  /** Why it cannot run here, or undefined when it is installed. */
  unavailableReason(): string | undefined;
  start(): Promise<S>;
}

export async function onThrowawayService<S extends { stop(): Promise<void> }>(t: Test, name: string, service: ThrowawayService<S>, body: (t: Test, store: S) => Promise<void>): Promise<void> {
  let started: S | undefined;
  let reason = service.unavailableReason();
  if (reason === undefined) {
    try {
      started = await service.start();
    } catch (e) {
      reason = `${service.what} could not start: ${(e as Error).message}`;
    }
  }
  if (started === undefined) {
    if (process.env.CI === 'true') t.fail(`${reason} (required in CI)`);
    else await t.test(name, { skip: reason }, async () => {});
    return;
  }
  const store = started;
  await t.test(name, async (t) => {
    t.teardown(() => store.stop());
    await body(t, store);
  });
}
