/**
 * Every epoch-bumping operation of the spec (DROP, SUSPEND, RENAME, password change, MFA change,
 * PAT revoke, MANAGE grant and revoke, invitation redemption) makes a token issued before it
 * worthless, even once the user is ACTIVE again; operations outside the list leave tokens alone.
 */
import t from 'tap';
import { onEachBackend } from '../helpers/stores.js';
import { ManualClock, startTestServer } from '../helpers/server.js';
import { findPrincipalByName, loadPrincipalAuthState } from '../../engine/principals/principals.js';
import { totpCode } from '../../engine/principals/totp.js';
import { adminAuth, authAs, epochOf, mintToken, must, strongPassword } from './helpers.js';

t.test('epoch-bumping operations invalidate earlier tokens', async (t) => {
  await onEachBackend(t, async (t, store) => {
    const clock = new ManualClock(Date.UTC(2026, 10, 21, 12, 0, 0));
    const server = await startTestServer(store, { keepStore: true, clock, config: (c) => ({ ...c, principals: { ...c.principals, background_jobs: false } }) });
    t.teardown(() => server.close());
    const admin = await adminAuth(server);
    const verify = async (token: string): Promise<boolean> => (await server.state.tokens.verify(token)).ok;
    const pw1 = strongPassword('e1');
    await must(server, admin, `CREATE USER erin EMAIL='erin@example.com' PASSWORD '${pw1}'`);

    /** Mints a token for erin, runs `sql`, and checks the token is refused afterwards. */
    const bumps = async (what: string, sql: string | (() => Promise<unknown>), restore?: string, name = 'erin'): Promise<void> => {
      const before = await epochOf(server, name);
      const token = await mintToken(server, name);
      t.ok(await verify(token), `${what}: token valid before`);
      if (typeof sql === 'string') await must(server, admin, sql);
      else await sql();
      if (restore) await must(server, admin, restore);
      const after = await epochOf(server, name);
      t.ok(after > before, `${what}: epoch ${before} → ${after}`);
      t.notOk(await verify(token), `${what}: earlier token refused`);
    };

    // Negative control: operations outside the list keep tokens valid.
    const keep = await mintToken(server, 'erin');
    await must(server, admin, "ALTER USER erin SET COMMENT = 'no bump'");
    await must(server, admin, 'ALTER USER erin UNLOCK');
    await must(server, admin, "ALTER USER erin SET LEGAL HOLD REASON 'x'");
    await must(server, admin, 'ALTER USER erin CLEAR LEGAL HOLD');
    t.ok(await verify(keep), 'comment, unlock and legal hold do not bump the epoch');

    await bumps('SUSPEND', 'ALTER USER erin SUSPEND', 'ALTER USER erin UNSUSPEND');
    await bumps('DROP', 'DROP USER erin', 'UNDROP USER erin');
    await bumps('RENAME', 'ALTER USER erin RENAME TO erin2', 'ALTER USER erin2 RENAME TO erin', 'erin');
    await bumps('ALTER USER SET PASSWORD', `ALTER USER erin SET PASSWORD = '${strongPassword('e2')}'`);
    await bumps('ALTER USER SELF SET PASSWORD', async () => {
      const self = await authAs(server, 'erin');
      await must(server, self, `ALTER USER SELF SET PASSWORD '${strongPassword('e3')}' OLD PASSWORD '${strongPassword('e2')}'`);
    });
    // MFA change: enrolment itself does not bump (the verifying session must survive), verification does.
    let secret = '';
    await bumps('VERIFY MFA', async () => {
      const self = await authAs(server, 'erin', { authTime: Math.floor(clock.now() / 1000) });
      secret = String((await must(server, self, 'ALTER USER SELF ENROLL MFA TOTP')).rows[0]![0]);
      t.ok(await verify(await mintToken(server, 'erin')), 'enrolment keeps sessions');
      await must(server, self, `ALTER USER SELF VERIFY MFA TOTP '${totpCode(secret, Math.floor(clock.now() / 1000))}'`);
    });
    clock.advance(60_000);
    await bumps('DISABLE MFA', async () => {
      const self = await authAs(server, 'erin', { authTime: Math.floor(clock.now() / 1000), amr: ['pwd', 'otp', 'mfa'] });
      await must(server, self, `ALTER USER SELF DISABLE MFA WITH TOTP CODE '${totpCode(secret, Math.floor(clock.now() / 1000))}'`);
    });
    await must(server, admin, "CREATE PERSONAL ACCESS TOKEN laptop FOR erin TTL '7 days'");
    await bumps('DROP PERSONAL ACCESS TOKEN', 'DROP PERSONAL ACCESS TOKEN laptop FOR erin');
    await bumps('GRANT MANAGE', 'GRANT MANAGE USERS, MANAGE PATS TO USER erin');
    await bumps('REVOKE MANAGE', 'REVOKE MANAGE PATS FROM USER erin');

    // Invitation redemption: a token carrying the pre-redemption epoch is refused afterwards.
    const invited = await must(server, admin, "CREATE USER ivy EMAIL='ivy@example.com'");
    const ivy = (await findPrincipalByName(store, 'default', 'ivy'))!;
    const stale = await server.state.tokens.issue({ principal: { ...ivy, status: 'ACTIVE' }, scopes: ['sql'], authMethod: 'password', amr: ['pwd'] });
    await must(server, undefined, `REDEEM INVITATION '${String(invited.rows[0]![2])}' WITH PASSWORD '${strongPassword('i1')}'`);
    const after = (await loadPrincipalAuthState(store, 'default', ivy.id))!;
    t.equal(after.status, 'ACTIVE');
    t.equal(after.sessionEpoch, ivy.sessionEpoch + 1, 'redemption bumps the epoch');
    t.notOk(await verify(stale.accessToken), 'a token from before the redemption is refused');
    t.ok(await verify(await mintToken(server, 'ivy')), 'a fresh token works');
  });
});
