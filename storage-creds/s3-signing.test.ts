import t from 'tap';
import { S3RequestSigner, authorizeSign, signTargetOf, signWithSdk, type RemoteSignRequest } from './s3-signing.js';

const KEYS = { accessKeyId: 'AKIDEXAMPLE', secretAccessKey: 'wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY' };
const SESSION = { ...KEYS, sessionToken: 'FwoGZXIvYXdzEJr//////////wEaDEXAMPLE+token/with=chars' };
const NOW = Date.UTC(2026, 10, 26, 23, 59, 58, 700);

function request(method: string, uri: string, headers: Record<string, readonly string[]> = {}, body?: string): RemoteSignRequest {
  return { region: 'us-east-1', method, uri, headers: new Map(Object.entries(headers)), ...(body !== undefined ? { body } : {}) };
}

const CASES: readonly (readonly [string, RemoteSignRequest])[] = [
  ['a plain GET', request('GET', 'http://127.0.0.1:7480/b/wh/db/t/metadata/00001-abc.metadata.json', { 'x-amz-content-sha256': ['UNSIGNED-PAYLOAD'] })],
  ['no payload header, lower-case method', request('get', 'http://127.0.0.1:7480/b/wh/db/t/data/a.parquet')],
  ['encoded and odd key characters', request('HEAD', 'http://127.0.0.1:7480/b/wh/db/t/data/x%20y/%C3%BC%2Bz=1&2;3.parquet')],
  ['a ranged GET with client headers in mixed case, repeated values and spaces', request('GET', 'http://127.0.0.1:7480/b/wh/db/t/data/a.parquet', {
    Range: ['bytes=0-1023'], 'X-Amz-Meta-Note': ['a  b', ' c '], 'User-Agent': ['iceberg-java/1.9'], 'Content-Type': ['application/octet-stream'],
  })],
  ['what the client must not sign over is dropped', request('GET', 'http://127.0.0.1:7480/b/wh/db/t/data/a.parquet', {
    Authorization: ['AWS4-HMAC-SHA256 Credential=stolen'], 'X-Amz-Date': ['20200101T000000Z'], Date: ['Wed, 01 Jan 2020 00:00:00 GMT'], 'x-amz-security-token': ['old'],
  })],
  ['a multipart part upload with query parameters', request('PUT', 'http://127.0.0.1:7480/b/wh/db/t/data/big.parquet?partNumber=2&uploadId=2~abc%2Bdef&x-id=UploadPart', {
    'content-length': ['5242880'], 'content-md5': ['1B2M2Y8AsgTpgAmY7PhCfg=='],
  })],
  ['a listing with repeated and empty parameters', request('GET', 'http://127.0.0.1:7480/b?list-type=2&prefix=wh%2Fdb%2Ft%2F&delimiter=&encoding-type=url&max-keys=1000&x-id=a&x-id=b')],
  ['a DeleteObjects signed over its body', request('POST', 'http://127.0.0.1:7480/b?delete', { 'content-md5': ['x'] },
    '<Delete><Object><Key>wh/db/t/data/a.parquet</Key></Object><Object><Key>wh/db/t/data/b &amp; c.parquet</Key></Object></Delete>')],
  ['virtual-host style over https', request('GET', 'https://b.s3.eu-west-1.amazonaws.com/wh/db/t/data/a.parquet', { 'x-amz-content-sha256': ['UNSIGNED-PAYLOAD'] })],
];

t.test('signs exactly as the SDK\'s SignatureV4.sign, with and without a session token', async (t) => {
  for (const creds of [KEYS, SESSION]) {
    for (const region of ['us-east-1', 'eu-west-1']) {
      const target = signTargetOf(region === 'us-east-1' ? 'http://127.0.0.1:7480' : null, region);
      const signer = new S3RequestSigner(target, creds);
      for (const [name, r] of CASES) {
        const mine = await signer.sign(r, NOW);
        const sdk = await signWithSdk(r, target, creds, NOW);
        t.same([...mine.headers].sort(), [...sdk.headers].sort(), `${name} (${region}${'sessionToken' in creds ? ', session' : ''})`);
        t.equal(mine.uri, r.uri);
        t.equal(mine.expiresAtMs, NOW + 15 * 60_000);
      }
    }
  }
});

t.test('the day\'s signing key is renewed when the day changes', async (t) => {
  const target = signTargetOf('http://127.0.0.1:7480', 'us-east-1');
  const signer = new S3RequestSigner(target, KEYS);
  const [, r] = CASES[0]!;
  for (const at of [NOW, NOW + 2_000, NOW + 86_400_000 + 5, NOW]) {
    const mine = await signer.sign(r, at);
    const sdk = await signWithSdk(r, target, KEYS, at);
    t.same(mine.headers.get('authorization'), sdk.headers.get('authorization'), new Date(at).toISOString());
  }
  t.not((await signer.sign(r, NOW)).headers.get('authorization')?.[0], (await signer.sign(r, NOW + 86_400_000)).headers.get('authorization')?.[0]);
});

t.test('a signature names the session token and the payload hash it was made over', async (t) => {
  const target = signTargetOf('http://127.0.0.1:7480', 'us-east-1');
  const [, del] = CASES.find(([name]) => name.startsWith('a DeleteObjects'))!;
  const signed = await new S3RequestSigner(target, SESSION).sign(del, NOW);
  t.same(signed.headers.get('x-amz-security-token'), [SESSION.sessionToken]);
  t.match(signed.headers.get('x-amz-content-sha256')?.[0], /^[0-9a-f]{64}$/);
  t.match(signed.headers.get('authorization')?.[0], /^AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE\/20261126\/us-east-1\/s3\/aws4_request, SignedHeaders=[a-z0-9;-]*x-amz-security-token[a-z0-9;-]*, Signature=[0-9a-f]{64}$/);
  t.equal(signed.headers.get('date'), undefined, 'a client Date header is not passed on');
});

t.test('authorizeSign answers the parsed URI; the target is parsed once', async (t) => {
  const target = signTargetOf('http://127.0.0.1:7480', 'us-east-1');
  t.equal(target.host, '127.0.0.1:7480');
  t.equal(signTargetOf(null, 'eu-west-1').host, 's3.eu-west-1.amazonaws.com');
  const prefixes = [{ bucket: 'b', keyPrefix: 'wh/db/t/' }];
  const url = authorizeSign(request('GET', 'http://127.0.0.1:7480/b/wh/db/t/data/a.parquet'), target, prefixes, 'read');
  t.equal(url.pathname, '/b/wh/db/t/data/a.parquet');
  t.throws(() => authorizeSign(request('GET', 'http://127.0.0.1:7481/b/wh/db/t/data/a.parquet'), target, prefixes, 'read'), /not the catalog's storage endpoint/);
  t.throws(() => authorizeSign(request('GET', 'http://127.0.0.1:7480/b/wh/db/t2/a.parquet'), target, prefixes, 'read'), /outside the table's locations/);
  t.throws(() => authorizeSign(request('GET', 'http://127.0.0.1:7480/b/wh/db/t/%2e%2e/t2/a'), target, prefixes, 'read'), /'\.' or '\.\.' in the path/);
  t.throws(() => authorizeSign(request('GET', 'http://127.0.0.1:7480/b/wh/db/t/a%2Fb'), target, prefixes, 'read'), /encoded separators/);
  t.throws(() => authorizeSign(request('GET', 'http://127.0.0.1:7480/b/wh/db/t/a%zz'), target, prefixes, 'read'), /invalid percent-encoding/);
  const named = signTargetOf('http://localhost:7480', 'us-east-1');
  t.equal(authorizeSign(request('GET', 'http://b.localhost:7480/wh/db/t/x%20y'), named, prefixes, 'read').host, 'b.localhost:7480', 'virtual-host style');
  t.throws(() => authorizeSign(request('GET', 'http://c.localhost:7480/wh/db/t/x'), named, prefixes, 'read'), /outside the table's locations/, 'another bucket');
});
