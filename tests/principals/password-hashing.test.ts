/**
 * Argon2id in child processes of lowered priority (engine/principals/argon2id-pool.ts behind the
 * PasswordHasher gate): the hashes are what the argon2 reference computes, a killed child is
 * replaced and its call still answers, close() leaves no process behind (nor does a parent that
 * dies), at most `workers` computations run and at most `maxQueued` wait, children run at the
 * configured priority, and a pool that cannot fork falls back to hashing in process.
 */
import t from 'tap';
import argon2 from 'argon2';
import { spawn, spawnSync } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { isFloeError } from '../../grammar/errors.js';
import { ARGON2_PARAMETERS } from '../../engine/principals/argon2id.js';
import { DUMMY_PASSWORD_HASH, PasswordHasher } from '../../engine/principals/passwords.js';
import { onEachBackend } from '../helpers/stores.js';
import { startTestServer } from '../helpers/server.js';
import { adminAuth, must, signInRequest, strongPassword } from './helpers.js';

const PHC = /^\$argon2id\$v=19\$m=65536,t=3,p=1\$([A-Za-z0-9+/]{22})\$([A-Za-z0-9+/]{43})$/;
const dist = fileURLToPath(new URL('../../', import.meta.url));

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

/**
 * The children at the test's own priority, where priority is not what a test is about: at the
 * default nice 19 one hash took 27 s with a load average of 26 on 2 cores (1.8 s at nice 0).
 */
const AT_TEST_PRIORITY = { niceness: 0, idlePolicy: false } as const;

/** Whether the processes have exited; the bound is only for children that never do. */
async function gone(pids: readonly number[], withinMs = 60_000): Promise<boolean> {
  const until = Date.now() + withinMs;
  while (pids.some(alive)) {
    if (Date.now() > until) return false;
    await new Promise((r) => setTimeout(r, 25));
  }
  return true;
}

/** nice value and scheduling policy of every thread of a process (Linux /proc). */
function threadPriorities(pid: number): { nice: number; policy: number }[] {
  return readdirSync(`/proc/${pid}/task`).map((tid) => {
    const stat = readFileSync(`/proc/${pid}/task/${tid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' '); // fields from the 3rd (state) on
    return { nice: Number(fields[16]), policy: Number(fields[38]) };
  });
}

async function rejection(p: Promise<unknown>): Promise<unknown> {
  try {
    await p;
  } catch (e) {
    return e;
  }
  throw new Error('expected a rejection');
}

t.test('hashes and verifies as the argon2 reference does', async (t) => {
  const hasher = new PasswordHasher({ ...AT_TEST_PRIORITY, isolation: 'processes', workers: 2 });
  t.teardown(() => hasher.close());
  const password = 'Corr3ct-horse-battery-stäple 🐎';
  const hash = await hasher.hash(password);
  t.same(hasher.mode, { kind: 'processes' });
  t.equal(hasher.pids.length, 1, 'one child started for one call');
  const m = PHC.exec(hash);
  t.ok(m, `canonical PHC string: ${hash}`);
  // The same password and salt through the binding in this process: the same 32 bytes.
  const salt = Buffer.from(m![1]!, 'base64');
  const reference = await argon2.hash(password, { ...ARGON2_PARAMETERS, salt, raw: true });
  t.equal(Buffer.from(m![2]!, 'base64').toString('hex'), reference.toString('hex'), 'the raw hash equals the reference computation');
  t.not(await hasher.hash(password), hash, 'a fresh salt each time');

  t.equal(await hasher.verify(hash, password), true);
  t.equal(await hasher.verify(hash, `${password}x`), false);
  const byReference = await argon2.hash('another one', ARGON2_PARAMETERS); // the binding's own (m, p, t) order
  t.equal(await hasher.verify(byReference, 'another one'), true, 'a hash made in process verifies in a child');
  t.equal(await hasher.verify(DUMMY_PASSWORD_HASH, password), false, 'the dummy hash matches nothing');
  t.equal(await hasher.verify('not-a-hash', password), false, 'a malformed hash verifies nothing');
  t.same(await Promise.all([hasher.verify(hash, password), hasher.verify(hash, 'nope'), hasher.verify(hash, password)]), [true, false, true], 'concurrent calls get their own answers');
});

t.test('children run at the configured priority, every thread', { skip: process.platform !== 'linux' && 'needs /proc' }, async (t) => {
  const chrt = spawnSync('chrt', ['--help'], { stdio: 'ignore' }).status === 0;
  for (const [idlePolicy, niceness] of [[true, 19], [false, 12]] as const) {
    const hasher = new PasswordHasher({ isolation: 'processes', workers: 1, niceness, idlePolicy });
    const running = hasher.hash('priority check');
    while (hasher.pids.length === 0) await new Promise((r) => setTimeout(r, 5));
    await running; // started and worked: the pool threads exist now
    const threads = threadPriorities(hasher.pids[0]!);
    t.ok(threads.length > 1, 'several threads (main, V8, libuv pool)');
    t.same(threads.filter((x) => x.nice !== niceness), [], `every thread at nice ${niceness}`);
    const policy = idlePolicy && chrt ? 5 : 0; // SCHED_IDLE : SCHED_OTHER
    t.same(threads.filter((x) => x.policy !== policy), [], `every thread under policy ${policy}`);
    await hasher.close();
  }
});

t.test('a killed child is replaced and its call still answers', async (t) => {
  const hasher = new PasswordHasher({ ...AT_TEST_PRIORITY, isolation: 'processes', workers: 1 });
  t.teardown(() => hasher.close());
  const hash = await hasher.hash('survivor');
  const [first] = hasher.pids;
  // Killed mid-job: the job runs again on a fresh child.
  const pending = hasher.verify(hash, 'survivor');
  await new Promise((r) => setTimeout(r, 30));
  process.kill(first!, 'SIGKILL');
  t.equal(await pending, true, 'the call answered after its child died');
  t.ok(await gone([first!]));
  t.equal(hasher.pids.length, 1);
  t.not(hasher.pids[0], first, 'a new child');
  // Killed while idle: the next call gets a new one.
  const second = hasher.pids[0]!;
  process.kill(second, 'SIGKILL');
  t.ok(await gone([second]));
  t.match(await hasher.hash('after an idle death'), PHC);
  t.notOk(hasher.pids.includes(second));
  t.same(hasher.mode, { kind: 'processes' }, 'deaths after start do not switch to in-process hashing');
});

t.test('a child that dies on every job fails the call cleanly, without the password', async (t) => {
  const hasher = new PasswordHasher({ ...AT_TEST_PRIORITY, isolation: 'processes', workers: 1, childModule: new URL('./fixtures/dying-argon2id-child.js', import.meta.url) });
  t.teardown(() => hasher.close());
  const secret = 'Never-in-an-error-42';
  const e = await rejection(hasher.hash(secret));
  t.ok(isFloeError(e) && e.code === 'SERVICE_UNAVAILABLE' && e.httpStatus === 503, String(e));
  t.notMatch(String((e as Error).message) + String((e as Error).stack), secret, 'the error does not carry the password');
  t.equal(hasher.inFlight, 0, 'the slot was released');
  const again = await rejection(hasher.verify(DUMMY_PASSWORD_HASH, secret));
  t.ok(isFloeError(again), 'and the next call fails the same way, it does not hang');
});

t.test('at most `workers` computations run and at most `maxQueued` wait', async (t) => {
  const hasher = new PasswordHasher({ ...AT_TEST_PRIORITY, isolation: 'processes', workers: 2, maxQueued: 5 });
  t.teardown(() => hasher.close());
  const calls = Array.from({ length: 7 }, (_, i) => hasher.hash(`password ${i}`));
  t.equal(hasher.inFlight, 2);
  t.equal(hasher.queued, 5);
  const refused = await rejection(hasher.hash('one too many'));
  t.ok(isFloeError(refused) && refused.code === 'SERVICE_UNAVAILABLE', 'the 8th call is refused at once');
  let maxInFlight = 0;
  let maxChildren = 0;
  let done = false;
  const all = Promise.all(calls).finally(() => { done = true; });
  while (!done) {
    maxInFlight = Math.max(maxInFlight, hasher.inFlight);
    maxChildren = Math.max(maxChildren, hasher.pids.length);
    await new Promise((r) => setTimeout(r, 2));
  }
  const hashes = await all;
  t.equal(maxInFlight, 2);
  t.equal(maxChildren, 2, 'two children, reused');
  t.equal(new Set(hashes).size, 7);
  for (const [i, h] of hashes.entries()) t.equal(await hasher.verify(h, `password ${i}`), true);
  t.equal(hasher.queued, 0);

  // In process, the same gate.
  const inProcess = new PasswordHasher({ workers: 1, maxQueued: 0 });
  const running = inProcess.hash('x');
  t.ok(isFloeError(await rejection(inProcess.hash('y'))), 'in process too, a full queue refuses');
  t.match(await running, PHC);
  t.same(inProcess.mode, { kind: 'in-process', reason: 'configured' });
  t.same(inProcess.pids, []);
});

t.test('close() ends the children and refuses what is running, queued or later', async (t) => {
  const hasher = new PasswordHasher({ ...AT_TEST_PRIORITY, isolation: 'processes', workers: 1 });
  await hasher.hash('warm up');
  const pids = [...hasher.pids];
  const calls = [hasher.hash('running'), hasher.hash('queued 1'), hasher.hash('queued 2')].map(rejection);
  await new Promise((r) => setTimeout(r, 20));
  await hasher.close();
  t.same(pids.filter(alive), [], 'the child has exited when close() returns');
  for (const e of await Promise.all(calls)) t.ok(isFloeError(e) && e.code === 'SERVICE_UNAVAILABLE', String(e));
  t.ok(isFloeError(await rejection(hasher.verify(DUMMY_PASSWORD_HASH, 'later'))));
  t.same(hasher.pids, []);
});

t.test('no orphans: a parent that never closes exits by itself, a killed parent takes its children along', async (t) => {
  const script = (tail: string): string => `
    import { PasswordHasher } from '${join(dist, 'engine/principals/passwords.js')}';
    const hasher = new PasswordHasher({ isolation: 'processes', workers: 2, niceness: 0 });
    await Promise.all([hasher.hash('a'), hasher.hash('b')]);
    process.stdout.write(JSON.stringify(hasher.pids) + '\\n');
    ${tail}`;
  const run = (tail: string): { pids: Promise<number[]>; exited: Promise<number | null> } => {
    const child = spawn(process.execPath, ['--input-type=module', '-e', script(tail)], { stdio: ['ignore', 'pipe', 'inherit'] });
    let out = '';
    const pids = new Promise<number[]>((resolve) => child.stdout.on('data', (d: Buffer) => {
      out += d.toString();
      if (out.includes('\n')) resolve(JSON.parse(out.split('\n')[0]!) as number[]);
    }));
    const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
    const timer = setTimeout(() => child.kill('SIGKILL'), 30_000);
    void exited.then(() => clearTimeout(timer));
    if (tail.includes('setInterval')) void pids.then(() => child.kill('SIGKILL'));
    return { pids, exited };
  };
  // Idle children hold no reference: the script ends with its last line, without close().
  const quiet = run('');
  const quietPids = await quiet.pids;
  t.equal(quietPids.length, 2);
  t.equal(await quiet.exited, 0, 'the parent exited on its own');
  t.ok(await gone(quietPids), 'and its children with it');
  // A parent killed outright: the IPC channel closes and the children exit.
  const killed = run('setInterval(() => {}, 1000);');
  const killedPids = await killed.pids;
  await killed.exited;
  t.ok(await gone(killedPids), 'children of a killed parent exit');
});

t.test('a pool that cannot start a child hashes in process', async (t) => {
  const hasher = new PasswordHasher({ ...AT_TEST_PRIORITY, isolation: 'processes', workers: 1, childModule: new URL('./fixtures/no-such-child.js', import.meta.url) });
  t.teardown(() => hasher.close());
  const hash = await hasher.hash('fallback');
  t.match(hash, PHC);
  t.equal(await hasher.verify(hash, 'fallback'), true);
  t.equal(hasher.mode.kind, 'in-process');
  t.match(hasher.mode, { reason: /exited before it was ready/ });
  t.same(hasher.pids, []);
});

t.test('sign-in answers 503 with Retry-After when the password queue is full', async (t) => {
  await onEachBackend(t, async (t, store) => {
    const server = await startTestServer(store, {
      keepStore: true,
      config: (c) => ({ ...c, principals: { ...c.principals, background_jobs: false, password_hashing: { ...c.principals.password_hashing, workers: 1, max_queued: 0 } } }),
    });
    t.teardown(() => server.close());
    const admin = await adminAuth(server);
    const password = strongPassword('queue');
    await must(server, admin, `CREATE USER quinn EMAIL='quinn@example.com' PASSWORD '${password}'`);
    const passwords = server.state.principals.passwords;
    t.same(passwords.mode, { kind: 'processes' }, 'the server hashes in child processes');
    const holding = passwords.hash('holds the only slot');
    const r = await server.app.inject({ method: 'POST', url: '/api/auth/sign-in', payload: { username: 'quinn', password } });
    t.equal(r.statusCode, 503);
    t.equal(r.headers['retry-after'], '1');
    t.match(r.json(), { error: 'SERVICE_UNAVAILABLE', sql_state: '08006' });
    t.notMatch(r.body, password);
    await holding;
    t.equal((await signInRequest(server, { username: 'quinn', password })).status, 200, 'with the slot free, the sign-in goes through');
  });
});
