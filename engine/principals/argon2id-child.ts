/**
 * A password-hashing child process (forked by Argon2idProcessPool, never imported). It lowers the
 * priority of every one of its threads first, so the kernel hands the CPU to query execution
 * whenever a query thread wants it, then runs one Argon2id job at a time as the parent asks.
 *
 * Protocol (IPC, JSON): the child sends `{kind: 'ready', niceness}` once, then answers each
 * `{id, job}` with `{kind: 'done', id, value}` or `{kind: 'failed', id}`. A failure carries no
 * message: nothing about a job (a password) may leave the child except its result. The child exits
 * when the parent goes away (the IPC channel closes), so it never outlives the server.
 */
import { spawnSync } from 'node:child_process';
import { readdirSync } from 'node:fs';
import { getPriority, setPriority } from 'node:os';
import type { Argon2idJob } from './argon2id.js';

/** A request from the pool. */
export interface ChildRequest {
  readonly id: number;
  readonly job: Argon2idJob;
}

/** A message to the pool. */
export type ChildReply =
  | { readonly kind: 'ready'; readonly niceness: number; readonly idlePolicy: boolean }
  | { readonly kind: 'done'; readonly id: number; readonly value: string | boolean }
  | { readonly kind: 'failed'; readonly id: number };

/**
 * Linux keeps a nice value per thread, and setpriority(pid) changes only the main thread: every
 * thread that exists now is lowered one by one (libuv's pool threads, which run Argon2id, are
 * created later by the main thread and inherit its value). Elsewhere it applies to the process.
 */
function lowerPriority(niceness: number): number {
  let threads: string[] = [];
  try {
    threads = readdirSync('/proc/self/task');
  } catch {
    // not Linux: the process-wide call below is enough
  }
  for (const tid of threads) {
    try {
      setPriority(Number(tid), niceness);
    } catch {
      // a thread that exited meanwhile
    }
  }
  setPriority(niceness);
  return getPriority();
}

/**
 * SCHED_IDLE (Linux, through util-linux's chrt): the kernel preempts an idle-policy thread as soon
 * as any normal thread wakes on its CPU, and counts a CPU running only such threads as idle when
 * placing a waking thread. Nice 19 only shrinks the share. Any user may lower itself to it.
 */
function useIdlePolicy(): boolean {
  const r = spawnSync('chrt', ['--idle', '--all-tasks', '--pid', '0', String(process.pid)], { stdio: 'ignore', timeout: 5000 });
  return r.status === 0;
}

function send(reply: ChildReply): void {
  process.send?.(reply);
}

const requested = Number(process.argv[2] ?? 0);
const niceness = lowerPriority(Number.isInteger(requested) && requested >= 0 && requested <= 19 ? requested : 0);
const idlePolicy = process.argv[3] === 'idle' && useIdlePolicy();
// Loaded only now, so that loading the binding already runs at the lowered priority.
const { runArgon2idJob } = await import('./argon2id.js');

process.on('message', (message: ChildRequest) => {
  runArgon2idJob(message.job).then(
    (value) => send({ kind: 'done', id: message.id, value }),
    () => send({ kind: 'failed', id: message.id }),
  );
});
// Ctrl-C reaches the whole process group: the server's shutdown ends its children itself.
process.on('SIGINT', () => undefined);
// The parent closed the channel (it closed the pool, or it died): nothing more will come.
process.on('disconnect', () => process.exit(0));
send({ kind: 'ready', niceness, idlePolicy });
