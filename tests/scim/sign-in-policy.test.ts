/**
 * PROVISIONED users sign in only through what their tenant allows (the tenant's provisioning
 * policy): by default nothing (a pushed password is not even kept); with `password`, the password
 * Okta pushes works at POST /api/auth/sign-in; with `pat`, an administrator may issue them PATs;
 * taking a method away ends their sessions and revokes their PATs at once. A provisioned user's
 * query history survives its deletion over SCIM. Real HTTP, PGlite and PostgreSQL.
 */
import t from 'tap';
import { setProvisioningPolicy } from '../../engine/principals/provisioning-policy.js';
import { createScimToken } from '../../engine/scim/token.js';
import { onEachBackend } from '../helpers/stores.js';
import { startTestServer } from '../helpers/server.js';

const SCIM_JSON = 'application/scim+json';
const PATCH_OP = 'urn:ietf:params:scim:api:messages:2.0:PatchOp';
const PASSWORD = 'Correct-Horse-7-Battery';

t.test('provisioned users and the tenant\'s sign-in methods', async (t) => {
  await onEachBackend(t, async (t, store) => {
    const server = await startTestServer(store, { keepStore: true });
    t.teardown(() => server.close());
    const base = await server.app.listen({ host: '127.0.0.1', port: 0 });
    const scim = (await createScimToken(store, 'default', new Date())).token;
    const admin = await server.token();
    const idp = async (method: string, path: string, body?: unknown): Promise<{ status: number; body: Record<string, unknown> }> => {
      const r = await fetch(`${base}/scim/v2${path}`, { method, headers: { authorization: `Bearer ${scim}`, 'content-type': SCIM_JSON, accept: SCIM_JSON }, ...(body ? { body: JSON.stringify(body) } : {}) });
      return { status: r.status, body: r.status === 204 ? {} : await r.json() as Record<string, unknown> };
    };
    const signIn = (password: string): Promise<Response> => fetch(`${base}/api/auth/sign-in`, {
      method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ username: 'pat.provisioned@example.com', password }),
    });
    const query = async (token: string, sql: string): Promise<{ status: number; body: Record<string, unknown> }> => {
      const r = await fetch(`${base}/api/query`, { method: 'POST', headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' }, body: JSON.stringify({ sql }) });
      return { status: r.status, body: await r.json() as Record<string, unknown> };
    };
    const exchangePat = (pat: string): Promise<Response> => fetch(`${base}/v1/oauth/tokens`, {
      method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: new URLSearchParams({ grant_type: 'pat', client_id: 'floe-sql', pat }),
    });

    // Okta pushes the user with a password (its "Sync password" option).
    const created = await idp('POST', '/Users', {
      schemas: ['urn:ietf:params:scim:schemas:core:2.0:User'], userName: 'pat.provisioned@example.com', name: { givenName: 'Pat', familyName: 'Provisioned' },
      emails: [{ primary: true, value: 'pat.provisioned@example.com', type: 'work' }], displayName: 'Pat Provisioned', active: true, password: PASSWORD,
    });
    t.equal(created.status, 201);
    const id = created.body.id as string;
    t.equal((await signIn(PASSWORD)).status, 401, 'no method allowed: no sign-in (and the password was not kept)');
    t.equal((await store.query('SELECT 1 FROM principal_passwords WHERE principal_id = $1', [id])).rows.length, 0);
    const refusedPat = await query(admin, 'CREATE PERSONAL ACCESS TOKEN laptop FOR "pat.provisioned@example.com"');
    t.match(refusedPat, { status: 409, body: { error: 'INVALID_STATE', message: /PROVISIONED/ } }, 'no PATs for provisioned users either');

    // The tenant allows passwords: Okta's next password push is kept, and signing in works.
    await setProvisioningPolicy(store, 'default', ['password'], new Date());
    const weak = await idp('PATCH', `/Users/${id}`, { schemas: [PATCH_OP], Operations: [{ op: 'replace', value: { password: 'short' } }] });
    t.match(weak, { status: 400, body: { scimType: 'invalidValue', detail: /password policy/ } }, 'the tenant password policy applies');
    t.notMatch(JSON.stringify(weak.body), /short/, 'the password is not echoed');
    const pushed = await idp('PATCH', `/Users/${id}`, { schemas: [PATCH_OP], Operations: [{ op: 'replace', value: { password: PASSWORD } }] });
    t.equal(pushed.status, 200);
    t.notOk('password' in pushed.body);
    const signedIn = await signIn(PASSWORD);
    t.equal(signedIn.status, 200, 'a PROVISIONED user signs in with the pushed password');
    const session = ((await signedIn.json()) as { access_token: string }).access_token;
    t.match(await query(session, 'SELECT 40 + 2 AS answer'), { status: 200, body: { rows: [[42]] } }, 'and runs SQL');
    t.equal((await signIn('Wrong-Horse-7-Battery')).status, 401);

    // Personal access tokens once the tenant allows them too.
    t.equal((await query(admin, 'CREATE PERSONAL ACCESS TOKEN laptop FOR "pat.provisioned@example.com"')).status, 409, 'still refused under password only');
    await setProvisioningPolicy(store, 'default', ['password', 'pat'], new Date());
    const issued = await query(admin, 'CREATE PERSONAL ACCESS TOKEN laptop FOR "pat.provisioned@example.com" SCOPE \'sql\'');
    t.equal(issued.status, 200, JSON.stringify(issued.body));
    const columns = issued.body.columns as string[];
    const pat = (issued.body.rows as string[][])[0]![columns.indexOf('token')]!;
    const exchanged = await exchangePat(pat);
    t.equal(exchanged.status, 200, 'the PAT is exchanged for an access token');
    const patToken = ((await exchanged.json()) as { access_token: string }).access_token;
    t.equal((await query(patToken, 'SELECT 1 AS one')).status, 200);

    // Taking the methods away ends everything at once.
    const change = await setProvisioningPolicy(store, 'default', [], new Date());
    t.match(change, { methods: [], patsRevoked: 1 });
    t.ok(change.sessionsEnded >= 1);
    t.equal((await query(session, 'SELECT 1')).status, 401, 'the password session ended');
    t.equal((await query(patToken, 'SELECT 1')).status, 401, 'the PAT session ended');
    t.equal((await exchangePat(pat)).status, 400, 'the PAT is revoked');
    t.equal((await signIn(PASSWORD)).status, 401, 'and password sign-in is refused again');

    // Deleting over SCIM keeps the user's query history.
    t.equal((await idp('DELETE', `/Users/${id}`)).status, 204);
    let history: { statement?: string; sql?: string }[] = [];
    // History is written behind the statements; the bound is only for rows that never come.
    for (const until = Date.now() + 60_000; history.length < 2 && Date.now() < until;) {
      const r = await fetch(`${base}/api/query-history?user_id=${id}`, { headers: { authorization: `Bearer ${admin}` } });
      history = await r.json() as { statement?: string }[];
      if (history.length < 2) await new Promise((done) => setTimeout(done, 100));
    }
    t.equal(history.length, 2, 'the deactivated user\'s two statements are still in history');
  });
});
