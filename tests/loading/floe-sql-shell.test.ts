/**
 * `floe sql` as a real process against a server on loopback (file:// warehouse): -c and file mode
 * with exit codes, CSV and JSON output, a saved profile, PUT of a CSV, a gzip CSV and a multipart
 * upload through the presign endpoints, COPY INTO of what was put, GET back to a local folder.
 */
import t from 'tap';
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { openStore } from '../../catalog/store/open-store.js';
import { startTestServer, TEST_CLIENT_ID, TEST_CLIENT_SECRET } from '../helpers/server.js';
import { listenOnLoopback } from '../helpers/http.js';
import { CLI } from '../helpers/cli.js';
import { resolveLocalPath } from '../../storage-creds/local-file-io.js';
import { loadAcceptance } from './load-acceptance.js';

const dir = mkdtempSync(join(tmpdir(), 'floe-sql-'));
t.teardown(() => rmSync(dir, { recursive: true, force: true }));
const store = await openStore({ kind: 'pglite-memory' });
const server = await startTestServer(store, { config: (c) => ({ ...c, data_dir: join(dir, 'data') }) });
t.teardown(() => server.close());
const http = await listenOnLoopback(server);

function floeSql(args: string[], env: Record<string, string> = {}, stdin?: string): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [CLI, 'sql', ...args], { env: { ...process.env, FLOE_CONFIG: join(dir, 'none'), ...env }, stdio: ['pipe', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    child.stdin.end(stdin ?? '');
    child.on('exit', (code) => resolve({ code, stdout, stderr }));
  });
}
const auth = ['--url', http.url, '--client-id', TEST_CLIENT_ID, '--client-secret', TEST_CLIENT_SECRET];

t.test('-c with CSV and JSON output, exit codes', async (t) => {
  const ok = await floeSql([...auth, '--format', 'csv', '-c', "CREATE SCHEMA shop; CREATE TABLE shop.t (id bigint, name string); INSERT INTO shop.t VALUES (1, 'a, b'), (2, NULL); SELECT * FROM shop.t ORDER BY id"]);
  t.equal(ok.code, 0, ok.stderr);
  t.match(ok.stdout, 'id,name\n1,"a, b"\n2,\n');
  const json = await floeSql([...auth, '--format', 'json', '-c', 'SELECT id FROM shop.t ORDER BY id']);
  t.same(JSON.parse(json.stdout), [{ id: 1 }, { id: 2 }]);
  const bad = await floeSql([...auth, '-c', 'SELECT 1; SELECT * FROM shop.nope; SELECT 2']);
  t.equal(bad.code, 1, 'a failing statement exits 1');
  t.match(bad.stderr, /table or view does not exist.*42P01/);
  t.notMatch(bad.stdout, /\b2\b\s*$/, 'nothing after the failure runs');
  const noAuth = await floeSql(['--url', http.url, '-c', 'SELECT 1']);
  t.equal(noAuth.code, 2, 'no credentials: usage error');
  const table = await floeSql([...auth, '-c', 'USE shop', '-c', 'SELECT id, name FROM t ORDER BY id']);
  t.equal(table.code, 0, table.stderr);
  t.match(table.stdout, /id \| name\n-+-\+-+\n1  \| a, b\n2  \| NULL\n/, 'aligned table; USE carried to the next statement');
});

t.test('a file, stdin and a saved profile', async (t) => {
  writeFileSync(join(dir, 'q.sql'), '-- a comment\nSELECT count(*) AS n FROM shop.t;\n');
  const f = await floeSql([...auth, '--format', 'csv', join(dir, 'q.sql')]);
  t.equal(f.stdout, 'n\n2\n');
  const s = await floeSql([...auth, '--format', 'csv'], {}, 'SELECT 40 + 2 AS x;');
  t.equal(s.stdout, 'x\n42\n');
  writeFileSync(join(dir, 'config'), `[work]\nurl = ${http.url}\nclient_id = ${TEST_CLIENT_ID}\nclient_secret = ${TEST_CLIENT_SECRET}\n`);
  const p = await floeSql(['--profile', 'work', '--format', 'csv', '-c', 'SELECT 7 AS y'], { FLOE_CONFIG: join(dir, 'config') });
  t.equal(p.stdout, 'y\n7\n', p.stderr);
  t.equal((await floeSql(['--profile', 'nope', '-c', 'SELECT 1'], { FLOE_CONFIG: join(dir, 'config') })).code, 2);
});

t.test('PUT a CSV, a gzip CSV and a multipart file; COPY INTO; GET back', async (t) => {
  const local = join(dir, 'files');
  rmSync(local, { recursive: true, force: true });
  await import('node:fs/promises').then((fs) => fs.mkdir(local, { recursive: true }));
  writeFileSync(join(local, 'a.csv'), '3,c\n4,d\n');
  writeFileSync(join(local, 'b.csv.gz'), gzipSync('5,e\n'));
  writeFileSync(join(local, 'big.csv'), Array.from({ length: 200 }, (_, i) => `${100 + i},row${i}\n`).join(''));
  const put = await floeSql([...auth, '--format', 'csv', '--multipart-threshold', '1000', '--part-size', '700', '-c',
    `CREATE STAGE land;\nPUT file://${local}/*.csv* @land/in;\nCOPY INTO shop.t FROM @land/in/`]);
  t.equal(put.code, 0, put.stderr);
  t.match(put.stdout, /a\.csv,@land\/in\/a\.csv,8,UPLOADED\n/);
  t.match(put.stdout, /b\.csv\.gz,@land\/in\/b\.csv\.gz,\d+,UPLOADED\n/);
  t.match(put.stdout, /big\.csv,@land\/in\/big\.csv,\d+,UPLOADED \(\d+ parts\)\n/);
  t.match(put.stdout, /@land\/in\/big\.csv,LOADED,200,200/);
  const n = await floeSql([...auth, '--format', 'csv', '-c', 'SELECT count(*) FROM shop.t']);
  t.equal(n.stdout, 'count_star()\n205\n');
  const again = await floeSql([...auth, '--format', 'csv', '-c', 'COPY INTO shop.t FROM @land/in/']);
  t.match(again.stdout, /LOAD_SKIPPED/);
  t.notMatch(again.stdout, /,LOADED,/, 'the history skips everything');
  const out = join(dir, 'out');
  const get = await floeSql([...auth, '--format', 'csv', '-c', `GET @land/in/ file://${out}`]);
  t.equal(get.code, 0, get.stderr);
  t.equal(readFileSync(join(out, 'big.csv'), 'utf8'), readFileSync(join(local, 'big.csv'), 'utf8'), 'the multipart file came back whole');
  const missing = await floeSql([...auth, '-c', `PUT file://${local}/*.parquet @land`]);
  t.equal(missing.code, 1);
  t.match(missing.stderr, /no file matches/);
  // Escapes are the server's to refuse, through the same endpoints: the shell passes them on and fails.
  for (const target of ['@land/..', '@land/../x', '@land/a//b', '@land/%2e%2e/x', '@~/../other']) {
    const escape = await floeSql([...auth, '-c', `PUT file://${local}/a.csv ${target}`]);
    t.equal(escape.code, 1, `PUT to ${target}`);
    t.match(escape.stderr, /invalid value for (path|stage path)/, `PUT to ${target}: ${escape.stderr}`);
    const back = await floeSql([...auth, '-c', `GET ${target} file://${join(dir, 'escape')}`]);
    t.equal(back.code, 1, `GET from ${target}`);
    t.match(back.stderr, /invalid value for (path|stage path)/);
  }
  t.notOk(existsSync(join(dir, 'escape')), 'GET wrote nothing');
});

t.test('the acceptance on a file:// warehouse', (t) => loadAcceptance(t, {
  url: http.url, clientId: TEST_CLIENT_ID, clientSecret: TEST_CLIENT_SECRET, catalog: 'default', dir,
  async storeFiles(stageUrl) {
    const root = resolveLocalPath(stageUrl);
    if (!existsSync(root)) return [];
    return readdirSync(root, { recursive: true }).map(String).filter((f) => statSync(join(root, f)).isFile());
  },
}));
