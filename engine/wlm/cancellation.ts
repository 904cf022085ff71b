/**
 * A statement's cancellation from outside (the client went away, a user cancelled it), as the
 * session and the workload manager see it.
 *
 * Not an `AbortSignal`: Node 20 takes about 5 µs to make one and as long again to add and remove a
 * listener, and every statement carries a cancellation that almost none use. Measured under 32
 * clients of `SELECT 1` (docs/performance.md), the signal made per request and the listener the
 * workload manager put on it cost a tenth of the server's throughput. A `CancellationSource` is a
 * flag and a short list of callbacks; it makes a real `AbortSignal` only when something that takes
 * one (a DuckDB fragment's interrupt) asks for it.
 */
export interface Cancellation {
  readonly aborted: boolean;
  /**
   * Calls `listener` once when the cancellation happens (never if it already has: check `aborted`
   * first, as with an AbortSignal). Returns the function that removes it.
   */
  onAbort(listener: () => void): () => void;
  /** The same cancellation as an `AbortSignal` (made on first read, aborted if already cancelled). */
  readonly signal: AbortSignal;
}

export class CancellationSource implements Cancellation {
  #aborted = false;
  #listeners: (() => void)[] = [];
  #controller: AbortController | null = null;

  get aborted(): boolean {
    return this.#aborted;
  }

  onAbort(listener: () => void): () => void {
    if (this.#aborted) return noop;
    // A fresh wrapper per registration, so removing one registration never removes another.
    const entry = (): void => listener();
    this.#listeners.push(entry);
    return () => {
      const at = this.#listeners.indexOf(entry);
      if (at >= 0) this.#listeners.splice(at, 1);
    };
  }

  get signal(): AbortSignal {
    if (this.#controller === null) {
      this.#controller = new AbortController();
      if (this.#aborted) this.#controller.abort();
    }
    return this.#controller.signal;
  }

  /**
   * Cancels: every listener is called once, in the order added, and the signal (if made) aborts;
   * later calls do nothing. A listener that throws does not stop the others; the first error is
   * thrown once all have run.
   */
  abort(): void {
    if (this.#aborted) return;
    this.#aborted = true;
    const listeners = this.#listeners;
    this.#listeners = [];
    let failure: { readonly error: unknown } | undefined;
    for (const listener of listeners) {
      try {
        listener();
      } catch (error) {
        failure ??= { error };
      }
    }
    this.#controller?.abort();
    if (failure) throw failure.error;
  }
}

function noop(): void {}
