/**
 * Argon2id in child processes of lowered priority. One hash keeps a core busy for ~0.1-0.3 s; on
 * libuv's thread pool it competes with query execution (the event loop, the DuckDB workers) as an
 * equal. A child runs at niceness 19 (CFS weight 15 against a query thread's 1024) and, with
 * `idlePolicy`, under SCHED_IDLE, where a waking query thread preempts it at once: sign-in bursts
 * use the CPU that queries leave idle, and wait while queries keep every core busy.
 *
 * The pool holds at most `size` children, each running one job at a time (the caller, the
 * PasswordHasher gate, keeps at most `size` jobs in flight). Children start on first use and stay.
 * - A child that dies mid-job is replaced and the job runs once more on a fresh child (hashing and
 *   verifying are idempotent); a second death fails the call with SERVICE_UNAVAILABLE.
 * - A child that cannot start (fork refused, binding missing: it exits or errs before `ready`)
 *   switches the pool to in-process hashing for good: slower for queries, never unavailable. A
 *   child that starts slowly (its CPU taken by queries) is waited for, not given up on.
 * - `close()` ends every child and waits for their exit; idle children hold no reference on the
 *   event loop, and a child exits by itself when its parent dies (the IPC channel closes).
 */
import { fork, type ChildProcess } from 'node:child_process';
import { floeError } from '../../grammar/errors.js';
import { runArgon2idJob, type Argon2idJob } from './argon2id.js';
import type { ChildReply, ChildRequest } from './argon2id-child.js';

const CHILD_MODULE = new URL('./argon2id-child.js', import.meta.url);
/** After SIGTERM, how long `close()` waits before SIGKILL. */
const EXIT_TIMEOUT_MS = 5_000;
/** Runs of a job: the first, and one more on a fresh child if its child died. */
const MAX_ATTEMPTS = 2;

export interface Argon2idPoolOptions {
  /** Children at most (= jobs at once). */
  readonly size: number;
  /** Nice value of the children, 0 (as the server) to 19 (only idle CPU). */
  readonly niceness: number;
  /** Also SCHED_IDLE where the kernel and chrt allow it. */
  readonly idlePolicy?: boolean;
  /** Tests: the child module to fork (a stand-in that fails to start or dies). */
  readonly childModule?: URL;
}

/** How the pool runs jobs now. */
export type Argon2idPoolMode =
  | { readonly kind: 'processes' }
  | { readonly kind: 'in-process'; readonly reason: string };

interface Running {
  readonly id: number;
  resolve(value: string | boolean): void;
  /** The child died or could not run the job. */
  reject(died: boolean): void;
}

interface Child {
  readonly process: ChildProcess;
  readonly ready: Promise<void>;
  readonly exited: Promise<void>;
  /** Taken by a call (from before it is ready until its job is answered). */
  claimed: boolean;
  running: Running | undefined;
  dead: boolean;
}

export class Argon2idProcessPool {
  private readonly children: Child[] = [];
  private nextId = 1;
  private closed = false;
  private fallback: string | undefined;
  readonly size: number;
  readonly niceness: number;
  readonly idlePolicy: boolean;
  private readonly childModule: URL;

  constructor(options: Argon2idPoolOptions) {
    this.size = Math.max(1, options.size);
    this.niceness = options.niceness;
    this.idlePolicy = options.idlePolicy ?? false;
    this.childModule = options.childModule ?? CHILD_MODULE;
  }

  get mode(): Argon2idPoolMode {
    return this.fallback === undefined ? { kind: 'processes' } : { kind: 'in-process', reason: this.fallback };
  }

  /** Process ids of the live children (tests, diagnostics). */
  get pids(): readonly number[] {
    return this.children.filter((c) => !c.dead && c.process.pid !== undefined).map((c) => c.process.pid!);
  }

  async run(job: Argon2idJob): Promise<string | boolean> {
    for (let attempt = 1; ; attempt++) {
      if (this.closed) throw unavailable('the server is shutting down');
      const child = this.fallback === undefined ? this.idleChild() : undefined;
      if (child === undefined) return runArgon2idJob(job); // fell back to in-process hashing
      child.claimed = true;
      try {
        await child.ready;
      } catch {
        continue; // it could not start (and is gone): the pool fell back or closed, the loop takes it from there
      }
      try {
        return await this.send(child, job);
      } catch (e) {
        if (!(e instanceof ChildDied)) throw e;
        if (this.closed) throw unavailable('the server is shutting down');
        if (attempt >= MAX_ATTEMPTS) throw unavailable('password hashing failed; retry');
      } finally {
        child.claimed = false;
      }
    }
  }

  /** Ends every child and waits until each has exited; later calls fail with SERVICE_UNAVAILABLE. */
  async close(): Promise<void> {
    this.closed = true;
    await Promise.all(this.children.map((c) => this.stop(c)));
  }

  /** An idle child, or a new one; undefined when none can be forked (the pool has fallen back). */
  private idleChild(): Child | undefined {
    const idle = this.children.find((c) => !c.dead && !c.claimed);
    if (idle) return idle;
    // The PasswordHasher gate keeps jobs ≤ size, so there is room unless a caller bypasses it.
    if (this.children.length >= this.size) throw new Error(`Argon2idProcessPool: more than ${this.size} jobs at once`);
    return this.spawn();
  }

  private spawn(): Child | undefined {
    let proc: ChildProcess;
    try {
      proc = fork(this.childModule, [String(this.niceness), this.idlePolicy ? 'idle' : 'normal'], {
        // No inherited flags (a test runner's loaders) and no environment but PATH (to find chrt).
        execArgv: [], env: { UV_THREADPOOL_SIZE: '1', ...(process.env.PATH ? { PATH: process.env.PATH } : {}) },
        // Nothing of the child reaches the server's output: a job's password must never be printed.
        stdio: ['ignore', 'ignore', 'ignore', 'ipc'], serialization: 'json',
      });
    } catch (e) {
      this.fallBack(`cannot fork a hashing process: ${(e as Error).message}`);
      return undefined;
    }
    let child!: Child;
    let started = false;
    let onReady!: () => void;
    let rejectReady!: (e: Error) => void;
    let onExit!: () => void;
    const ready = new Promise<void>((resolve, reject) => {
      onReady = resolve;
      rejectReady = reject;
    });
    const exited = new Promise<void>((resolve) => { onExit = resolve; });
    /** Gone (exited, never started, or killed): out of the pool, its job (if any) failed as died. */
    const markDead = (): void => {
      if (child.dead) return;
      child.dead = true;
      const i = this.children.indexOf(child);
      if (i >= 0) this.children.splice(i, 1);
      rejectReady(new Error('the hashing process is gone'));
      const running = child.running;
      child.running = undefined;
      running?.reject(true);
    };
    const failStart = (reason: string): void => {
      if (!started && !this.closed) this.fallBack(reason);
      markDead();
    };
    ready.catch(() => undefined);
    proc.once('exit', (code, signal) => {
      failStart(`a hashing process exited before it was ready (${signal ?? `code ${code}`})`);
      onExit();
    });
    proc.on('error', (e) => {
      // Spawn failures arrive here, maybe with no 'exit' after; later errors (a send to a dead child) precede 'exit'.
      if (started) return;
      failStart(`cannot start a hashing process: ${e.message}`);
      onExit();
    });
    proc.on('message', (reply: ChildReply) => {
      switch (reply.kind) {
        case 'ready':
          started = true;
          onReady();
          if (child.running === undefined) this.hold(child, false);
          return;
        case 'done':
        case 'failed': {
          const running = child.running;
          if (!running || running.id !== reply.id) return;
          child.running = undefined;
          this.hold(child, false);
          if (reply.kind === 'done') running.resolve(reply.value);
          else running.reject(false);
          return;
        }
      }
    });
    child = { process: proc, ready, exited, claimed: false, running: undefined, dead: false };
    this.children.push(child);
    this.hold(child, true); // until ready: a caller waits on it
    return child;
  }

  private send(child: Child, job: Argon2idJob): Promise<string | boolean> {
    return new Promise<string | boolean>((resolve, reject) => {
      if (child.dead) {
        reject(new ChildDied());
        return;
      }
      const id = this.nextId++;
      child.running = {
        id, resolve,
        reject: (died) => reject(died ? new ChildDied() : unavailable('password hashing failed')),
      };
      this.hold(child, true);
      const request: ChildRequest = { id, job };
      child.process.send(request, (e) => {
        // The channel broke: 'exit' follows and rejects the job as died.
        if (e) child.process.kill('SIGKILL');
      });
    });
  }

  /** A child keeps the server's event loop alive only while a caller waits on it. */
  private hold(child: Child, busy: boolean): void {
    if (child.dead) return;
    if (busy) {
      child.process.ref();
      child.process.channel?.ref();
    } else {
      child.process.unref();
      child.process.channel?.unref();
    }
  }

  private fallBack(reason: string): void {
    this.fallback ??= reason;
  }

  private async stop(child: Child): Promise<void> {
    if (child.dead) return child.exited;
    this.hold(child, true); // let the exit be observed
    child.process.kill('SIGTERM');
    const timer = setTimeout(() => child.process.kill('SIGKILL'), EXIT_TIMEOUT_MS);
    await child.exited;
    clearTimeout(timer);
  }
}

class ChildDied extends Error {
  constructor() {
    super('the hashing process died');
  }
}

function unavailable(detail: string): Error {
  return floeError('SERVICE_UNAVAILABLE', { detail });
}
