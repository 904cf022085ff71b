/**
 * Principal statements through POST /api/query, end to end over the wire on both backends: a user
 * is created with a password and signs in; an invited user redeems the invitation without a bearer
 * token (once); a sign-in restricted to changing the password can do nothing else; a suspended
 * user's token stops working; history records every statement with passwords redacted.
 */
import t from 'tap';
import { onEachBackend } from './helpers/stores.js';
import { startTestServer } from './helpers/server.js';

await onEachBackend(t, async (t, store) => {
  const server = await startTestServer(store, { keepStore: true });
  t.teardown(() => server.close());
  const admin = await server.token();
  const run = (sql: string, token?: string) => server.app.inject({
    method: 'POST', url: '/api/query', headers: token ? { authorization: `Bearer ${token}` } : {}, payload: { sql },
  });
  const signIn = (username: string, password: string) => server.app.inject({
    method: 'POST', url: '/api/auth/sign-in', payload: { tenant: 'default', username, password },
  });

  await t.test('create, sign in, describe, suspend', async (t) => {
    const created = await run("CREATE USER alice EMAIL = 'alice@example.com' PASSWORD = 'Correct-Horse-7-Battery' DISPLAY_NAME 'Alice'", admin);
    t.equal(created.statusCode, 200, created.body);
    const s = await signIn('alice', 'Correct-Horse-7-Battery');
    t.equal(s.statusCode, 200, s.body);
    const alice = (s.json() as { access_token: string }).access_token;
    const me = await run('SHOW QUERY HISTORY', alice);
    t.equal(me.statusCode, 200, 'a signed-in user runs SQL');
    const d = await run('DESCRIBE USER alice', admin);
    t.equal(d.statusCode, 200, d.body);
    t.notMatch(d.body, /argon2|Correct-Horse/, 'no hash, no password');
    const audit = await run("SELECT event_type, target_name FROM system.audit_log WHERE target_name = 'alice'", admin);
    t.equal(audit.statusCode, 200, audit.body);
    t.match(audit.json(), { rows: [['create_user', 'alice']] }, 'system.audit_log has the creation');
    t.equal((await run('SELECT count(*) FROM system.audit_log', alice)).statusCode, 403, 'only tenant_admin reads the audit log');
    const users = await run("SHOW USERS LIKE 'ali%'", admin);
    t.match(users.body, /alice/);
    const bad = await signIn('alice', 'wrong-password-123');
    t.equal(bad.statusCode, 401);
    t.equal((await run('ALTER USER alice SUSPEND', admin)).statusCode, 200);
    t.equal((await run('SHOW QUERY HISTORY', alice)).statusCode, 401, 'the suspended user\'s token is refused');
  });

  await t.test('an invitation is redeemed without a bearer token, once', async (t) => {
    const invited = await run("CREATE USER bob EMAIL 'bob@example.com'", admin);
    t.equal(invited.statusCode, 200, invited.body);
    const body = invited.json() as { columns: string[]; rows: unknown[][] };
    const token = String(body.rows[0]![body.columns.indexOf('invitation_token')]);
    t.ok(token.length > 16, 'an invitation token is returned once');
    const anonymousOther = await run('SHOW USERS');
    t.equal(anonymousOther.statusCode, 401, 'nothing else runs anonymously');
    const redeem = await run(`REDEEM INVITATION '${token}' WITH PASSWORD 'Another-Strong-9-Pass'`);
    t.equal(redeem.statusCode, 200, redeem.body);
    const again = await run(`REDEEM INVITATION '${token}' WITH PASSWORD 'Another-Strong-9-Pass'`);
    t.equal(again.statusCode, 400);
    t.match(again.json(), { error: 'InvalidInvitation' });
    t.equal((await signIn('bob', 'Another-Strong-9-Pass')).statusCode, 200);
  });

  await t.test('MUST_CHANGE_PASSWORD limits the token to changing it', async (t) => {
    t.equal((await run("CREATE USER carol EMAIL 'carol@example.com' PASSWORD 'Temporary-Pass-42x' MUST_CHANGE_PASSWORD = TRUE", admin)).statusCode, 200);
    const s = await signIn('carol', 'Temporary-Pass-42x');
    t.equal(s.statusCode, 200, s.body);
    const carol = (s.json() as { access_token: string }).access_token;
    const refused = await run('SHOW QUERY HISTORY', carol);
    t.equal(refused.statusCode, 403);
    t.match(refused.json(), { error: 'PERMISSION_DENIED', sql_state: '42501' });
    const changed = await run("ALTER USER SELF SET PASSWORD 'Brand-New-Pass-77y' OLD PASSWORD 'Temporary-Pass-42x'", carol);
    t.equal(changed.statusCode, 200, changed.body);
  });

  await t.test('history has every statement, passwords redacted', async (t) => {
    const h = await server.app.inject({ method: 'GET', url: '/api/query-history?limit=500&query_type=principal', headers: { authorization: `Bearer ${admin}` } });
    const rows = h.json() as { sql: string; status: string }[];
    t.ok(rows.length >= 5, `${rows.length} principal statements recorded`);
    t.notMatch(h.body, /Correct-Horse|Another-Strong|Temporary-Pass|Brand-New/, 'no password in history');
    t.ok(rows.some((r) => r.sql.startsWith('REDEEM INVITATION') && r.status === 'completed'), 'the anonymous redemption is in the tenant\'s history');
  });
});
