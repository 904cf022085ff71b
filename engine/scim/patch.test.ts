import t from 'tap';
import fc from 'fast-check';
import { ScimError } from './errors.js';
import { parseFilter } from './filter.js';
import { applyPatch, parsePatchRequest, parsePath } from './patch.js';
import { parseUserResource, primaryEmail, type ScimUserDocument } from './resource.js';
import { isWellFormedScimToken, newScimToken, scimTokenPrefix } from './token.js';

const PATCH_OP = 'urn:ietf:params:scim:api:messages:2.0:PatchOp';
const base: ScimUserDocument = {
  userName: 'ada@example.com', externalId: 'ext', displayName: 'Ada', name: { givenName: 'Ada', familyName: 'Lovelace' },
  emails: [{ value: 'ada@example.com', type: 'work', primary: true }], active: true,
};
const run = (...ops: Record<string, unknown>[]): ScimUserDocument => applyPatch(base, parsePatchRequest({ schemas: [PATCH_OP], Operations: ops }));
const scimType = (f: () => unknown): string | undefined => {
  try {
    f();
  } catch (e) {
    if (e instanceof ScimError) return e.scimType ?? `status ${e.status}`;
    throw e;
  }
  return undefined;
};

t.test('Okta: a value object without a path', async (t) => {
  t.equal(run({ op: 'replace', value: { active: false } }).active, false);
  t.equal(run({ op: 'replace', value: { password: 'pw' } }).password, 'pw');
  t.same(run({ op: 'replace', value: { 'name.givenName': 'Augusta' } }).name, { givenName: 'Augusta', familyName: 'Lovelace' }, 'keys may be paths');
  t.equal(scimType(() => run({ op: 'remove', value: { active: true } })), 'noTarget');
});

t.test('Entra ID: a path per attribute, capitalised ops, booleans as strings', async (t) => {
  t.equal(run({ op: 'Replace', path: 'active', value: 'False' }).active, false);
  t.equal(run({ op: 'Replace', path: 'active', value: 'TRUE' }).active, true);
  t.same(run({ op: 'Replace', path: 'emails[type eq "work"].value', value: 'new@example.com' }).emails, [{ value: 'new@example.com', type: 'work', primary: true }]);
  t.same(run({ op: 'Add', path: 'emails[type eq "home"].value', value: 'home@example.com' }).emails,
    [{ value: 'ada@example.com', type: 'work', primary: true }, { value: 'home@example.com', type: 'home' }], 'an unmatched type filter adds the address');
  t.equal(run({ op: 'Replace', path: 'urn:ietf:params:scim:schemas:core:2.0:User:displayName', value: 'A. L.' }).displayName, 'A. L.');
  t.same(run({ op: 'Add', path: 'urn:ietf:params:scim:schemas:extension:enterprise:2.0:User:manager', value: { value: 'x' } }), base, 'extensions ignored');
  t.equal(run({ op: 'Remove', path: 'name.familyName' }).name.familyName, undefined);
  t.equal(run({ op: 'Add', path: 'externalId', value: [{ value: 'one-element array' }] }).externalId, 'one-element array');
  t.same(run({ op: 'Add', path: 'emails', value: [{ value: 'b@example.com', primary: true }] }).emails,
    [{ value: 'ada@example.com', type: 'work', primary: false }, { value: 'b@example.com', primary: true }], 'one primary');
});

t.test('refusals', async (t) => {
  t.equal(scimType(() => run({ op: 'copy', path: 'active', value: true })), 'invalidSyntax');
  t.equal(scimType(() => run({ op: 'replace', path: 'nickname2', value: 'x' })), 'invalidPath');
  t.equal(scimType(() => run({ op: 'replace', path: 'meta', value: {} })), 'mutability');
  t.equal(scimType(() => run({ op: 'remove', path: 'userName' })), 'mutability');
  t.equal(scimType(() => run({ op: 'replace', path: 'active', value: 1 })), 'invalidValue');
  t.equal(scimType(() => run({ op: 'replace', path: 'emails[type eq "work"', value: 'x' })), 'invalidPath');
  t.equal(scimType(() => run({ op: 'replace', path: 'displayName[type eq "x"]', value: 'x' })), 'invalidPath');
  t.equal(scimType(() => parsePatchRequest({ schemas: ['urn:x'], Operations: [{ op: 'add' }] })), 'invalidSyntax');
  t.equal(scimType(() => parsePath('emails[type co "w"].value')), 'invalidPath');
});

t.test('filters', async (t) => {
  t.same(parseFilter('userName eq "a@b.c"'), [{ attribute: 'userName', value: 'a@b.c' }]);
  t.same(parseFilter('urn:ietf:params:scim:schemas:core:2.0:User:userName EQ "x\\"y" and active eq FALSE'), [{ attribute: 'userName', value: 'x"y' }, { attribute: 'active', value: false }]);
  for (const bad of ['userName sw "a"', 'userName eq "a" or id eq "b"', '(userName eq "a")', 'emails[type eq "work"]', 'userName eq', 'userName eq 3', 'active eq "true"', '']) {
    t.equal(scimType(() => parseFilter(bad)), 'invalidFilter', bad);
  }
});

t.test('resources', async (t) => {
  t.same(primaryEmail({ userName: 'upn@contoso.com', emails: [] }), 'upn@contoso.com', 'a UPN stands in for a missing address');
  t.equal(primaryEmail({ userName: 'plain', emails: [] }), undefined);
  t.equal(primaryEmail({ userName: 'x', emails: [{ value: 'h@x.y', type: 'home' }, { value: 'w@x.y', type: 'work' }] }), 'w@x.y');
  t.match(parseUserResource({ USERNAME: 'u', ACTIVE: 'false', Emails: [{ Value: 'u@x.y', Primary: 'true' }] }), { userName: 'u', active: false, emails: [{ value: 'u@x.y', primary: true }] }, 'names are case-insensitive');
  t.equal(scimType(() => parseUserResource({ userName: 'u', name: { nickname: 'x' } })), 'invalidValue');
});

t.test('tokens: well-formed, checksummed, any one-character change caught', async (t) => {
  const token = newScimToken();
  t.ok(isWellFormedScimToken(token));
  t.ok(token.startsWith(scimTokenPrefix(token)));
  fc.assert(fc.property(fc.integer({ min: 0, max: token.length - 1 }), fc.constantFrom(...'0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz_'), (i, c) => {
    const changed = token.slice(0, i) + c + token.slice(i + 1);
    return changed === token || !isWellFormedScimToken(changed);
  }), { numRuns: 500 });
});

t.test('PATCH never changes what its operations do not name (property)', async (t) => {
  const attribute = fc.constantFrom('displayName', 'externalId', 'name.givenName', 'name.familyName', 'active');
  fc.assert(fc.property(attribute, fc.string({ minLength: 1, maxLength: 10 }), (path, text) => {
    const value = path === 'active' ? 'False' : text;
    const next = run({ op: 'Replace', path, value });
    const untouched = (['userName', 'emails'] as const).every((k) => JSON.stringify(next[k]) === JSON.stringify(base[k]));
    const nameOther = path.startsWith('name.') ? Object.entries(base.name).every(([k, v]) => `name.${k}` === path || next.name[k as 'givenName'] === v) : JSON.stringify(next.name) === JSON.stringify(base.name);
    return untouched && nameOther;
  }), { numRuns: 200 });
  t.pass('held');
});
