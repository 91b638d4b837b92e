/**
 * When to try a transient failure again: exponential backoff from `baseMs`, doubling per attempt,
 * with ±20 % jitter so a provider outage does not release every retry at once, and never more than
 * `maxMs`: near the cap the jitter's upper end is the cap, so capped retries still spread out.
 * With the defaults (8 attempts, 30 s base) the retries span about an hour:
 * 30 s, 1 m, 2 m, 4 m, 8 m, 16 m, 32 m.
 */
export interface RetryPolicy {
  maxAttempts: number;
  baseMs: number;
  maxMs: number;
}

export const DEFAULT_RETRY_POLICY: RetryPolicy = { maxAttempts: 8, baseMs: 30_000, maxMs: 60 * 60_000 };

/** Delay before the next attempt after `attempt` attempts failed; `random` in [0, 1). */
export function retryDelayMs(policy: RetryPolicy, attempt: number, random: number = Math.random()): number {
  const exponential = Math.min(policy.maxMs, policy.baseMs * 2 ** Math.max(0, attempt - 1));
  const low = exponential * 0.8;
  const high = Math.min(policy.maxMs, exponential * 1.2);
  return Math.round(low + random * (high - low));
}

/** The next attempt's time, or null when `attempt` was the last one allowed. */
export function nextAttemptAt(policy: RetryPolicy, attempt: number, now: Date, retryAfterMs?: number, random?: number): Date | null {
  if (attempt >= policy.maxAttempts) return null;
  const delay = Math.max(retryAfterMs ?? 0, retryDelayMs(policy, attempt, random));
  return new Date(now.getTime() + delay);
}
