import { randomUUID } from 'node:crypto';
import { HeraldApiError, HeraldNetworkError } from '@herald/sdk';

/**
 * A key for a send the user gave none for: `cli_` and a random UUID (40 characters; the gateway
 * allows 255). The SDK retries a POST after a 5xx, a timeout or a reset connection only when it
 * carries a key, and with one a retry of a send that was in fact stored answers `duplicate` with
 * the first id instead of sending twice. The key is new on every run, so running the same command
 * twice still sends twice, as it did without a key.
 */
export function newIdempotencyKey(): string {
  return `cli_${randomUUID()}`;
}

/** A failure together with the idempotency key that makes running the command again safe. */
export interface KeyedFailure {
  retryIdempotencyKey: string;
  /** What running again with the key does, for people; the send wording when absent. */
  retryNote?: string;
}

/**
 * Marks a failure with the key to run the command again with: the --json error carries it as
 * `idempotencyKey`, and people are told it. Without it, a script that repeats a send whose answer
 * was lost (exit 6) would send a second message, since the key the CLI generated is gone.
 */
export function withRetryKey(error: unknown, key: string, retryNote?: string): unknown {
  if (error !== null && typeof error === 'object') Object.assign(error, { retryIdempotencyKey: key, ...(retryNote ? { retryNote } : {}) } satisfies KeyedFailure);
  return error;
}

/** The note for people on a failure that names a key. */
export function retryNoteOf(error: unknown): string {
  const key = retryKeyOf(error);
  const note = (error as Partial<KeyedFailure> | null)?.retryNote;
  return `Re-running with --idempotency-key ${key} ${note ?? 'sends only what is missing'}.`;
}

export function retryKeyOf(error: unknown): string | undefined {
  const key = (error as Partial<KeyedFailure> | null)?.retryIdempotencyKey;
  return typeof key === 'string' ? key : undefined;
}

/** Whether a failed call may nonetheless have taken effect: no answer came, or a 5xx did. */
export const outcomeUnknown = (error: unknown) => error instanceof HeraldNetworkError || (error instanceof HeraldApiError && error.statusCode >= 500);

/** The --idempotency-key option's help for the calls that create something. */
export const CREATE_KEY_HELP =
  'repeating the command with the same key and message answers with the first result and creates nothing more; default: a new cli_<uuid> per run, so retries are safe';
