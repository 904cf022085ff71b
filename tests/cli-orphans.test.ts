/**
 * `floe admin orphans <catalog>` (issue 17, item 3): files under a table's location that no
 * metadata refers to are listed (an upload whose commit never happened), files of older snapshots
 * and every metadata file are not; nothing is deleted; `--older-than-minutes` leaves out fresh files.
 */
import t from 'tap';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Floe } from '../index.js';
import { openStore } from '../catalog/store/open-store.js';
import { findOrphans } from '../catalog/rest/orphans.js';
import { runCli } from './helpers/cli.js';

const dataDir = mkdtempSync(join(tmpdir(), 'floe-orphans-'));
const ctx = { tenantId: 'default', principalId: 'test', roles: ['tenant_admin'] };

t.test('floe admin orphans', async (t) => {
  t.teardown(() => rmSync(dataDir, { recursive: true, force: true }));
  const floe = await Floe.open({ dataDir, store: await openStore({ kind: 'pglite', dataDir }) });
  await floe.sql('CREATE SCHEMA s');
  await floe.sql('CREATE TABLE s.t (id int)');
  await floe.sql('INSERT INTO s.t VALUES (1), (2)');
  await floe.sql('INSERT INTO s.t VALUES (3)');
  await floe.sql('DELETE FROM s.t WHERE id = 3');
  const { location } = (await floe.state.catalog.loadTable(ctx, 'default', { namespace: ['s'], name: 't' })).metadata;
  const tableDir = location.replace(/^file:\/\//, '');
  t.same(await findOrphans(floe.state.catalog, ctx, 'default').then((r) => r.orphans), [], 'a table written only by Floe has no orphans (older snapshots keep their files)');
  const beforeStray = Date.now() - 1000;
  const stray = join(tableDir, 'data', 'never-committed.parquet');
  writeFileSync(stray, 'PAR1 half an upload');
  const report = await findOrphans(floe.state.catalog, ctx, 'default');
  t.same(report.orphans.map((o) => [o.location.replace(/^file:\/\//, ''), o.size, o.table]), [[stray, 19, 's.t']], 'the stray file, and only it');
  t.ok(report.filesListed > 5 && report.tables === 1);
  t.same((await findOrphans(floe.state.catalog, ctx, 'default', { olderThanMs: beforeStray })).orphans, [], 'a file newer than the cut-off is left out');
  await floe.close();

  const listed = runCli(['admin', 'orphans', 'default', '--data-dir', dataDir]);
  t.equal(listed.status, 0, listed.stderr);
  t.match(listed.stdout, new RegExp(`${stray.replaceAll('/', '\\/').replaceAll('.', '\\.')}\\t19\\t\\d{4}-\\d\\d-\\d\\dT[^\\t]+\\ts\\.t\\n`));
  t.equal(listed.stdout.trim().split('\n').length, 1, 'one line per orphan');
  t.match(listed.stderr, /1 orphan files \(19 bytes\) among \d+ files under 1 tables of catalog default; nothing was deleted\./);
  t.ok(existsSync(stray), 'nothing was deleted');
  const fresh = runCli(['admin', 'orphans', 'default', '--older-than-minutes', '60', '--data-dir', dataDir]);
  t.equal(fresh.status, 0);
  t.equal(fresh.stdout, '', 'younger than an hour: not listed');
  const missing = runCli(['admin', 'orphans', 'nope', '--data-dir', dataDir]);
  t.equal(missing.status, 2);
  t.match(missing.stderr, /nope/);
  t.equal(runCli(['admin', 'orphans', 'default', '--older-than-minutes', 'soon', '--data-dir', dataDir]).status, 2, 'a bad cut-off');
});
