/**
 * The README's curl walk-through, run as written against a freshly started `floe serve`: the only
 * change is the port (the test cannot assume 8181 is free) and the two exported variables, which
 * come from what the server printed.
 */
import t from 'tap';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { exportsOf, startCli } from './helpers/cli.js';

const readme = readFileSync(fileURLToPath(new URL('../../README.md', import.meta.url)), 'utf8');
const block = /<!-- walkthrough -->\n```sh\n([\s\S]*?)```/.exec(readme)?.[1];
t.ok(block, 'the README has the walk-through block');
t.match(readme, /npm ci && npm start/, 'quick start at the top');

const server = await startCli(['--port', '0', '--data-dir', mkdtempSync(join(tmpdir(), 'floe-readme-'))]);
t.teardown(() => server.stop());
const port = new URL(server.url).port;
const script = block!.replaceAll('127.0.0.1:8181', `127.0.0.1:${port}`);
// Bounds for commands that hang, not for slow ones (the machine may be loaded by other test files).
const r = spawnSync('bash', ['-euo', 'pipefail', '-c', script], { env: { ...process.env, ...exportsOf(server.banner) }, encoding: 'utf8', timeout: 120_000 });
t.equal(r.status, 0, r.stderr);
// curl prints the two JSON bodies back to back.
const [config, ready] = r.stdout.replace(/}\s*{/g, '}\n{').trim().split('\n').map((line) => JSON.parse(line) as Record<string, unknown>);
t.ok(config && Array.isArray(config.endpoints) && typeof config.defaults === 'object', 'GET /v1/config answered');
t.match(ready, { status: 'ready' }, 'GET /health/ready answered');

// The SQL walk-through, run as written over real HTTP (a request's body stream closing must not
// cancel its statement: only a client that goes away does).
const sqlBlock = /<!-- sql-walkthrough -->\n```sh\n([\s\S]*?)```/.exec(readme)?.[1];
t.ok(sqlBlock, 'the README has the SQL walk-through block');
const sqlRun = spawnSync('bash', ['-euo', 'pipefail', '-c', sqlBlock!.replaceAll('127.0.0.1:8181', `127.0.0.1:${port}`)], {
  env: { ...process.env, ...exportsOf(server.banner) }, encoding: 'utf8', timeout: 120_000,
});
t.equal(sqlRun.status, 0, sqlRun.stderr);
const answers = sqlRun.stdout.trim().split('\n').map((line) => JSON.parse(line) as Record<string, unknown>);
t.equal(answers.length, 5, 'five answers');
t.ok(answers.every((a) => a.error === undefined), sqlRun.stdout);
t.same(answers[3]!.rows, [[1, '19.90']], 'the aggregate over the inserted row');
