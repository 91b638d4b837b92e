import type { NetworkErrorKind } from './errors.js';

/** First backoff step; each retry doubles it up to MAX_BACKOFF_MS. */
export const BASE_BACKOFF_MS = 500;
export const MAX_BACKOFF_MS = 8_000;
/** A Retry-After longer than this is not waited out: the error goes to the caller instead. */
export const MAX_RETRY_AFTER_MS = 60_000;

const IDEMPOTENT_METHODS = new Set(['GET', 'HEAD', 'OPTIONS', 'PUT', 'DELETE']);

/** What the last attempt produced, as far as the retry decision cares. */
export type AttemptOutcome = { status: number } | { network: NetworkErrorKind };

/**
 * Whether an outcome is worth another attempt. A 429 and a refused connection or failed DNS look-up
 * never reached a handler, so any call may repeat them. A 5xx, a timeout or a reset connection may
 * have done the work already: those repeat only when repeating is harmless (an idempotent method,
 * or a body whose idempotency keys let the gateway recognise the repeat).
 */
export function isRetryable(outcome: AttemptOutcome, method: string, retrySafe: boolean): boolean {
  const safe = retrySafe || IDEMPOTENT_METHODS.has(method.toUpperCase());
  if ('status' in outcome) {
    if (outcome.status === 429) return true;
    return outcome.status >= 500 && safe;
  }
  if (outcome.network === 'connection_refused' || outcome.network === 'dns') return true;
  // Whatever answered instead of the gateway would answer the same again.
  if (outcome.network === 'invalid_response') return false;
  return safe;
}

/** Parses Retry-After (delta seconds or an HTTP date) into milliseconds from `now`. */
export function parseRetryAfter(value: string | null | undefined, now: number): number | undefined {
  if (!value) return undefined;
  const trimmed = value.trim();
  if (/^\d+(\.\d+)?$/.test(trimmed)) return Math.round(Number(trimmed) * 1000);
  // Only an HTTP date has letters; Date.parse would read '-3' as a year.
  if (!/[a-z]/i.test(trimmed)) return undefined;
  const at = Date.parse(trimmed);
  return Number.isNaN(at) ? undefined : Math.max(0, at - now);
}

/**
 * How long to wait before retry number `retry` (0 for the first retry). A server's Retry-After is
 * honoured, with up to 10% added so many clients told the same second do not return in step;
 * otherwise exponential backoff with equal jitter (half fixed, half random).
 * Returns undefined when the server asks for a wait too long to sit through.
 */
export function retryDelay(retry: number, retryAfterMs: number | undefined, random: () => number): number | undefined {
  if (retryAfterMs !== undefined) {
    if (retryAfterMs > MAX_RETRY_AFTER_MS) return undefined;
    return Math.round(retryAfterMs * (1 + 0.1 * random()));
  }
  const ceiling = Math.min(MAX_BACKOFF_MS, BASE_BACKOFF_MS * 2 ** retry);
  return Math.round(ceiling / 2 + (ceiling / 2) * random());
}
