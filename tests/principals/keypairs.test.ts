/**
 * Service accounts, keypairs and the jwt-bearer grant (kid = key id, at most one hour, jti single
 * use); PAT exchange refusals (expired, dropped). Both store backends.
 */
import t from 'tap';
import { generateKeyPairSync, randomUUID, type KeyObject } from 'node:crypto';
import { SignJWT } from 'jose';
import { onEachBackend } from '../helpers/stores.js';
import { form, ManualClock, startTestServer } from '../helpers/server.js';
import { adminAuth, must, refusal } from './helpers.js';

const JWT_BEARER = 'urn:ietf:params:oauth:grant-type:jwt-bearer';

t.test('service accounts, keypairs, jwt-bearer and PAT exchange', async (t) => {
  const es256 = generateKeyPairSync('ec', { namedCurve: 'P-256' });
  const rsa = generateKeyPairSync('rsa', { modulusLength: 2048 });
  const weak = generateKeyPairSync('rsa', { modulusLength: 1024 });
  const pem = (k: typeof es256.publicKey): string => k.export({ format: 'pem', type: 'spki' }).toString();
  await onEachBackend(t, async (t, store) => {
    const clock = new ManualClock(Date.UTC(2026, 10, 21, 12, 0, 0));
    const server = await startTestServer(store, { keepStore: true, clock, config: (c) => ({ ...c, principals: { ...c.principals, background_jobs: false } }) });
    t.teardown(() => server.close());
    const admin = await adminAuth(server);
    const now = (): number => Math.floor(clock.now() / 1000);
    const assertion = (key: KeyObject, o: { kid?: string; alg?: string; sub?: string; life?: number; jti?: string; aud?: string } = {}): Promise<string> =>
      new SignJWT({}).setProtectedHeader({ alg: o.alg ?? 'ES256', kid: o.kid ?? 'k1' }).setSubject(o.sub ?? 'etl').setAudience(o.aud ?? 'floe')
        .setIssuer(o.sub ?? 'etl').setIssuedAt(now()).setExpirationTime(now() + (o.life ?? 600)).setJti(o.jti ?? randomUUID()).sign(key);
    const exchange = async (a: string): Promise<{ status: number; body: Record<string, unknown> }> => {
      const r = await server.app.inject({ method: 'POST', url: '/v1/oauth/tokens', ...form({ grant_type: JWT_BEARER, assertion: a }) });
      return { status: r.statusCode, body: r.json() as Record<string, unknown> };
    };

    await must(server, admin, "CREATE SERVICE ACCOUNT etl COMMENT = 'nightly loads'");
    t.equal(await refusal(server, admin, 'CREATE SERVICE ACCOUNT etl'), 'DUPLICATE_OBJECT');
    await must(server, admin, 'CREATE SERVICE ACCOUNT IF NOT EXISTS etl');
    t.equal(await refusal(server, admin, `ALTER SERVICE ACCOUNT etl ADD KEYPAIR KEY_ID 'weak' PUBLIC_KEY '${pem(weak.publicKey)}' ALGORITHM RS256`), 'INVALID_PARAMETER');
    t.equal(await refusal(server, admin, `ALTER SERVICE ACCOUNT etl ADD KEYPAIR KEY_ID 'k1' PUBLIC_KEY '${pem(es256.publicKey)}' ALGORITHM ES384`), 'INVALID_PARAMETER');
    await must(server, admin, `ALTER SERVICE ACCOUNT etl ADD KEYPAIR KEY_ID 'k1' PUBLIC_KEY '${pem(es256.publicKey)}' ALGORITHM ES256`);
    await must(server, admin, `ALTER SERVICE ACCOUNT etl ADD KEYPAIR KEY_ID 'r1' PUBLIC_KEY '${pem(rsa.publicKey)}'`);
    t.equal(await refusal(server, admin, `ALTER SERVICE ACCOUNT etl ADD KEYPAIR KEY_ID 'k1' PUBLIC_KEY '${pem(es256.publicKey)}'`), 'DUPLICATE_OBJECT', 'key id unique among active keys');
    const shown = await must(server, admin, 'SHOW SERVICE ACCOUNTS');
    t.same(shown.rows.find((r) => r[0] === 'etl')![4], ['k1', 'r1']);

    const good = await exchange(await assertion(es256.privateKey));
    t.equal(good.status, 200, JSON.stringify(good.body));
    const claims = JSON.parse(Buffer.from(String(good.body.access_token).split('.')[1]!, 'base64url').toString()) as Record<string, unknown>;
    t.equal(claims.auth_method, 'keypair');
    const rsaOk = await exchange(await assertion(rsa.privateKey, { kid: 'r1', alg: 'RS256' }));
    t.equal(rsaOk.status, 200);
    const jti = randomUUID();
    t.equal((await exchange(await assertion(es256.privateKey, { jti }))).status, 200);
    t.match(await exchange(await assertion(es256.privateKey, { jti })), { status: 400, body: { error: 'invalid_grant' } }, 'a jti works once');
    t.equal((await exchange(await assertion(es256.privateKey, { life: 7200 }))).status, 400, 'at most one hour');
    t.equal((await exchange(await assertion(es256.privateKey, { kid: 'nope' }))).status, 400, 'unknown kid');
    t.equal((await exchange(await assertion(rsa.privateKey, { kid: 'k1', alg: 'RS256' }))).status, 400, 'algorithm must match the keypair');
    t.equal((await exchange(await assertion(es256.privateKey, { aud: 'someone-else' }))).status, 400, 'audience');
    const other = generateKeyPairSync('ec', { namedCurve: 'P-256' });
    t.equal((await exchange(await assertion(other.privateKey))).status, 400, 'signature');

    await must(server, admin, "ALTER SERVICE ACCOUNT etl DROP KEYPAIR KEY_ID 'k1'");
    t.equal((await exchange(await assertion(es256.privateKey))).status, 400, 'a revoked key no longer signs in');
    await must(server, admin, "ALTER SERVICE ACCOUNT etl DROP KEYPAIR IF EXISTS KEY_ID 'k1'");
    t.equal(await refusal(server, admin, "ALTER SERVICE ACCOUNT etl DROP KEYPAIR KEY_ID 'k1'"), 'NOT_FOUND');
    await must(server, admin, `ALTER SERVICE ACCOUNT etl ADD KEYPAIR KEY_ID 'k1' PUBLIC_KEY '${pem(es256.publicKey)}'`);
    t.equal((await exchange(await assertion(es256.privateKey))).status, 200, 'a revoked key id can be registered again');
    t.equal((await store.query<{ n: number }>("SELECT count(*)::int AS n FROM principal_keypairs WHERE key_id = 'k1'")).rows[0]!.n, 2, 'the revoked row is kept');

    // PATs: expired and dropped ones are refused.
    const pat = String((await must(server, admin, "CREATE PERSONAL ACCESS TOKEN ci FOR etl TTL '1 days'")).rows[0]![2]);
    const patExchange = async (p: string): Promise<number> => (await server.app.inject({ method: 'POST', url: '/v1/oauth/tokens', ...form({ grant_type: 'pat', pat: p }) })).statusCode;
    t.equal(await patExchange(pat), 200);
    t.equal(await patExchange(pat.slice(0, -1) + (pat.endsWith('a') ? 'b' : 'a')), 400, 'a mistyped PAT fails its checksum');
    clock.advance(2 * 86400_000);
    t.equal(await patExchange(pat), 400, 'expired');
    const pat2 = String((await must(server, admin, "CREATE PERSONAL ACCESS TOKEN ci2 FOR etl")).rows[0]![2]);
    t.equal(await patExchange(pat2), 200);
    await must(server, admin, 'DROP PERSONAL ACCESS TOKEN ci2 FOR etl');
    t.equal(await patExchange(pat2), 400, 'dropped');
    const listed = await must(server, admin, 'SHOW PERSONAL ACCESS TOKENS FOR etl');
    t.same(listed.rows.map((r) => [r[0], r[7]]), [['ci', true]], 'SHOW lists name and expiry, never the token');

    t.equal(await refusal(server, admin, 'DROP SERVICE ACCOUNT admin'), 'INVALID_STATE', 'the bootstrap administrator stays');
    await must(server, admin, 'DROP SERVICE ACCOUNT etl');
    t.equal((await exchange(await assertion(es256.privateKey))).status, 400, 'a dropped account cannot sign in');
    await must(server, admin, 'DROP SERVICE ACCOUNT IF EXISTS etl');
    await must(server, admin, 'CREATE SERVICE ACCOUNT etl');
    t.equal((await exchange(await assertion(es256.privateKey))).status, 400, 'a new account of the same name has no keys');
  });
});
