/** Tenants never see each other's principals; MANAGE privileges are checkable for catalog requests. */
import t from 'tap';
import { onEachBackend } from '../helpers/stores.js';
import { startTestServer } from '../helpers/server.js';
import { createTenantWithAdmin } from '../../engine/principals/bootstrap.js';
import { principalMayManage } from '../../engine/principals/privileges.js';
import { findPrincipalByName } from '../../engine/principals/principals.js';
import { adminAuth, authAs, must, refusal, signInRequest, strongPassword } from './helpers.js';

t.test('tenant isolation and privilege checks', async (t) => {
  await onEachBackend(t, async (t, store) => {
    const server = await startTestServer(store, { keepStore: true, config: (c) => ({ ...c, principals: { ...c.principals, background_jobs: false } }) });
    t.teardown(() => server.close());
    const admin = await adminAuth(server);
    await createTenantWithAdmin(store, 'acme');
    const acmeAdmin = await authAs(server, 'admin', { tenant: 'acme' });
    const pw = strongPassword('tenants');
    await must(server, admin, `CREATE USER sam EMAIL='sam@example.com' PASSWORD '${pw}'`);
    await must(server, acmeAdmin, "CREATE USER sam EMAIL='sam@example.com'");
    t.same((await must(server, acmeAdmin, 'SHOW USERS')).rows.map((r) => [r[0], r[1]]), [['sam', 'INVITED']], 'acme sees only its own sam');
    t.equal(await refusal(server, acmeAdmin, 'ALTER USER sam UNSUSPEND'), 'INVALID_STATE', 'acting on acme\'s sam, not default\'s');
    t.equal((await signInRequest(server, { tenant: 'acme', username: 'sam', password: pw })).status, 401, 'a password of another tenant does not sign in');
    const ok = await signInRequest(server, { tenant: 'default', username: 'sam', password: pw });
    t.equal(ok.status, 200);
    await must(server, acmeAdmin, "CREATE WEBHOOK w URL='https://example.com/a' SECRET='0123456789abcdef'");
    t.same((await must(server, admin, 'SHOW WEBHOOKS')).rows, [], 'webhooks are per tenant');

    const sam = (await findPrincipalByName(store, 'default', 'sam'))!;
    const ref = { tenantId: 'default', principalId: sam.id, roles: sam.roles };
    t.notOk(await principalMayManage(store, ref, 'SERVICE ACCOUNTS'));
    await must(server, admin, 'GRANT MANAGE SERVICE ACCOUNTS TO USER sam');
    t.ok(await principalMayManage(store, ref, 'SERVICE ACCOUNTS'), 'a grant is visible to catalog checks');
    t.notOk(await principalMayManage(store, ref, 'USERS'));
    t.notOk(await principalMayManage(store, { ...ref, tenantId: 'acme' }, 'SERVICE ACCOUNTS'), 'and only in its tenant');
    t.ok(await principalMayManage(store, { tenantId: 'default', principalId: admin.principal.id, roles: admin.principal.roles }, 'PATS'), 'tenant_admin holds all');
  });
});
