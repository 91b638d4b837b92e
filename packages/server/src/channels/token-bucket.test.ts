import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { TokenBucket } from './token-bucket.js';

describe('TokenBucket', () => {
  it('lets a full burst through, then spaces callers 1/rate apart in arrival order', () => {
    let now = 0;
    const bucket = new TokenBucket(4, () => now);
    assert.deepEqual([1, 2, 3, 4].map(() => bucket.reserve()), [0, 0, 0, 0]);
    assert.deepEqual([1, 2, 3].map(() => bucket.reserve()), [250, 500, 750]);
    now = 1000;
    // 1 s refilled 4 tokens, 3 of which were already promised to the waiters above.
    assert.equal(bucket.reserve(), 0);
    assert.equal(bucket.reserve(), 250);
  });

  it('refills continuously and never beyond one burst', () => {
    let now = 0;
    const bucket = new TokenBucket(10, () => now);
    for (let i = 0; i < 10; i++) bucket.reserve();
    now = 150;
    assert.equal(bucket.reserve(), 0, '1.5 tokens came back');
    assert.equal(Math.round(bucket.reserve()), 50);
    now = 60_000;
    assert.deepEqual(Array.from({ length: 11 }, () => Math.round(bucket.reserve())), [0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 100]);
  });

  it('take() sleeps for the reserved wait', async () => {
    const slept: number[] = [];
    const bucket = new TokenBucket(2, () => 0, async (ms) => void slept.push(ms));
    await Promise.all([bucket.take(), bucket.take(), bucket.take(), bucket.take()]);
    assert.deepEqual(slept, [500, 1000]);
  });

  it('refuses a rate that is not positive', () => {
    assert.throws(() => new TokenBucket(0), RangeError);
  });
});
