/**
 * Time for the workload manager, injected: the server passes `systemClock()`, tests and the
 * simulation pass a `VirtualClock` and move time by hand (no real timers in pure tests).
 */

export interface TimerHandle {
  readonly id: number;
}

export interface WlmClock {
  /** Milliseconds since some fixed origin. */
  now(): number;
  /** Calls `fn` once, `ms` from now. */
  setTimer(ms: number, fn: () => void): TimerHandle;
  clearTimer(handle: TimerHandle): void;
}

/** Wall-clock time and Node timers (unref'd: a pending timeout never keeps the process alive). */
export function systemClock(): WlmClock {
  let next = 0;
  const timers = new Map<number, NodeJS.Timeout>();
  return {
    now: () => performance.timeOrigin + performance.now(),
    setTimer(ms, fn) {
      const id = ++next;
      const t = setTimeout(() => {
        timers.delete(id);
        fn();
      }, Math.max(0, ms));
      t.unref();
      timers.set(id, t);
      return { id };
    },
    clearTimer(h) {
      const t = timers.get(h.id);
      if (t) clearTimeout(t);
      timers.delete(h.id);
    },
  };
}

/** Time that moves only when told. Timers fire in due order (ties in creation order) during `advance`. */
export class VirtualClock implements WlmClock {
  private current: number;
  private next = 0;
  private readonly timers = new Map<number, { at: number; fn: () => void }>();

  constructor(start = 0) {
    this.current = start;
  }

  now(): number {
    return this.current;
  }

  setTimer(ms: number, fn: () => void): TimerHandle {
    const id = ++this.next;
    this.timers.set(id, { at: this.current + Math.max(0, ms), fn });
    return { id };
  }

  clearTimer(h: TimerHandle): void {
    this.timers.delete(h.id);
  }

  /** Pending timers (for tests). */
  get pending(): number {
    return this.timers.size;
  }

  /** Moves time forward by `ms`, firing every timer that falls due, each at its own time. */
  advance(ms: number): void {
    const end = this.current + ms;
    for (;;) {
      let dueId = -1;
      let due: { at: number; fn: () => void } | undefined;
      for (const [id, t] of this.timers) {
        if (t.at <= end && (due === undefined || t.at < due.at || (t.at === due.at && id < dueId))) {
          due = t;
          dueId = id;
        }
      }
      if (!due) break;
      this.timers.delete(dueId);
      this.current = Math.max(this.current, due.at);
      due.fn();
    }
    this.current = end;
  }
}
