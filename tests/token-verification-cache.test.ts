/**
 * The token service keeps verified token texts (an ES256 verification per request cost more than a
 * small query). A token seen before is still refused once it expires, once its principal's session
 * is revoked, and an altered text never rides on the cached verification. On both store backends.
 */
import t from 'tap';
import { onEachBackend } from './helpers/stores.js';
import { ManualClock, startTestServer } from './helpers/server.js';

await onEachBackend(t, async (t, store) => {
  const clock = new ManualClock();
  const server = await startTestServer(store, { clock, keepStore: true });
  t.teardown(() => server.close());
  const { state } = server;

  await t.test('a cached token still expires', async (t) => {
    const token = await server.token();
    t.equal((await state.tokens.verify(token)).ok, true, 'first use verifies');
    t.equal((await state.tokens.verify(token)).ok, true, 'second use (cached) verifies');
    clock.advance(3601_000);
    t.same(await state.tokens.verify(token), { ok: false, reason: 'token expired' });
    clock.advance(-3601_000);
  });

  await t.test('an altered text of a cached token is refused', async (t) => {
    const token = await server.token();
    t.equal((await state.tokens.verify(token)).ok, true);
    const [h, p, s] = token.split('.') as [string, string, string];
    const claims = JSON.parse(Buffer.from(p, 'base64url').toString()) as Record<string, unknown>;
    const forged = `${h}.${Buffer.from(JSON.stringify({ ...claims, scope: `${String(claims.scope)} extra` })).toString('base64url')}.${s}`;
    t.same(await state.tokens.verify(forged), { ok: false, reason: 'invalid token' });
  });

  await t.test('a cached token of a revoked session is refused at once', async (t) => {
    const token = await server.token();
    const first = await state.tokens.verify(token);
    if (!first.ok) return t.fail('token did not verify');
    await state.store.query('UPDATE principals SET session_epoch = session_epoch + 1 WHERE id = $1', [first.auth.principal.id]);
    t.same(await state.tokens.verify(token), { ok: false, reason: 'session revoked' });
  });
});
