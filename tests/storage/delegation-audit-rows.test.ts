/**
 * The vend and sign audit rows (server/routes/iceberg/delegation-record.ts) on both store
 * backends: what is recorded is what `user_audit_log` holds after a flush, a batch larger than
 * one INSERT is written whole, values that need escaping in an array parameter (quotes,
 * backslashes, braces, commas, NULs are not storable and never come) survive, ids that are not
 * UUIDs are stored as NULL, and a failed write is counted, not thrown.
 */
import t from 'tap';
import { Registry } from 'prom-client';
import type { MetaStore } from '../../catalog/store/meta-store.js';
import { DelegationRecorder, type DelegationRecord } from '../../server/routes/iceberg/delegation-record.js';
import { onEachBackend } from '../helpers/stores.js';

const T0 = Date.UTC(2026, 10, 26, 9, 30, 0, 250);
const PRINCIPAL = '0f0e0d0c-0b0a-4009-8807-060504030201';
const TABLE = '11111111-2222-4333-8444-555555555555';

function record(i: number, overrides: Partial<DelegationRecord> = {}): DelegationRecord {
  return {
    type: i % 2 === 0 ? 'sign_request' : 'vend_credentials', outcome: 'issued', tenantId: 'audit-t',
    principal: { id: PRINCIPAL, name: 'bench admin' }, catalog: 'lake', namespace: ['db', 'sub'], table: `t${i}`, tableUuid: TABLE,
    mode: 'read', expiresAtMs: T0 + 900_000, details: { method: 'GET', uri: `http://s3/b/k${i}` }, at: T0 + i, ...overrides,
  };
}

interface Row {
  id: string;
  tenant_id: string;
  actor_id: string | null;
  actor_name: string | null;
  target_id: string | null;
  target_name: string;
  event_type: string;
  details: Record<string, unknown>;
  created_at: Date;
}

async function rowsOf(store: MetaStore): Promise<Row[]> {
  return (await store.query<Row>(`SELECT * FROM user_audit_log WHERE tenant_id = 'audit-t' ORDER BY created_at, target_name`)).rows;
}

await onEachBackend(t, async (t, store) => {
  await t.test('rows hold what was recorded; odd text survives; non-UUID ids are NULL', async (t) => {
    const errors: unknown[] = [];
    const recorder = new DelegationRecorder(store, new Registry(), (e) => errors.push(e));
    const odd = `a "quoted" \\ back{slash}, comma, 'single' ünï ✓ \n line`;
    recorder.record(record(0));
    recorder.record(record(1, {
      outcome: 'denied', principal: { id: 'not-a-uuid', name: odd }, tableUuid: undefined, namespace: ['we"ird', 'x,y'], table: odd,
      expiresAtMs: undefined, details: { via: 'load', reason: odd, prefixes: ['s3://b/{a}/', 's3://b/"c"/'] },
    }));
    recorder.record(record(2, { principal: undefined, tableUuid: 'also not a uuid' }));
    await recorder.flush();
    t.same(errors, []);
    const rows = await rowsOf(store);
    t.equal(rows.length, 3);
    const [a, b, c] = rows as [Row, Row, Row];
    t.match(a.id, /^[0-9a-f-]{36}$/);
    t.equal(a.actor_id, PRINCIPAL);
    t.equal(a.actor_name, 'bench admin');
    t.equal(a.target_id, TABLE);
    t.equal(a.target_name, 'lake.db.sub.t0');
    t.equal(a.event_type, 'sign_request');
    t.equal(new Date(a.created_at).getTime(), T0);
    t.same(a.details, {
      outcome: 'issued', catalog: 'lake', namespace: ['db', 'sub'], table: 't0', mode: 'read',
      expires_at: new Date(T0 + 900_000).toISOString(), method: 'GET', uri: 'http://s3/b/k0',
    });
    t.equal(b.event_type, 'vend_credentials');
    t.equal(b.actor_id, null, 'a principal id that is not a UUID is stored as NULL');
    t.equal(b.actor_name, odd);
    t.equal(b.target_id, null);
    t.equal(b.target_name, `lake.we"ird.x,y.${odd}`);
    t.same(b.details, {
      outcome: 'denied', catalog: 'lake', namespace: ['we"ird', 'x,y'], table: odd, mode: 'read',
      via: 'load', reason: odd, prefixes: ['s3://b/{a}/', 's3://b/"c"/'],
    });
    t.equal(c.actor_id, null);
    t.equal(c.actor_name, null);
    t.equal(c.target_id, null);
    await recorder.close();
    await store.query(`DELETE FROM user_audit_log WHERE tenant_id = 'audit-t'`);
  });

  await t.test('a backlog larger than one INSERT is written whole', async (t) => {
    const recorder = new DelegationRecorder(store, new Registry(), () => undefined);
    const n = 1234;
    for (let i = 0; i < n; i++) recorder.record(record(i));
    await recorder.close();
    const rows = await rowsOf(store);
    t.equal(rows.length, n);
    t.equal(new Set(rows.map((r) => r.id)).size, n, 'each row has its own id');
    t.same(rows.map((r) => r.target_name), Array.from({ length: n }, (_, i) => `lake.db.sub.t${i}`), 'in recording order (created_at)');
    await store.query(`DELETE FROM user_audit_log WHERE tenant_id = 'audit-t'`);
  });

  await t.test('a write the store refuses is counted and reported, not thrown', async (t) => {
    const registry = new Registry();
    const errors: unknown[] = [];
    const refusing = new Proxy(store, {
      get(target, key, receiver) {
        if (key === 'query') return () => Promise.reject(new Error('connection refused'));
        const v = Reflect.get(target, key, receiver) as unknown;
        return typeof v === 'function' ? (v as (...a: unknown[]) => unknown).bind(target) : v;
      },
    });
    const recorder = new DelegationRecorder(refusing, registry, (e) => errors.push(e));
    recorder.record(record(0));
    recorder.record(record(1));
    await recorder.close();
    t.equal(errors.length, 1);
    const dropped = await registry.getSingleMetric('floe_delegation_audit_dropped_total')!.get();
    t.equal(dropped.values[0]?.value, 2);
    t.equal((await rowsOf(store)).length, 0);
  });
});
