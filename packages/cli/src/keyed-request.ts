import { IDEMPOTENCY_KEY_HEADER } from '@herald/sdk';
import { usageError } from './exit-codes.js';
import { newIdempotencyKey, outcomeUnknown, withRetryKey } from './idempotency-key.js';
import { interruption } from './interruption.js';

/**
 * Sends a request that carries an idempotency key, so that running the command again with the key
 * does nothing twice, however the request ends: a failure whose outcome is unknown (no answer, or
 * a 5xx) names the key, and so does Ctrl-C while the request is in flight, since it may have
 * reached the gateway. `retryNote` says what running again with the key does.
 */
export async function sendKeyed<T>(key: string, retryNote: string, send: () => Promise<T>, what = 'the request'): Promise<T> {
  interruption.record({ message: `${what} may have reached the gateway`, retry: { idempotencyKey: key, note: retryNote } });
  try {
    return await send();
  } catch (error) {
    throw outcomeUnknown(error) ? withRetryKey(error, key, retryNote) : error;
  } finally {
    interruption.record(undefined);
  }
}

/**
 * Runs a call that creates something (a broadcast, a schedule, a template or a version) with the
 * Idempotency-Key given by the user, or with one generated for this run (so the SDK's retries of a
 * lost answer create nothing twice), through sendKeyed. The key goes in a header, so it must be
 * printable ASCII.
 */
export async function withCreationKey<T>(givenKey: string | undefined, create: (key: string) => Promise<T>, retryNote = 'does not create it twice'): Promise<T> {
  if (givenKey !== undefined && !IDEMPOTENCY_KEY_HEADER.test(givenKey)) {
    throw usageError('--idempotency-key must be 1 to 255 printable ASCII characters (letters, digits, punctuation, inner spaces)');
  }
  const key = givenKey ?? newIdempotencyKey();
  return sendKeyed(key, retryNote, () => create(key));
}
