/**
 * SCIM 2.0 provisioning over real HTTP, with requests shaped exactly as Okta and Entra ID send
 * them (their documented bodies: Okta's "SCIM 2.0 protocol reference", Microsoft's "Develop a SCIM
 * endpoint" tutorial and SCIM validator), on PGlite and PostgreSQL: the tenant's SCIM token
 * (stored as a digest, rotated, revoked), create and get, filters and paging, PATCH in both
 * identity providers' shapes, PUT, DELETE to DEACTIVATED with history kept, SCIM errors, and the
 * PROVISIONED status with what the tenant allows for sign-in.
 */
import t from 'tap';
import type { Test } from 'tap';
import type { MetaStore } from '../../catalog/store/meta-store.js';
import { sha256 } from '../../engine/principals/secrets.js';
import { createScimToken, revokeScimToken, rotateScimToken } from '../../engine/scim/token.js';
import { onEachBackend } from '../helpers/stores.js';
import { startTestServer, type TestServer } from '../helpers/server.js';

const SCIM_JSON = 'application/scim+json';
const USER = 'urn:ietf:params:scim:schemas:core:2.0:User';
const ERROR = 'urn:ietf:params:scim:api:messages:2.0:Error';
const PATCH_OP = 'urn:ietf:params:scim:api:messages:2.0:PatchOp';
const LIST = 'urn:ietf:params:scim:api:messages:2.0:ListResponse';

interface Answer {
  readonly status: number;
  readonly type: string;
  readonly location: string | null;
  readonly body: Record<string, unknown>;
}

/** A SCIM client over real HTTP, as an identity provider is one. */
class Idp {
  constructor(readonly base: string, public token: string) {}

  async call(method: string, path: string, body?: unknown, headers: Record<string, string> = {}): Promise<Answer> {
    const r = await fetch(`${this.base}/scim/v2${path}`, {
      method,
      headers: {
        accept: SCIM_JSON, ...(this.token ? { authorization: `Bearer ${this.token}` } : {}),
        ...(body !== undefined ? { 'content-type': `${SCIM_JSON}; charset=utf-8` } : {}), ...headers,
      },
      ...(body !== undefined ? { body: typeof body === 'string' ? body : JSON.stringify(body) } : {}),
    });
    const text = await r.text();
    return { status: r.status, type: r.headers.get('content-type') ?? '', location: r.headers.get('location'), body: text ? JSON.parse(text) as Record<string, unknown> : {} };
  }
}

async function listening(store: MetaStore): Promise<{ server: TestServer; base: string }> {
  const server = await startTestServer(store, { keepStore: true });
  const base = await server.app.listen({ host: '127.0.0.1', port: 0 });
  return { server, base };
}

/** Okta's create request (Okta SCIM 2.0 reference: "Create the user"). */
function oktaCreate(userName: string, extra: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    schemas: [USER],
    userName,
    name: { givenName: 'Test', familyName: 'User' },
    emails: [{ primary: true, value: userName, type: 'work' }],
    displayName: 'Test User',
    locale: 'en-US',
    externalId: '00ujl29u0le5T6Aj10h7',
    groups: [],
    active: true,
    ...extra,
  };
}

/** Entra ID's create request (Microsoft SCIM tutorial: "Create User"). */
function entraCreate(userName: string, workEmail: string): Record<string, unknown> {
  return {
    schemas: [USER, 'urn:ietf:params:scim:schemas:extension:enterprise:2.0:User'],
    externalId: '0a21f0f2-8d2a-4f8e-bf98-7363c4aed4ef',
    userName,
    active: true,
    emails: [{ primary: true, type: 'work', value: workEmail }],
    meta: { resourceType: 'User' },
    name: { formatted: 'givenName familyName', familyName: 'familyName', givenName: 'givenName' },
    roles: [],
    'urn:ietf:params:scim:schemas:extension:enterprise:2.0:User': { department: 'Finance', employeeNumber: '701984' },
  };
}

function isScimError(t: Test, a: Answer, status: number, scimType?: string): void {
  t.equal(a.status, status, `status ${status}: ${JSON.stringify(a.body)}`);
  t.match(a.type, /^application\/scim\+json/, 'SCIM media type');
  t.same(a.body.schemas, [ERROR], 'the SCIM error schema');
  t.equal(a.body.status, String(status), 'status in the body');
  if (scimType) t.equal(a.body.scimType, scimType);
  t.type(a.body.detail, 'string');
}

async function principalRow(store: MetaStore, id: string): Promise<{ status: string; identity_source: string; session_epoch: number; name: string; email: string | null }> {
  const r = await store.query<{ status: string; identity_source: string; session_epoch: string; name: string; email: string | null }>(
    'SELECT status, identity_source, session_epoch, name, email FROM principals WHERE id = $1', [id]);
  const row = r.rows[0]!;
  return { ...row, session_epoch: Number(row.session_epoch) };
}

t.test('the SCIM token: shown once, stored as a digest, one live per tenant, rotated and revoked', async (t) => {
  await onEachBackend(t, async (t, store) => {
    const { server, base } = await listening(store);
    t.teardown(() => server.close());
    const issued = await createScimToken(store, 'default', new Date());
    t.match(issued.token, /^floe_scim_[0-9A-Za-z]{49}$/);
    const stored = await store.query<{ token_sha256: Uint8Array; token_prefix: string }>('SELECT token_sha256, token_prefix FROM scim_tokens');
    t.equal(stored.rows.length, 1);
    t.same(Buffer.from(stored.rows[0]!.token_sha256), sha256(issued.token), 'only the SHA-256 is kept');
    t.ok(issued.token.startsWith(stored.rows[0]!.token_prefix) && stored.rows[0]!.token_prefix.length < 30, 'and a short display prefix');
    await t.rejects(createScimToken(store, 'default', new Date()), /already has a SCIM token/);

    const idp = new Idp(base, issued.token);
    t.equal((await idp.call('GET', '/Users')).status, 200, 'the token works');
    isScimError(t, await new Idp(base, '').call('GET', '/Users'), 401);
    isScimError(t, await new Idp(base, await server.token()).call('GET', '/Users'), 401);
    const typo = issued.token.slice(0, -1) + (issued.token.endsWith('a') ? 'b' : 'a');
    isScimError(t, await new Idp(base, typo).call('GET', '/Users'), 401);

    const rotated = await rotateScimToken(store, 'default', new Date());
    isScimError(t, await idp.call('GET', '/Users'), 401);
    idp.token = rotated.token;
    t.equal((await idp.call('GET', '/Users')).status, 200, 'the rotated token works, the old one not');
    await revokeScimToken(store, 'default', new Date());
    isScimError(t, await idp.call('GET', '/Users'), 401);
  });
});

t.test('create and get: Okta and Entra ID requests make PROVISIONED users', async (t) => {
  await onEachBackend(t, async (t, store) => {
    const { server, base } = await listening(store);
    t.teardown(() => server.close());
    const idp = new Idp(base, (await createScimToken(store, 'default', new Date())).token);

    const okta = await idp.call('POST', '/Users', oktaCreate('test.user@okta.local', { password: '1mz050nq' }));
    t.equal(okta.status, 201, JSON.stringify(okta.body));
    t.match(okta.type, /^application\/scim\+json/);
    const id = okta.body.id as string;
    t.match(id, /^[0-9a-f-]{36}$/);
    t.equal(okta.location, `${base}/scim/v2/Users/${id}`, 'Location names the new resource');
    t.match(okta.body, {
      schemas: [USER], id, externalId: '00ujl29u0le5T6Aj10h7', userName: 'test.user@okta.local',
      name: { givenName: 'Test', familyName: 'User' }, displayName: 'Test User', active: true,
      emails: [{ value: 'test.user@okta.local', type: 'work', primary: true }],
      meta: { resourceType: 'User', location: `${base}/scim/v2/Users/${id}` },
    });
    t.notOk('password' in okta.body, 'the password is never returned');
    t.same(await principalRow(store, id), { status: 'PROVISIONED', identity_source: 'SCIM', session_epoch: 0, name: 'test.user@okta.local', email: 'test.user@okta.local' });
    t.equal((await store.query('SELECT 1 FROM principal_passwords WHERE principal_id = $1', [id])).rows.length, 0,
      'the tenant allows no password sign-in for provisioned users, so the pushed password is not kept');

    const got = await idp.call('GET', `/Users/${id}`);
    t.equal(got.status, 200);
    t.same(got.body, okta.body, 'GET returns what POST returned');

    const entra = await idp.call('POST', '/Users', entraCreate('Test_User_ab6490ee-1e48-479e-a20b-2d77186b5dd1', 'Test_User_fd0ea19b@testuser.com'));
    t.equal(entra.status, 201, JSON.stringify(entra.body));
    t.match(entra.body, { userName: 'Test_User_ab6490ee-1e48-479e-a20b-2d77186b5dd1', active: true, name: { formatted: 'givenName familyName', familyName: 'familyName', givenName: 'givenName' } });
    t.notOk('urn:ietf:params:scim:schemas:extension:enterprise:2.0:User' in entra.body, 'extension attributes are accepted, not kept');
    t.equal((await principalRow(store, entra.body.id as string)).status, 'PROVISIONED');

    const audit = await store.query<{ event_type: string; actor_name: string; details: { via: string; status: string } }>(
      "SELECT event_type, actor_name, details FROM user_audit_log WHERE target_id = $1", [id]);
    t.match(audit.rows, [{ event_type: 'create_user', actor_name: 'scim', details: { via: 'scim', status: 'PROVISIONED' } }], 'audited, the identity provider as actor');

    isScimError(t, await idp.call('POST', '/Users', oktaCreate('TEST.USER@okta.local')), 409, 'uniqueness');
    isScimError(t, await idp.call('POST', '/Users', oktaCreate('other@okta.local', { emails: [{ value: 'test.user@okta.local', primary: true }] })), 409, 'uniqueness');
    isScimError(t, await idp.call('POST', '/Users', { schemas: [USER], name: { givenName: 'x' } }), 400, 'invalidValue');
    isScimError(t, await idp.call('POST', '/Users', { schemas: ['urn:ietf:params:scim:schemas:core:2.0:Group'], userName: 'g' }), 400, 'invalidSyntax');
    isScimError(t, await idp.call('POST', '/Users', '{"userName": '), 400, 'invalidSyntax');
    isScimError(t, await idp.call('POST', '/Users', oktaCreate('nomail', { emails: [] })), 400, 'invalidValue');
    isScimError(t, await idp.call('POST', '/Users', oktaCreate('x@y.z', { active: 'maybe' })), 400, 'invalidValue');
    isScimError(t, await idp.call('GET', '/Users/00000000-0000-4000-8000-000000000000'), 404);
    isScimError(t, await idp.call('GET', '/Users/not-a-uuid'), 404);
    isScimError(t, await idp.call('GET', '/Groups'), 404);

    // The SCIM token sees only what it provisioned: the bootstrap administrator is not there.
    const admin = (await store.query<{ id: string }>("SELECT id FROM principals WHERE name = 'admin'")).rows[0]!.id;
    isScimError(t, await idp.call('GET', `/Users/${admin}`), 404);
    isScimError(t, await idp.call('POST', '/Users', oktaCreate('admin', { emails: [{ value: 'someone@else.example', primary: true }] })), 409, 'uniqueness');
  });
});

t.test('list with filter and paging: the lookups identity providers make before creating', async (t) => {
  await onEachBackend(t, async (t, store) => {
    const { server, base } = await listening(store);
    t.teardown(() => server.close());
    const idp = new Idp(base, (await createScimToken(store, 'default', new Date())).token);
    const ids: string[] = [];
    for (let i = 1; i <= 5; i++) ids.push((await idp.call('POST', '/Users', oktaCreate(`user${i}@okta.local`, { externalId: `ext-${i}` }))).body.id as string);

    // Okta: GET /Users?filter=userName%20eq%20%22…%22&startIndex=1&count=100
    const okta = await idp.call('GET', `/Users?filter=${encodeURIComponent('userName eq "USER3@okta.local"')}&startIndex=1&count=100`);
    t.equal(okta.status, 200);
    t.match(okta.type, /^application\/scim\+json/);
    t.match(okta.body, { schemas: [LIST], totalResults: 1, startIndex: 1, itemsPerPage: 1, Resources: [{ id: ids[2], userName: 'user3@okta.local' }] });
    // Entra ID: filter=userName+eq+"…" (a plus for the space, the quotes bare)
    const entra = await idp.call('GET', '/Users?filter=userName+eq+"user4%40okta.local"');
    t.match(entra.body, { totalResults: 1, Resources: [{ id: ids[3] }] });
    const none = await idp.call('GET', `/Users?filter=${encodeURIComponent('userName eq "non-existent user"')}`);
    t.match(none.body, { schemas: [LIST], totalResults: 0, Resources: [] });
    t.match((await idp.call('GET', `/Users?filter=${encodeURIComponent('externalId eq "ext-2"')}`)).body, { totalResults: 1, Resources: [{ id: ids[1] }] });
    t.match((await idp.call('GET', `/Users?filter=${encodeURIComponent('emails.value eq "user5@okta.local" and active eq true')}`)).body, { totalResults: 1, Resources: [{ id: ids[4] }] });
    t.match((await idp.call('GET', `/Users?filter=${encodeURIComponent('externalId eq "EXT-2"')}`)).body, { totalResults: 0 }, 'externalId is case-exact');

    const page = await idp.call('GET', '/Users?startIndex=2&count=2');
    t.match(page.body, { totalResults: 5, startIndex: 2, itemsPerPage: 2 });
    t.same((page.body.Resources as { id: string }[]).map((r) => r.id), ids.slice(1, 3), 'oldest first, from the second');
    t.match((await idp.call('GET', '/Users?count=0')).body, { totalResults: 5, itemsPerPage: 0, Resources: [] });
    t.match((await idp.call('GET', '/Users?startIndex=0&count=1')).body, { startIndex: 1, itemsPerPage: 1 });

    isScimError(t, await idp.call('GET', `/Users?filter=${encodeURIComponent('userName co "user"')}`), 400, 'invalidFilter');
    isScimError(t, await idp.call('GET', `/Users?filter=${encodeURIComponent('userName eq "a" or userName eq "b"')}`), 400, 'invalidFilter');
    isScimError(t, await idp.call('GET', `/Users?filter=${encodeURIComponent('title eq "x"')}`), 400, 'invalidFilter');
    isScimError(t, await idp.call('GET', `/Users?filter=${encodeURIComponent('userName eq "unterminated')}`), 400, 'invalidFilter');
    isScimError(t, await idp.call('GET', '/Users?count=many'), 400, 'invalidValue');
  });
});
