/**
 * Spec conformance (issue 16, item 8), over real HTTP on both backends:
 * - the errors the service spec names (Errors §2) are the `error` codes clients see:
 *   `InvalidInvitation` (22023) and `LegalHoldActive` (55000);
 * - every statement is in history, including an anonymous REDEEM INVITATION that fails: filed
 *   under the invitee its token names, or under the default tenant's `anonymous` for a token no
 *   invitation has; never with the token or the password in its text.
 */
import t from 'tap';
import { onEachBackend } from './helpers/stores.js';
import { startTestServer } from './helpers/server.js';
import { listenOnLoopback } from './helpers/http.js';

interface HistoryRecord { status: string; userName: string; errorCode: string | null; sqlState: string | null; sql: string; queryType: string }

await onEachBackend(t, async (t, store) => {
  const server = await startTestServer(store, { keepStore: true });
  t.teardown(() => server.close());
  const http = await listenOnLoopback(server);
  const admin = await server.token();
  const sql = (text: string, token?: string) => http.query(token, { sql: text });
  const history = async (queryId: string) => {
    const r = await http.request('GET', `/api/query-history/${queryId}`, { token: admin });
    t.equal(r.status, 200, `history has the statement (${r.status === 200 ? "found" : r.text})`);
    return r.json as HistoryRecord;
  };
  const password = 'Another-Strong-9-Pass';

  await t.test('a failed anonymous redemption answers InvalidInvitation and is recorded', async (t) => {
    const created = await sql("CREATE USER bob EMAIL 'bob@example.com'", admin);
    t.equal(created.status, 200, created.text);
    const body = created.json as { columns: string[]; rows: unknown[][] };
    const token = String(body.rows[0]![body.columns.indexOf('invitation_token')]);

    const unknown = await sql(`REDEEM INVITATION 'floe_inv_nobody-has-this' WITH PASSWORD '${password}'`);
    t.equal(unknown.status, 400);
    t.match(unknown.json, { error: 'InvalidInvitation', sql_state: '22023', query_id: /^[0-9a-f-]{36}$/ });
    const unknownRecord = await history((unknown.json as { query_id: string }).query_id);
    t.match(unknownRecord, { status: 'failed', userName: 'anonymous', errorCode: 'InvalidInvitation', sqlState: '22023', queryType: 'principal' });
    t.notMatch(unknownRecord.sql, /nobody-has-this|Another-Strong/, 'neither the token nor the password is recorded');

    const weak = await sql(`REDEEM INVITATION '${token}' WITH PASSWORD 'short'`);
    t.equal(weak.status, 400);
    t.match(await history((weak.json as { query_id: string }).query_id), { status: 'failed', userName: 'bob', errorCode: 'PASSWORD_POLICY' }, 'a refused password is filed under the invitee');

    const redeemed = await sql(`REDEEM INVITATION '${token}' WITH PASSWORD '${password}'`);
    t.equal(redeemed.status, 200, redeemed.text);
    t.match(await history((redeemed.json as { query_id: string }).query_id), { status: 'completed', userName: 'bob' });

    const again = await sql(`REDEEM INVITATION '${token}' WITH PASSWORD '${password}'`);
    t.equal(again.status, 400);
    t.match(again.json, { error: 'InvalidInvitation', sql_state: '22023' });
    const againRecord = await history((again.json as { query_id: string }).query_id);
    t.match(againRecord, { status: 'failed', userName: 'bob', errorCode: 'InvalidInvitation' }, 'a second redemption is filed under the invitee');
    t.notMatch(againRecord.sql, new RegExp(`${token}|Another-Strong`));

    const notRedeem = await sql('SHOW USERS');
    t.equal(notRedeem.status, 401, 'nothing else runs without a token');
  });

  await t.test('EXPUNGE under legal hold answers LegalHoldActive', async (t) => {
    t.equal((await sql("CREATE USER ivan EMAIL 'ivan@example.com'", admin)).status, 200);
    t.equal((await sql('DROP USER ivan', admin)).status, 200);
    t.equal((await sql("ALTER USER ivan SET LEGAL HOLD REASON 'litigation'", admin)).status, 200);
    const refused = await sql("EXPUNGE USER ivan REASON 'erasure request'", admin);
    t.equal(refused.status, 409);
    t.match(refused.json, { error: 'LegalHoldActive', sql_state: '55000' });
    t.match(await history((refused.json as { query_id: string }).query_id), { status: 'failed', errorCode: 'LegalHoldActive' });
  });
});
