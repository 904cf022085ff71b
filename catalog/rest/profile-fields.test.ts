/** The storage-profile field checks: which endpoints each rule takes, and that refusals never echo a value. */
import t from 'tap';
import { checkS3HttpEndpoint, httpEndpoint, onlyFields } from './profile-fields.js';

const refused = { name: 'BadRequestException' };

t.test('onlyFields names the first unknown field and takes known ones', async (t) => {
  t.doesNotThrow(() => onlyFields({ type: 'gcs', bucket: 'b' }, ['type', 'bucket', 'key-prefix'], 'storage-profile'));
  t.throws(() => onlyFields({ type: 'gcs', bukcet: 'b' }, ['type', 'bucket'], 'storage-profile'), { ...refused, message: "Unknown field 'bukcet' in storage-profile" });
  // An own key named like a prototype member is still unknown.
  t.throws(() => onlyFields(JSON.parse('{"__proto__": 1}') as Record<string, never>, ['type'], 'x'), { ...refused, message: "Unknown field '__proto__' in x" });
});

t.test('httpEndpoint: http(s) without credentials, query or fragment; trailing slashes dropped', async (t) => {
  t.equal(httpEndpoint('http://127.0.0.1:10000/devstoreaccount1/', 'endpoint', 'storage-profile'), 'http://127.0.0.1:10000/devstoreaccount1');
  t.equal(httpEndpoint('https://sts.googleapis.com//', 'sts-endpoint', 'w'), 'https://sts.googleapis.com');
  t.equal(httpEndpoint('https://storage.example', 'endpoint', 'w'), 'https://storage.example');
  for (const bad of ['ftp://h/', 'not a url', 'http://user:hunter2@h/', 'http://h/?sig=hunter2', 'http://h/#hunter2', 'file:///etc/passwd']) {
    t.throws(() => httpEndpoint(bad, 'endpoint', 'storage-profile'), {
      ...refused, message: 'Invalid endpoint in storage-profile: expected an http:// or https:// URL without credentials or query',
    }, bad);
  }
});

t.test('checkS3HttpEndpoint: http(s) without credentials; a query is let through as before', async (t) => {
  t.doesNotThrow(() => checkS3HttpEndpoint('http://127.0.0.1:7480/', 'endpoint', 'storage-profile'));
  t.doesNotThrow(() => checkS3HttpEndpoint('https://sts.example/?x=1', 'sts-endpoint', 'storage-profile'));
  for (const bad of ['ftp://h/', 'not a url', 'http://user:hunter2@h/', 'https://:hunter2@h/']) {
    t.throws(() => checkS3HttpEndpoint(bad, 'sts-endpoint', 'storage-profile vended-credentials'), {
      ...refused, message: 'Invalid sts-endpoint in storage-profile vended-credentials: expected an http:// or https:// URL without credentials',
    }, bad);
  }
});
