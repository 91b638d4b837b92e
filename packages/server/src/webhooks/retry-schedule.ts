const SECOND = 1000;
const MINUTE = 60 * SECOND;
const HOUR = 60 * MINUTE;

/**
 * Wait before each attempt of a webhook delivery: the first is immediate, then 5 s, 5 min, 30 min,
 * 2 h, 5 h, 10 h and 10 h after the previous failure; eight attempts over about 27.6 hours.
 */
export const RETRY_DELAYS_MS: readonly number[] = [0, 5 * SECOND, 5 * MINUTE, 30 * MINUTE, 2 * HOUR, 5 * HOUR, 10 * HOUR, 10 * HOUR];

export const MAX_ATTEMPTS = RETRY_DELAYS_MS.length;

/** An endpoint whose every attempt failed for this long is set inactive. */
export const FAILING_ENDPOINT_LIMIT_MS = 5 * 24 * HOUR;

/**
 * When the next attempt is due after `attemptsMade` attempts, the last of which failed at
 * `failedAt`; null when the schedule is used up and the delivery has failed for good.
 */
export function nextAttemptAt(attemptsMade: number, failedAt: Date): Date | null {
  if (!Number.isInteger(attemptsMade) || attemptsMade < 1) throw new RangeError(`attemptsMade must be a whole number >= 1, got ${attemptsMade}`);
  if (attemptsMade >= MAX_ATTEMPTS) return null;
  return new Date(failedAt.getTime() + RETRY_DELAYS_MS[attemptsMade]);
}

/** True when an endpoint failing since `failingSince` has failed long enough to be set inactive. */
export function failedTooLong(failingSince: Date | null, now: Date): boolean {
  return failingSince !== null && now.getTime() - failingSince.getTime() >= FAILING_ENDPOINT_LIMIT_MS;
}
