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

function patch(...operations: Record<string, unknown>[]): Record<string, unknown> {
  return { schemas: [PATCH_OP], Operations: operations };
}

t.test('PATCH as Okta and Entra ID send it, PUT, and the PROVISIONED ⇄ SUSPENDED transitions', async (t) => {
  await onEachBackend(t, async (t, store) => {
    const { server, base } = await listening(store);
    t.teardown(() => server.close());
    const idp = new Idp(base, (await createScimToken(store, 'default', new Date())).token);
    const admin = await server.token();
    const sql = async (text: string): Promise<{ status: number; body: Record<string, unknown> }> => {
      const r = await fetch(`${base}/api/query`, { method: 'POST', headers: { authorization: `Bearer ${admin}`, 'content-type': 'application/json' }, body: JSON.stringify({ sql: text }) });
      return { status: r.status, body: await r.json() as Record<string, unknown> };
    };

    // Okta: deactivate and reactivate with a value object and no path.
    const okta = (await idp.call('POST', '/Users', oktaCreate('okta.person@example.com'))).body;
    const oktaId = okta.id as string;
    const off = await idp.call('PATCH', `/Users/${oktaId}`, patch({ op: 'replace', value: { active: false } }));
    t.equal(off.status, 200, JSON.stringify(off.body));
    t.match(off.body, { id: oktaId, active: false });
    t.match(await principalRow(store, oktaId), { status: 'SUSPENDED', session_epoch: 1 }, 'suspended, sessions ended');
    const on = await idp.call('PATCH', `/Users/${oktaId}`, patch({ op: 'replace', value: { active: true } }));
    t.match(on.body, { active: true });
    t.match(await principalRow(store, oktaId), { status: 'PROVISIONED' });

    // Okta: a profile change is a PUT of the whole user, echoing id and meta.
    const put = await idp.call('PUT', `/Users/${oktaId}`, {
      ...okta, name: { givenName: 'Changed', familyName: 'User' }, emails: [{ primary: true, value: 'okta.changed@example.com', type: 'work' }], displayName: 'Changed User',
    });
    t.equal(put.status, 200, JSON.stringify(put.body));
    t.match(put.body, { userName: 'okta.person@example.com', name: { givenName: 'Changed', familyName: 'User' }, displayName: 'Changed User', emails: [{ value: 'okta.changed@example.com', primary: true }], active: true });
    t.match(await principalRow(store, oktaId), { email: 'okta.changed@example.com', status: 'PROVISIONED' });
    t.notOk(put.body.externalId === undefined, 'externalId kept (it was sent again)');
    const putWithoutName = await idp.call('PUT', `/Users/${oktaId}`, { schemas: [USER], userName: 'okta.person@example.com', emails: [{ value: 'okta.changed@example.com', primary: true }], active: true });
    t.notOk('name' in putWithoutName.body, 'PUT replaces: attributes not sent are cleared');
    t.notOk('externalId' in putWithoutName.body);

    // Entra ID: path-per-attribute operations, "Replace" capitalised, active as the string "False".
    const entra = (await idp.call('POST', '/Users', entraCreate('entra.person@contoso.com', 'entra.person@contoso.com'))).body;
    const entraId = entra.id as string;
    const update = await idp.call('PATCH', `/Users/${entraId}`, patch(
      { op: 'Replace', path: 'emails[type eq "work"].value', value: 'updatedEmail@microsoft.com' },
      { op: 'Replace', path: 'name.familyName', value: 'updatedFamilyName' },
      { op: 'Add', path: 'urn:ietf:params:scim:schemas:extension:enterprise:2.0:User:department', value: 'IT' },
      { op: 'Replace', path: 'displayName', value: 'Entra Person' },
    ));
    t.equal(update.status, 200, JSON.stringify(update.body));
    t.match(update.body, { emails: [{ type: 'work', value: 'updatedEmail@microsoft.com', primary: true }], name: { familyName: 'updatedFamilyName', givenName: 'givenName' }, displayName: 'Entra Person' });
    t.equal((await principalRow(store, entraId)).email, 'updatedEmail@microsoft.com', 'the primary address is the principal\'s');
    const disabled = await idp.call('PATCH', `/Users/${entraId}`, patch({ op: 'Replace', path: 'active', value: 'False' }));
    t.match(disabled.body, { active: false });
    t.match(await principalRow(store, entraId), { status: 'SUSPENDED' });
    const filtered = await idp.call('GET', `/Users?filter=${encodeURIComponent('userName eq "entra.person@contoso.com"')}`);
    t.match(filtered.body, { totalResults: 1, Resources: [{ active: false }] }, 'a disabled user is still found, with active false');
    t.match((await idp.call('PATCH', `/Users/${entraId}`, patch({ op: 'Replace', path: 'active', value: 'True' }))).body, { active: true });
    t.match(await principalRow(store, entraId), { status: 'PROVISIONED' });

    // Rename through userName: the epoch is bumped as for ALTER USER RENAME.
    const epoch = (await principalRow(store, entraId)).session_epoch;
    const renamed = await idp.call('PATCH', `/Users/${entraId}`, patch({ op: 'Replace', path: 'userName', value: 'renamed@contoso.com' }));
    t.match(renamed.body, { userName: 'renamed@contoso.com' });
    t.match(await principalRow(store, entraId), { name: 'renamed@contoso.com', session_epoch: epoch + 1 });
    t.match((await idp.call('PATCH', `/Users/${entraId}`, patch({ op: 'Add', path: 'emails', value: [{ value: 'home@contoso.com', type: 'home' }] }))).body,
      { emails: [{ value: 'updatedEmail@microsoft.com', primary: true }, { value: 'home@contoso.com', type: 'home', primary: false }] });
    t.match((await idp.call('PATCH', `/Users/${entraId}`, patch({ op: 'Remove', path: 'emails[type eq "home"]' }))).body,
      { emails: [{ value: 'updatedEmail@microsoft.com' }] });
    t.notOk('externalId' in (await idp.call('PATCH', `/Users/${entraId}`, patch({ op: 'Remove', path: 'externalId' }))).body);

    // Refusals in SCIM's format; nothing changes.
    isScimError(t, await idp.call('PATCH', `/Users/${entraId}`, patch({ op: 'Move', path: 'active', value: false })), 400, 'invalidSyntax');
    isScimError(t, await idp.call('PATCH', `/Users/${entraId}`, patch({ op: 'replace', path: 'favouriteColour', value: 'blue' })), 400, 'invalidPath');
    isScimError(t, await idp.call('PATCH', `/Users/${entraId}`, patch({ op: 'replace', path: 'id', value: 'x' })), 400, 'mutability');
    isScimError(t, await idp.call('PATCH', `/Users/${entraId}`, patch({ op: 'remove' })), 400, 'noTarget');
    isScimError(t, await idp.call('PATCH', `/Users/${entraId}`, patch({ op: 'replace', path: 'active', value: 'perhaps' })), 400, 'invalidValue');
    isScimError(t, await idp.call('PATCH', `/Users/${entraId}`, patch({ op: 'replace', path: 'userName', value: 'okta.person@example.com' })), 409, 'uniqueness');
    isScimError(t, await idp.call('PATCH', `/Users/${entraId}`, { Operations: [] }), 400, 'invalidSyntax');
    isScimError(t, await idp.call('PATCH', '/Users/00000000-0000-4000-8000-000000000000', patch({ op: 'replace', value: { active: false } })), 404);
    t.match(await principalRow(store, entraId), { name: 'renamed@contoso.com', status: 'PROVISIONED' });

    // An administrator's suspension outranks the identity provider: active=true does not lift it.
    t.equal((await sql('ALTER USER "renamed@contoso.com" SUSPEND')).status, 200);
    t.match((await idp.call('PATCH', `/Users/${entraId}`, patch({ op: 'Replace', path: 'active', value: 'True' }))).body, { active: false });
    t.match(await principalRow(store, entraId), { status: 'SUSPENDED' });
    t.equal((await sql('ALTER USER "renamed@contoso.com" UNSUSPEND')).status, 200);
    t.match(await principalRow(store, entraId), { status: 'PROVISIONED' }, 'UNSUSPEND returns a provisioned user to PROVISIONED');
    // …while an identity provider's own suspension survives an UNSUSPEND.
    await idp.call('PATCH', `/Users/${entraId}`, patch({ op: 'Replace', path: 'active', value: 'False' }));
    t.equal((await sql('ALTER USER "renamed@contoso.com" SUSPEND')).status, 200);
    const stays = await sql('ALTER USER "renamed@contoso.com" UNSUSPEND');
    t.match(stays.body, { rows: [[/stays SUSPENDED/]] });
    t.match(await principalRow(store, entraId), { status: 'SUSPENDED' });
    const describe = await sql('DESCRIBE USER "renamed@contoso.com"');
    const columns = describe.body.columns as string[];
    t.equal((describe.body.rows as unknown[][])[0]![columns.indexOf('identity_source')], 'SCIM', 'DESCRIBE USER shows where the user comes from');
  });
});

t.test('DELETE deactivates: 404 to SCIM, the row, history and audit kept; a later POST revives the same user', async (t) => {
  await onEachBackend(t, async (t, store) => {
    const { server, base } = await listening(store);
    t.teardown(() => server.close());
    const idp = new Idp(base, (await createScimToken(store, 'default', new Date())).token);
    const id = (await idp.call('POST', '/Users', entraCreate('leaver@contoso.com', 'leaver@contoso.com'))).body.id as string;
    const admin = await server.token();
    await fetch(`${base}/api/query`, { method: 'POST', headers: { authorization: `Bearer ${admin}`, 'content-type': 'application/json' }, body: JSON.stringify({ sql: 'CREATE ROLE analyst' }) });
    await fetch(`${base}/api/query`, { method: 'POST', headers: { authorization: `Bearer ${admin}`, 'content-type': 'application/json' }, body: JSON.stringify({ sql: 'GRANT ROLE analyst TO USER "leaver@contoso.com"' }) });

    const gone = await idp.call('DELETE', `/Users/${id}`);
    t.equal(gone.status, 204);
    isScimError(t, await idp.call('GET', `/Users/${id}`), 404);
    isScimError(t, await idp.call('DELETE', `/Users/${id}`), 404);
    t.match((await idp.call('GET', `/Users?filter=${encodeURIComponent('userName eq "leaver@contoso.com"')}`)).body, { totalResults: 0 });
    t.match(await principalRow(store, id), { status: 'DEACTIVATED', name: 'leaver@contoso.com', session_epoch: 1 }, 'soft delete: the row stays');
    const trail = (await store.query<{ event_type: string; details: { dropped_roles?: string[] } }>('SELECT event_type, details FROM user_audit_log WHERE target_id = $1 ORDER BY created_at', [id])).rows;
    t.same(trail.map((r) => r.event_type), ['create_user', 'grant_role', 'drop_user'], 'the audit trail is kept');
    t.same(trail[2]!.details.dropped_roles, ['analyst'], 'role grants are revoked and listed');

    const back = await idp.call('POST', '/Users', entraCreate('leaver@contoso.com', 'leaver@contoso.com'));
    t.equal(back.status, 201);
    t.equal(back.body.id, id, 'the same principal: its history stays its own');
    t.match(await principalRow(store, id), { status: 'PROVISIONED' });
    t.equal((await store.query("SELECT 1 FROM user_audit_log WHERE target_id = $1 AND event_type = 'undrop_user'", [id])).rows.length, 1);
  });
});

t.test('discovery documents', async (t) => {
  const store = await (await import('../../catalog/store/open-store.js')).openStore({ kind: 'pglite-memory' });
  t.teardown(() => store.close());
  const { server, base } = await listening(store);
  t.teardown(() => server.close());
  const idp = new Idp(base, (await createScimToken(store, 'default', new Date())).token);
  const spc = await idp.call('GET', '/ServiceProviderConfig');
  t.equal(spc.status, 200);
  t.match(spc.body, {
    schemas: ['urn:ietf:params:scim:schemas:core:2.0:ServiceProviderConfig'], patch: { supported: true }, bulk: { supported: false },
    filter: { supported: true, maxResults: 200 }, sort: { supported: false }, etag: { supported: false }, authenticationSchemes: [{ type: 'oauthbearertoken' }],
  });
  const types = await idp.call('GET', '/ResourceTypes');
  t.match(types.body, { schemas: [LIST], totalResults: 1, Resources: [{ id: 'User', endpoint: '/Users', schema: USER }] });
  t.match((await idp.call('GET', '/ResourceTypes/User')).body, { id: 'User' });
  const schemas = await idp.call('GET', '/Schemas');
  t.match(schemas.body, { totalResults: 1, Resources: [{ id: USER, name: 'User' }] });
  const attributes = ((schemas.body.Resources as { attributes: { name: string }[] }[])[0]!.attributes).map((a) => a.name);
  t.same(attributes, ['userName', 'externalId', 'name', 'displayName', 'emails', 'active', 'password']);
  t.match((await idp.call('GET', `/Schemas/${USER}`)).body, { id: USER });
  isScimError(t, await idp.call('GET', '/Schemas/urn:nothing'), 404);
  isScimError(t, await new Idp(base, '').call('GET', '/ServiceProviderConfig'), 401);
});

t.test('wrong SCIM tokens count against the client address: past the limit even the right one waits', async (t) => {
  const store = await (await import('../../catalog/store/open-store.js')).openStore({ kind: 'pglite-memory' });
  t.teardown(() => store.close());
  const server = await startTestServer(store, { keepStore: true, config: (c) => ({ ...c, auth: { ...c.auth, rate_limit: { ...c.auth.rate_limit, max_failures_per_address: 3 } } }) });
  t.teardown(() => server.close());
  const base = await server.app.listen({ host: '127.0.0.1', port: 0 });
  const good = (await createScimToken(store, 'default', new Date())).token;
  for (let i = 0; i < 3; i++) isScimError(t, await new Idp(base, `floe_scim_guess${i}`).call('GET', '/Users'), 401);
  const r = await fetch(`${base}/scim/v2/Users`, { headers: { authorization: `Bearer ${good}` } });
  t.equal(r.status, 429);
  t.ok(Number(r.headers.get('retry-after')) >= 1, 'Retry-After');
  t.match(await r.json(), { schemas: [ERROR], status: '429' });
});
