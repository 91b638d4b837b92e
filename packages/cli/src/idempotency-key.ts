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
