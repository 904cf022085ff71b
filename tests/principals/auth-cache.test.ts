/**
 * The auth-state cache stays true: every change to a principal, its roles or its clients, made by
 * any statement of this process, is seen by the very next read; another process's change is seen
 * once its announcement arrives; while nobody listens, the cache is bypassed.
 */
import t from 'tap';
import { randomUUID } from 'node:crypto';
import pg from 'pg';
import { openStore } from '../../catalog/store/open-store.js';
import { LISTENER_APPLICATION_NAME } from '../../catalog/store/pg-store.js';
import { AuthStateCache } from '../../engine/principals/auth-cache.js';
import { bootstrapIfEmpty } from '../../engine/principals/bootstrap.js';
import { checkClientSecret, createClient } from '../../engine/principals/clients.js';
import { authenticatePat } from '../../engine/principals/credentials.js';
import { sha256 } from '../../engine/principals/secrets.js';
import { newPat, patDisplayPrefix } from '../../engine/principals/token-format.js';
import { createServiceAccount } from '../../engine/principals/principals.js';
import { createPostgresDatabase, onEachBackend, POSTGRES_ADMIN_URL } from '../helpers/stores.js';

const TENANT = 'default';

/** Polls until `check` holds; the bound is only for a cache or listener that never gets there. */
async function until(what: string, check: () => Promise<boolean>, timeoutMs = 60_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`${what}: not within ${timeoutMs} ms`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

t.test('changes made through the store are seen by the next read', async (t) => {
  await onEachBackend(t, async (t, store) => {
    await bootstrapIfEmpty(store);
    const cache = new AuthStateCache(store);
    t.teardown(() => cache.close());
    await until('the store listens', async () => store.notifications.delivering());
    const p = await createServiceAccount(store, { tenantId: TENANT, name: 'etl', roles: ['reader'] });
    const creds = await createClient(store, { tenantId: TENANT, principalId: p.id, scopes: ['catalog:read', 'sql'] });

    t.equal((await cache.principal(TENANT, p.id))?.status, 'ACTIVE');
    // On PostgreSQL the listening connection hears the creation again a moment later, which may
    // keep the first read from being stored; a later one is.
    await until('kept', async () => (await cache.principal(TENANT, p.id)) !== undefined && cache.size.principals === 1);
    t.equal(cache.size.principals, 1, 'kept');
    t.equal(await cache.principal('other-tenant', p.id), undefined, 'another tenant never sees it');

    await store.query(`UPDATE principals SET status = 'SUSPENDED' WHERE id = $1`, [p.id]);
    t.equal((await cache.principal(TENANT, p.id))?.status, 'SUSPENDED', 'status change seen at once');

    await store.transaction(async (tx) => {
      await tx.query(`UPDATE principals SET status = 'ACTIVE', session_epoch = session_epoch + 1 WHERE id = $1`, [p.id]);
    });
    const after = await cache.principal(TENANT, p.id);
    t.equal(after?.status, 'ACTIVE');
    t.equal(after?.sessionEpoch, p.sessionEpoch + 1, 'epoch bump in a transaction seen at once');

    await store.query('INSERT INTO principal_roles (tenant_id, principal_id, role) VALUES ($1, $2, $3)', [TENANT, p.id, 'writer']);
    t.same((await cache.principal(TENANT, p.id))?.roles, ['reader', 'writer'], 'role grant seen at once');
    await store.query('DELETE FROM principal_roles WHERE principal_id = $1 AND role = $2', [p.id, 'reader']);
    t.same((await cache.principal(TENANT, p.id))?.roles, ['writer'], 'role revoke seen at once');

    t.ok(checkClientSecret(await cache.clientPrincipal(creds.clientId), creds.clientSecret), 'client authenticates');
    // A load is not kept when an announcement arrives meanwhile, and on PostgreSQL late copies of
    // the announcements above may: the entry is kept by a load that no announcement raced.
    await until('the client kept', async () => (await cache.clientPrincipal(creds.clientId)) !== undefined && cache.size.clients === 1);
    t.notOk(checkClientSecret(await cache.clientPrincipal(creds.clientId), `${creds.clientSecret}x`), 'wrong secret refused from the cache too');
    t.equal(cache.size.clients, 1, 'the client is kept');
    await store.query('UPDATE oauth_clients SET revoked_at = now() WHERE client_id = $1', [creds.clientId]);
    t.notOk(checkClientSecret(await cache.clientPrincipal(creds.clientId), creds.clientSecret), 'revocation seen at once');

    const rotated = await createClient(store, { tenantId: TENANT, principalId: p.id });
    t.ok(checkClientSecret(await cache.clientPrincipal(rotated.clientId), rotated.clientSecret));
    await store.query(`UPDATE principals SET status = 'DEACTIVATED' WHERE id = $1`, [p.id]);
    t.equal((await cache.clientPrincipal(rotated.clientId))?.principal.status, 'DEACTIVATED', "a principal's change reaches its clients");

    // Keep the entry, then update a column authentication does not read: an announcement of that
    // update would reach this process before the update resolves and drop the entry. On
    // PostgreSQL, late copies of the announcements above (from the listening and the pooled
    // connections) may still arrive at any moment and drop it too, for a reason that is not the
    // update's; so a drop is only held against the update when it happens every time.
    let kept = false;
    for (let attempt = 0; attempt < 10 && !kept; attempt++) {
      await until('kept again', async () => (await cache.principal(TENANT, p.id)) !== undefined && cache.size.principals === 1);
      await store.query('UPDATE principals SET login_failures = login_failures + 1 WHERE id = $1', [p.id]);
      kept = cache.size.principals === 1;
      if (!kept) await new Promise((resolve) => setTimeout(resolve, 200));
    }
    t.ok(kept, 'columns authentication does not read announce nothing');
  });
});

t.test('a load that races an announcement is not kept', async (t) => {
  await onEachBackend(t, async (t, store) => {
    await bootstrapIfEmpty(store);
    const cache = new AuthStateCache(store);
    t.teardown(() => cache.close());
    const p = await createServiceAccount(store, { tenantId: TENANT, name: 'racer' });
    const reading = cache.principal(TENANT, p.id);
    await store.query(`UPDATE principals SET status = 'SUSPENDED' WHERE id = $1`, [p.id]);
    await reading;
    t.equal((await cache.principal(TENANT, p.id))?.status, 'SUSPENDED');
  });
});

t.test('PostgreSQL: another process is heard; an outage empties and bypasses the cache', async (t) => {
  const db = await createPostgresDatabase();
  if (!db) {
    if (process.env.CI === 'true') t.fail('PostgreSQL is required in CI');
    return;
  }
  const mine = await openStore({ kind: 'postgres', connectionString: db.url, poolSize: 4 });
  const theirs = await openStore({ kind: 'postgres', connectionString: db.url, poolSize: 2 });
  const cache = new AuthStateCache(mine);
  t.teardown(async () => {
    cache.close();
    await mine.close();
    await theirs.close();
    await db.drop();
  });
  await bootstrapIfEmpty(mine);
  const p = await createServiceAccount(mine, { tenantId: TENANT, name: 'shared' });
  await until('the listener connects', async () => mine.notifications.delivering());
  t.equal((await cache.principal(TENANT, p.id))?.status, 'ACTIVE');

  await theirs.query(`UPDATE principals SET status = 'SUSPENDED' WHERE id = $1`, [p.id]);
  await until('the other process\'s change is heard', async () => (await cache.principal(TENANT, p.id))?.status === 'SUSPENDED');
  t.pass('another process\'s change heard');

  // The listening connection dies: nothing may be trusted until it is back.
  const admin = new pg.Client({ connectionString: POSTGRES_ADMIN_URL });
  await admin.connect();
  try {
    const terminated = await admin.query('SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name = $1 AND datname = current_database() OR (application_name = $1 AND datname = $2)', [LISTENER_APPLICATION_NAME, new URL(db.url).pathname.slice(1)]);
    t.ok(terminated.rowCount! >= 1, 'the listener was terminated');
  } finally {
    await admin.end();
  }
  await until('the loss is noticed', async () => !mine.notifications.delivering());
  t.equal(cache.size.principals, 0, 'emptied on the loss');
  await theirs.query(`UPDATE principals SET status = 'ACTIVE' WHERE id = $1`, [p.id]);
  t.equal((await cache.principal(TENANT, p.id))?.status, 'ACTIVE', 'read through while nobody listens');
  t.equal(cache.size.principals, 0, 'nothing kept while nobody listens');
  await until('the listener reconnects', async () => mine.notifications.delivering());
  await cache.principal(TENANT, p.id);
  t.equal(cache.size.principals, 1, 'kept again once listening');
  await theirs.query(`UPDATE principals SET status = 'SUSPENDED' WHERE id = $1`, [p.id]);
  await until('heard after the reconnect', async () => (await cache.principal(TENANT, p.id))?.status === 'SUSPENDED');
  t.pass('heard after the reconnect');
});

t.test('personal access tokens: kept by hash, every decision-making change seen by the next exchange', async (t) => {
  await onEachBackend(t, async (t, store) => {
    await bootstrapIfEmpty(store);
    const cache = new AuthStateCache(store);
    t.teardown(() => cache.close());
    await until('the store listens', async () => store.notifications.delivering());
    const owner = await createServiceAccount(store, { tenantId: TENANT, name: 'pat-owner' });
    const token = newPat();
    const patId = randomUUID();
    await store.query(
      `INSERT INTO personal_access_tokens (id, tenant_id, principal_id, name, token_sha256, token_prefix, scope, created_at, expires_at)
       VALUES ($1, $2, $3, 'p', $4, $5, $6, now(), $7)`,
      [patId, TENANT, owner.id, sha256(token), patDisplayPrefix(token), ['sql', 'table:read'], new Date(Date.now() + 3_600_000)]);
    const exchange = () => authenticatePat(store, cache, token, Date.now());

    const first = await exchange();
    t.ok(first.ok, 'a live PAT authenticates');
    if (first.ok) t.same(first.value.scopes, ['sql', 'table:read']);
    await until('kept', async () => (await exchange()).ok && cache.size.pats === 1);
    const lastUsed = async () => (await store.query<{ last_used_at: Date | null }>('SELECT last_used_at FROM personal_access_tokens WHERE id = $1', [patId])).rows[0]!.last_used_at;
    const usedAt = await lastUsed();
    t.ok(usedAt, 'the first exchange records its use');
    await exchange();
    t.same(await lastUsed(), usedAt, 'later exchanges within the resolution do not write again');
    const later = await authenticatePat(store, cache, token, Date.now() + 61_000);
    t.ok(later.ok);
    t.not((await lastUsed())?.getTime(), usedAt?.getTime(), 'a use past the resolution is written');
    // An announcement of that write would reach this process before the write resolves and drop the
    // entry. On PostgreSQL a late copy of the insert's announcement (from the listening or another
    // pooled connection) may drop it too: a drop counts against the write only when it happens
    // every time.
    let stays = cache.size.pats === 1;
    for (let attempt = 2; attempt <= 10 && !stays; attempt++) {
      await until('kept again', async () => (await exchange()).ok && cache.size.pats === 1);
      t.ok((await authenticatePat(store, cache, token, Date.now() + attempt * 61_000)).ok);
      stays = cache.size.pats === 1;
    }
    t.ok(stays, 'writing last_used_at announces nothing (the entry stays)');

    // Well formed (prefix and checksum), so it reaches the look-up, which finds nothing.
    const entries = cache.size.pats;
    t.same(await authenticatePat(store, cache, newPat(), Date.now()), { ok: false, reason: 'unknown or revoked personal access token' }, 'another token is refused');
    t.ok(cache.size.pats <= entries, 'an unknown token is not kept');

    await store.query(`UPDATE personal_access_tokens SET scope = $2 WHERE id = $1`, [patId, ['sql']]);
    const rescoped = await exchange();
    t.ok(rescoped.ok && rescoped.value.scopes.length === 1, 'a new scope is seen at once');

    await store.query(`UPDATE personal_access_tokens SET expires_at = now() - interval '1 second' WHERE id = $1`, [patId]);
    t.same(await exchange(), { ok: false, reason: 'personal access token expired' }, 'a new expiry is seen at once');
    await store.query(`UPDATE personal_access_tokens SET expires_at = now() + interval '1 hour' WHERE id = $1`, [patId]);
    t.ok((await exchange()).ok);

    await store.query(`UPDATE principals SET status = 'SUSPENDED' WHERE id = $1`, [owner.id]);
    t.same(await exchange(), { ok: false, reason: 'the owner may not sign in' }, "the owner's suspension is seen at once");
    await store.query(`UPDATE principals SET status = 'ACTIVE' WHERE id = $1`, [owner.id]);
    t.ok((await exchange()).ok);

    await store.query('UPDATE personal_access_tokens SET revoked_at = now() WHERE id = $1', [patId]);
    t.same(await exchange(), { ok: false, reason: 'unknown or revoked personal access token' }, 'revocation is seen at once');
    t.equal(cache.size.pats, 0, 'a revoked token is not kept');

    await store.query('UPDATE personal_access_tokens SET revoked_at = NULL WHERE id = $1', [patId]);
    t.ok((await exchange()).ok);
    await store.query('DELETE FROM personal_access_tokens WHERE id = $1', [patId]);
    t.notOk((await exchange()).ok, 'deletion is seen at once');
  });
});
