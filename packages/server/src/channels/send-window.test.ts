import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { SendWindow } from './send-window.js';

/** The most starts within any window of 1000 ms. */
function busiestSecond(starts: number[]): number {
  return Math.max(...starts.map((from) => starts.filter((at) => at >= from && at < from + 1000).length));
}

describe('SendWindow', () => {
  it('lets a burst of the rate through at once, then each caller waits for the start a rate back to be a second old', () => {
    let now = 0;
    const window = new SendWindow(4, () => now);
    assert.deepEqual([1, 2, 3, 4].map(() => window.reserve()), [0, 0, 0, 0]);
    assert.deepEqual([1, 2, 3, 4, 5].map(() => window.reserve()), [1000, 1000, 1000, 1000, 2000]);
    now = 1500;
    assert.equal(window.reserve(), 500, 'after the three still waiting for 2000');
  });

  it('never starts more than the rate within any second, however the callers arrive', () => {
    let now = 0;
    const window = new SendWindow(30, () => now);
    const starts: number[] = [];
    for (let i = 0; i < 500; i++) {
      // Quiet spells, bursts and trickles.
      now += i % 97 === 0 ? 5000 : i % 7 === 0 ? 40 : 1;
      starts.push(now + window.reserve());
    }
    assert.ok(busiestSecond(starts) <= 30, `${busiestSecond(starts)}`);
    assert.deepEqual(starts, [...starts].sort((a, b) => a - b), 'in arrival order');
  });

  it('lets up to the rate through after a quiet spell, not twice as many', () => {
    let now = 0;
    const window = new SendWindow(30, () => now);
    now = 60_000;
    const starts = Array.from({ length: 60 }, () => now + window.reserve());
    assert.equal(busiestSecond(starts), 30);
  });

  it('take() sleeps for the reserved wait', async () => {
    const slept: number[] = [];
    const window = new SendWindow(2, () => 0, async (ms) => void slept.push(ms));
    await Promise.all([window.take(), window.take(), window.take(), window.take(), window.take()]);
    assert.deepEqual(slept, [1000, 1000, 2000]);
  });

  it('refuses a rate that is not a positive whole number', () => {
    for (const rate of [0, -1, 1.5, Number.NaN]) assert.throws(() => new SendWindow(rate), RangeError);
  });
});
