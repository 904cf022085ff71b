/**
 * The executor end to end on real DuckDB workers: exact values on the wire, fragments handing results
 * to fragments, the isolation wall inside workers, timeouts and cancels that interrupt the fragment
 * and leave the worker serving, spilling sorts, clear out-of-memory errors, and Arrow IPC results.
 */
import t from 'tap';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { tableFromIPC } from 'apache-arrow';
import { FloeError } from '../../grammar/errors.js';
import { createExecutor, DEFAULT_ABORT_GRACE_MS } from '../../engine/exec/index.js';
import type { Executor } from '../../engine/exec/index.js';
import type { FragmentPlan } from '../../engine/fragments.js';
import { MEMORY_SAMPLE_MS } from '../../engine/exec/protocol.js';

const root = mkdtempSync(path.join(os.tmpdir(), 'floe-exec-test-'));
const warehouse = path.join(root, 'warehouse');
const outside = path.join(root, 'outside');
const spill = path.join(root, 'spill');
mkdirSync(warehouse, { recursive: true });
mkdirSync(outside, { recursive: true });
writeFileSync(path.join(outside, 'secret.csv'), 'a,b\n1,2\n');

const exec: Executor = createExecutor({ workers: 2, memoryLimitBytes: 256 * 1024 * 1024, spillDirectory: spill, dataDirectories: [warehouse] });
t.teardown(async () => {
  await exec.close();
  rmSync(root, { recursive: true, force: true });
});

const one = (sql: string): FragmentPlan => ({ fragments: [{ id: 0, sql, scans: [], inputs: [] }] });

/**
 * A fragment that runs for hours unless it is interrupted (one DuckDB thread hashing 10^11 rows),
 * and how soon an interrupted one must be over. The bound tells an interrupted fragment from one
 * left to run; it is not a latency target (the machine may be loaded by other test files, and
 * speed is measured in bench/), so it is far above the ~0.1 s an interrupt takes on an idle machine,
 * and a minute past the executor's own grace (a worker slower than that has its task aborted, which
 * this file's assertions would not notice).
 */
const ENDLESS = 'SELECT sum(hash(x)) FROM range(100000000000) t(x)';
const INTERRUPTED_WITHIN_MS = DEFAULT_ABORT_GRACE_MS + 60_000;

async function failure(p: Promise<unknown>): Promise<FloeError> {
  try {
    await p;
  } catch (e) {
    if (e instanceof FloeError) return e;
    throw e;
  }
  throw new Error('expected an error');
}

t.test('values keep their precision on the wire', async (t) => {
  const r = await exec.execute(
    one(`SELECT 9007199254740993::BIGINT AS big, 42::BIGINT AS small, 170141183460469231731687303715884105727::HUGEINT AS huge,
      1.50::DECIMAL(10,2) AS d, 12345678901234567890.123456789::DECIMAL(38,9) AS wide, DATE '2020-01-02' AS dt,
      TIMESTAMP '2020-01-02 03:04:05.123456' AS ts, TIMESTAMPTZ '2020-01-02 03:04:05+02' AS tz, 1.5::DOUBLE AS f,
      'nan'::DOUBLE AS nan, NULL::INTEGER AS n, [1, 2] AS l, {'k': 'v'} AS s, TIME '12:34:56' AS tm`),
  );
  t.same(r.columns, ['big', 'small', 'huge', 'd', 'wide', 'dt', 'ts', 'tz', 'f', 'nan', 'n', 'l', 's', 'tm']);
  t.same(r.types.slice(0, 8), ['BIGINT', 'BIGINT', 'HUGEINT', 'DECIMAL(10,2)', 'DECIMAL(38,9)', 'DATE', 'TIMESTAMP', 'TIMESTAMP WITH TIME ZONE']);
  t.same(r.rows, [[
    '9007199254740993', 42, '170141183460469231731687303715884105727', '1.50', '12345678901234567890.123456789', '2020-01-02',
    '2020-01-02T03:04:05.123456', '2020-01-02T01:04:05Z', 1.5, 'NaN', null, [1, 2], { k: 'v' }, '12:34:56',
  ]]);
  t.equal(r.metrics.rows, 1);
  t.equal(r.metrics.fragments, 1);
  t.ok(r.metrics.perFragment[0]!.cpuMs >= 0);
});

t.test('statements that read no table are prepared once per worker, and still evaluated on every run', async (t) => {
  const random = new Set<number>();
  const times = new Set<string>();
  for (let i = 0; i < 8; i++) {
    const r = await exec.execute(one('SELECT random() AS r, 1 + 1 AS two'));
    t.equal(r.rows[0]![1], 2);
    random.add(r.rows[0]![0] as number);
    const n = await exec.execute(one('SELECT now()::VARCHAR AS n'));
    times.add(n.rows[0]![0] as string);
    await new Promise((resolve) => setTimeout(resolve, 2));
  }
  t.equal(random.size, 8, 'a volatile function is not frozen by reuse');
  t.ok(times.size > 1, 'nor is the statement time');
  const err = await failure(exec.execute(one('SELECT 1/0::INTEGER AS boom, error(\'kept statement failed\')')));
  t.match(err.message, /kept statement failed/);
  const again = await failure(exec.execute(one('SELECT 1/0::INTEGER AS boom, error(\'kept statement failed\')')));
  t.match(again.message, /kept statement failed/, 'a kept statement that fails fails again the same way');
  t.same((await exec.execute(one('SELECT 1 AS one'))).rows, [[1]], 'and the worker serves on');
});

t.test('fragments hand exact results to later fragments (HUGEINT partial sums)', async (t) => {
  const plan: FragmentPlan = {
    fragments: [
      { id: 0, sql: 'SELECT sum(x::BIGINT + 9000000000000000000) AS s FROM range(0, 50) t(x)', scans: [], inputs: [] },
      { id: 1, sql: 'SELECT sum(x::BIGINT + 9000000000000000000) AS s FROM range(50, 100) t(x)', scans: [], inputs: [] },
      { id: 2, sql: 'SELECT sum(s) AS total, typeof(sum(s)) AS ty FROM (SELECT s FROM __floe_fragment_0 UNION ALL SELECT s FROM __floe_fragment_1)', scans: [], inputs: [0, 1] },
    ],
  };
  const seen: number[] = [];
  const r = await exec.execute(plan, { onFragment: (m) => seen.push(m.fragmentId) });
  t.same([...seen].sort(), [0, 1, 2], 'each fragment reported as it finished');
  t.equal(seen[2], 2, 'the final fragment last');
  t.same(r.rows, [[(4950n + 100n * 9000000000000000000n).toString(), 'HUGEINT']]);
  t.equal(r.metrics.fragments, 3);
  t.equal(r.metrics.perFragment.length, 3);
  const leftovers = readdirSync(spill).filter((f) => !f.startsWith('workers-') && !f.startsWith('staging-'));
  t.same(leftovers, [], 'query spill folders are removed');
});

t.test('the second wall: file, network, extension and setting escapes fail inside a worker', async (t) => {
  const attempts: [string, string][] = [
    ['read_csv outside', `SELECT * FROM read_csv('${outside}/secret.csv')`],
    ['read_text /etc/passwd', `SELECT * FROM read_text('/etc/passwd')`],
    ['read_blob', `SELECT * FROM read_blob('/etc/hostname')`],
    ['glob /etc', `SELECT * FROM glob('/etc/*')`],
    ['path traversal', `SELECT * FROM read_text('${warehouse}/../outside/secret.csv')`],
    ['COPY TO outside', `COPY (SELECT 1) TO '${outside}/out.csv'`],
    ['ATTACH outside', `ATTACH '${outside}/x.duckdb' AS x`],
    ['INSTALL', `INSTALL httpfs`],
    ['LOAD', `LOAD httpfs`],
    ['http read', `SELECT * FROM read_csv('https://example.com/x.csv')`],
    ['SET external access', `SET enable_external_access = true`],
    ['SET threads', `SET threads = 8`],
    ['RESET lock', `RESET lock_configuration`],
    ['SET allowed dirs', `SET allowed_directories = ['/']`],
    ['EXPORT DATABASE', `EXPORT DATABASE '${outside}/exp'`],
    ['CREATE SECRET (persistent)', `CREATE PERSISTENT SECRET s (TYPE s3, KEY_ID 'a', SECRET 'b')`],
  ];
  for (const [what, sql] of attempts) {
    const e = await failure(exec.execute(one(sql)));
    t.equal(e.code, 'PERMISSION_DENIED', `${what}: ${e.message}`);
    t.equal(e.sqlState, '42501');
    t.notMatch(e.message, new RegExp(outside.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')), `${what}: the message does not leak paths`);
  }
  t.notOk(existsSync(path.join(outside, 'out.csv')), 'nothing was written outside');
  t.notOk(existsSync(path.join(outside, 'x.duckdb')), 'nothing was attached outside');
  const ok = await exec.execute(one(`SELECT current_setting('enable_external_access') AS e, current_setting('lock_configuration') AS l`));
  t.same(ok.rows, [[false, true]]);
});

t.test('a query past its timeout is interrupted and the worker serves the next query', async (t) => {
  const started = Date.now();
  const e = await failure(exec.execute(one(ENDLESS), { timeoutMs: 300 }));
  const elapsed = Date.now() - started;
  t.equal(e.code, 'QUERY_TIMEOUT');
  t.equal(e.sqlState, '57014');
  t.ok(elapsed >= 300 && elapsed < INTERRUPTED_WITHIN_MS, `stopped after ${elapsed} ms (timeout 300 ms)`);
  const threads = exec.threads;
  const next = await exec.execute(one('SELECT 42 AS x'));
  t.same(next.rows, [[42]]);
  t.equal(exec.threads, threads, 'no worker was replaced');
});

t.test('cancel interrupts the running fragment', async (t) => {
  const ac = new AbortController();
  const started = Date.now();
  setTimeout(() => ac.abort(), 200);
  const e = await failure(exec.execute(one(ENDLESS), { signal: ac.signal }));
  t.equal(e.code, 'QUERY_CANCELLED');
  t.ok(Date.now() - started < INTERRUPTED_WITHIN_MS, `stopped after ${Date.now() - started} ms (cancelled at 200 ms)`);
  const pre = new AbortController();
  pre.abort();
  t.equal((await failure(exec.execute(one('SELECT 1'), { signal: pre.signal }))).code, 'QUERY_CANCELLED', 'already aborted');
  t.same((await exec.execute(one('SELECT 1 AS x'))).rows, [[1]]);
});

t.test('a sort bigger than the memory limit spills and completes; hopeless memory use is OUT_OF_MEMORY', async (t) => {
  const limit = 48 * 1024 * 1024;
  const sorted = await exec.execute(
    one(`SELECT count(*) AS n, max(rn) AS m FROM (SELECT row_number() OVER (ORDER BY md5(x::VARCHAR)) AS rn, md5(x::VARCHAR) || md5((x + 1)::VARCHAR) AS pad FROM range(2000000) t(x))`),
    { memoryLimitBytes: limit },
  );
  t.same(sorted.rows, [[2000000, 2000000]]);
  const e = await failure(exec.execute(one(`SELECT list(md5(x::VARCHAR) || md5(x::VARCHAR)) AS l FROM range(3000000) t(x)`), { memoryLimitBytes: limit }));
  t.equal(e.code, 'OUT_OF_MEMORY');
  t.equal(e.sqlState, '53200');
  t.same((await exec.execute(one('SELECT 2 AS x'))).rows, [[2]], 'the worker serves the next query');
});

t.test('DuckDB errors map to the registry', async (t) => {
  const cases: [string, string, string][] = [
    [`SELECT 'abc'::INTEGER`, 'INVALID_TEXT_REPRESENTATION', '22P02'],
    [`SELECT error('division by zero')`, 'DIVISION_BY_ZERO', '22012'],
    [`SELECT 9223372036854775807::BIGINT + 1`, 'NUMERIC_OUT_OF_RANGE', '22003'],
    [`SELECT 1 + 'a'`, 'DATATYPE_MISMATCH', '42804'],
    [`SELECT nosuchfn(1)`, 'UNDEFINED_FUNCTION', '42883'],
  ];
  for (const [sql, code, state] of cases) {
    const e = await failure(exec.execute(one(sql)));
    t.equal(e.code, code, sql);
    t.equal(e.sqlState, state, sql);
  }
});

t.test('result-size limit is an error, not a truncated result', async (t) => {
  const e = await failure(exec.execute(one('SELECT * FROM range(1000)'), { maxRows: 100 }));
  t.equal(e.code, 'RESULT_TOO_LARGE');
  t.equal((await exec.execute(one('SELECT * FROM range(100)'), { maxRows: 100 })).rows.length, 100);
});

t.test('Arrow IPC results agree with the wire rows', async (t) => {
  const r = await exec.execute(
    one(`SELECT x::INTEGER AS i, (x * 9007199254740993)::BIGINT AS b, (x / 3)::DECIMAL(12,4) AS d, 'v' || x AS s,
      DATE '2020-01-01' + x::INTEGER AS dt, TIMESTAMPTZ '2020-01-01 00:00:00+00' + to_microseconds(x) AS ts, x % 2 = 0 AS even
      FROM range(3) t(x)`),
    { arrow: true },
  );
  const table = tableFromIPC(r.arrow!);
  t.equal(table.numRows, 3);
  t.same(table.schema.fields.map((f) => f.name), ['i', 'b', 'd', 's', 'dt', 'ts', 'even']);
  t.equal(table.getChild('b')!.get(1), 9007199254740993n);
  t.equal(table.getChild('s')!.get(2), 'v2');
  t.equal(table.getChild('even')!.get(1), false);
  const d = table.getChild('d')!.get(1) as Uint32Array;
  t.equal(d[0], 3333, 'decimal 0.3333 unscaled at scale 4');
});

t.test('the first failing fragment is the query error; the others are interrupted', async (t) => {
  const started = Date.now();
  const e = await failure(
    exec.execute({
      fragments: [
        { id: 0, sql: `${ENDLESS.replace('sum(hash(x))', 'sum(hash(x)) AS s')}`, scans: [], inputs: [] },
        { id: 1, sql: `SELECT 'x'::INTEGER AS s`, scans: [], inputs: [] },
        { id: 2, sql: 'SELECT * FROM __floe_fragment_0 UNION ALL SELECT * FROM __floe_fragment_1', scans: [], inputs: [0, 1] },
      ],
    }),
  );
  t.equal(e.code, 'INVALID_TEXT_REPRESENTATION');
  t.ok(Date.now() - started < INTERRUPTED_WITHIN_MS, `the long fragment was interrupted (after ${Date.now() - started} ms)`);
  t.same((await exec.execute(one('SELECT 3 AS x'))).rows, [[3]]);
});

t.test('writePlan writes the last fragment of a multi-fragment plan', async (t) => {
  const dir = path.join(warehouse, 'wp');
  const r = await exec.writePlan(
    {
      fragments: [
        { id: 0, sql: 'SELECT x % 3 AS k, count(*) AS n FROM range(0, 50) t(x) GROUP BY 1', scans: [], inputs: [] },
        { id: 1, sql: 'SELECT x % 3 AS k, count(*) AS n FROM range(50, 100) t(x) GROUP BY 1', scans: [], inputs: [] },
        { id: 2, sql: 'SELECT k, sum(n) AS n FROM (SELECT * FROM __floe_fragment_0 UNION ALL SELECT * FROM __floe_fragment_1) GROUP BY k', scans: [], inputs: [0, 1] },
      ],
    },
    {
      columns: [
        { name: 'k', fieldId: 1, duckdbType: 'BIGINT', fieldIdsSpec: '1' },
        { name: 'n', fieldId: 2, duckdbType: 'BIGINT', fieldIdsSpec: '2' },
      ],
      partitionFields: [],
      dataDirectory: dir,
      fileNamePrefix: 'wp',
    },
  );
  t.equal(r.files.length, 1);
  t.equal(r.files[0]!.recordCount, 3);
  t.equal(r.query.fragments, 3);
  const back = await exec.execute(one(`SELECT k, n FROM read_parquet('${r.files[0]!.path}') ORDER BY k`));
  t.same(back.rows, [[0, 34], [1, 33], [2, 33]]);
});

t.test('with DuckDB threads per worker, the fragment CPU includes the background threads', async (t) => {
  const multi = createExecutor({ workers: 1, threadsPerWorker: 2, spillDirectory: path.join(root, 'spill-multi'), dataDirectories: [warehouse] });
  t.teardown(() => multi.close());
  const sql = 'SELECT sum(hash(x) % 1000) AS s, count(DISTINCT x % 100000) AS d FROM range(20000000) t(x)';
  const r = await multi.execute(one(sql));
  t.equal(r.rows[0]![1], 100000);
  const single = await exec.execute(one(sql));
  // The calling thread mostly waits while the background thread works (counting only it gave ~3%
  // of the work); CPU time, unlike wall time, does not depend on how busy the machine is.
  t.ok(r.metrics.cpuMs > single.metrics.cpuMs * 0.5, `cpu ${Math.round(r.metrics.cpuMs)} ms with 2 threads, ${Math.round(single.metrics.cpuMs)} ms with 1`);
  const e = await failure(multi.execute(one(ENDLESS), { timeoutMs: 200 }));
  t.equal(e.code, 'QUERY_TIMEOUT');
});

/** A grouped aggregation whose hash table holds tens of MB for a few hundred ms. */
const BIG_AGGREGATION = 'SELECT count(*) AS groups, sum(s) AS total FROM (SELECT i % 1000000 AS k, sum(i) AS s FROM range(12000000) t(i) GROUP BY 1)';

t.test("a running fragment's memory is sampled from its DuckDB instance and reported until it ends", async (t) => {
  const direct: number[] = [];
  const r = await exec.execute(one(BIG_AGGREGATION), { onMemory: (bytes) => direct.push(bytes) });
  t.same(r.rows, [[1000000, '71999994000000']]);
  t.ok(Math.max(...direct) > 10 * 1024 * 1024, `peak ${Math.max(...direct)} bytes over ${direct.length} reports`);
  t.equal(direct.at(-1), 0, 'the finished fragment counts 0');

  // The same through a scheduler (the time-sliced path shares the slicing port) and for a write.
  const sliced: number[] = [];
  await exec.execute(one(BIG_AGGREGATION), {
    onMemory: (bytes) => sliced.push(bytes),
    schedule: async (run) => { while (!(await run({ quantumMs: 50 })).finished); },
  });
  t.ok(Math.max(...sliced) > 10 * 1024 * 1024, `sliced: peak ${Math.max(...sliced)} bytes`);
  t.equal(sliced.at(-1), 0);

  // Only a run that was shorter than the period shows it: on a loaded machine the worker thread may
  // wait longer than that for a core before it finishes even `SELECT 1`, and then it is sampled.
  let short: { wallMs: number; reports: number[] } | undefined;
  for (let attempt = 0; attempt < 20 && short === undefined; attempt++) {
    const reports: number[] = [];
    const r = await exec.execute(one('SELECT 1'), { onMemory: (bytes) => reports.push(bytes) });
    const wallMs = r.metrics.perFragment[0]!.wallMs;
    if (wallMs < MEMORY_SAMPLE_MS) short = { wallMs, reports };
  }
  if (short === undefined) t.pass('a query shorter than the sampling period is never sampled', { skip: `no run of SELECT 1 was shorter than the ${MEMORY_SAMPLE_MS} ms period (a loaded machine)` });
  else t.same(short.reports, [], `a query shorter than the sampling period is never sampled (${short.wallMs.toFixed(1)} ms)`);
});

t.test('closing a pool while a cancelled query stops waits for its worker, and the process lives on', async (t) => {
  // Ending a worker thread while it stops an interrupted DuckDB statement aborted the whole process
  // ("terminate called after throwing an instance of 'Napi::Error'"): a server closed right after
  // its client went away did.
  for (let round = 0; round < 3; round++) {
    const pool = createExecutor({ workers: 1, spillDirectory: path.join(root, 'spill-close'), dataDirectories: [warehouse] });
    const gone = new AbortController();
    let sampled!: () => void;
    const runs = new Promise<void>((resolve) => { sampled = resolve; });
    // Memory that grows as it runs, so the first sample (after 100 ms of running) says it runs.
    const query = failure(pool.execute(one('SELECT count(DISTINCT hash(x)) FROM range(100000000000) t(x)'), { signal: gone.signal, onMemory: (bytes) => { if (bytes > 0) sampled(); } }));
    await runs;
    gone.abort();
    await pool.close();
    t.equal((await query).code, 'QUERY_CANCELLED', `round ${round}: the query ended cancelled`);
    t.equal(pool.threads, 0, 'and its thread with the pool');
  }
  // Closing while it still runs (nobody cancelled it) cancels it the same way.
  const pool = createExecutor({ workers: 1, spillDirectory: path.join(root, 'spill-close'), dataDirectories: [warehouse] });
  let sampled!: () => void;
  const runs = new Promise<void>((resolve) => { sampled = resolve; });
  const query = failure(pool.execute(one('SELECT count(DISTINCT hash(x)) FROM range(100000000000) t(x)'), { onMemory: (bytes) => { if (bytes > 0) sampled(); } }));
  await runs;
  await pool.close();
  t.equal((await query).code, 'QUERY_CANCELLED', 'a query still running when the pool closes is cancelled');
});

t.test('a pool that ends its threads leaves no file descriptors behind', { skip: process.platform !== 'linux' ? 'counts /proc/self/fd' : false }, async (t) => {
  const open = (): number => readdirSync('/proc/self/fd').length;
  const before = open();
  // Two DuckDB threads per worker: the worker keeps `schedstat` files of both open while it lives.
  const pool = createExecutor({ workers: 1, threadsPerWorker: 2, spillDirectory: path.join(root, 'spill-fds'), dataDirectories: [warehouse] });
  for (let i = 0; i < 3; i++) t.equal((await pool.execute(one(`SELECT ${i} + 1 AS n`))).rows[0]![0], i + 1);
  t.ok(open() > before, 'the worker holds descriptors while it runs');
  await pool.close();
  // The threads end (and their descriptors close) a moment after close() resolves: wait for them,
  // with a bound that only a leak reaches.
  let after = open();
  for (const deadline = Date.now() + 60_000; after > before && Date.now() < deadline;) {
    await new Promise((done) => setTimeout(done, 20));
    after = open();
  }
  t.ok(after <= before, `descriptors: ${before} before the pool, ${after} after it closed`);
});
