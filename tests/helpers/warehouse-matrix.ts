/**
 * The warehouse matrix (issue 17): existing SQL and catalog suites run unchanged with their
 * `default` catalog on another store. A driver test (tests/storage/matrix-<store>.test.ts) starts
 * the store once, writes an operator file declaring catalog `default` on it (secrets by
 * environment reference, as an operator would), and runs each suite's compiled file as its own
 * process with `FLOE_CONFIG` pointing at that file. `Floe.open` and `startTestServer` start from
 * `FLOE_CONFIG`, so every default catalog those suites create lands in the bucket; table folders
 * carry a UUID, so the suites share one warehouse without touching each other's files.
 *
 * Adding a store is one driver file: start it, describe its profile, call `runSuitesOn`.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Test } from 'tap';

/** dist/ (the compiled project; suites are run from there). */
const DIST = path.resolve(fileURLToPath(new URL('../../', import.meta.url)));

/**
 * The suites of the acceptance: DDL, every write path, deletes and MERGE, time travel and the
 * Spark tables read through SQL, TPC-H against DuckDB, the Spark tables registered over REST, and
 * the REST catalog's table, view, rename/register/transaction and commit suites.
 */
export const MATRIX_SUITES: readonly string[] = [
  'tests/sql-ddl.test.js',
  'tests/sql-writes.test.js',
  'tests/sql-dml-joins-and-merge.test.js',
  'tests/sql-queries.test.js',
  'tests/tpch-through-engine.test.js',
  'tests/catalog/spark-tables-registered.test.js',
  'tests/catalog/table-lifecycle.test.js',
  'tests/catalog/table-updates.test.js',
  'tests/catalog/view-lifecycle.test.js',
  'tests/catalog/rename-register-transactions.test.js',
];

export interface MatrixWarehouse {
  /** The store's name in test titles (`rgw`, `azurite`). */
  readonly name: string;
  /** The `storage_profile` of catalog `default` in the operator file (secrets as `{env: …}`). */
  readonly storageProfile: Readonly<Record<string, unknown>>;
  /** The environment the profile's references name (the secrets), given to the suites only. */
  readonly env: Readonly<Record<string, string>>;
}

export interface SuiteRun {
  readonly suite: string;
  readonly code: number | null;
  readonly signal: NodeJS.Signals | null;
  readonly ms: number;
  readonly output: string;
}

/** Writes the operator file declaring `default` on the warehouse; returns its path and a cleanup. */
export function writeMatrixConfig(warehouse: MatrixWarehouse): { readonly file: string; remove(): void } {
  const dir = mkdtempSync(path.join(tmpdir(), `floe-matrix-${warehouse.name}-`));
  const file = path.join(dir, 'floe.json');
  writeFileSync(file, JSON.stringify({ catalogs: [{ name: 'default', storage_profile: warehouse.storageProfile }] }, null, 2));
  return { file, remove: () => rmSync(dir, { recursive: true, force: true }) };
}

/** Runs one compiled suite as a plain node process (its own TAP output), killed after `timeoutMs`. */
export function runSuite(suite: string, env: NodeJS.ProcessEnv, timeoutMs: number): Promise<SuiteRun> {
  const started = Date.now();
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [path.join(DIST, suite)], { cwd: path.resolve(DIST, '..'), env, stdio: ['ignore', 'pipe', 'pipe'] });
    const chunks: Buffer[] = [];
    child.stdout.on('data', (b: Buffer) => chunks.push(b));
    child.stderr.on('data', (b: Buffer) => chunks.push(b));
    const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
    child.once('error', (e) => {
      clearTimeout(timer);
      reject(e);
    });
    child.once('close', (code, signal) => {
      clearTimeout(timer);
      resolve({ suite, code, signal, ms: Date.now() - started, output: Buffer.concat(chunks).toString('utf8') });
    });
  });
}

/** The lines of a TAP run worth showing when it failed: failures with their diagnostics, and the end. */
export function failureExcerpt(output: string, maxLines = 120): string {
  const lines = output.split('\n');
  const picked: string[] = [];
  for (let i = 0; i < lines.length && picked.length < maxLines; i++) {
    if (/^\s*not ok /.test(lines[i]!)) {
      picked.push(...lines.slice(i, i + 25));
    }
  }
  picked.push('…', ...lines.slice(-20));
  return picked.slice(0, maxLines + 20).join('\n');
}

/** Keeps a failed suite's whole output for a look after the run (FLOE_TEST_MATRIX_KEEP=dir). */
function keepOutput(run: SuiteRun): void {
  const dir = process.env.FLOE_TEST_MATRIX_KEEP;
  if (dir) writeFileSync(path.join(dir, `${run.suite.replaceAll('/', '_')}.log`), run.output);
}

/**
 * Runs `suites` against the warehouse, `concurrency` processes at a time, one subtest per suite
 * that passes when the suite's process exits 0. The suites inherit CI (a missing PostgreSQL is
 * still a failure in CI), not the outer tap's own variables.
 */
export async function runSuitesOn(t: Test, warehouse: MatrixWarehouse, options: { readonly suites?: readonly string[]; readonly concurrency?: number; readonly timeoutMs?: number } = {}): Promise<readonly SuiteRun[]> {
  const only = process.env.FLOE_TEST_MATRIX_SUITES?.split(',').filter((s) => s !== '');
  const suites = (options.suites ?? MATRIX_SUITES).filter((s) => only === undefined || only.some((o) => s.includes(o)));
  const config = writeMatrixConfig(warehouse);
  t.teardown(() => config.remove());
  const env: NodeJS.ProcessEnv = {};
  for (const [k, v] of Object.entries(process.env)) {
    // tap's own variables (and its loader in NODE_OPTIONS) would make the suite report to the outer run.
    if (k.startsWith('TAP') || k === 'NODE_OPTIONS' || k.startsWith('_TAPJS')) continue;
    env[k] = v;
  }
  // Without tap's runner a file's own timeout is 30 s; the driver's timeout is the limit instead.
  Object.assign(env, warehouse.env, { FLOE_CONFIG: config.file, TAP_TIMEOUT: String(Math.ceil((options.timeoutMs ?? 600_000) / 1000)) });
  const queue = [...suites];
  const runs: SuiteRun[] = [];
  const worker = async (): Promise<void> => {
    for (let suite = queue.shift(); suite !== undefined; suite = queue.shift()) {
      runs.push(await runSuite(suite, env, options.timeoutMs ?? 600_000));
    }
  };
  await Promise.all(Array.from({ length: options.concurrency ?? 2 }, () => worker()));
  for (const suite of suites) {
    const run = runs.find((r) => r.suite === suite)!;
    const passed = run.code === 0;
    if (!passed) keepOutput(run);
    const summary = /# (?:pass|fail|skip|todo)[^\n]*/g;
    const counts = [...run.output.matchAll(summary)].map((m) => m[0]).slice(-4).join(', ');
    t.ok(passed, `${suite} on ${warehouse.name} (${(run.ms / 1000).toFixed(1)} s${counts ? `; ${counts}` : ''})`, passed ? {} : { diagnostic: true, exit: run.code ?? run.signal, output: failureExcerpt(run.output) });
  }
  return runs;
}
