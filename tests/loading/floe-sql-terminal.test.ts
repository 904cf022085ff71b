/**
 * `floe sql` on a terminal (a pseudo-terminal driven by Python's pty module): the prompt, a
 * statement over several lines, the history (up arrow), and Ctrl-C cancelling a running statement
 * (the server records it cancelled) while the shell keeps going.
 */
import t from 'tap';
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openStore } from '../../catalog/store/open-store.js';
import { startTestServer, TEST_CLIENT_ID, TEST_CLIENT_SECRET } from '../helpers/server.js';
import { listenOnLoopback } from '../helpers/http.js';
import { CLI } from '../helpers/cli.js';

const dir = mkdtempSync(join(tmpdir(), 'floe-tty-'));
t.teardown(() => rmSync(dir, { recursive: true, force: true }));
const store = await openStore({ kind: 'pglite-memory' });
const server = await startTestServer(store, { config: (c) => ({ ...c, data_dir: join(dir, 'data') }) });
t.teardown(() => server.close());
const http = await listenOnLoopback(server);

// Steps: [text to type, seconds to wait for output after it]. The driver prints everything the terminal showed.
const driver = `
import os, pty, sys, time, json, select
steps = json.loads(sys.argv[1])
pid, fd = pty.fork()
if pid == 0:
    os.execvp(sys.argv[2], sys.argv[2:])
out = b''
def drain(seconds):
    global out
    end = time.time() + seconds
    while time.time() < end:
        r, _, _ = select.select([fd], [], [], 0.05)
        if r:
            try:
                out += os.read(fd, 65536)
            except OSError:
                return
for text, wait in steps:
    os.write(fd, text.encode())
    drain(wait)
os.kill(pid, 9)
sys.stdout.write(out.decode('utf8', 'replace'))
`;
writeFileSync(join(dir, 'driver.py'), driver);

function terminal(steps: [string, number][], extra: readonly string[] = []): Promise<string> {
  return new Promise((resolve) => {
    const child = spawn('python3', [join(dir, 'driver.py'), JSON.stringify(steps), process.execPath, CLI, 'sql', '--url', http.url, '--client-id', TEST_CLIENT_ID, '--client-secret', TEST_CLIENT_SECRET, ...extra], { stdio: ['ignore', 'pipe', 'inherit'], env: { ...process.env, FLOE_CONFIG: join(dir, 'none') } });
    let out = '';
    child.stdout.on('data', (d: Buffer) => (out += d.toString()));
    child.on('exit', () => resolve(out));
  });
}

t.test('prompt, multi-line statements, history, Ctrl-C cancels', async (t) => {
  const out = await terminal([
    ['', 3],
    ['SELECT 40\r', 0.5],
    ['  + 2 AS answer;\r', 3],
    ['\u001b[A\r', 3],
    ['SELECT count(*) FROM range(100000000000) AS a, range(1000) AS b;\r', 3],
    ['\u0003', 3],
    ['SELECT 7 AS after_cancel;\r', 3],
  ]);
  t.match(out, /floe> /, 'the prompt');
  t.match(out, / {3}-> /, 'the continuation prompt');
  t.match(out, /answer\r?\n-+\r?\n42/, 'the statement over two lines ran');
  t.ok((out.match(/\b42\b/g) ?? []).length >= 2, 'the up arrow recalled the whole two-line statement and ran it again');
  t.match(out, /cancel/i, 'Ctrl-C cancelled the running statement');
  t.match(out, /after_cancel\r?\n-+\r?\n7/, 'the shell goes on after a cancel');
  await server.state.history.flush();
  const history = (await store.query<{ status: string }>("SELECT status FROM query_history WHERE sql LIKE '%range(100000000000)%'")).rows;
  t.same(history.map((r) => r.status), ['cancelled'], 'the server recorded the statement cancelled');
});

t.test('PUT draws a progress bar on a terminal (parallel parts of a multipart upload)', async (t) => {
  const file = join(dir, 'progress.bin');
  writeFileSync(file, Buffer.alloc(3 * 1024 * 1024, 7));
  const out = await terminal([
    ['', 3],
    [`PUT file://${file} @~/up/;\r`, 8],
    ['LIST @~/up/;\r', 3],
  ], ['--multipart-threshold', String(1024 * 1024), '--part-size', String(256 * 1024)]);
  t.match(out, /progress\.bin \[#+\] 100% 3\.0\/3\.0 MiB [\d.]+ MiB\/s/, 'the bar ends full');
  t.match(out, /\r/, 'redrawn in place');
  t.match(out, /UPLOADED \(12 parts\)/);
  t.match(out, /~\/up\/progress\.bin +\| 3145728/, 'the file is in the stage');
});
