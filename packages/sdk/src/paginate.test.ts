import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { eachItem, type Page } from './paginate.js';

/**
 * A newest-first list held in memory, served a page at a time as the API serves it. `between`
 * runs inside each fetch, after the total is counted and before the page is read, as a write
 * landing between the two statements of a list query would.
 */
function newestFirst(count: number) {
  let next = count;
  const list = Array.from({ length: count }, (_, i) => count - 1 - i);
  const fetches: number[] = [];
  const source = {
    list,
    fetches,
    between: () => {},
    /** Items that arrive at the head, as new notifications do. */
    arrive(n: number) {
      for (let i = 0; i < n; i++) list.unshift(next++);
    },
    fetch: async (page: number, limit: number): Promise<Page<number>> => {
      fetches.push(page);
      const total = list.length;
      source.between();
      return { items: list.slice((page - 1) * limit, page * limit), total };
    },
  };
  return source;
}

const key = (item: number) => String(item);

async function collect<T>(items: AsyncIterable<T>, each: (item: T, index: number) => void = () => {}): Promise<T[]> {
  const out: T[] = [];
  for await (const item of items) {
    each(item, out.length);
    out.push(item);
  }
  return out;
}

const unique = (items: number[]) => new Set(items).size === items.length;

describe('eachItem', () => {
  it('reads every page once, in order, and stops at the first short one', async () => {
    for (const count of [0, 1, 7, 10, 25]) {
      const source = newestFirst(count);
      const expected = [...source.list];
      assert.deepEqual(await collect(eachItem(source.fetch, key, 5)), expected, `${count} items`);
      assert.deepEqual(source.fetches, Array.from({ length: Math.floor(count / 5) + 1 }, (_, i) => i + 1), `${count} items`);
    }
  });

  it('yields what was there, each once, while items arrive at the head between pages', async () => {
    for (const [limit, perItem] of [[4, 1], [4, 3], [1, 0], [100, 2]] as const) {
      const source = newestFirst(230);
      const expected = [...source.list];
      const read = await collect(eachItem(source.fetch, key, limit), (_, i) => {
        if (perItem && i % limit === 0) source.arrive(perItem);
      });
      assert.deepEqual(read, expected, `limit ${limit}, ${perItem} arrivals a page`);
    }
  });

  it('yields no item twice when an item arrives between the count and the page of one fetch', async () => {
    const source = newestFirst(40);
    const expected = [...source.list];
    source.between = () => source.arrive(1);
    const read = await collect(eachItem(source.fetch, key, 10));
    assert.ok(unique(read));
    // The first page was read after its arrival: that item is among them, before the rest.
    assert.deepEqual(read, [40, ...expected]);
  });

  it('yields no item twice when one item leaves the tail as another arrives at the head', async () => {
    const source = newestFirst(10);
    const read = await collect(eachItem(source.fetch, key, 5), (_, i) => {
      if (i === 0) {
        source.arrive(1);
        source.list.pop();
      }
    });
    assert.ok(unique(read));
    assert.deepEqual(read, [9, 8, 7, 6, 5, 4, 3, 2, 1]);
  });

  it('ends when the list shrinks under it, yielding no item twice', async () => {
    const source = newestFirst(12);
    const read = await collect(eachItem(source.fetch, key, 5), (_, i) => {
      if (i === 6) source.list.splice(0, 3);
    });
    assert.ok(unique(read));
    assert.deepEqual(read.slice(0, 7), [11, 10, 9, 8, 7, 6, 5]);
  });

  it('fetches no page it does not need when the reader stops early', async () => {
    const source = newestFirst(50);
    const read: number[] = [];
    for await (const item of eachItem(source.fetch, key, 10)) {
      read.push(item);
      if (read.length === 12) break;
    }
    assert.deepEqual(read, source.list.slice(0, 12));
    assert.deepEqual(source.fetches, [1, 2]);
  });

  it('refuses a limit the API would refuse, and passes a fetch failure to the reader', async () => {
    for (const limit of [0, 101, 2.5, Number.NaN]) {
      await assert.rejects(collect(eachItem(newestFirst(3).fetch, key, limit)), RangeError, String(limit));
    }
    const failing = eachItem<number>(async () => {
      throw new Error('gateway unreachable');
    }, key);
    await assert.rejects(collect(failing), /gateway unreachable/);
  });
});

describe('eachItem when the list grows fast', () => {
  it('skips the pages a burst of arrivals fills, yielding what was there once each', async () => {
    const source = newestFirst(1000);
    const expected = [...source.list];
    const read = await collect(eachItem(source.fetch, key, 100), (_, i) => {
      if (i === 600) source.arrive(500);
    });
    assert.deepEqual(read, expected);
    assert.ok(source.fetches.length <= 13, `${source.fetches.length} pages read`);
  });

  it('keeps up with fewer arrivals than a page between two reads, wherever they land', async () => {
    for (const [between, after] of [[5, 0], [0, 9], [3, 4]]) {
      const source = newestFirst(100);
      const expected = [...source.list];
      source.between = () => source.arrive(between);
      let fetches = 0;
      const fetch = async (page: number, limit: number) => {
        const answer = await source.fetch(page, limit);
        if (++fetches > 1) source.arrive(after);
        return answer;
      };
      const read = await collect(eachItem(fetch, key, 10));
      assert.ok(unique(read), `${between} and ${after} arrivals`);
      assert.deepEqual(
        read.filter((item) => item < 100),
        expected,
        `${between} and ${after} arrivals`,
      );
    }
  });

  it('throws, rather than read forever, when a page or more arrives between each two reads', async () => {
    const source = newestFirst(100);
    source.between = () => source.arrive(15);
    await assert.rejects(collect(eachItem(source.fetch, key, 10)), /grew faster than it could be read, by 10 items or more between reads/);
    assert.ok(source.fetches.length < 10, `${source.fetches.length} pages read before giving up`);
  });

  it('misses nothing when items arrive between the count of a read and its page', async () => {
    for (const [count, limit, onFetch, arrivals] of [
      [30, 10, 1, 5],
      [1000, 100, 3, 50],
      [10, 1, 1, 3],
    ]) {
      const source = newestFirst(count);
      const expected = [...source.list];
      let fetches = 0;
      source.between = () => {
        if (++fetches === onFetch) source.arrive(arrivals);
      };
      const read = await collect(eachItem(source.fetch, key, limit));
      const label = `${count} items, limit ${limit}, ${arrivals} arriving in read ${onFetch}`;
      assert.ok(unique(read), label);
      assert.deepEqual(
        read.filter((item) => item < count),
        expected,
        label,
      );
    }
  });

  it('reads to the end while the list grows by less than a page between reads, after a burst too', async () => {
    const source = newestFirst(1000);
    const expected = [...source.list];
    let fetches = 0;
    const fetch = async (page: number, limit: number) => {
      const answer = await source.fetch(page, limit);
      fetches++;
      source.arrive(fetches === 3 ? 199 : 60);
      return answer;
    };
    const read = await collect(eachItem(fetch, key, 100));
    assert.ok(unique(read));
    assert.deepEqual(
      read.filter((item) => item < 1000),
      expected,
    );
  });
});
