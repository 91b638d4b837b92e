import { randomBytes } from 'node:crypto';

/**
 * Request ids: the caller's `X-Request-Id` when it is a short token, otherwise this process's
 * random prefix and a counter (unique across processes, and cheaper than a UUID per request).
 */
export function requestIdGenerator(): (given: unknown) => string {
  const prefix = randomBytes(6).toString('hex');
  let next = 0;
  return (given) => (typeof given === 'string' && /^[\w.-]{1,64}$/.test(given) ? given : `${prefix}-${(next++).toString(36)}`);
}
