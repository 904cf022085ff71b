/**
 * The memory-cap policy against real DuckDB: the lease's memory limit becomes the connection's
 * `memory_limit`, so a sort larger than the cap spills to the temp directory and completes; when
 * spilling cannot help (no temp space), DuckDB's out-of-memory error is recognised and the query is
 * cancelled with a message naming the class cap.
 */
import t from 'tap';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DuckDBInstance } from '@duckdb/node-api';
import { resolveWorkloadConfig } from '../../engine/wlm/config.js';
import { VirtualClock } from '../../engine/wlm/clock.js';
import { WorkloadManager, type QueryLease } from '../../engine/wlm/manager.js';
import { isOutOfMemoryError } from '../../engine/wlm/killer.js';

const CAP = 64 * 1024 * 1024;
const SORT = `SELECT count(*) AS n, sum(x) AS s FROM (
  SELECT (i * 7919) % 1000003 AS x, md5(i::VARCHAR) AS pad FROM range(2000000) t(i) ORDER BY x, pad)`;

/** What the executor does with a lease: DuckDB limited to the lease's memory, one fragment, CPU charged. */
async function runSort(lease: QueryLease, tempDir: string, tempSpace: string): Promise<bigint> {
  const instance = await DuckDBInstance.create(':memory:', {
    memory_limit: `${lease.memoryLimitBytes}B`, threads: '1', temp_directory: tempDir,
  });
  const connection = await instance.connect();
  await connection.run(`SET max_temp_directory_size = '${tempSpace}'`);
  try {
    let answer = 0n;
    await lease.runFragment(async () => {
      const started = process.cpuUsage();
      const reader = await connection.runAndReadAll(SORT);
      answer = reader.getRows()[0]![0] as bigint;
      const used = process.cpuUsage(started);
      return { cpuMs: (used.user + used.system) / 1000, finished: true };
    });
    return answer;
  } catch (e) {
    if (isOutOfMemoryError(e)) throw lease.reportOutOfMemory((e as Error).message.split('\n')[0]);
    throw e;
  } finally {
    connection.closeSync();
    instance.closeSync();
  }
}

t.test('a sort larger than the memory cap spills and completes; without temp space it is cancelled with a memory message', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'floe-wlm-spill-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const config = resolveWorkloadConfig({ classes: { batch: { memory_cap_bytes: CAP } } });
  const wlm = new WorkloadManager({ config, clock: new VirtualClock() });
  const limits = wlm.classLimits('batch');
  const admit = async (id: string): Promise<QueryLease> => {
    const ticket = wlm.admit({ queryId: id, tenant: 't', user: 'u', source: null, resourcePool: null, queryType: 'select', workloadClass: 'batch', ...limits });
    if (ticket.kind !== 'accepted') throw new Error('rejected');
    return ticket.lease;
  };

  const spilled = await admit('spills');
  t.equal(spilled.memoryLimitBytes, CAP);
  t.equal(await runSort(spilled, join(dir, 'a'), '1GiB'), 2_000_000n, 'completed by spilling');
  t.notOk(spilled.signal.aborted);
  t.ok(wlm.resourceGroupRows()[0]!.cumulativeCpuMs > 0, 'fragment CPU charged to the group');
  spilled.release();

  const starved = await admit('cannot-spill');
  const error = await runSort(starved, join(dir, 'b'), '0KiB').then(() => null, (e: unknown) => e);
  t.ok(error, 'failed');
  t.match((error as Error).message, /^query cancelled: exceeded batch class memory cap of 67108864 bytes \(64 MiB\); spilling to disk could not help \(Out of Memory Error/);
  t.equal((error as { code?: string }).code, 'QUERY_CANCELLED');
  t.equal(starved.signal.reason, error, 'the lease is cancelled with the same error');
  starved.release();
  t.equal(wlm.activeQueries, 0);
});
