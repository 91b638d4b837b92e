import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { DEFAULT_RETRY_POLICY, nextAttemptAt, retryDelayMs } from './retry-policy.js';

describe('retry policy', () => {
  it('doubles from the base delay', () => {
    const mid = 0.5; // jitter factor exactly 1
    assert.deepEqual(
      [1, 2, 3, 4, 5, 6, 7].map((a) => retryDelayMs(DEFAULT_RETRY_POLICY, a, mid)),
      [30_000, 60_000, 120_000, 240_000, 480_000, 960_000, 1_920_000],
    );
  });

  it('spans about an hour over the default attempts', () => {
    const total = [1, 2, 3, 4, 5, 6, 7].reduce((sum, a) => sum + retryDelayMs(DEFAULT_RETRY_POLICY, a, 0.5), 0);
    assert.ok(total > 55 * 60_000 && total < 70 * 60_000, `${total}`);
  });

  it('jitters within ±20 %', () => {
    assert.equal(retryDelayMs(DEFAULT_RETRY_POLICY, 1, 0), 24_000);
    assert.equal(retryDelayMs(DEFAULT_RETRY_POLICY, 1, 0.999999), 36_000);
  });

  it('caps the delay', () => {
    assert.equal(retryDelayMs({ maxAttempts: 50, baseMs: 1000, maxMs: 5000 }, 30, 0.5), 5000);
  });

  it('stops after the last attempt and honours a provider retry-after', () => {
    const now = new Date('2026-01-01T00:00:00Z');
    assert.equal(nextAttemptAt(DEFAULT_RETRY_POLICY, 8, now), null);
    assert.equal(nextAttemptAt(DEFAULT_RETRY_POLICY, 1, now, 90_000, 0.5)!.getTime(), now.getTime() + 90_000);
    assert.equal(nextAttemptAt(DEFAULT_RETRY_POLICY, 1, now, 1_000, 0.5)!.getTime(), now.getTime() + 30_000);
  });
});
