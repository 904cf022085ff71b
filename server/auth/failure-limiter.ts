/**
 * Brute-force protection for the token endpoint: failed client authentications are counted per
 * client id and per client address in a sliding window; past the limit every attempt for that key
 * is refused (even with the right secret) until old failures leave the window. Counts are kept in
 * memory per replica; the limits are per replica too (documented in docs/auth.md).
 */
import type { Clock } from './key-ring.js';

export interface FailureLimit {
  readonly windowMs: number;
  readonly maxFailures: number;
}

/** Upper bound on tracked keys, so that a flood of random client ids cannot exhaust memory. */
const MAX_TRACKED_KEYS = 100_000;

export class FailureLimiter {
  private readonly failures = new Map<string, number[]>();

  constructor(private readonly limit: FailureLimit, private readonly clock: Clock) {}

  /** Seconds until `key` may try again, or 0 when it may try now. */
  retryAfterSeconds(key: string): number {
    const times = this.live(key);
    if (times.length < this.limit.maxFailures) return 0;
    const oldestThatCounts = times[times.length - this.limit.maxFailures]!;
    return Math.max(1, Math.ceil((oldestThatCounts + this.limit.windowMs - this.clock.now()) / 1000));
  }

  recordFailure(key: string): void {
    const times = this.live(key);
    times.push(this.clock.now());
    // Only the newest maxFailures timestamps decide; keep the list bounded.
    if (times.length > this.limit.maxFailures) times.splice(0, times.length - this.limit.maxFailures);
    this.failures.delete(key);
    this.failures.set(key, times);
    if (this.failures.size > MAX_TRACKED_KEYS) {
      const oldest = this.failures.keys().next().value;
      if (oldest !== undefined) this.failures.delete(oldest);
    }
  }

  /** A success does not erase failures: a guesser that also holds one valid secret gains nothing. */
  private live(key: string): number[] {
    const times = this.failures.get(key);
    if (!times) return [];
    const cutoff = this.clock.now() - this.limit.windowMs;
    const kept = times.filter((t) => t > cutoff);
    if (kept.length === 0) this.failures.delete(key);
    else this.failures.set(key, kept);
    return kept;
  }
}
