import t from 'tap';
import type { Test } from 'tap';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { FileAlreadyExistsError, FileNotFoundError, InMemoryFileIO, UnsupportedLocationError, remapLocation, remapLocations, schemeOf } from './file-io.js';
import type { FileIO } from './file-io.js';
import { LocalFileIO, resolveLocalPath } from './local-file-io.js';

t.test('resolveLocalPath', async (t) => {
  t.equal(resolveLocalPath('file:///a/b'), '/a/b');
  t.equal(resolveLocalPath('file:/a/b'), '/a/b');
  t.equal(resolveLocalPath('file://localhost/a/b'), '/a/b');
  t.equal(resolveLocalPath('/a/./b'), '/a/b');
  t.equal(resolveLocalPath('file:///d/x=2023-05-15T14%3A30%3A45'), '/d/x=2023-05-15T14%3A30%3A45', 'taken literally');
  for (const l of ['s3://bucket/x', 'gs://b/x', 'abfss://c@acct.dfs.core.windows.net/x']) {
    t.throws(() => resolveLocalPath(l), UnsupportedLocationError);
    t.throws(() => resolveLocalPath(l), { message: new RegExp(`scheme '${schemeOf(l)}' is not supported by this FileIO yet`) });
  }
  t.throws(() => resolveLocalPath('relative/x'), UnsupportedLocationError);
  t.throws(() => resolveLocalPath('file://otherhost/x'), UnsupportedLocationError);
});

t.test('remapLocation: longest prefix wins', async (t) => {
  const mappings = [
    { from: 's3a://bucket/', to: 'file:///data/' },
    { from: 's3a://bucket/special/', to: 'file:///other/' },
  ];
  t.equal(remapLocation('s3a://bucket/t/x.avro', mappings), 'file:///data/t/x.avro');
  t.equal(remapLocation('s3a://bucket/special/x', mappings), 'file:///other/x');
  t.equal(remapLocation('s3://elsewhere/x', mappings), 's3://elsewhere/x');
});

async function exercise(t: Test, io: FileIO, root: string): Promise<void> {
  const a = `${root}/dir/a.json`;
  await io.write(a, Buffer.from('one'));
  t.equal((await io.read(a)).toString(), 'one');
  t.equal(await io.exists(a), true);
  t.equal(await io.size(a), 3);
  await t.rejects(io.write(a, Buffer.from('two')), FileAlreadyExistsError, 'create-if-absent');
  t.equal((await io.read(a)).toString(), 'one', 'unchanged after a failed create');
  await io.write(a, Buffer.from('three'), { overwrite: true });
  t.equal((await io.read(a)).toString(), 'three');
  await io.write(`${root}/dir/sub/b.avro`, Buffer.from('b'));
  await io.write(`${root}/dirx/c`, Buffer.from('c'));
  t.same((await io.list(`${root}/dir/`)).map((f) => f.location), [`${root}/dir/a.json`, `${root}/dir/sub/b.avro`]);
  await t.rejects(io.read(`${root}/missing`), FileNotFoundError);
  await t.rejects(io.size(`${root}/missing`), FileNotFoundError);
  await io.delete(`${root}/missing`);
  t.equal(await io.deletePrefix(`${root}/dir/`), 2);
  t.equal(await io.exists(a), false);
  t.equal(await io.exists(`${root}/dirx/c`), true);
}


t.test('LocalFileIO with paths and file URIs', async (t) => {
  const dir = mkdtempSync(path.join(tmpdir(), 'floe-fileio-'));
  await exercise(t, new LocalFileIO(), dir);
  await exercise(t, new LocalFileIO(), `file://${dir}/uri`);
});

t.test('LocalFileIO: concurrent create-if-absent has exactly one winner', async (t) => {
  const dir = mkdtempSync(path.join(tmpdir(), 'floe-fileio-'));
  const io = new LocalFileIO();
  const results = await Promise.allSettled(Array.from({ length: 16 }, (_, i) => io.write(`${dir}/v1.metadata.json`, Buffer.from(String(i)))));
  t.equal(results.filter((r) => r.status === 'fulfilled').length, 1);
  t.equal((await io.list(`${dir}/`)).length, 1, 'no temp files left');
});

t.test('InMemoryFileIO and remapLocations', async (t) => {
  await exercise(t, new InMemoryFileIO(), 'mem://x');
  const inner = new InMemoryFileIO();
  const io = remapLocations(inner, [{ from: './lineitem_iceberg/', to: 'mem://data/lineitem/' }]);
  await io.write('./lineitem_iceberg/metadata/v1.json', Buffer.from('{}'));
  t.equal(await inner.exists('mem://data/lineitem/metadata/v1.json'), true);
  t.same((await io.list('./lineitem_iceberg/')).map((f) => f.location), ['./lineitem_iceberg/metadata/v1.json']);
  const err = await io.read('./lineitem_iceberg/nope').catch((e: unknown) => e);
  t.ok(err instanceof FileNotFoundError);
  t.equal((err as FileNotFoundError).location, './lineitem_iceberg/nope', 'error names the caller location');
});
