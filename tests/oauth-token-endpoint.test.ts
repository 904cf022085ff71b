/**
 * The token endpoint: every grant's success and every RFC 6749 error, on both store backends.
 */
import t from 'tap';
import { decodeJwt } from 'jose';
import { onEachBackend } from './helpers/stores.js';
import { form, startTestServer } from './helpers/server.js';
import { createClient } from '../engine/principals/clients.js';
import { findPrincipalByName } from '../engine/principals/principals.js';
import { CATALOG_SCOPES } from '../engine/principals/scopes.js';

const TOKENS = '/v1/oauth/tokens';
const EXCHANGE = 'urn:ietf:params:oauth:grant-type:token-exchange';
const ACCESS_TYPE = 'urn:ietf:params:oauth:token-type:access_token';

await onEachBackend(t, async (t, store) => {
  const server = await startTestServer(store, { keepStore: true });
  t.teardown(() => server.close());
  const { app, clientId, clientSecret } = server;
  const post = (fields: Record<string, string>, headers: Record<string, string> = {}) => {
    const f = form(fields);
    return app.inject({ method: 'POST', url: TOKENS, headers: { ...f.headers, ...headers }, payload: f.payload });
  };

  await t.test('client_credentials with form fields grants every allowed scope by default', async (t) => {
    const r = await post({ grant_type: 'client_credentials', client_id: clientId, client_secret: clientSecret });
    t.equal(r.statusCode, 200);
    t.equal(r.headers['cache-control'], 'no-store');
    const body = r.json();
    t.equal(body.token_type, 'Bearer');
    t.equal(body.expires_in, 3600);
    t.equal(body.scope, [...CATALOG_SCOPES, 'sql'].join(' '));
    t.notOk(body.refresh_token, 'no refresh token unless offline_access is asked for');
    const claims = decodeJwt(body.access_token);
    for (const claim of ['sub', 'tid', 'scope', 'sess_epoch', 'auth_method', 'amr', 'auth_time', 'exp', 'iat', 'jti', 'aud']) t.ok(claim in claims, `claim ${claim}`);
    t.equal(claims.tid, 'default');
    t.equal(claims.auth_method, 'client_credentials');
    t.equal(claims.aud, 'floe');
  });

  await t.test('client_credentials with HTTP Basic, and the Iceberg default scope "catalog"', async (t) => {
    const basic = Buffer.from(`${encodeURIComponent(clientId)}:${encodeURIComponent(clientSecret)}`).toString('base64');
    const r = await post({ grant_type: 'client_credentials', scope: 'catalog' }, { authorization: `Basic ${basic}` });
    t.equal(r.statusCode, 200);
    t.equal(r.json().scope, CATALOG_SCOPES.join(' '));
  });

  await t.test('a subset of scopes is granted as asked', async (t) => {
    const r = await post({ grant_type: 'client_credentials', client_id: clientId, client_secret: clientSecret, scope: 'table:read catalog:read' });
    t.equal(r.json().scope, 'catalog:read table:read');
  });

  await t.test('token exchange (RFC 8693) gives a fresh token with the same identity', async (t) => {
    const subject = await server.token('catalog');
    const r = await post({ grant_type: EXCHANGE, subject_token: subject, subject_token_type: ACCESS_TYPE, scope: 'catalog' });
    t.equal(r.statusCode, 200);
    const body = r.json();
    t.equal(body.issued_token_type, ACCESS_TYPE);
    t.equal(body.token_type, 'Bearer');
    const before = decodeJwt(subject);
    const after = decodeJwt(body.access_token);
    t.equal(after.sub, before.sub);
    t.equal(after.auth_time, before.auth_time, 'auth_time survives the exchange');
    t.equal(after.auth_method, 'token_exchange');
    t.not(after.jti, before.jti);
    const narrower = await post({ grant_type: EXCHANGE, subject_token: subject, subject_token_type: ACCESS_TYPE, scope: 'table:read' });
    t.equal(narrower.json().scope, 'table:read');
    const wider = await post({ grant_type: EXCHANGE, subject_token: subject, subject_token_type: ACCESS_TYPE, scope: 'sql' });
    t.equal(wider.statusCode, 400);
    t.equal(wider.json().error, 'invalid_scope', 'an exchange cannot widen the scopes');
  });

  await t.test('refresh_token: offline_access issues one, it rotates on use, and reuse revokes the family', async (t) => {
    const first = await post({ grant_type: 'client_credentials', client_id: clientId, client_secret: clientSecret, scope: 'catalog offline_access' });
    t.equal(first.statusCode, 200);
    const refresh1 = first.json().refresh_token as string;
    t.ok(refresh1?.startsWith('frt_'));
    t.notMatch(first.json().scope, /offline_access/);
    const second = await post({ grant_type: 'refresh_token', refresh_token: refresh1, client_id: clientId, client_secret: clientSecret });
    t.equal(second.statusCode, 200);
    const refresh2 = second.json().refresh_token as string;
    t.ok(refresh2 && refresh2 !== refresh1, 'rotated');
    t.equal(second.json().scope, CATALOG_SCOPES.join(' '));
    const reuse = await post({ grant_type: 'refresh_token', refresh_token: refresh1, client_id: clientId, client_secret: clientSecret });
    t.equal(reuse.statusCode, 400);
    t.equal(reuse.json().error, 'invalid_grant');
    const afterReuse = await post({ grant_type: 'refresh_token', refresh_token: refresh2, client_id: clientId, client_secret: clientSecret });
    t.equal(afterReuse.json().error, 'invalid_grant', 'the whole family is revoked after a reuse');
  });

  await t.test('refresh_token bound to its client', async (t) => {
    const first = await post({ grant_type: 'client_credentials', client_id: clientId, client_secret: clientSecret, scope: 'sql offline_access' });
    const noClient = await post({ grant_type: 'refresh_token', refresh_token: first.json().refresh_token });
    t.equal(noClient.json().error, 'invalid_grant');
  });

  await t.test('invalid_client: bad secret, unknown client, missing credentials', async (t) => {
    const bad = await post({ grant_type: 'client_credentials', client_id: clientId, client_secret: 'wrong-secret-wrong-secret' });
    t.equal(bad.statusCode, 401);
    t.same(Object.keys(bad.json()).sort(), ['error', 'error_description']);
    t.equal(bad.json().error, 'invalid_client');
    const unknown = await post({ grant_type: 'client_credentials', client_id: 'floe_nobody_here', client_secret: 'whatever-whatever-whatever' });
    t.equal(unknown.statusCode, 401);
    t.equal(unknown.json().error_description, bad.json().error_description, 'unknown and wrong secret are indistinguishable');
    const none = await post({ grant_type: 'client_credentials' });
    t.equal(none.statusCode, 401);
    t.equal(none.json().error, 'invalid_client');
    const basicBad = await post({ grant_type: 'client_credentials' }, { authorization: `Basic ${Buffer.from(`${clientId}:nope`).toString('base64')}` });
    t.equal(basicBad.statusCode, 401);
    t.match(basicBad.headers['www-authenticate'], /^Basic/);
  });

  await t.test('unsupported_grant_type and invalid_request', async (t) => {
    const pw = await post({ grant_type: 'password', username: 'a', password: 'b' });
    t.equal(pw.statusCode, 400);
    t.equal(pw.json().error, 'unsupported_grant_type');
    const missing = await post({ client_id: clientId });
    t.equal(missing.json().error, 'invalid_request');
    const repeated = await app.inject({ method: 'POST', url: TOKENS, headers: { 'content-type': 'application/x-www-form-urlencoded' }, payload: 'grant_type=client_credentials&grant_type=client_credentials' });
    t.equal(repeated.statusCode, 400);
    t.equal(repeated.json().error, 'invalid_request');
    const json = await app.inject({ method: 'POST', url: TOKENS, headers: { 'content-type': 'application/json' }, payload: '{"grant_type":"client_credentials"}' });
    t.equal(json.statusCode, 400);
    t.equal(json.json().error, 'invalid_request');
    const noBody = await app.inject({ method: 'POST', url: TOKENS });
    t.equal(noBody.statusCode, 400);
    t.equal(noBody.json().error, 'invalid_request');
    const both = await post({ grant_type: 'client_credentials', client_id: clientId, client_secret: clientSecret }, { authorization: `Basic ${Buffer.from(`${clientId}:${clientSecret}`).toString('base64')}` });
    t.equal(both.json().error, 'invalid_request', 'two client authentication methods at once');
    const exchangeNoType = await post({ grant_type: EXCHANGE, subject_token: 'x' });
    t.equal(exchangeNoType.json().error, 'invalid_request');
    const refreshMissing = await post({ grant_type: 'refresh_token' });
    t.equal(refreshMissing.json().error, 'invalid_request');
  });

  await t.test('invalid_scope: unknown scope, and scope not allowed for the client', async (t) => {
    const unknown = await post({ grant_type: 'client_credentials', client_id: clientId, client_secret: clientSecret, scope: 'root:everything' });
    t.equal(unknown.statusCode, 400);
    t.equal(unknown.json().error, 'invalid_scope');
    const admin = await findPrincipalByName(store, 'default', 'admin');
    const limited = await createClient(store, { tenantId: 'default', principalId: admin!.id, scopes: ['table:read'] });
    const notAllowed = await post({ grant_type: 'client_credentials', client_id: limited.clientId, client_secret: limited.clientSecret, scope: 'table:write' });
    t.equal(notAllowed.json().error, 'invalid_scope');
    const ok = await post({ grant_type: 'client_credentials', client_id: limited.clientId, client_secret: limited.clientSecret });
    t.equal(ok.json().scope, 'table:read', 'no scope asked: the client gets what it is allowed');
  });

  await t.test('invalid_grant: a forged or foreign subject token', async (t) => {
    const r = await post({ grant_type: EXCHANGE, subject_token: 'not-a-jwt', subject_token_type: ACCESS_TYPE });
    t.equal(r.statusCode, 400);
    t.equal(r.json().error, 'invalid_grant');
  });

  await t.test('tokens issued are counted by grant and outcome in /metrics', async (t) => {
    const text = await server.state.metrics.registry.metrics();
    t.match(text, /floe_oauth_token_requests_total\{grant_type="client_credentials",outcome="success"\} \d+/);
    t.match(text, /floe_oauth_token_requests_total\{grant_type="client_credentials",outcome="invalid_client"\} \d+/);
  });
});
