import assert from 'node:assert/strict';
import { createServer } from 'node:net';
import { describe, it } from 'node:test';
import pino from 'pino';
import { MemoryCounter, RateLimiter, RedisCounter } from './rate-limiter.js';

describe('RateLimiter with the in-process counter', () => {
  function limiterAt(start: number) {
    let ms = start;
    const limiter = new RateLimiter(new MemoryCounter(), () => ms);
    return { limiter, set: (value: number) => (ms = value) };
  }

  it('allows `limit` hits per Unix second and reports what is left', async () => {
    const { limiter } = limiterAt(1_700_000_000_250);
    const results = [];
    for (let i = 0; i < 4; i++) results.push(await limiter.check('p:a', 2));
    assert.deepEqual(
      results.map((r) => [r.allowed, r.remaining]),
      [
        [true, 1],
        [true, 0],
        [false, 0],
        [false, 0],
      ],
    );
    for (const r of results) {
      assert.equal(r.limit, 2);
      assert.equal(r.reset, 1_700_000_001);
      assert.equal(r.retryAfter, 1);
    }
  });

  it('opens a new window at the next second, not one second after the first hit', async () => {
    const { limiter, set } = limiterAt(1_700_000_000_900);
    await limiter.check('k', 1);
    assert.equal((await limiter.check('k', 1)).allowed, false);
    set(1_700_000_001_000);
    const next = await limiter.check('k', 1);
    assert.equal(next.allowed, true);
    assert.equal(next.reset, 1_700_000_002);
  });

  it('never asks to retry after zero seconds, even at the very start of a window', async () => {
    const { limiter, set } = limiterAt(1_700_000_000_000);
    assert.equal((await limiter.check('k', 1)).retryAfter, 1);
    set(1_700_000_000_999);
    assert.equal((await limiter.check('k', 1)).retryAfter, 1);
  });

  it('keeps separate budgets per key', async () => {
    const { limiter } = limiterAt(1_700_000_000_000);
    await limiter.check('p:a', 1);
    assert.equal((await limiter.check('p:a', 1)).allowed, false);
    assert.equal((await limiter.check('p:b', 1)).allowed, true);
  });

  it('forgets windows that are over', () => {
    const counter = new MemoryCounter();
    for (let i = 0; i < 100; i++) counter.hitSync(`k${i}`, 10);
    counter.hitSync('k0', 11);
    assert.equal((counter as unknown as { counts: Map<string, unknown> }).counts.size, 1);
  });

  it('answers checkSync like check, sharing one budget', async () => {
    const { limiter } = limiterAt(1_700_000_000_500);
    const first = limiter.checkSync('p:a', 2)!;
    assert.deepEqual([first.allowed, first.remaining, first.reset, first.retryAfter], [true, 1, 1_700_000_001, 1]);
    assert.equal((await limiter.check('p:a', 2)).remaining, 0);
    assert.equal(limiter.checkSync('p:a', 2)!.allowed, false);
  });

  it('has no checkSync answer for a counter that needs I/O', () => {
    const shared = { hit: async () => 1, count: async () => 0, close: async () => {} };
    assert.equal(new RateLimiter(shared).checkSync('p:a', 2), undefined);
  });
});

describe('RedisCounter before its first connection', () => {
  it('settles connected() when the connection fails, and counts on its own from then on', async () => {
    // A port that refuses connections: the first attempt fails at once.
    const server = createServer();
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const { port } = server.address() as { port: number };
    await new Promise((resolve) => server.close(resolve));
    const counter = new RedisCounter(`redis://127.0.0.1:${port}`, 'test:', pino({ level: 'silent' }));
    try {
      const started = Date.now();
      await counter.connected();
      assert.ok(Date.now() - started < 2000, 'settled by the failure, not by the timeout');
      assert.equal(await counter.hit('k', 1), 1);
      assert.equal(await counter.hit('k', 1), 2);
    } finally {
      await counter.close();
    }
  });
});
