/**
 * The refusals of the spec's Errors §2 and §3, sign-in (one generic refusal, lockout, restricted
 * tokens, TOTP), MFA rules, MANAGE privileges, and that secrets never come back: PAT, webhook,
 * TOTP and invitation plaintexts and passwords are absent from a dump of the whole database and
 * from every later response. Stored password hashes are canonical Argon2id PHC strings.
 */
import t from 'tap';
import type { MetaStore } from '../../catalog/store/meta-store.js';
import { onEachBackend } from '../helpers/stores.js';
import { ManualClock, startTestServer, form } from '../helpers/server.js';
import { totpCode } from '../../engine/principals/totp.js';
import { readAuditLog } from '../../engine/principals/audit.js';
import { adminAuth, authAs, authOf, mintToken, must, refusal, runSql, signInRequest, strongPassword } from './helpers.js';

/** Every text value of every table of the public schema. */
async function dumpDatabase(store: MetaStore): Promise<string> {
  const tables = (await store.query<{ table_name: string }>(
    "SELECT table_name FROM information_schema.tables WHERE table_schema = 'public' AND table_type = 'BASE TABLE'")).rows.map((r) => r.table_name);
  const parts: string[] = [];
  for (const table of tables) {
    const rows = (await store.query<{ t: string }>(`SELECT (x.*)::text AS t FROM "${table}" x`)).rows;
    parts.push(...rows.map((r) => r.t));
  }
  return parts.join('\n');
}

t.test('refusals, sign-in, MFA, privileges and secrets', async (t) => {
  await onEachBackend(t, async (t, store) => {
    const clock = new ManualClock(Date.UTC(2026, 10, 21, 12, 0, 0));
    const server = await startTestServer(store, {
      keepStore: true, clock,
      config: (c) => ({ ...c, principals: { ...c.principals, background_jobs: false }, webhooks: { ...c.webhooks, allow_private_targets: true } }),
    });
    t.teardown(() => server.close());
    const admin = await adminAuth(server);
    const now = (): number => Math.floor(clock.now() / 1000);
    const responses: string[] = [];
    const record = <T>(x: T): T => {
      responses.push(JSON.stringify(x));
      return x;
    };

    // --- password policy (checked before any hash is written)
    t.equal(await refusal(server, admin, "CREATE USER pat1 EMAIL='p1@example.com' PASSWORD 'short'"), 'PASSWORD_POLICY');
    t.equal(await refusal(server, admin, "CREATE USER pat1 EMAIL='p1@example.com' PASSWORD 'alllowercaseletters'"), 'PASSWORD_POLICY');
    t.equal(await refusal(server, admin, "CREATE USER pat1 EMAIL='p1@example.com' PASSWORD 'Pat1-Is-My-Name-9'"), 'PASSWORD_POLICY');
    t.equal(await refusal(server, admin, "CREATE USER pat1 EMAIL='p1@example.com' PASSWORD 'Password123!'"), 'PASSWORD_POLICY');
    t.equal((await store.query("SELECT count(*)::int AS n FROM principals WHERE name = 'pat1'")).rows[0]!.n, 0, 'nothing stored');
    t.equal(await refusal(server, admin, "CREATE USER nomail EMAIL='not-an-address'"), 'INVALID_PARAMETER');
    // U+0000 cannot be stored: a 400 in the query interface's format, never an internal error.
    t.equal(await refusal(server, admin, "CREATE USER nulmail EMAIL='a\u0000@example.com'"), 'INVALID_PARAMETER');

    // --- users with passwords; the hash is canonical Argon2id
    const davePw = strongPassword('dave');
    record(await must(server, admin, `CREATE USER dave EMAIL='dave@example.com' PASSWORD '${davePw}'`));
    const hash = (await store.query<{ hash: string }>("SELECT hash FROM principal_passwords pw JOIN principals p ON p.id = pw.principal_id WHERE p.name = 'dave'")).rows[0]!.hash;
    t.match(hash, /^\$argon2id\$v=19\$m=65536,t=3,p=1\$[A-Za-z0-9+/]+\$[A-Za-z0-9+/]+$/);
    t.equal(await refusal(server, admin, "CREATE USER dave2 EMAIL='DAVE@example.com'"), 'DUPLICATE_OBJECT', 'e-mail unique per tenant');
    t.equal(await refusal(server, admin, `ALTER USER dave SET PASSWORD = '${davePw}'`), 'PASSWORD_POLICY', 'no reuse of the current password');

    // --- sign-in: one generic refusal for everything
    const ok = await signInRequest(server, { username: 'dave', password: davePw });
    t.equal(ok.status, 200);
    const claims = JSON.parse(Buffer.from(String(ok.body.access_token).split('.')[1]!, 'base64url').toString()) as Record<string, unknown>;
    t.same(claims.amr, ['pwd']);
    t.equal(claims.auth_time, now());
    t.equal(claims.auth_method, 'password');
    const wrong = await signInRequest(server, { username: 'dave', password: 'Wrong-password-1' });
    const unknown = await signInRequest(server, { username: 'nobody', password: 'Wrong-password-1' });
    t.equal(wrong.status, 401);
    t.same(unknown, wrong, 'unknown user and wrong password look the same');
    const invitedRow = record(await must(server, admin, "CREATE USER ivan EMAIL='ivan@example.com'"));
    const invitation = String(invitedRow.rows[0]![2]);
    t.match(String(invitedRow.rows[0]![3]), /#token=floe_inv_/);
    t.same(await signInRequest(server, { username: 'ivan', password: 'Whatever-pass-1' }), wrong, 'INVITED refused with the same message');
    const erinPw = strongPassword('erin');
    await must(server, admin, `CREATE USER erin EMAIL='erin@example.com' PASSWORD '${erinPw}'`);
    await must(server, admin, 'ALTER USER erin SUSPEND');
    t.same(await signInRequest(server, { username: 'erin', password: erinPw }), wrong, 'SUSPENDED refused with the same message');
    await must(server, admin, 'DROP USER erin');
    t.same(await signInRequest(server, { username: 'erin', password: erinPw }), wrong, 'DEACTIVATED refused with the same message');
    t.equal((await signInRequest(server, { username: 'dave' })).status, 400, 'malformed body is a 400');

    // --- lockout: derived from login_failures, temporary, cleared by UNLOCK
    for (let i = 0; i < 4; i++) await signInRequest(server, { username: 'dave', password: `Wrong-password-${i}` });
    t.same(await signInRequest(server, { username: 'dave', password: davePw }), wrong, 'LOCKED: even the right password is refused alike');
    const locked = await must(server, admin, "SHOW USERS WHERE STATUS = 'LOCKED'");
    t.same(locked.rows.map((r) => r[0]), ['dave']);
    t.equal((await store.query<{ status: string }>("SELECT status FROM principals WHERE name = 'dave'")).rows[0]!.status, 'ACTIVE', 'LOCKED is not stored');
    clock.advance(server.state.config.principals.lockout_seconds * 1000 + 1000);
    t.equal((await signInRequest(server, { username: 'dave', password: davePw })).status, 200, 'the lock is temporary');
    for (let i = 0; i < 5; i++) await signInRequest(server, { username: 'dave', password: `Wrong-password-${i}` });
    await must(server, admin, 'ALTER USER dave UNLOCK');
    t.equal((await signInRequest(server, { username: 'dave', password: davePw })).status, 200, 'UNLOCK clears the lock');

    // --- MUST_CHANGE_PASSWORD limits the token to changing the password
    await must(server, admin, 'ALTER USER dave SET MUST_CHANGE_PASSWORD = TRUE');
    const mcp = await signInRequest(server, { username: 'dave', password: davePw });
    t.equal(mcp.body.restriction, 'change_password');
    t.equal(mcp.body.scope, 'sql restricted:change_password');
    const daveRestricted = await authOf(server, String(mcp.body.access_token));
    t.equal(await refusal(server, daveRestricted, 'SHOW PERSONAL ACCESS TOKENS'), 'PERMISSION_DENIED');
    const exchange = await server.app.inject({ method: 'POST', url: '/v1/oauth/tokens', ...form({ grant_type: 'urn:ietf:params:oauth:grant-type:token-exchange', subject_token: String(mcp.body.access_token), subject_token_type: 'urn:ietf:params:oauth:token-type:access_token' }) });
    t.equal(exchange.statusCode, 400, 'a restricted token cannot be exchanged for a full one');
    t.equal(await refusal(server, daveRestricted, `ALTER USER SELF SET PASSWORD '${strongPassword('dave2')}' OLD PASSWORD 'Not-the-old-one-1'`), 'PERMISSION_DENIED');
    const dave2 = strongPassword('dave2');
    await must(server, daveRestricted, `ALTER USER SELF SET PASSWORD '${dave2}' OLD PASSWORD '${davePw}'`);
    const after = await signInRequest(server, { username: 'dave', password: dave2 });
    t.equal(after.status, 200);
    t.equal(after.body.restriction, undefined, 'changing the password lifts the restriction');

    // --- an administrator without a second factor may only enrol one; MFA rules
    const carolPw = strongPassword('carol');
    await must(server, admin, `CREATE USER carol EMAIL='carol@example.com' PASSWORD '${carolPw}'`);
    await must(server, admin, 'GRANT ROLE tenant_admin TO USER carol');
    const first = await signInRequest(server, { username: 'carol', password: carolPw });
    t.equal(first.body.restriction, 'enroll_mfa');
    const carolEnrolOnly = await authOf(server, String(first.body.access_token));
    t.equal(await refusal(server, carolEnrolOnly, 'SHOW USERS'), 'PERMISSION_DENIED');
    clock.advance(6 * 60_000);
    t.equal(await refusal(server, carolEnrolOnly, 'ALTER USER SELF ENROLL MFA TOTP'), 'REAUTHENTICATION_REQUIRED', 'more than five minutes after sign-in');
    const second = await authOf(server, String((await signInRequest(server, { username: 'carol', password: carolPw })).body.access_token));
    const enrolment = record(await must(server, second, 'ALTER USER SELF ENROLL MFA TOTP'));
    const secret = String(enrolment.rows[0]![0]);
    t.match(String(enrolment.rows[0]![1]), /^otpauth:\/\/totp\//);
    t.equal(await refusal(server, second, "ALTER USER SELF VERIFY MFA TOTP '000000'"), 'INVALID_PARAMETER');
    const code = totpCode(secret, now());
    await must(server, second, `ALTER USER SELF VERIFY MFA TOTP '${code}'`);
    t.equal((await signInRequest(server, { username: 'carol', password: carolPw })).body.error, 'MFA_REQUIRED', 'a code is needed once enrolled');
    t.same(await signInRequest(server, { username: 'carol', password: carolPw, totp: code }), wrong, 'a code works once');
    clock.advance(30_000);
    const withOtp = await signInRequest(server, { username: 'carol', password: carolPw, totp: totpCode(secret, now()) });
    t.equal(withOtp.status, 200);
    t.equal(withOtp.body.restriction, undefined);
    const carol = await authOf(server, String(withOtp.body.access_token));
    t.same(carol.claims.amr, ['pwd', 'otp', 'mfa']);
    t.equal(await refusal(server, carol, 'ALTER USER SELF ENROLL MFA TOTP'), 'INVALID_STATE', 'ENROLL once enrolled');
    clock.advance(30_000);
    t.equal(await refusal(server, carol, `ALTER USER SELF DISABLE MFA WITH TOTP CODE '${totpCode(secret, now())}'`), 'INVALID_STATE', 'DISABLE while a second factor is required');
    const pwOnly = await authAs(server, 'carol', { amr: ['pwd'], authTime: now() });
    t.equal(await refusal(server, pwOnly, 'ALTER USER SELF ENROLL MFA TOTP'), 'REAUTHENTICATION_REQUIRED', 'a sign-in without the current second factor does not qualify');
    const byPat = await authAs(server, 'carol', { authMethod: 'pat', amr: ['pat'], authTime: now() });
    t.equal(await refusal(server, byPat, 'ALTER USER SELF ENROLL MFA TOTP'), 'REAUTHENTICATION_REQUIRED', 'a PAT session does not qualify');

    // --- invitations: single use
    t.equal(await refusal(server, undefined, `REDEEM INVITATION '${invitation}' WITH PASSWORD 'short'`), 'PASSWORD_POLICY');
    const ivanPw = strongPassword('ivan');
    await must(server, undefined, `REDEEM INVITATION '${invitation}' WITH PASSWORD '${ivanPw}'`);
    t.equal(await refusal(server, undefined, `REDEEM INVITATION '${invitation}' WITH PASSWORD '${ivanPw}'`), 'InvalidInvitation');
    t.equal(await refusal(server, undefined, `REDEEM INVITATION 'floe_inv_made-up' WITH PASSWORD '${ivanPw}'`), 'InvalidInvitation');
    t.equal(await refusal(server, undefined, 'SHOW USERS'), 'NOT_AUTHENTICATED', 'nothing else runs without a token');

    // --- DROP RESTRICT with role grants; EXPUNGE rules; legal hold
    await must(server, admin, 'CREATE ROLE analyst');
    await must(server, admin, 'GRANT ROLE analyst TO USER ivan');
    t.equal(await refusal(server, admin, 'DROP USER ivan'), 'OBJECT_IN_USE');
    t.equal(await refusal(server, admin, 'DROP USER ivan RESTRICT'), 'OBJECT_IN_USE');
    t.equal(await refusal(server, admin, "EXPUNGE USER ivan REASON 'x'"), 'INVALID_STATE', 'EXPUNGE of a user that is not DEACTIVATED');
    await must(server, admin, 'DROP USER ivan CASCADE');
    await must(server, admin, "ALTER USER ivan SET LEGAL HOLD REASON 'litigation'");
    t.equal(await refusal(server, admin, "EXPUNGE USER ivan REASON 'x'"), 'LegalHoldActive');
    await must(server, admin, 'ALTER USER ivan CLEAR LEGAL HOLD');
    await must(server, admin, "EXPUNGE USER ivan REASON 'erasure request'");
    const tomb = (await store.query<{ name: string; email: string | null; status: string }>("SELECT name, email, status FROM principals WHERE expunge_reason = 'erasure request'")).rows[0]!;
    t.match(tomb, { status: 'EXPUNGED', email: null, name: /^expunged-/ }, 'row kept, personal data rewritten');
    await must(server, admin, "CREATE USER ivan EMAIL='ivan@example.com'");

    // --- MANAGE privileges: only tenant_admin grants; holders act but cannot re-delegate
    const daveAuth = await authAs(server, 'dave');
    t.equal(await refusal(server, daveAuth, "CREATE USER frank EMAIL='frank@example.com'"), 'PERMISSION_DENIED');
    await must(server, admin, 'GRANT MANAGE USERS TO USER dave');
    const daveManager = await authAs(server, 'dave', { scopes: ['sql', 'table:read'] });
    await must(server, daveManager, "CREATE USER frank EMAIL='frank@example.com'");
    await must(server, daveManager, 'ALTER USER frank SUSPEND');
    t.equal(await refusal(server, daveManager, 'GRANT MANAGE USERS TO USER frank'), 'PERMISSION_DENIED', 'holders cannot re-delegate');
    t.equal(await refusal(server, daveManager, 'ALTER USER carol SUSPEND'), 'PERMISSION_DENIED', 'holders cannot act on administrators');
    t.equal(await refusal(server, daveManager, "CREATE PERSONAL ACCESS TOKEN x FOR frank"), 'PERMISSION_DENIED', 'MANAGE USERS does not include PATs');
    t.equal(await refusal(server, daveManager, 'CREATE SERVICE ACCOUNT bot'), 'PERMISSION_DENIED');
    t.equal(await refusal(server, daveManager, "CREATE WEBHOOK w URL='https://example.com/' SECRET='0123456789abcdef'"), 'PERMISSION_DENIED');

    // --- PATs and webhooks: plaintext once; never again
    const patRow = record(await must(server, daveManager, "CREATE PERSONAL ACCESS TOKEN laptop TTL '30 days' SCOPE 'sql table:read'"));
    const pat = String(patRow.rows[0]![2]);
    t.match(pat, /^floe_pat_[0-9A-Za-z]{49}$/);
    t.equal(await refusal(server, daveManager, "CREATE PERSONAL ACCESS TOKEN laptop"), 'DUPLICATE_OBJECT');
    t.equal(await refusal(server, daveManager, "CREATE PERSONAL ACCESS TOKEN big SCOPE 'admin'"), 'INVALID_PARAMETER');
    t.equal(await refusal(server, daveManager, "CREATE PERSONAL ACCESS TOKEN wide SCOPE 'sql table:write'"), 'PERMISSION_DENIED', 'no wider than the creating token');
    t.equal(await refusal(server, daveManager, "CREATE PERSONAL ACCESS TOKEN long TTL '9999 days'"), 'INVALID_PARAMETER');
    const exchanged = await server.app.inject({ method: 'POST', url: '/v1/oauth/tokens', ...form({ grant_type: 'pat', pat, scope: 'table:read' }) });
    t.equal(exchanged.statusCode, 200);
    const patClaims = JSON.parse(Buffer.from(String((exchanged.json() as { access_token: string }).access_token).split('.')[1]!, 'base64url').toString()) as Record<string, unknown>;
    t.equal(patClaims.auth_method, 'pat');
    t.equal(patClaims.scope, 'table:read');
    const tooWide = await server.app.inject({ method: 'POST', url: '/v1/oauth/tokens', ...form({ grant_type: 'pat', pat, scope: 'table:write' }) });
    t.equal(tooWide.statusCode, 400, 'scope stays within the PAT');
    const webhookSecret = 'whsec-0123456789-abcdef';
    t.equal(await refusal(server, admin, "CREATE WEBHOOK w URL='http://example.com/' SECRET='0123456789abcdef'"), 'INVALID_PARAMETER', 'https only');
    t.equal(await refusal(server, admin, "CREATE WEBHOOK w URL='https://example.com/' SECRET='short'"), 'INVALID_PARAMETER', 'SECRET ≥ 16');
    t.equal(await refusal(server, admin, "CREATE WEBHOOK w URL='https://example.com/' SECRET='0123456789abcdef' EVENTS=('usr.')"), 'INVALID_PARAMETER');
    await must(server, admin, `CREATE WEBHOOK w URL='https://example.com/hook' SECRET='${webhookSecret}' EVENTS=('user.', 'create_pat')`);
    const later = [
      await must(server, daveManager, 'SHOW PERSONAL ACCESS TOKENS'),
      await must(server, admin, 'SHOW PERSONAL ACCESS TOKENS FOR dave'),
      await must(server, admin, 'SHOW WEBHOOKS'),
      await must(server, admin, 'SHOW USERS'),
      await must(server, admin, 'DESCRIBE USER carol'),
      await must(server, admin, 'DESCRIBE USER dave'),
      await must(server, admin, 'SHOW SERVICE ACCOUNTS'),
    ].map((r) => JSON.stringify(r));
    const dump = await dumpDatabase(store);
    const auditDump = (await store.query<{ t: string }>('SELECT (x.*)::text AS t FROM user_audit_log x')).rows.map((r) => r.t).join('\n')
      + (await store.query<{ t: string }>('SELECT payload::text AS t FROM audit_events')).rows.map((r) => r.t).join('\n');
    for (const [what, plain] of [['PAT', pat], ['webhook secret', webhookSecret], ['TOTP secret', secret], ['invitation token', invitation], ['password', davePw], ['password', dave2], ['password', carolPw], ['password', ivanPw]] as const) {
      t.notOk(dump.includes(plain), `${what} is not in the database`);
      t.notOk(auditDump.includes(plain), `${what} is not in the audit log or events`);
      t.notOk(later.some((r) => r.includes(plain)), `${what} is in no later response`);
    }
    t.ok(responses.some((r) => r.includes(pat)) && responses.some((r) => r.includes(secret)), 'shown exactly at creation');
    t.notOk(later.join('\n').includes('argon2'), 'no hash in any response');

    // --- a lagging sess_epoch is refused at the HTTP layer too
    t.equal((await server.app.inject({ method: 'GET', url: '/health', headers: { authorization: `Bearer ${String(after.body.access_token)}` } })).statusCode, 401, 'the GRANT MANAGE bump ended the earlier sign-in');
    const current = await mintToken(server, 'dave');
    const staleHttp = await server.app.inject({ method: 'GET', url: '/health', headers: { authorization: `Bearer ${current}` } });
    t.equal(staleHttp.statusCode, 200);
    await must(server, admin, 'ALTER USER dave RENAME TO david');
    const refused = await server.app.inject({ method: 'GET', url: '/health', headers: { authorization: `Bearer ${current}` } });
    t.equal(refused.statusCode, 401);
    t.match(refused.json(), { message: /session revoked/ });

    // --- the audit trail: one row per mutation, readable, tenant-keyed
    const events = (await store.query<{ event_type: string }>('SELECT event_type FROM user_audit_log ORDER BY created_at')).rows.map((r) => r.event_type);
    for (const e of ['create_user', 'suspend_user', 'drop_user', 'expunge_user', 'set_legal_hold', 'clear_legal_hold', 'grant_role', 'create_role', 'grant_privilege', 'create_pat', 'create_webhook', 'verify_mfa', 'enroll_mfa', 'change_password', 'redeem_invitation', 'rename_user', 'unlock_user']) {
      t.ok(events.includes(e), `audit row ${e}`);
    }
    const auditRows = await readAuditLog(store, admin.principal, { limit: 500 });
    t.ok(auditRows.rows.length >= events.length && auditRows.columns.includes('event_type'), 'system.audit_log rows for tenant_admin');
    await t.rejects(readAuditLog(store, daveManager.principal), { code: 'PERMISSION_DENIED' }, 'not for others, not even MANAGE USERS');
    const deliveries = (await store.query<{ n: number }>('SELECT count(*)::int AS n FROM webhook_deliveries')).rows[0]!.n;
    t.ok(deliveries >= 1, 'events after CREATE WEBHOOK fan out to it');
    t.equal((await runSql(server, admin, 'DESCRIBE USER nobody')).ok, false);
  });
});
