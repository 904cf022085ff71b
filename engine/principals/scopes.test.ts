import t from 'tap';
import fc from 'fast-check';
import { ALL_SCOPES, CATALOG_SCOPES, resolveRequestedScopes, type Scope } from './scopes.js';

t.test('aliases and refusals', async (t) => {
  const all = [...ALL_SCOPES];
  t.same(resolveRequestedScopes(undefined, all), { ok: true, scopes: all, offlineAccess: false });
  t.same(resolveRequestedScopes('catalog', all), { ok: true, scopes: [...CATALOG_SCOPES], offlineAccess: false });
  t.same(resolveRequestedScopes('PRINCIPAL_ROLE:ALL', ['sql', 'table:read']), { ok: true, scopes: ['table:read', 'sql'], offlineAccess: false });
  t.same(resolveRequestedScopes('catalog offline_access', ['table:read']), { ok: true, scopes: ['table:read'], offlineAccess: true });
  t.match(resolveRequestedScopes('table:write', ['table:read']), { ok: false, reason: /not allowed/ });
  t.match(resolveRequestedScopes('admin', all), { ok: false, reason: /unknown scope admin/ });
  t.match(resolveRequestedScopes('catalog', ['sql']), { ok: false });
});

t.test('property: what is granted is always within what is allowed', async () => {
  const scope = fc.constantFrom<Scope>(...ALL_SCOPES);
  fc.assert(fc.property(fc.uniqueArray(scope), fc.array(fc.oneof(scope, fc.constantFrom('catalog', 'PRINCIPAL_ROLE:ALL', 'offline_access'))), (allowed, asked) => {
    const r = resolveRequestedScopes(asked.join(' '), allowed);
    if (r.ok) return r.scopes.every((s) => allowed.includes(s)) && r.scopes.length > 0 || (allowed.length === 0 && asked.length === 0);
    return true;
  }));
});
