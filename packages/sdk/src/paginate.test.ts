import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { eachItem, type Page } from './paginate.js';

/** A newest-first list held in memory, served a page at a time as the API serves it. */
function newestFirst(count: number) {
  let next = count;
  const list = Array.from({ length: count }, (_, i) => count - 1 - i);
  const fetches: number[] = [];
  return {
    list,
    fetches,
    /** Items that arrive at the head, as new notifications do. */
    arrive(n: number) {
      for (let i = 0; i < n; i++) list.unshift(next++);
    },
    fetch: async (page: number, limit: number): Promise<Page<number>> => {
      fetches.push(page);
      return { items: list.slice((page - 1) * limit, page * limit), total: list.length };
    },
  };
}

async function collect<T>(items: AsyncIterable<T>, each: (item: T, index: number) => void = () => {}): Promise<T[]> {
  const out: T[] = [];
  for await (const item of items) {
    each(item, out.length);
    out.push(item);
  }
  return out;
}

describe('eachItem', () => {
  it('reads every page once, in order, and stops at the last', async () => {
    for (const count of [0, 1, 7, 10, 25]) {
      const source = newestFirst(count);
      const expected = [...source.list];
      assert.deepEqual(await collect(eachItem(source.fetch, 5)), expected, `${count} items`);
      assert.deepEqual(source.fetches, Array.from({ length: Math.max(1, Math.ceil(count / 5)) }, (_, i) => i + 1), `${count} items`);
    }
  });

  it('skips what arrives at the head while it reads: nothing twice, nothing missed', async () => {
    const source = newestFirst(23);
    const expected = [...source.list];
    // Three new items after each item read: more than a page arrives between two fetches.
    const read = await collect(eachItem(source.fetch, 4), () => source.arrive(3));
    assert.deepEqual(read, expected);
  });

  it('fetches no page it does not need when the reader stops early', async () => {
    const source = newestFirst(50);
    const read: number[] = [];
    for await (const item of eachItem(source.fetch, 10)) {
      read.push(item);
      if (read.length === 12) break;
    }
    assert.deepEqual(read, source.list.slice(0, 12));
    assert.deepEqual(source.fetches, [1, 2]);
  });

  it('ends when the list shrinks under it (an item left the filter), yielding no item twice', async () => {
    const source = newestFirst(12);
    const read = await collect(eachItem(source.fetch, 5), (_, i) => {
      if (i === 6) source.list.splice(0, 3);
    });
    assert.equal(new Set(read).size, read.length);
    assert.deepEqual(read.slice(0, 7), [11, 10, 9, 8, 7, 6, 5]);
  });

  it('passes a fetch failure to the reader', async () => {
    const failing = eachItem<number>(async () => {
      throw new Error('gateway unreachable');
    });
    await assert.rejects(collect(failing), /gateway unreachable/);
  });
});
