/**
 * The 5xx side of the commit protocol, on both backends, with a store wrapper that loses the
 * connection at a chosen moment: lost while COMMIT is in flight → 500 CommitStateUnknownException
 * (never a 4xx), and the written metadata file is kept because it may have become current; lost
 * before COMMIT was sent → 503 and the attempt's file is deleted. Nothing is half-applied.
 */
import t from 'tap';
import { randomUUID } from 'node:crypto';
import { readdirSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import type { MetaStore, SqlExecutor } from '../../catalog/store/meta-store.js';
import { onEachBackend } from '../helpers/stores.js';
import { CAT, appendCommit, createNamespace, createTable, startCatalogServer } from './helpers.js';

type Fault = 'none' | 'at-commit' | 'before-commit';

/** A MetaStore that fails transactions on demand, the way a dropped connection does. */
function faultyStore(real: MetaStore): { store: MetaStore; arm(f: Fault): void } {
  let fault: Fault = 'none';
  const lost = () => Object.assign(new Error('Connection terminated unexpectedly'), { code: 'ECONNRESET' });
  const store: MetaStore = {
    backend: real.backend,
    notifications: real.notifications,
    query: (sql, params) => real.query(sql, params),
    exec: (s) => real.exec(s),
    ping: (ms) => real.ping(ms),
    close: () => real.close(),
    transaction<T>(fn: (tx: SqlExecutor) => Promise<T>): Promise<T> {
      const f = fault;
      fault = 'none';
      if (f === 'none') return real.transaction(fn);
      return real.transaction(async (tx) => {
        const wrapped: SqlExecutor = {
          query: async (sql, params) => {
            if (f === 'before-commit' && /^\s*UPDATE catalog_entities SET metadata_location/.test(sql)) throw lost();
            return tx.query(sql, params);
          },
        };
        await fn(wrapped);
        // The work is done and COMMIT is "sent": the connection drops before the answer.
        throw lost();
      });
    },
  };
  return { store, arm: (f) => void (fault = f) };
}

t.test('an unknowable commit outcome is 5xx, never 4xx', async (t) => {
  await onEachBackend(t, async (t, real) => {
    const { store, arm } = faultyStore(real);
    const { client } = await startCatalogServer(t, store);
    await createNamespace(client, 'db');
    const created = await createTable(client, ['db'], 't');
    const url = `${CAT}/namespaces/db/tables/t`;
    const dir = `${fileURLToPath(created.body.metadata.location)}/metadata`;
    const files = () => readdirSync(dir).filter((f) => f.endsWith('.metadata.json')).length;

    arm('at-commit');
    const key = randomUUID();
    const first = appendCommit(created.body, 1n);
    const unknown = await client.post(url, first, { headers: { 'idempotency-key': key } });
    t.equal(unknown.status, 500);
    t.equal(unknown.body.error.type, 'CommitStateUnknownException');
    t.equal(files(), 2, 'the file is kept: it may be the table\'s metadata now');
    const after = await client.get(url);
    t.equal(after.body['metadata-location'], created.body['metadata-location'], 'the store rolled back here, so the pointer did not move');
    const retried = await client.post(url, first, { headers: { 'idempotency-key': key } });
    t.equal(retried.status, 200, 'a 5xx is never stored: the retry with the same key runs again');
    t.notOk(retried.headers['idempotency-replayed']);
    t.equal((await client.post(url, first, { headers: { 'idempotency-key': key } })).headers['idempotency-replayed'], 'true', 'and its 200 is replayed');

    const current = (await client.get(url)).body;
    arm('before-commit');
    const outage = await client.post(url, appendCommit(current, 2n));
    t.equal(outage.status, 503);
    t.equal(outage.body.error.type, 'ServiceUnavailableException');
    t.equal(files(), 3, 'the failed attempt\'s file is deleted');

    const ok = await client.post(url, appendCommit(current, 3n));
    t.equal(ok.status, 200, 'the table still commits');
    t.equal(BigInt(ok.body.metadata['current-snapshot-id']), 3n);
  });
});
