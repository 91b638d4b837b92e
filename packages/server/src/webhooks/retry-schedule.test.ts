import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { failedTooLong, MAX_ATTEMPTS, nextAttemptAt, RETRY_DELAYS_MS } from './retry-schedule.js';

const t0 = new Date('2026-03-01T12:00:00.000Z');
const plus = (ms: number) => new Date(t0.getTime() + ms);

describe('webhook retry schedule', () => {
  it('is immediately, 5 s, 5 min, 30 min, 2 h, 5 h, 10 h, 10 h', () => {
    assert.deepEqual(RETRY_DELAYS_MS, [0, 5_000, 300_000, 1_800_000, 7_200_000, 18_000_000, 36_000_000, 36_000_000]);
    assert.equal(MAX_ATTEMPTS, 8);
  });

  it('gives the wait after each failed attempt', () => {
    const waits = [1, 2, 3, 4, 5, 6, 7].map((n) => nextAttemptAt(n, t0)!.getTime() - t0.getTime());
    assert.deepEqual(waits, [5_000, 300_000, 1_800_000, 7_200_000, 18_000_000, 36_000_000, 36_000_000]);
  });

  it('stops after the eighth attempt', () => {
    assert.equal(nextAttemptAt(8, t0), null);
    assert.equal(nextAttemptAt(9, t0), null);
  });

  it('spans about 27.6 hours from the first attempt to the last', () => {
    let at = t0;
    for (let n = 1; n < MAX_ATTEMPTS; n++) at = nextAttemptAt(n, at)!;
    assert.equal(at.getTime() - t0.getTime(), 5_000 + 300_000 + 1_800_000 + 7_200_000 + 18_000_000 + 36_000_000 * 2);
  });

  it('refuses an attempt count that is not a positive whole number', () => {
    for (const bad of [0, -1, 1.5, Number.NaN]) assert.throws(() => nextAttemptAt(bad, t0), RangeError);
  });

  it('deactivates an endpoint after exactly five days of failures', () => {
    assert.equal(failedTooLong(null, plus(10 * 86_400_000)), false);
    assert.equal(failedTooLong(t0, plus(5 * 86_400_000 - 1)), false);
    assert.equal(failedTooLong(t0, plus(5 * 86_400_000)), true);
  });
});
