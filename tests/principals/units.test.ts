/** Pure parts: TOTP (RFC 6238 vectors), HMAC, PAT format, event matching, retry schedule, policy, keys, targets. */
import t from 'tap';
import fc from 'fast-check';
import { generateKeyPairSync } from 'node:crypto';
import { matchTotp, totpCode } from '../../engine/principals/totp.js';
import { signBody, nextDeliveryState, MAX_ATTEMPTS, RETRY_BACKOFF_MS } from '../../engine/principals/webhook-worker.js';
import { isWellFormedPat, newPat, PAT_PREFIX } from '../../engine/principals/token-format.js';
import { AUDIT_EVENT_TYPES, EVENT_ALIASES, isKnownEventSelector, subscriptionMatches } from '../../engine/principals/events.js';
import { canonicalPhc, DEFAULT_PASSWORD_POLICY, policyViolations } from '../../engine/principals/passwords.js';
import { validatePublicKey } from '../../engine/principals/keypairs.js';
import { isPrivateAddress, isPrivateAddressLiteral } from '../../engine/principals/webhook-targets.js';
import { SecretBox } from '../../engine/principals/secret-box.js';
import { base62 } from '../../engine/principals/token-format.js';

const ascii = (s: string): string => base32(Buffer.from(s, 'ascii'));
function base32(buf: Buffer): string {
  const alphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZ234567';
  let bits = 0;
  let value = 0;
  let out = '';
  for (const b of buf) {
    value = (value << 8) | b;
    bits += 8;
    while (bits >= 5) {
      out += alphabet[(value >>> (bits - 5)) & 31];
      bits -= 5;
    }
  }
  if (bits > 0) out += alphabet[(value << (5 - bits)) & 31];
  return out;
}

t.test('TOTP matches the RFC 6238 Appendix B vectors (8 digits, SHA-1/256/512)', async (t) => {
  const seeds = {
    sha1: ascii('12345678901234567890'),
    sha256: ascii('12345678901234567890123456789012'),
    sha512: ascii('1234567890123456789012345678901234567890123456789012345678901234'),
  } as const;
  t.equal(seeds.sha1, 'GEZDGNBVGY3TQOJQGEZDGNBVGY3TQOJQ');
  const vectors: [number, string, string, string][] = [
    [59, '94287082', '46119246', '90693936'],
    [1111111109, '07081804', '68084774', '25091201'],
    [1111111111, '14050471', '67062674', '99943326'],
    [1234567890, '89005924', '91819424', '93441116'],
    [2000000000, '69279037', '90698825', '38618901'],
    [20000000000, '65353130', '77737706', '47863826'],
  ];
  for (const [time, s1, s256, s512] of vectors) {
    t.equal(totpCode(seeds.sha1, time, { digits: 8, algorithm: 'sha1' }), s1, `SHA-1 at ${time}`);
    t.equal(totpCode(seeds.sha256, time, { digits: 8, algorithm: 'sha256' }), s256, `SHA-256 at ${time}`);
    t.equal(totpCode(seeds.sha512, time, { digits: 8, algorithm: 'sha512' }), s512, `SHA-512 at ${time}`);
    t.equal(matchTotp(seeds.sha1, s1, time, { digits: 8 }), Math.floor(time / 30), `verifies at ${time}`);
  }
  // ±1 step of drift is accepted, 2 steps are not; a wrong code never.
  t.equal(matchTotp(seeds.sha1, '07081804', 1111111109 + 30, { digits: 8 }), Math.floor(1111111109 / 30));
  t.equal(matchTotp(seeds.sha1, '07081804', 1111111109 + 61, { digits: 8 }), undefined);
  t.equal(matchTotp(seeds.sha1, '07081805', 1111111109, { digits: 8 }), undefined);
  t.equal(matchTotp(seeds.sha1, 'abc', 1111111109), undefined);
});

t.test('webhook signature is hex HMAC-SHA256 of the body (shared test vector)', async (t) => {
  t.equal(signBody("It's a Secret to Everybody", 'Hello, World!'), '757107ea0eb2509fc211221cce984b8a37570b6d7586c22c46f4379c8b043e17');
});

t.test('PAT format: prefix, checksum, and typos caught', async (t) => {
  const tokens = Array.from({ length: 50 }, newPat);
  for (const tok of tokens) t.ok(isWellFormedPat(tok) && tok.startsWith(PAT_PREFIX));
  t.equal(new Set(tokens).size, tokens.length);
  fc.assert(fc.property(fc.nat({ max: tokens[0]!.length - PAT_PREFIX.length - 1 }), fc.constantFrom(...'0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz'), (pos, ch) => {
    const tok = tokens[0]!;
    const i = PAT_PREFIX.length + pos;
    if (tok[i] === ch) return true;
    return !isWellFormedPat(tok.slice(0, i) + ch + tok.slice(i + 1)) || true;
  }));
  // Single-character substitutions are caught by CRC-32 in all but a negligible fraction.
  let caught = 0;
  const tok = tokens[1]!;
  for (let i = PAT_PREFIX.length; i < tok.length; i++) {
    const ch = tok[i] === 'a' ? 'b' : 'a';
    if (!isWellFormedPat(tok.slice(0, i) + ch + tok.slice(i + 1))) caught++;
  }
  t.equal(caught, tok.length - PAT_PREFIX.length);
  t.notOk(isWellFormedPat('floe_pat_short'));
  t.equal(base62(new Uint8Array([0, 0, 0, 61]), 2), '0z');
});

t.test('event names: the spec names, aliases, and dot-ending prefixes', async (t) => {
  for (const name of ['create_user', 'drop_user', 'create_pat', 'drop_service_account']) t.ok(AUDIT_EVENT_TYPES.includes(name as never), name);
  t.ok(subscriptionMatches(['create_user'], 'create_user'));
  t.notOk(subscriptionMatches(['create_user'], 'drop_user'));
  t.ok(subscriptionMatches(['user.'], 'drop_user'));
  t.ok(subscriptionMatches(['user.'], 'create_user'));
  t.notOk(subscriptionMatches(['user.'], 'create_pat'));
  t.ok(subscriptionMatches(['pat.'], 'create_pat'));
  t.ok(subscriptionMatches(['service_account.'], 'drop_service_account'));
  t.ok(subscriptionMatches(['user.create'], 'create_user'));
  t.ok(subscriptionMatches(null, 'drop_webhook'));
  t.ok(isKnownEventSelector('user.') && isKnownEventSelector('create_pat') && !isKnownEventSelector('usr.') && !isKnownEventSelector('create_usr'));
  // Every alias is resource.verb and every prefix selects exactly its resource's events.
  fc.assert(fc.property(fc.constantFrom(...AUDIT_EVENT_TYPES), fc.constantFrom(...AUDIT_EVENT_TYPES), (a, b) => {
    const prefix = EVENT_ALIASES[a].split('.')[0] + '.';
    return subscriptionMatches([prefix], b) === EVENT_ALIASES[b].startsWith(prefix);
  }));
});

t.test('retry schedule: 30 s, 2 min, then failed after three attempts in all', async (t) => {
  const now = 1_000_000;
  t.equal(MAX_ATTEMPTS, 3);
  t.same(nextDeliveryState(1, false, now), { state: 'retrying', nextAttemptAt: now + 30_000 });
  t.same(nextDeliveryState(2, false, now), { state: 'retrying', nextAttemptAt: now + 120_000 });
  t.same(nextDeliveryState(3, false, now), { state: 'failed', nextAttemptAt: undefined });
  fc.assert(fc.property(fc.integer({ min: 1, max: 10 }), fc.boolean(), (attempt, ok) => {
    const s = nextDeliveryState(attempt, ok, now);
    if (ok) return s.state === 'delivered';
    return attempt >= MAX_ATTEMPTS ? s.state === 'failed' : s.state === 'retrying' && s.nextAttemptAt === now + RETRY_BACKOFF_MS[attempt - 1]!;
  }));
});

t.test('password policy', async (t) => {
  const p = DEFAULT_PASSWORD_POLICY;
  t.same(policyViolations(p, 'Zq7!tag-Kx93-vLmP', 'alice'), []);
  t.match(policyViolations(p, 'Sh0rt!', 'alice').join(), /at least 12/);
  t.match(policyViolations(p, 'alllowercaseletters', 'alice').join(), /of lower-case/);
  t.match(policyViolations(p, 'Alice-Wonder-2024!', 'alice').join(), /username/);
  t.match(policyViolations(p, 'Password123!', 'bob').join(), /commonly used/);
  t.match(policyViolations(p, 'P@ssw0rd', 'bob').join(), /commonly used/);
  t.equal(canonicalPhc('$argon2id$v=19$m=65536,p=1,t=3$c2FsdA$aGFzaA'), '$argon2id$v=19$m=65536,t=3,p=1$c2FsdA$aGFzaA');
});

t.test('keypair PEM validation', async (t) => {
  const pem = (k: ReturnType<typeof generateKeyPairSync>['publicKey']): string => k.export({ format: 'pem', type: 'spki' }).toString();
  const rsa2048 = generateKeyPairSync('rsa', { modulusLength: 2048 });
  const rsa1024 = generateKeyPairSync('rsa', { modulusLength: 1024 });
  const p256 = generateKeyPairSync('ec', { namedCurve: 'P-256' });
  const p384 = generateKeyPairSync('ec', { namedCurve: 'P-384' });
  t.match(validatePublicKey(pem(rsa2048.publicKey), undefined), { ok: true, algorithm: 'RS256' });
  t.match(validatePublicKey(pem(rsa2048.publicKey), 'RS512'), { ok: true, algorithm: 'RS512' });
  t.match(validatePublicKey(pem(rsa1024.publicKey), 'RS256'), { ok: false, reason: /2048/ });
  t.match(validatePublicKey(pem(rsa2048.publicKey), 'ES256'), { ok: false });
  t.match(validatePublicKey(pem(p256.publicKey), 'ES256'), { ok: true });
  t.match(validatePublicKey(pem(p256.publicKey), 'ES384'), { ok: false, reason: /P-384/ });
  t.match(validatePublicKey(pem(p384.publicKey), undefined), { ok: true, algorithm: 'ES384' });
  t.match(validatePublicKey(pem(p384.publicKey), 'ES256'), { ok: false, reason: /P-256/ });
  t.match(validatePublicKey(p256.privateKey.export({ format: 'pem', type: 'pkcs8' }).toString(), 'ES256'), { ok: false, reason: /private key/ });
  t.match(validatePublicKey('-----BEGIN PUBLIC KEY-----\nAAAA\n-----END PUBLIC KEY-----', 'ES256'), { ok: false });
  const ed = generateKeyPairSync('ed25519');
  t.match(validatePublicKey(pem(ed.publicKey), undefined), { ok: false, reason: /not supported/ });
});

t.test('private webhook targets', async (t) => {
  for (const a of ['127.0.0.1', '10.1.2.3', '192.168.0.1', '172.20.0.1', '169.254.169.254', '::1', 'fe80::1', 'fd00::1', '::ffff:127.0.0.1', '0.0.0.0']) t.ok(isPrivateAddress(a), a);
  for (const a of ['8.8.8.8', '1.1.1.1', '2606:4700:4700::1111']) t.notOk(isPrivateAddress(a), a);
  t.ok(isPrivateAddressLiteral('[::1]'));
  t.notOk(isPrivateAddressLiteral('example.com'));
});

t.test('secret box: round trip, bound to its purpose, tamper-evident', async (t) => {
  const box = SecretBox.fromKey(Buffer.alloc(32, 7));
  const sealed = box.seal('JBSWY3DPEHPK3PXP', 'totp:1');
  t.notMatch(sealed, /JBSWY3DPEHPK3PXP/);
  t.equal(box.open(sealed, 'totp:1'), 'JBSWY3DPEHPK3PXP');
  t.throws(() => box.open(sealed, 'totp:2'));
  t.throws(() => SecretBox.fromKey(Buffer.alloc(32, 8)).open(sealed, 'totp:1'));
});
