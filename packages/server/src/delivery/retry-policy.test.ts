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

  it('caps the delay, jitter included, and still spreads capped delays', () => {
    const policy = { maxAttempts: 50, baseMs: 1000, maxMs: 5000 };
    assert.equal(retryDelayMs(policy, 30, 0), 4000);
    assert.equal(retryDelayMs(policy, 30, 0.999999), 5000);
    assert.equal(retryDelayMs(policy, 30, 0.5), 4500);
    // Just under the cap (4.4 s): from 3.52 s up to the cap, not to 5.28 s.
    assert.equal(retryDelayMs({ ...policy, baseMs: 1100 }, 3, 0), 3520);
    assert.equal(retryDelayMs({ ...policy, baseMs: 1100 }, 3, 0.999999), 5000);
  });

  it('never exceeds the cap over many draws, for any attempt', () => {
    // The receipts' policy: capped at 10 minutes.
    const policy = { maxAttempts: 50, baseMs: 10_000, maxMs: 600_000 };
    for (let attempt = 1; attempt <= 12; attempt++) {
      const uncapped = policy.baseMs * 2 ** (attempt - 1);
      for (let i = 0; i < 2000; i++) {
        const delay = retryDelayMs(policy, attempt);
        assert.ok(delay <= policy.maxMs, `attempt ${attempt}: ${delay} ms`);
        assert.ok(delay >= Math.round(0.8 * Math.min(uncapped, policy.maxMs)), `attempt ${attempt}: ${delay} ms`);
      }
      assert.ok(nextAttemptAt(policy, attempt, new Date(0), undefined, 0.999999)!.getTime() <= policy.maxMs);
    }
  });

  it('stops after the last attempt and honours a provider retry-after', () => {
    const now = new Date('2026-01-01T00:00:00Z');
    assert.equal(nextAttemptAt(DEFAULT_RETRY_POLICY, 8, now), null);
    assert.equal(nextAttemptAt(DEFAULT_RETRY_POLICY, 1, now, 90_000, 0.5)!.getTime(), now.getTime() + 90_000);
    assert.equal(nextAttemptAt(DEFAULT_RETRY_POLICY, 1, now, 1_000, 0.5)!.getTime(), now.getTime() + 30_000);
  });
});
