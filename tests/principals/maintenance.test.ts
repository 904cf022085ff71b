/**
 * Audit partitions (24 months ahead, old ones dropped by retention, the catch-all kept) and the
 * archive sweeper (DEACTIVATED past the window → tombstoned; legal hold and bootstrap skipped),
 * each under an advisory lock, with an injected clock.
 */
import t from 'tap';
import { randomUUID } from 'node:crypto';
import type { MetaStore } from '../../catalog/store/meta-store.js';
import { onEachBackend } from '../helpers/stores.js';
import { ManualClock, startTestServer } from '../helpers/server.js';
import { PrincipalMaintenance } from '../../engine/principals/maintenance.js';
import { DEFAULT_PRINCIPALS_CONFIG } from '../../engine/principals/settings.js';
import { adminAuth, must } from './helpers.js';

async function partitions(store: MetaStore): Promise<string[]> {
  return (await store.query<{ relname: string }>(
    `SELECT c.relname FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid JOIN pg_class p ON p.oid = i.inhparent
      WHERE p.relname = 'user_audit_log' ORDER BY c.relname`)).rows.map((r) => r.relname);
}

const monthName = (d: Date, plus: number): string => {
  const x = new Date(Date.UTC(d.getUTCFullYear(), d.getUTCMonth() + plus, 1));
  return `user_audit_log_p${x.getUTCFullYear()}${String(x.getUTCMonth() + 1).padStart(2, '0')}`;
};

t.test('audit log partitions', async (t) => {
  await onEachBackend(t, async (t, store) => {
    const start = new Date();
    const parts = await partitions(store);
    const historic = parts.filter((p) => p.startsWith('user_audit_log_historic_'));
    t.equal(historic.length, 1, 'one catch-all partition');
    for (let k = 0; k <= 24; k++) t.ok(parts.includes(monthName(start, k)), `month +${k} exists after migration`);

    const clock = new ManualClock(start.getTime());
    const m = new PrincipalMaintenance(store, clock, DEFAULT_PRINCIPALS_CONFIG);
    t.equal(await m.ensureAuditPartitions(), 0, 'idempotent');
    clock.advance(5 * 31 * 86400_000);
    t.ok(await m.ensureAuditPartitions() >= 4, 'the hourly job keeps 24 months ahead');
    t.ok((await partitions(store)).includes(monthName(new Date(clock.now()), 24)));

    // Rows land in the catch-all (long ago) and in monthly partitions.
    const insert = (at: Date) => store.query("INSERT INTO user_audit_log (id, tenant_id, event_type, created_at) VALUES ($1, 'default', 'create_user', $2)", [randomUUID(), at]);
    await insert(new Date(Date.UTC(2015, 0, 1)));
    await insert(new Date(start.getTime() + 40 * 86400_000));
    t.equal((await store.query<{ n: number }>(`SELECT count(*)::int AS n FROM ${historic[0]}`)).rows[0]!.n, 1);

    t.equal(await m.dropOldAuditPartitions(), 0, 'seven years of retention drop nothing today');
    const aged = new PrincipalMaintenance(store, clock, { ...DEFAULT_PRINCIPALS_CONFIG, audit_retention_days: 30 });
    clock.advance(3 * 365 * 86400_000);
    const dropped = await aged.dropOldAuditPartitions();
    t.ok(dropped >= 25, `${dropped} old monthly partitions dropped`);
    const left = await partitions(store);
    t.ok(left.includes(historic[0]!), 'the catch-all is never dropped');
    t.notOk(left.includes(monthName(start, 0)), 'the first month is gone');
    t.equal((await store.query<{ n: number }>('SELECT count(*)::int AS n FROM user_audit_log')).rows[0]!.n, 1, 'the catch-all row stays');
  });
});

t.test('archive sweeper', async (t) => {
  await onEachBackend(t, async (t, store, backend) => {
    const clock = new ManualClock(Date.UTC(2026, 10, 21, 12, 0, 0));
    const server = await startTestServer(store, { keepStore: true, clock, config: (c) => ({ ...c, principals: { ...c.principals, background_jobs: false } }) });
    t.teardown(() => server.close());
    const admin = await adminAuth(server);
    for (const n of ['old1', 'held', 'boot', 'young']) await must(server, admin, `CREATE USER ${n} EMAIL='${n}@example.com'`);
    for (const n of ['old1', 'held', 'boot']) await must(server, admin, `DROP USER ${n}`);
    await must(server, admin, "ALTER USER held SET LEGAL HOLD REASON 'litigation'");
    await store.query("UPDATE principals SET is_bootstrap_principal = true WHERE name = 'boot'");
    clock.advance(25 * 86400_000);
    await must(server, admin, 'DROP USER young');
    const m = server.state.principals.maintenance;
    t.same(await m.sweepArchive(), [], 'nothing is due before 30 days');
    clock.advance(6 * 86400_000);
    if (backend === 'postgres') {
      // Another replica holding the sweeper's lock: this one skips the round.
      await store.transaction(async (tx) => {
        await tx.query('SELECT pg_advisory_xact_lock($1)', ['7310581144502283']);
        t.same(await m.sweepArchive(), [], 'skipped while another replica sweeps');
      });
    }
    const swept = await m.sweepArchive();
    t.equal(swept.length, 1);
    const status = async (email: string): Promise<string | undefined> => (await store.query<{ status: string }>('SELECT status FROM principals WHERE email = $1', [email])).rows[0]?.status;
    t.equal(await status('held@example.com'), 'DEACTIVATED', 'legal hold skips the row');
    t.equal(await status('boot@example.com'), 'DEACTIVATED', 'bootstrap principals are skipped');
    t.equal(await status('young@example.com'), 'DEACTIVATED', 'younger than the window');
    const tomb = (await store.query<{ name: string; status: string; email: string | null }>('SELECT name, status, email FROM principals WHERE id = $1', [swept[0]])).rows[0]!;
    t.match(tomb, { status: 'EXPUNGED', email: null, name: /^expunged-/ });
    t.equal((await store.query<{ n: number }>("SELECT count(*)::int AS n FROM user_audit_log WHERE event_type = 'archive_user'")).rows[0]!.n, 1);
    await must(server, admin, "CREATE USER old1 EMAIL='old1@example.com'");
  });
});
