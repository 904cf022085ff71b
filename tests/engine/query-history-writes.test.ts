/**
 * Query history's write path on both store backends: a backlog larger than one INSERT's parameter
 * limit is written whole (a store outage at a few thousand statements per second makes one), a
 * failed write keeps every record and the newest state of each, and past the backlog bound new
 * statements are refused instead of the heap growing.
 */
import t from 'tap';
import type { MetaStore } from '../../catalog/store/meta-store.js';
import { QueryHistory, WRITE_CHUNK_ROWS } from '../../engine/history/query-history.js';
import { isFloeError } from '../../grammar/errors.js';
import { onEachBackend } from '../helpers/stores.js';
import { Floe } from '../../index.js';

const T0 = Date.UTC(2026, 10, 21, 12, 0, 0, 123);

function uuid(i: number): string {
  return `00000000-0000-4000-8000-${i.toString(16).padStart(12, '0')}`;
}

/** A store whose queries fail while `down` is set (the store went away). */
function flaky(store: MetaStore): { store: MetaStore; down: boolean } {
  const state = { down: false, store: undefined as unknown as MetaStore };
  state.store = new Proxy(store, {
    get(target, key, receiver) {
      if (key === 'query') {
        return (...args: Parameters<MetaStore['query']>) => (state.down ? Promise.reject(new Error('connection refused')) : target.query(...args));
      }
      const v = Reflect.get(target, key, receiver) as unknown;
      return typeof v === 'function' ? (v as (...a: unknown[]) => unknown).bind(target) : v;
    },
  });
  return state;
}

await onEachBackend(t, async (t, store) => {
  await store.query(`INSERT INTO tenants (id, display_name) VALUES ('hist', 'hist') ON CONFLICT DO NOTHING`);
  let now = T0;
  const clock = { now: () => now };

  await t.test('a backlog of more rows than one INSERT may carry parameters for is written whole, values exact', async (t) => {
    const history = new QueryHistory(store, clock, { cuPerHour: () => 3.6, flushIntervalMs: 60_000 });
    const n = 2 * WRITE_CHUNK_ROWS + 123;
    for (let i = 0; i < n; i++) {
      const life = history.begin({ queryId: uuid(i), tenantId: 'hist', userId: 'u1', userName: "o'neil", sql: `SELECT ${i}`, queryType: 'select', source: i % 2 ? 'etl' : null, warehouse: null });
      if (i % 3 === 0) continue; // stays queued
      now += 1;
      life.running({ workloadClass: 'interactive', resourceGroup: '/root', priority: 3 });
      now += 2;
      if (i % 3 === 1) life.completed({ rowsProduced: i, bytesScanned: 2 ** 40 + i, fragments: 2 });
      else life.failed({ code: 'DIVISION_BY_ZERO', sqlState: '22012', message: 'division by zero' });
    }
    t.equal(history.pendingCount, n);
    await history.flush();
    t.equal(history.pendingCount, 0);
    const count = await store.query<{ n: string | number }>(`SELECT count(*) AS n FROM query_history WHERE tenant_id = 'hist'`);
    t.equal(Number(count.rows[0]!.n), n, 'every record is in the store');
    const rows = await store.query<Record<string, unknown>>(
      `SELECT query_id, status, sql, user_name, source, priority, queued_at, started_at, ended_at, duration_ms, rows_produced,
              bytes_scanned, fragments, error_code, sql_state, cu_consumed
         FROM query_history WHERE query_id IN ($1, $2, $3)`, [uuid(0), uuid(1), uuid(2)]);
    const byId = new Map(rows.rows.map((r) => [String(r.query_id), r]));
    const q0 = byId.get(uuid(0))!;
    t.match(q0, { status: 'queued', sql: 'SELECT 0', user_name: "o'neil", source: null, started_at: null, ended_at: null, duration_ms: null });
    t.equal(new Date(q0.queued_at as string).getTime(), T0, 'times to the millisecond');
    const q1 = byId.get(uuid(1))!;
    t.match(q1, { status: 'completed', source: 'etl', priority: 3, fragments: 2, error_code: null });
    t.equal(Number(q1.duration_ms), 2);
    t.equal(Number(q1.bytes_scanned), 2 ** 40 + 1, 'bigint beyond 2^32');
    t.equal(new Date(q1.ended_at as string).getTime() - new Date(q1.started_at as string).getTime(), 2);
    t.ok(Math.abs(Number(q1.cu_consumed) - (2 / 3_600_000) * 3.6) < 1e-15, 'cu_consumed = rate × execution time');
    t.match(byId.get(uuid(2))!, { status: 'failed', error_code: 'DIVISION_BY_ZERO', sql_state: '22012' });
  });

  await t.test('a write that fails keeps every record, with the newest state, for the next flush', async (t) => {
    const f = flaky(store);
    const history = new QueryHistory(f.store, clock, { cuPerHour: () => 1, flushIntervalMs: 60_000 });
    const lives = Array.from({ length: 10 }, (_, i) => history.begin({ queryId: uuid(100_000 + i), tenantId: 'hist', userId: 'u2', userName: 'u2', sql: 'SELECT 1', queryType: 'select' }));
    f.down = true;
    await t.rejects(history.flush(), /connection refused/);
    t.equal(history.pendingCount, 10, 'nothing dropped');
    t.ok(history.lastWriteError);
    for (const life of lives) {
      life.running();
      life.completed({ rowsProduced: 1 });
    }
    f.down = false;
    await history.flush();
    t.equal(history.pendingCount, 0);
    t.equal(history.lastWriteError, undefined);
    const r = await store.query<{ status: string }>(`SELECT status FROM query_history WHERE user_id = 'u2'`);
    t.same(r.rows.map((x) => x.status), Array(10).fill('completed'));
  });

  await t.test('text a store cannot hold and a record it refuses do not hold back the others', async (t) => {
    const history = new QueryHistory(store, clock, { cuPerHour: () => 1, flushIntervalMs: 60_000 });
    const nul = history.begin({ queryId: uuid(400_000), tenantId: 'hist', userId: 'u4', userName: 'u4', sql: 'SELECT 1 /* \u0000 */', queryType: 'select', source: 'a\u0000b' });
    nul.failed({ code: 'SYNTAX_ERROR', sqlState: '42601', message: 'bad \u0000 here' });
    history.begin({ queryId: uuid(400_001), tenantId: 'no_such_tenant', userId: 'u4', userName: 'u4', sql: 'SELECT 2', queryType: 'select' });
    for (let i = 2; i < 6; i++) history.begin({ queryId: uuid(400_000 + i), tenantId: 'hist', userId: 'u4', userName: 'u4', sql: `SELECT ${i}`, queryType: 'select' });
    await history.flush();
    t.equal(history.pendingCount, 0, 'nothing left to retry');
    t.equal(history.droppedCount, 1, 'the record of a tenant that does not exist is dropped alone');
    t.equal((history.lastDropError as { code?: string }).code, '23503', 'a foreign-key refusal');
    const r = await store.query<{ sql: string; source: string | null; error_message: string | null }>(`SELECT sql, source, error_message FROM query_history WHERE user_id = 'u4' ORDER BY query_id`);
    t.equal(r.rows.length, 5);
    t.same(r.rows[0], { sql: 'SELECT 1 /* \uFFFD */', source: 'a\uFFFDb', error_message: 'bad \uFFFD here' }, 'U+0000 stored as U+FFFD');
  });

  await t.test('past the backlog bound new statements are refused with 503 until the store catches up', async (t) => {
    const f = flaky(store);
    const history = new QueryHistory(f.store, clock, { cuPerHour: () => 1, flushIntervalMs: 60_000, maxPending: 5 });
    f.down = true;
    for (let i = 0; i < 4; i++) {
      history.refuseIfBacklogged();
      history.begin({ queryId: uuid(200_000 + i), tenantId: 'hist', userId: 'u3', userName: 'u3', sql: 'SELECT 1', queryType: 'select' });
    }
    history.refuseIfBacklogged();
    history.begin({ queryId: uuid(200_004), tenantId: 'hist', userId: 'u3', userName: 'u3', sql: 'SELECT 1', queryType: 'select' });
    await t.rejects(history.flush());
    const refused = (() => {
      try {
        history.refuseIfBacklogged();
        return undefined;
      } catch (e) {
        return e;
      }
    })();
    t.ok(isFloeError(refused) && refused.code === 'SERVICE_UNAVAILABLE' && refused.httpStatus === 503, 'SERVICE_UNAVAILABLE, 503');
    t.match((refused as Error).message, /query history is 5 statements behind its store/);
    f.down = false;
    await history.flush();
    t.doesNotThrow(() => history.refuseIfBacklogged(), 'accepted again once written');
  });
});

t.test('the query service refuses a statement while history is over its bound, and answers once it is written', async (t) => {
  const floe = await Floe.open({ config: (c) => ({ ...c, query: { ...c.query, history_max_pending: 50 } }) });
  t.teardown(() => floe.close());
  for (let i = 0; i < 50; i++) {
    floe.state.history.begin({ queryId: uuid(300_000 + i), tenantId: 'default', userId: 'x', userName: 'x', sql: 'SELECT 1', queryType: 'select' });
  }
  await t.rejects(floe.sql('SELECT 1'), { code: 'SERVICE_UNAVAILABLE', sqlState: '08006' });
  await floe.state.history.flush();
  t.same((await floe.sql('SELECT 1')).rows, [[1]]);
});

t.test('statements carrying U+0000 or a lone surrogate are recorded, and so is every statement after them', async (t) => {
  const floe = await Floe.open();
  t.teardown(() => floe.close());
  const nul = await floe.sql("SELECT 'a\u0000b' AS nul_probe");
  const lone = await floe.sql("SELECT 'x\ud800y\udc00z' AS lone_probe, '\ud83d\ude00' AS pair_probe");
  const after = await floe.sql('SELECT 2 AS after_them');
  await floe.state.history.flush();
  t.equal(floe.state.history.pendingCount, 0);
  t.equal(floe.state.history.droppedCount, 0, 'none dropped');
  const rows = await floe.state.store.query<{ query_id: string; sql: string; status: string }>(
    'SELECT query_id, sql, status FROM query_history WHERE query_id IN ($1, $2, $3)', [nul.queryId, lone.queryId, after.queryId]);
  t.equal(rows.rows.length, 3);
  t.ok(rows.rows.every((r) => r.status === 'completed'));
  const sqlOf = (id: string) => rows.rows.find((r) => r.query_id === id)!.sql;
  t.match(sqlOf(nul.queryId), /a\uFFFDb/);
  t.match(sqlOf(lone.queryId), /x\uFFFDy\uFFFDz/, 'lone surrogates replaced');
  t.match(sqlOf(lone.queryId), /\ud83d\ude00/, 'a surrogate pair (an emoji) kept');
});

t.test('U+0000 in a value a statement stores is a 400-class refusal, not an internal error', async (t) => {
  const floe = await Floe.open();
  t.teardown(() => floe.close());
  await floe.sql("CREATE USER nul_target EMAIL = 'nul@example.com'");
  for (const clause of ["DISPLAY_NAME = 'a\u0000'", "COMMENT = 'a\u0000'", "DEFAULT_WAREHOUSE = 'w\u0000'", "LEGAL HOLD REASON 'r\u0000'"]) {
    await t.rejects(floe.sql(`ALTER USER nul_target SET ${clause}`), { code: 'INVALID_PARAMETER', sqlState: '22023', message: /U\+0000/ }, clause.split(' ')[0]!);
  }
  const user = await floe.sql('DESCRIBE USER nul_target');
  t.notOk(JSON.stringify(user.rows).includes('\u0000'), 'nothing of it stored');
});
