import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { Coalescer } from './coalescer.js';

const tick = () => new Promise((resolve) => setTimeout(resolve, 5));

describe('Coalescer', () => {
  it('runs calls made together as one batch, answering each caller with its own output in order', async () => {
    const batches: number[][] = [];
    const doubler = new Coalescer<number, number>(async (inputs) => {
      batches.push(inputs);
      await tick();
      return inputs.map((n) => n * 2);
    }, { maxInFlight: 1, maxBatch: 100 });
    const outputs = await Promise.all([1, 2, 3, 4].map((n) => doubler.call(n)));
    assert.deepEqual(outputs, [2, 4, 6, 8]);
    assert.deepEqual(batches, [[1, 2, 3, 4]]);
  });

  it('queues calls while maxInFlight batches run, then takes them together, at most maxBatch at a time', async () => {
    const batches: number[][] = [];
    let running = 0;
    let mostRunning = 0;
    const echo = new Coalescer<number, number>(async (inputs) => {
      batches.push(inputs);
      running++;
      mostRunning = Math.max(mostRunning, running);
      await tick();
      running--;
      return inputs;
    }, { maxInFlight: 2, maxBatch: 3 });
    const first = echo.call(0);
    await new Promise((resolve) => setImmediate(resolve));
    const rest = Array.from({ length: 7 }, (_, i) => echo.call(i + 1));
    assert.deepEqual(await Promise.all([first, ...rest]), [0, 1, 2, 3, 4, 5, 6, 7]);
    assert.equal(mostRunning, 2);
    assert.deepEqual(batches, [[0], [1, 2, 3], [4, 5, 6], [7]]);
  });

  it('starts a second batch beside a running one only once the calls waiting weigh extraBatchWeight', async () => {
    const batches: number[][] = [];
    let running = 0;
    let mostRunning = 0;
    const release: (() => void)[] = [];
    const weighted = new Coalescer<number, number>(
      async (inputs) => {
        batches.push(inputs);
        running++;
        mostRunning = Math.max(mostRunning, running);
        await new Promise<void>((resolve) => release.push(resolve));
        running--;
        return inputs;
      },
      { maxInFlight: 2, maxBatch: 10, extraBatchWeight: 100, weigh: (n) => n },
    );
    const settle = () => new Promise((resolve) => setImmediate(resolve));
    const first = weighted.call(1);
    await settle();
    // Light calls wait while the first batch runs: together they weigh 30.
    const light = [10, 20].map((n) => weighted.call(n));
    await settle();
    assert.deepEqual(batches, [[1]]);
    // A heavy one brings the waiting weight to 130: a second batch starts beside the first.
    const heavy = weighted.call(100);
    await settle();
    assert.deepEqual(batches, [[1], [10, 20, 100]]);
    assert.equal(running, 2);
    release.splice(0).forEach((resolve) => resolve());
    assert.deepEqual(await Promise.all([first, ...light, heavy]), [1, 10, 20, 100]);
    assert.equal(mostRunning, 2);
    // Idle again: a lone light call runs at once.
    const lone = weighted.call(5);
    await settle();
    assert.deepEqual(batches.at(-1), [5]);
    release.splice(0).forEach((resolve) => resolve());
    assert.equal(await lone, 5);
  });

  it('reruns a failed batch call by call, so only the caller whose input fails sees the error', async () => {
    const seen: number[][] = [];
    const picky = new Coalescer<number, number>(async (inputs) => {
      seen.push(inputs);
      if (inputs.includes(3)) throw new Error('3 is refused');
      return inputs;
    }, { maxInFlight: 1, maxBatch: 10 });
    const results = await Promise.allSettled([1, 2, 3, 4].map((n) => picky.call(n)));
    assert.deepEqual(
      results.map((r) => (r.status === 'fulfilled' ? r.value : (r.reason as Error).message)),
      [1, 2, '3 is refused', 4],
    );
    assert.deepEqual(seen, [[1, 2, 3, 4], [1], [2], [3], [4]]);
  });

  it('runs a lone call at once', async () => {
    const single = new Coalescer<string, string>(async (inputs) => inputs.map((s) => s.toUpperCase()), { maxInFlight: 1, maxBatch: 10 });
    assert.equal(await single.call('a'), 'A');
    assert.equal(await single.call('b'), 'B');
  });
});
