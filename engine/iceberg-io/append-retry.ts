/**
 * How an append whose commit lost a race is retried (SQL INSERT and COPY INTO re-base it on the
 * snapshot committed meanwhile): up to 60 attempts within a minute, waiting between them a random
 * time up to 10 ms × 2^attempt, capped at 1 s (full-jitter exponential backoff, as Iceberg's Java
 * client backs off from 100 ms doubling). With many writers on one table (two replicas, 16
 * writers, each re-base writing a new manifest list to object storage) waits of a few ms let the
 * same writers collide again and again, and one ran out of 20 quick attempts in under a second.
 *
 * Pure but for the random draw, which the caller may pass.
 */
const MAX_APPEND_ATTEMPTS = 60;
const MAX_APPEND_RETRY_MS = 60_000;
const APPEND_BACKOFF_BASE_MS = 10;
const APPEND_BACKOFF_CAP_MS = 1000;

/**
 * The wait before attempt `attempt + 1` of an append first tried at `startedAtMs`, or undefined
 * when it should give up (COMMIT_CONFLICT).
 */
export function appendRetryDelayMs(attempt: number, startedAtMs: number, nowMs: number, random: () => number = Math.random): number | undefined {
  if (attempt >= MAX_APPEND_ATTEMPTS || nowMs - startedAtMs >= MAX_APPEND_RETRY_MS) return undefined;
  return random() * Math.min(APPEND_BACKOFF_CAP_MS, APPEND_BACKOFF_BASE_MS * 2 ** Math.min(attempt, 16));
}
