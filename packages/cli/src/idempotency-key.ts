import { randomUUID } from 'node:crypto';

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
}

/**
 * Marks a failure with the key to run the command again with: the --json error carries it as
 * `idempotencyKey`, and people are told it. Without it, a script that repeats a send whose answer
 * was lost (exit 6) would send a second message, since the key the CLI generated is gone.
 */
export function withRetryKey(error: unknown, key: string): unknown {
  if (error !== null && typeof error === 'object') Object.assign(error, { retryIdempotencyKey: key } satisfies KeyedFailure);
  return error;
}

export function retryKeyOf(error: unknown): string | undefined {
  const key = (error as Partial<KeyedFailure> | null)?.retryIdempotencyKey;
  return typeof key === 'string' ? key : undefined;
}
