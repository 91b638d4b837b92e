import { createHash, timingSafeEqual } from 'node:crypto';

/**
 * Compares two secrets of any length in constant time: hashing first gives equal lengths, so the
 * comparison leaks neither content nor length.
 */
export function sameSecret(given: string, expected: string): boolean {
  return timingSafeEqual(createHash('sha256').update(given).digest(), createHash('sha256').update(expected).digest());
}
