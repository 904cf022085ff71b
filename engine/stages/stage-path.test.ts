import t from 'tap';
import { parseStageRef, stageKeyProblem, stagePattern } from './stage-path.js';
import { resolveLoadFormat } from './load-format.js';
import { UploadTokens } from './upload-tokens.js';

t.test('keys that could leave a stage are refused', async (t) => {
  for (const bad of ['..', '../a', 'a/..', 'a/../b', './a', '/abs', '~/x', 'a//b', 'a\\b', 'a\u0000b', 'a\nb', 'a%2fb', 'a%2Fb', '%2e%2e/x', 'a%5Cb', 's3://b/k', 'file:///etc', 'x'.repeat(1025)]) {
    t.ok(stageKeyProblem(bad) !== undefined, JSON.stringify(bad));
  }
  for (const good of ['a.csv', 'dir/a.csv', '2024/06/part-0.csv.gz', 'a b.csv', 'x%41.csv', 'é.csv', '..a', 'a..']) t.equal(stageKeyProblem(good), undefined, good);
  t.equal(stageKeyProblem('dir/', { allowFolder: true }), undefined);
  t.ok(stageKeyProblem('dir/') !== undefined);
  t.equal(stageKeyProblem('', { allowEmpty: true }), undefined);
});

t.test('references', async (t) => {
  t.same(parseStageRef('Raw/2024/a.csv'), { kind: 'named', name: 'raw', path: '2024/a.csv' });
  t.same(parseStageRef('~'), { kind: 'user', path: '' });
  t.same(parseStageRef('~/dir/'), { kind: 'user', path: 'dir/' });
  for (const bad of ['raw/../x', '%t', '.x', 'a-b']) t.throws(() => parseStageRef(bad), { name: 'FloeError' }, bad);
});

t.test('PATTERN matches the whole key', async (t) => {
  const m = stagePattern('.*[.]csv')!;
  t.ok(m('a/b.csv'));
  t.notOk(m('a/b.csv.gz'));
  t.equal(stagePattern(undefined), undefined);
  t.throws(() => stagePattern('('), { code: 'INVALID_PARAMETER' });
});

t.test('file formats: the statement overrides the stage, other types\' stage options are left out', async (t) => {
  const stage = [{ key: 'TYPE', value: 'CSV' }, { key: 'SKIP_HEADER', value: 1 }, { key: 'FIELD_DELIMITER', value: '|' }];
  t.match(resolveLoadFormat(stage, [{ key: 'FIELD_DELIMITER', value: ';' }], 'CSV'), { type: 'CSV', delimiter: ';', skipHeader: 1, quote: '"', escape: '"' });
  t.same(resolveLoadFormat(stage, [{ key: 'TYPE', value: 'PARQUET' }], 'CSV'), { type: 'PARQUET' });
  t.match(resolveLoadFormat([], [], 'JSON'), { type: 'JSON', compression: 'AUTO' });
  t.throws(() => resolveLoadFormat([], [{ key: 'TYPE', value: 'PARQUET' }, { key: 'SKIP_HEADER', value: 1 }], 'CSV'), /SKIP_HEADER/);
  t.throws(() => resolveLoadFormat([], [{ key: 'FIELD_DELIMITER', value: 'ab' }], 'CSV'), /one character/);
  t.throws(() => resolveLoadFormat([], [{ key: 'TYPE', value: 'AVRO' }], 'CSV'), /CSV, PARQUET or JSON/);
});

t.test('upload tokens: signed, expiring, one operation', async (t) => {
  const tokens = new UploadTokens(Buffer.alloc(32, 7));
  const claims = { op: 'put' as const, tenant: 't', principal: 'p', root: 'file:///w/stages/x/', key: 'a.csv', maxBytes: 10, exp: 1000 };
  const token = tokens.sign(claims);
  t.same(tokens.verify(token, 999, ['put']), { ok: true, claims });
  t.match(tokens.verify(token, 1000, ['put']), { ok: false, reason: /expired/ });
  t.match(tokens.verify(token, 0, ['get']), { ok: false, reason: /operation/ });
  t.match(new UploadTokens(Buffer.alloc(32, 8)).verify(token, 0, ['put']), { ok: false, reason: /signature/ });
  const [, sig] = token.split('.');
  const other = Buffer.from(JSON.stringify({ ...claims, key: 'b.csv' })).toString('base64url');
  t.match(tokens.verify(`${other}.${sig}`, 0, ['put']), { ok: false, reason: /signature/ });
  t.match(tokens.verify('garbage', 0, ['put']), { ok: false });
});
