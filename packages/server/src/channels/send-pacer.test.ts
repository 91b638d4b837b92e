import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { SendPacer } from './send-pacer.js';

/** The most starts within any window of 1000 ms (less a nanosecond of floating-point rounding). */
function busiestSecond(starts: number[]): number {
  return Math.max(...starts.map((from) => starts.filter((at) => at >= from && at < from + 1000 - 1e-6).length));
}

describe('SendPacer', () => {
  it('starts sends 1/rate apart, in arrival order, and at once when the last one is far enough back', () => {
    let now = 0;
    const pacer = new SendPacer(4, () => now);
    assert.deepEqual([1, 2, 3, 4, 5].map(() => pacer.reserve()), [0, 250, 500, 750, 1000]);
    now = 600;
    assert.equal(pacer.reserve(), 1250, 'after those still waiting');
    now = 10_000;
    assert.equal(pacer.reserve(), 10_000);
  });

  it('never starts more than the rate within any second, however the callers arrive', () => {
    let now = 0;
    const pacer = new SendPacer(30, () => now);
    const starts: number[] = [];
    for (let i = 0; i < 500; i++) {
      // Quiet spells, bursts and trickles.
      now += i % 97 === 0 ? 5000 : i % 7 === 0 ? 40 : 1;
      starts.push(pacer.reserve());
    }
    assert.ok(busiestSecond(starts) <= 30, `${busiestSecond(starts)}`);
    assert.deepEqual(starts, [...starts].sort((a, b) => a - b), 'in arrival order');
  });

  it('lets no more than the rate through in the second after a quiet spell', () => {
    let now = 0;
    const pacer = new SendPacer(30, () => now);
    pacer.reserve();
    now = 60_000;
    const starts = Array.from({ length: 60 }, () => pacer.reserve());
    assert.equal(busiestSecond(starts), 30);
  });

  it('take() waits until the reserved start has come, sleeping again when a timer fires early', async () => {
    let now = 0;
    const slept: number[] = [];
    // A timer that fires a millisecond early.
    const pacer = new SendPacer(2, () => now, async (ms) => {
      slept.push(ms);
      now += ms > 1 ? ms - 1 : ms;
    });
    await pacer.take();
    await pacer.take();
    assert.equal(now >= 500, true, `started at ${now}`);
    assert.deepEqual(slept, [500, 1]);
  });

  it('refuses a rate that is not positive', () => {
    for (const rate of [0, -1, Number.NaN, Infinity]) assert.throws(() => new SendPacer(rate), RangeError);
  });
});
