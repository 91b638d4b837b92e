import { Redis } from 'ioredis';
import type { Logger } from 'pino';

/**
 * Fixed one-second windows aligned on Unix seconds: within any calendar second at most `limit`
 * requests of one key pass. `reset` is the Unix second at which the window ends.
 */
export interface RateLimitResult {
  allowed: boolean;
  limit: number;
  remaining: number;
  reset: number;
  /** Whole seconds until the window ends, on the limiter's clock (for Retry-After). */
  retryAfter: number;
}

/** Counts hits in a window; returns the count including this hit. */
export interface HitCounter {
  hit(key: string, windowSecond: number): Promise<number>;
  /** The window's count so far, without a hit. */
  count(key: string, windowSecond: number): Promise<number>;
  /** Present on counters that answer without I/O: the same count, without a promise. */
  hitSync?(key: string, windowSecond: number): number;
  close(): Promise<void>;
}

export class MemoryCounter implements HitCounter {
  private readonly counts = new Map<string, { window: number; count: number }>();
  private lastSweep = 0;

  async hit(key: string, windowSecond: number): Promise<number> {
    return this.hitSync(key, windowSecond);
  }

  async count(key: string, windowSecond: number): Promise<number> {
    return this.countSync(key, windowSecond);
  }

  countSync(key: string, windowSecond: number): number {
    const entry = this.counts.get(key);
    return entry && entry.window === windowSecond ? entry.count : 0;
  }

  hitSync(key: string, windowSecond: number): number {
    if (windowSecond !== this.lastSweep) this.sweep(windowSecond);
    const entry = this.counts.get(key);
    if (entry && entry.window === windowSecond) return ++entry.count;
    this.counts.set(key, { window: windowSecond, count: 1 });
    return 1;
  }

  // Entries of past windows are worthless; dropping them keeps memory bounded by the active keys.
  private sweep(windowSecond: number) {
    this.lastSweep = windowSecond;
    for (const [key, entry] of this.counts) if (entry.window < windowSecond) this.counts.delete(key);
  }

  async close() {}
}

const CONNECT_TIMEOUT_MS = 2000;

interface WindowScript {
  hitWindow(key: string, ttlSeconds: number): Promise<unknown>;
}

/**
 * Shared counters in Redis, so the limit holds across API processes. When Redis cannot answer,
 * each process falls back to its own in-memory counter (the limit then holds per process) and logs
 * the switch once each way; requests are never refused because Redis is down.
 */
export class RedisCounter implements HitCounter {
  private readonly redis: Redis;
  private readonly fallback = new MemoryCounter();
  private degraded = false;
  /** Switches to the fallback so far: a command sent before the latest one cannot say Redis is back. */
  private outages = 0;

  constructor(
    url: string,
    private readonly prefix: string,
    private readonly log: Logger,
  ) {
    this.redis = new Redis(url, {
      enableOfflineQueue: false,
      maxRetriesPerRequest: 0,
      connectTimeout: CONNECT_TIMEOUT_MS,
      commandTimeout: 250,
      lazyConnect: false,
      retryStrategy: (times) => Math.min(times * 200, 2000),
    });
    this.redis.on('error', () => {});
    // One script call (EVALSHA) instead of MULTI/INCR/EXPIRE/EXEC: a quarter of the commands and
    // about a third of the client CPU per request, still atomic (no key is left without a TTL).
    this.redis.defineCommand('hitWindow', {
      numberOfKeys: 1,
      lua: "local count = redis.call('INCR', KEYS[1]) if count == 1 then redis.call('EXPIRE', KEYS[1], ARGV[1]) end return count",
    });
  }

  /**
   * Settles once the first connection is made, or has failed, or after the connect timeout: a
   * process that starts serving before then would count its first requests on its own and log an
   * outage Redis never had.
   */
  connected(): Promise<void> {
    if (this.redis.status === 'ready') return Promise.resolve();
    return new Promise((resolve) => {
      const done = () => {
        clearTimeout(timer);
        for (const event of ['ready', 'error', 'end'] as const) this.redis.off(event, done);
        resolve();
      };
      const timer = setTimeout(done, CONNECT_TIMEOUT_MS);
      for (const event of ['ready', 'error', 'end'] as const) this.redis.once(event, done);
    });
  }

  async hit(key: string, windowSecond: number): Promise<number> {
    if (this.redis.status === 'ready') {
      const outage = this.outages;
      try {
        const redisKey = `${this.prefix}rl:${key}:${windowSecond}`;
        // The window is one second; keeping its key two covers clock skew between processes.
        const count = await (this.redis as Redis & WindowScript).hitWindow(redisKey, 2);
        if (typeof count === 'number') {
          // An answer to a command sent before the outage began (Redis died while it was in
          // flight) says nothing of Redis now: only one sent since then switches back.
          if (this.degraded && outage === this.outages) {
            this.degraded = false;
            this.log.info('rate limiter: Redis is back, using shared counters');
          }
          return count;
        }
      } catch {
        // falls through to the in-process counter
      }
    }
    if (!this.degraded) {
      this.degraded = true;
      this.outages++;
      this.log.warn('rate limiter: Redis unavailable, falling back to per-process counters');
    }
    return this.fallback.hitSync(key, windowSecond);
  }

  /** Read where `hit` writes: Redis when it answers, the in-process counter otherwise. */
  async count(key: string, windowSecond: number): Promise<number> {
    if (this.redis.status === 'ready') {
      try {
        const value = await this.redis.get(`${this.prefix}rl:${key}:${windowSecond}`);
        if (value !== null) return Number(value);
        // Nothing in Redis; unless it just came back, when this window's hits may still be in the in-process counter.
        if (!this.degraded) return 0;
      } catch {
        // Redis is away: the hits use the in-process counter too.
      }
    }
    return this.fallback.countSync(key, windowSecond);
  }

  async close() {
    this.redis.disconnect();
  }
}

function result(count: number, limit: number, second: number, now: number): RateLimitResult {
  const reset = second + 1;
  return { allowed: count <= limit, limit, remaining: Math.max(0, limit - count), reset, retryAfter: Math.ceil((reset * 1000 - now) / 1000) };
}

export class RateLimiter {
  constructor(
    private readonly counter: HitCounter,
    private readonly now: () => number = Date.now,
  ) {}

  async check(key: string, limit: number): Promise<RateLimitResult> {
    const now = this.now();
    const second = Math.floor(now / 1000);
    return result(await this.counter.hit(key, second), limit, second, now);
  }

  /**
   * Whether one more hit of `key` would still be allowed, without counting one: the answer `check`
   * would give (with the headers of that limit), the window's count left as it is.
   */
  async peek(key: string, limit: number): Promise<RateLimitResult> {
    const now = this.now();
    const second = Math.floor(now / 1000);
    return result((await this.counter.count(key, second)) + 1, limit, second, now);
  }

  /** `check` without a promise, for counters held in this process; `undefined` for shared ones. */
  checkSync(key: string, limit: number): RateLimitResult | undefined {
    if (!this.counter.hitSync) return undefined;
    const now = this.now();
    const second = Math.floor(now / 1000);
    return result(this.counter.hitSync(key, second), limit, second, now);
  }

  close() {
    return this.counter.close();
  }
}
