import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import {
  ADMIN_TOKEN,
  ENCRYPTION_KEY,
  atNextSecond,
  call,
  createProtocol,
  freshSchema,
  isErrorBody,
  onPostgres,
  startGateway,
  type TestGateway,
} from '../support/gateway.js';
import { ensureBuilt, killStrays, spawnServer } from './server-process.js';

type Res = Awaited<ReturnType<typeof call>>;

function rateHeaders(res: Res) {
  const read = (name: string) => {
    const value = res.headers.get(name);
    assert.ok(value !== null && /^\d+$/.test(value), `${name} is an integer on a ${res.status}: ${value}`);
    return Number(value);
  };
  return { limit: read('x-ratelimit-limit'), remaining: read('x-ratelimit-remaining'), reset: read('x-ratelimit-reset') };
}

/**
 * Runs `burst` at the start of a wall-clock second. A slow machine can push a burst across a
 * second boundary, which makes the outcome meaningless rather than wrong: then it is run again.
 */
async function inOneSecond<T extends Res[]>(burst: () => Promise<T>): Promise<T> {
  for (let attempt = 0; attempt < 5; attempt++) {
    await atNextSecond();
    const results = await burst();
    const resets = new Set(results.map((r) => r.headers.get('x-ratelimit-reset')));
    if (resets.size === 1) return results;
  }
  throw new Error('five bursts in a row spanned two rate-limit windows: the machine is too busy for this test');
}

describe('rate limits', () => {
  let gw: TestGateway;

  before(async () => {
    gw = await startGateway();
  });
  after(() => gw.close());

  it('lets a tier-0 protocol make 2 requests per second, then answers 429 with Retry-After', async () => {
    const dev = await gw.createProtocol({ tier: 0 });
    const nowSecond = Math.floor(Date.now() / 1000);
    const [ok, invalid, limited] = await inOneSecond(async () => [
      await call(gw.url, dev.apiKey, 'GET', '/v1/usage'),
      await call(gw.url, dev.apiKey, 'GET', '/v1/requests?page=0'),
      await call(gw.url, dev.apiKey, 'GET', '/v1/usage'),
    ]);
    assert.equal(ok.status, 200);
    assert.equal(invalid.status, 400, 'a refused request still counts');
    assert.equal(limited.status, 429);
    assert.ok(isErrorBody(limited.body), JSON.stringify(limited.body));
    assert.equal(limited.body.code, 'RATE_LIMIT_EXCEEDED');
    assert.equal(limited.body.error, 'Too Many Requests');
    assert.deepEqual(
      [ok, invalid, limited].map((r) => [rateHeaders(r).limit, rateHeaders(r).remaining]),
      [
        [2, 1],
        [2, 0],
        [2, 0],
      ],
    );
    const reset = rateHeaders(limited).reset;
    assert.ok(reset > nowSecond && reset <= Math.floor(Date.now() / 1000) + 1, `reset ${reset} is the end of the current second`);
    const retryAfter = Number(limited.headers.get('retry-after'));
    assert.ok(Number.isInteger(retryAfter) && retryAfter >= 1 && retryAfter <= 2, `Retry-After ${retryAfter}`);
    assert.equal(ok.headers.get('retry-after'), null);

    await atNextSecond();
    const next = await call(gw.url, dev.apiKey, 'GET', '/v1/usage');
    assert.equal(next.status, 200, 'the next second has a fresh budget');
    assert.equal(rateHeaders(next).remaining, 1);
  });

  it('puts the headers on answers without a valid key too (401, 404, /health)', async () => {
    const before = Math.floor(Date.now() / 1000);
    for (const res of [
      await call(gw.url, 'hrld_live_0123456789012345678901234567890123456789', 'GET', '/v1/usage'),
      await call(gw.url, undefined, 'GET', '/v1/usage'),
      await call(gw.url, undefined, 'GET', '/v1/no-such-route'),
      await call(gw.url, undefined, 'GET', '/health'),
    ]) {
      const headers = rateHeaders(res);
      assert.ok(headers.limit > 0);
      assert.ok(headers.remaining < headers.limit);
      assert.ok(headers.reset > before);
    }
  });

  it('reports each tier\'s limit: 20, 100 and 500 per second', async () => {
    for (const [tier, rps] of [
      [1, 20],
      [2, 100],
      [3, 500],
    ]) {
      const protocol = await gw.createProtocol({ tier });
      const res = await call(gw.url, protocol.sandboxApiKey, 'GET', '/v1/protocols/me');
      assert.equal(res.status, 200);
      assert.equal(rateHeaders(res).limit, rps, `tier ${tier}`);
      assert.equal(rateHeaders(res).remaining, rps - 1, `tier ${tier}`);
    }
  });

  it('gives every protocol a budget of its own, shared by its live and sandbox keys', async () => {
    const a = await gw.createProtocol({ tier: 0 });
    const b = await gw.createProtocol({ tier: 0 });
    const [a1, a2, a3, b1] = await inOneSecond(async () => [
      await call(gw.url, a.apiKey, 'GET', '/v1/usage'),
      await call(gw.url, a.sandboxApiKey, 'GET', '/v1/usage'),
      await call(gw.url, a.apiKey, 'GET', '/v1/usage'),
      await call(gw.url, b.apiKey, 'GET', '/v1/usage'),
    ]);
    assert.deepEqual(
      [a1.status, a2.status, a3.status, b1.status],
      [200, 200, 429, 200],
    );
    assert.equal(rateHeaders(b1).remaining, 1);
  });
});

describe('rate limits with Redis unreachable', () => {
  let gw: TestGateway;

  before(async () => {
    gw = await startGateway({ env: { REDIS_URL: 'redis://127.0.0.1:1' } });
  });
  after(() => gw.close());

  it('still answers, and the in-process limit applies', async () => {
    assert.equal((await call(gw.url, undefined, 'GET', '/health')).status, 200);
    const dev = await gw.createProtocol({ tier: 0 });
    const results = await inOneSecond(async () => [
      await call(gw.url, dev.apiKey, 'GET', '/v1/usage'),
      await call(gw.url, dev.apiKey, 'GET', '/v1/usage'),
      await call(gw.url, dev.apiKey, 'GET', '/v1/usage'),
    ]);
    assert.deepEqual(
      results.map((r) => r.status),
      [200, 200, 429],
    );
    assert.equal(results[2].body.code, 'RATE_LIMIT_EXCEEDED');
  });
});

const shared = Boolean(process.env.REDIS_URL && onPostgres);

describe('rate limits across two API processes sharing Redis', { skip: !shared && 'needs REDIS_URL and DATABASE_URL' }, () => {
  let urls: string[];
  let servers: ReturnType<typeof spawnServer>[];
  let drop: () => Promise<void>;

  before(async () => {
    ensureBuilt();
    const schema = await freshSchema();
    drop = schema.drop;
    const env = {
      HERALD_ROLE: 'api',
      DATABASE_URL: schema.url,
      REDIS_URL: process.env.REDIS_URL!,
      HERALD_REDIS_PREFIX: `t${randomBytes(4).toString('hex')}:`,
      HERALD_ENCRYPTION_KEY: ENCRYPTION_KEY,
      HERALD_ADMIN_TOKEN: ADMIN_TOKEN,
      LOG_LEVEL: 'info',
    };
    // Both start (and migrate) at once, as a scaled-out deployment does.
    servers = [spawnServer(env), spawnServer(env)];
    urls = await Promise.all(servers.map((s) => s.listening()));
  });
  after(async () => {
    await killStrays();
    await drop?.();
  });

  it('holds the tier limit across both processes', async () => {
    // A process whose Redis call takes longer than the limiter allows (250 ms: a loaded machine,
    // a process that has just started) counts on its own for that request, by design, and logs the
    // switch. A burst during which that happened says nothing about the shared counter: try again.
    const degradations = () => servers.reduce((n, server) => n + server.stdout().split('Redis unavailable').length - 1, 0);
    for (const url of urls) for (let i = 0; i < 5; i++) await call(url, undefined, 'GET', '/health');
    let results: Res[] = [];
    for (let attempt = 1; attempt <= 3; attempt++) {
      const dev = await createProtocol(urls[0], { tier: 0 });
      // Both processes have a live Redis connection before the burst.
      for (const url of urls) assert.equal((await call(url, undefined, 'GET', '/health')).status, 200);
      const before = degradations();
      results = await inOneSecond(() =>
        Promise.all(Array.from({ length: 8 }, (_, i) => call(urls[i % 2], dev.apiKey, 'GET', '/v1/usage'))),
      );
      if (degradations() === before) break;
    }
    const statuses = results.map((r) => r.status);
    const passed = statuses.filter((s) => s === 200).length;
    assert.ok(passed <= 2, `at most 2 of 8 pass across both processes, got ${statuses}`);
    assert.ok(passed >= 1, `${statuses}`);
    assert.deepEqual(
      statuses.filter((s) => s !== 200 && s !== 429),
      [],
    );
    for (const server of [0, 1]) {
      assert.ok(
        results.some((r, i) => i % 2 === server && r.status === 429),
        `process ${server + 1} refused too`,
      );
    }
  });
});
