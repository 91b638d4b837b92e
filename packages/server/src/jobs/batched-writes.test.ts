import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { batchedWrites } from './batched-writes.js';

describe('batchedWrites', () => {
  it('writes as soon as atCount items wait, and the rest afterMs after the first of them', async () => {
    const writes: number[][] = [];
    const writer = batchedWrites(async (items: number[]) => void writes.push(items), { afterMs: 20, atCount: 3 });
    for (const n of [1, 2, 3, 4]) writer.add(n);
    await sleep(0);
    assert.deepEqual(writes, [[1, 2, 3]]);
    await sleep(40);
    assert.deepEqual(writes, [[1, 2, 3], [4]]);
    await writer.close();
    assert.equal(writes.length, 2, 'nothing left to write');
  });

  it('makes one write at a time, in order', async () => {
    const events: string[] = [];
    const writer = batchedWrites(
      async (items: number[]) => {
        events.push(`start ${items}`);
        await sleep(10);
        events.push(`end ${items}`);
      },
      { afterMs: 0, atCount: 1 },
    );
    writer.add(1);
    writer.add(2);
    await writer.close();
    assert.deepEqual(events, ['start 1', 'end 1', 'start 2', 'end 2']);
  });

  it('makes no write after one fails, and close throws its error', async () => {
    const written: number[][] = [];
    const writer = batchedWrites(
      async (items: number[]) => {
        if (items[0] === 1) throw new Error('refused');
        written.push(items);
      },
      { afterMs: 0, atCount: 1 },
    );
    writer.add(1);
    writer.add(2);
    await assert.rejects(writer.close(), /refused/);
    assert.deepEqual(written, []);
  });
});
