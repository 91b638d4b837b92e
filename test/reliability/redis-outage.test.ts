/**
 * Redis goes away under the rate limiter: a private redis-server is killed, frozen and restarted
 * under API processes. While it is gone every request is still answered (never a 5xx), each
 * process falls back to its own in-process limiter and says so in its log; when Redis returns the
 * processes go back to the shared counters (and log that too), without a restart.
 */
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { ensureBuilt, killStrays } from '../foundation/server-process.js';
import { ADMIN_TOKEN, ENCRYPTION_KEY, atNextSecond, call, createProtocol, freshSchema, onPostgres, sleep, waitFor, type TestProtocol } from '../support/gateway.js';
import { Cluster, logEntries, waitForLog } from './support/cluster.js';
import { TEST_TIMEOUT_MS } from './support/mode.js';
import { hasRedisServer, startRedisServer, type RedisServer } from './support/redis-server.js';

type Res = Awaited<ReturnType<typeof call>>;

const FALLBACK = 'rate limiter: Redis unavailable, falling back to per-process counters';
const BACK = 'rate limiter: Redis is back, using shared counters';
const LIMIT = 2;

describe('Redis outage under the rate limiter', { skip: !hasRedisServer() && 'needs the redis-server binary', timeout: TEST_TIMEOUT_MS }, () => {
  let redis: RedisServer;
  let cluster: Cluster;
  let urls: string[];
  let drop: (() => Promise<void>) | undefined;
  let dev: TestProtocol;

  before(async () => {
    ensureBuilt();
    redis = await startRedisServer();
    const schema = onPostgres ? await freshSchema() : undefined;
    drop = schema?.drop;
    cluster = new Cluster({
      ...(schema ? { DATABASE_URL: schema.url } : { HERALD_DATA_DIR: 'memory://' }),
      REDIS_URL: redis.url,
      HERALD_REDIS_PREFIX: `rel${randomBytes(4).toString('hex')}:`,
      HERALD_ENCRYPTION_KEY: ENCRYPTION_KEY,
      HERALD_ADMIN_TOKEN: ADMIN_TOKEN,
    });
    // Two API processes share one database only on PostgreSQL; PGlite in memory is one process.
    await cluster.start('api');
    if (schema) await cluster.start('api');
    urls = cluster.apis.map((n) => n.url!);
    dev = await createProtocol(urls[0], { tier: 0, name: 'Redis outage' });
  });

  after(async () => {
    await cluster?.stop().catch(() => {});
    await killStrays();
    await redis?.kill();
    await drop?.();
  });

  /** `perApi` requests to each API at the start of one second; run again if they spanned two windows. */
  async function burst(perApi: number): Promise<{ results: Res[]; byApi: number[]; maxMs: number }> {
    for (let attempt = 0; attempt < 5; attempt++) {
      await atNextSecond();
      const timed = await Promise.all(
        Array.from({ length: perApi * urls.length }, async (_, i) => {
          const at = Date.now();
          const res = await call(urls[i % urls.length], dev.apiKey, 'GET', '/v1/usage');
          return { res, api: i % urls.length, ms: Date.now() - at };
        }),
      );
      if (new Set(timed.map((r) => r.res.headers.get('x-ratelimit-reset'))).size > 1) continue;
      const byApi = urls.map((_, api) => timed.filter((r) => r.api === api && r.res.status === 200).length);
      return { results: timed.map((r) => r.res), byApi, maxMs: Math.max(...timed.map((r) => r.ms)) };
    }
    throw new Error('five bursts in a row spanned two rate-limit windows: the machine is too busy for this test');
  }

  const statuses = (results: Res[]) => results.map((r) => r.status);
  const logged = (msg: string) => cluster.apis.map((n) => logEntries(n.current).filter((e) => e.msg === msg).length);

  it('shares one budget through Redis, falls back per process while Redis is dead, and shares again once it is back', { timeout: TEST_TIMEOUT_MS }, async (t) => {
    for (const url of urls) assert.equal((await call(url, undefined, 'GET', '/health')).status, 200);
    // A process waits for its first connection before it serves: no outage is logged at start.
    assert.deepEqual(logged(FALLBACK), urls.map(() => 0), 'no fallback at start');

    const up = await burst(4);
    assert.ok(statuses(up.results).every((s) => s === 200 || s === 429), `${statuses(up.results)}`);
    assert.ok(up.byApi.reduce((a, b) => a + b, 0) <= LIMIT, `Redis up: at most ${LIMIT} pass across every process, got ${up.byApi}`);

    await redis.kill();
    const down = await burst(4);
    assert.ok(statuses(down.results).every((s) => s === 200 || s === 429), `Redis dead: answered, never a 5xx: ${statuses(down.results)}`);
    assert.ok(down.byApi.every((n) => n >= 1 && n <= LIMIT), `Redis dead: each process applies the limit on its own: ${down.byApi}`);
    assert.ok(down.maxMs < 1000, `Redis dead: no request waits for Redis (${down.maxMs} ms)`);
    // The log line travels through a pipe and may arrive after the answers that followed it.
    await Promise.all(cluster.apis.map((n) => waitForLog(n.current, FALLBACK, 10_000)));
    assert.deepEqual(logged(FALLBACK), urls.map(() => 1), 'each process logged the fallback once');
    const warning = logEntries(cluster.apis[0].current).find((e) => e.msg === FALLBACK)!;
    assert.equal(warning.level, 40, 'the fallback is a warning');

    redis = await startRedisServer(redis.port);
    // ioredis reconnects with backoff (≤ 2 s); the first request on the shared counters logs the return.
    await waitFor(
      async () => {
        await Promise.all(urls.map((url) => call(url, dev.apiKey, 'GET', '/v1/usage')));
        return logged(BACK).every((n) => n === 1);
      },
      15_000,
      300,
    );
    await sleep(1000);
    const back = await burst(4);
    assert.ok(back.byApi.reduce((a, b) => a + b, 0) <= LIMIT, `Redis back: one shared budget again, got ${back.byApi}`);

    t.diagnostic(
      `redis-outage figures: ${JSON.stringify({
        processes: urls.length,
        limit: LIMIT,
        passedPerProcess: { redisUp: up.byApi, redisDead: down.byApi, redisBack: back.byApi },
        maxLatencyMs: { redisUp: up.maxMs, redisDead: down.maxMs, redisBack: back.maxMs },
        logLines: { fallback: logged(FALLBACK), back: logged(BACK) },
      })}`,
    );
  });

  it('bounds the wait on a frozen Redis (SIGSTOP) by the command timeout, then recovers (SIGCONT)', { timeout: TEST_TIMEOUT_MS }, async (t) => {
    redis.child.kill('SIGSTOP');
    try {
      const frozen = await burst(2);
      assert.ok(statuses(frozen.results).every((s) => s === 200 || s === 429), `Redis frozen: answered: ${statuses(frozen.results)}`);
      assert.ok(frozen.maxMs < 2000, `Redis frozen: a request waits at most about the 250 ms command timeout (${frozen.maxMs} ms)`);
      t.diagnostic(`redis-frozen figures: ${JSON.stringify({ passedPerProcess: frozen.byApi, maxLatencyMs: frozen.maxMs })}`);
    } finally {
      redis.child.kill('SIGCONT');
    }
    await waitFor(async () => (await call(urls[0], dev.apiKey, 'GET', '/v1/usage')).status === 200, 10_000, 300);
  });
});
