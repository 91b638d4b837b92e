import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { HeraldApiError, HeraldNetworkError, HeraldWaitTimeoutError } from '../errors.js';
import { RequestCore, type FetchLike } from '../request.js';
import { Identities } from './identities.js';
import { lastReadOf, Notifications, type Notification, type NotificationStatus } from './notifications.js';

interface Seen {
  method: string;
  url: string;
  headers: Record<string, string>;
  body: any;
}

/** A fetch answering from a script (the last answer repeats), recording every request. */
function scripted(...answers: [number, unknown][]) {
  const seen: Seen[] = [];
  const fetch: FetchLike = async (url, init) => {
    seen.push({ method: init.method!, url, headers: init.headers as Record<string, string>, body: init.body ? JSON.parse(init.body as string) : undefined });
    const [status, body] = answers[Math.min(seen.length - 1, answers.length - 1)];
    return new Response(JSON.stringify(body), { status, headers: { 'content-type': 'application/json' } });
  };
  return { seen, fetch };
}

/** A clock that moves only when the SDK sleeps, so waits take no real time. */
function fakeTime() {
  const time = { now: 1_000_000, sleeps: [] as number[] };
  return {
    time,
    options: {
      now: () => time.now,
      sleep: async (ms: number) => {
        time.sleeps.push(ms);
        time.now += ms;
      },
      random: () => 0,
    },
  };
}

const unavailable: [number, unknown] = [503, { statusCode: 503, error: 'Service Unavailable', message: 'down', code: 'SERVICE_UNAVAILABLE' }];
const submission = { notificationId: '01J0000000000000000000000A', status: 'queued', recipientRegistered: true, estimatedDeliveryMs: 900, deliveryChannel: 'email', environment: 'production' };
const message = { wallet: '7EcDhSYGxXyscszYEp35KHN8vvw3svAuLKTzXwCFLtV', subject: 'Hi', body: 'Hello', category: 'system' as const };
const record = (status: NotificationStatus) => ({ notification_id: 'n1', status, attempts: [] }) as unknown as Notification;

function notifications(fetch: FetchLike, extra: object = {}) {
  return new Notifications(new RequestCore({ baseUrl: 'http://gateway.test', token: 'hrld_test_key', fetch, ...fakeTime().options, ...extra }));
}

describe('notifications.send', () => {
  it('puts the idempotency key in the body only, and retries a 503 with it unchanged', async () => {
    const { seen, fetch } = scripted(unavailable, [202, submission]);
    const result = await notifications(fetch).send({ ...message, idempotencyKey: 'order-42' });
    assert.equal(result.notificationId, submission.notificationId);
    assert.equal(seen.length, 2);
    for (const request of seen) {
      assert.equal(request.method, 'POST');
      assert.equal(request.url, 'http://gateway.test/v1/notify');
      assert.equal(request.body.idempotencyKey, 'order-42');
      assert.equal(request.headers['idempotency-key'], undefined);
    }
    assert.deepEqual(seen[0].body, seen[1].body);
  });

  it('takes the key from the per-call options too, and retries with it', async () => {
    const { seen, fetch } = scripted(unavailable, [202, submission]);
    await notifications(fetch).send(message, { idempotencyKey: 'from-options' });
    assert.deepEqual(
      seen.map((request) => request.body.idempotencyKey),
      ['from-options', 'from-options'],
    );
    assert.equal(seen[0].headers['idempotency-key'], undefined);
  });

  it('refuses two different keys, an empty one included (a rejection, like every other argument error)', async () => {
    const { seen, fetch } = scripted([202, submission]);
    await assert.rejects(notifications(fetch).send({ ...message, idempotencyKey: 'a' }, { idempotencyKey: 'b' }), TypeError);
    await assert.rejects(notifications(fetch).send({ ...message, idempotencyKey: '' }, { idempotencyKey: 'b' }), TypeError);
    assert.equal(seen.length, 0);
  });

  it('does not retry a 503 without a key: the send may have happened', async () => {
    const { seen, fetch } = scripted(unavailable, [202, submission]);
    const error = await notifications(fetch).send(message).catch((e) => e);
    assert.ok(error instanceof HeraldApiError);
    assert.equal(error.code, 'SERVICE_UNAVAILABLE');
    assert.equal(seen.length, 1);
    assert.equal(seen[0].body.idempotencyKey, undefined);
    assert.equal(seen[0].headers['idempotency-key'], undefined);
  });
});

describe('notifications.sendBulk', () => {
  it('retries a 503 only when every entry carries an idempotency key', async () => {
    const keyed = scripted(unavailable, [202, { results: [] }]);
    await notifications(keyed.fetch).sendBulk([0, 1].map((i) => ({ ...message, idempotencyKey: `k-${i}` })));
    assert.equal(keyed.seen.length, 2);
    assert.deepEqual(
      keyed.seen[1].body.notifications.map((n: any) => n.idempotencyKey),
      ['k-0', 'k-1'],
    );

    const partly = scripted(unavailable, [202, { results: [] }]);
    await assert.rejects(notifications(partly.fetch).sendBulk([{ ...message, idempotencyKey: 'k-0' }, message]), HeraldApiError);
    assert.equal(partly.seen.length, 1);
  });
});

describe('notifications.list and get', () => {
  it('sends the filters as the query and encodes the id', async () => {
    const { seen, fetch } = scripted([200, { data: [], total: 0, page: 2 }], [200, record('queued')]);
    const client = notifications(fetch);
    await client.list({ page: 2, limit: 5, status: 'failed', wallet: message.wallet });
    assert.equal(seen[0].url, `http://gateway.test/v1/notifications?page=2&limit=5&status=failed&wallet=${message.wallet}`);
    await client.get('a/b');
    assert.equal(seen[1].url, 'http://gateway.test/v1/notifications/a%2Fb');
  });
});

describe('notifications.waitForDelivery', () => {
  it('polls every intervalMs until the status is final and resolves with the record', async () => {
    const { time, options } = fakeTime();
    const { seen, fetch } = scripted([200, record('queued')], [200, record('sending')], [200, record('delivered')]);
    const result = await notifications(fetch, options).waitForDelivery('n1', { intervalMs: 250 });
    assert.equal(result.status, 'delivered');
    assert.equal(seen.length, 3);
    assert.deepEqual(time.sleeps, [250, 250]);
  });

  for (const status of ['bounced', 'failed', 'opted_out'] as const) {
    it(`resolves on ${status} too, without waiting`, async () => {
      const { time, options } = fakeTime();
      const { fetch } = scripted([200, record(status)]);
      assert.equal((await notifications(fetch, options).waitForDelivery('n1')).status, status);
      assert.deepEqual(time.sleeps, []);
    });
  }

  it('rejects with HeraldWaitTimeoutError after timeoutMs, with the last record', async () => {
    const { time, options } = fakeTime();
    const { seen, fetch } = scripted([200, record('queued')], [200, record('sending')]);
    const error = await notifications(fetch, options)
      .waitForDelivery('n1', { timeoutMs: 1000, intervalMs: 400 })
      .catch((e) => e);
    assert.ok(error instanceof HeraldWaitTimeoutError, String(error));
    assert.deepEqual([error.notificationId, error.timeoutMs, error.lastStatus], ['n1', 1000, 'sending']);
    assert.equal(error.notification.status, 'sending');
    assert.match(error.message, /n1 was still sending after 1000 ms/);
    // Reads at 0, 400, 800 and 1000 ms: the last wait is cut to the deadline.
    assert.deepEqual(time.sleeps, [400, 400, 200]);
    assert.equal(seen.length, 4);
  });

  it('sits out a read still rate-limited after its retries instead of failing the wait', async () => {
    const { time, options } = fakeTime();
    const limited: [number, unknown] = [429, { statusCode: 429, error: 'Too Many Requests', message: 'slow down', code: 'RATE_LIMIT_EXCEEDED' }];
    // The read's own retries (maxRetries 0 here) are spent at once; the wait then reads again.
    const { seen, fetch } = scripted(limited, [200, record('delivered')]);
    const result = await notifications(fetch, { ...options, maxRetries: 0 }).waitForDelivery('n1', { intervalMs: 300 });
    assert.equal(result.status, 'delivered');
    assert.equal(seen.length, 2);
    assert.deepEqual(time.sleeps, [300]);
  });

  it('rejects with HeraldWaitTimeoutError, not the 429, when the rate limit outlasts timeoutMs', async () => {
    const { options } = fakeTime();
    const limited: [number, unknown] = [429, { statusCode: 429, error: 'Too Many Requests', message: 'slow down', code: 'RATE_LIMIT_EXCEEDED' }];
    const read = scripted([200, record('queued')], limited);
    const error = await notifications(read.fetch, { ...options, maxRetries: 0 }).waitForDelivery('n1', { timeoutMs: 2500, intervalMs: 500 }).catch((e) => e);
    assert.ok(error instanceof HeraldWaitTimeoutError, String(error));
    assert.equal(error.lastStatus, 'queued', 'the last record read');
    const never = scripted(limited);
    const unread = await notifications(never.fetch, { ...fakeTime().options, maxRetries: 0 }).waitForDelivery('n1', { timeoutMs: 2500, intervalMs: 500 }).catch((e) => e);
    assert.ok(unread instanceof HeraldWaitTimeoutError);
    assert.equal(unread.notification, undefined);
    assert.match(unread.message, /could not be read within 2500 ms/);
  });

  it('ends a read still under way a second after timeoutMs, retries included', async () => {
    // A gateway that never answers; the read's own timeout (30 s) would outlast the wait.
    const fetch: FetchLike = (_url, init) =>
      new Promise((_resolve, reject) => init.signal?.addEventListener('abort', () => reject(init.signal!.reason)));
    const started = Date.now();
    const error = await new Notifications(new RequestCore({ baseUrl: 'http://gateway.test', fetch })).waitForDelivery('n1', { timeoutMs: 100 }).catch((e) => e);
    assert.ok(error instanceof HeraldWaitTimeoutError, String(error));
    assert.equal(error.notification, undefined);
    assert.equal(error.cause, undefined, 'slow, not refused');
    assert.ok(Date.now() - started < 10_000, 'not the read timeout of 30 s, nor its retries');
  });

  it("names the rate limit's refusal as the cause when the deadline ends a read sitting it out between its own retries", async () => {
    let reads = 0;
    // The first read answers; every later attempt is refused with Retry-After: 1, which the read's
    // own retries (2 by default) sit out until the deadline's grace ends them.
    const fetch: FetchLike = async () => {
      reads++;
      if (reads === 1) return new Response(JSON.stringify(record('queued')), { status: 200, headers: { 'content-type': 'application/json' } });
      const refusal = { statusCode: 429, error: 'Too Many Requests', message: 'slow down', code: 'RATE_LIMIT_EXCEEDED' };
      return new Response(JSON.stringify(refusal), { status: 429, headers: { 'content-type': 'application/json', 'retry-after': '1' } });
    };
    const client = new Notifications(new RequestCore({ baseUrl: 'http://gateway.test', fetch, random: () => 0 }));
    const error = await client.waitForDelivery('n1', { timeoutMs: 200, intervalMs: 100 }).catch((e) => e);
    assert.ok(error instanceof HeraldWaitTimeoutError, String(error));
    assert.equal(error.notification?.status, 'queued');
    assert.ok(error.cause instanceof HeraldApiError, String(error.cause));
    assert.equal(error.cause.statusCode, 429);
    assert.ok(reads >= 2);
  });

  it('refuses an interval that is not a number > 0 or a timeout that is not a number ≥ 0 before any read', async () => {
    const { seen, fetch } = scripted([200, record('queued')]);
    for (const wait of [{ intervalMs: 0 }, { intervalMs: -5 }, { intervalMs: Number.NaN }, { intervalMs: Number.POSITIVE_INFINITY }, { timeoutMs: -1 }, { timeoutMs: Number.NaN }]) {
      await assert.rejects(notifications(fetch).waitForDelivery('n1', wait), RangeError, JSON.stringify(wait));
    }
    assert.equal(seen.length, 0);
  });

  it('passes a read error through', async () => {
    const { fetch } = scripted([404, { statusCode: 404, error: 'Not Found', message: 'nope', code: 'NOTIFICATION_NOT_FOUND' }]);
    const error = await notifications(fetch).waitForDelivery('missing').catch((e) => e);
    assert.equal(error.code, 'NOTIFICATION_NOT_FOUND');
    assert.equal(lastReadOf(error), undefined, 'no read answered');
  });

  it('keeps the record last read for a read error that ends the wait (lastReadOf)', async () => {
    const { options } = fakeTime();
    const answered = scripted([200, record('queued')], [200, record('sending')]);
    // Two reads answer, then the gateway is gone.
    const fetch: FetchLike = (url, init) =>
      answered.seen.length < 2 ? answered.fetch(url, init) : Promise.reject(new TypeError('fetch failed', { cause: Object.assign(new Error('refused'), { code: 'ECONNREFUSED' }) }));
    const error = await notifications(fetch, { ...options, maxRetries: 0 }).waitForDelivery('n1', { intervalMs: 100 }).catch((e) => e);
    assert.ok(error instanceof HeraldNetworkError, String(error));
    assert.equal(error.kind, 'connection_refused');
    assert.equal(lastReadOf(error)?.status, 'sending');
    assert.equal(lastReadOf(new HeraldNetworkError('network', 'thrown elsewhere')), undefined);

    const timedOut = await notifications(scripted([200, record('queued')]).fetch, fakeTime().options).waitForDelivery('n1', { timeoutMs: 500 }).catch((e) => e);
    assert.ok(timedOut instanceof HeraldWaitTimeoutError);
    assert.equal(lastReadOf(timedOut), timedOut.notification, 'the timeout carries it as notification');
  });

  it('stops at once when its signal aborts', async () => {
    const { fetch } = scripted([200, record('queued')]);
    const controller = new AbortController();
    const client = new Notifications(new RequestCore({ baseUrl: 'http://gateway.test', fetch }));
    const waiting = client.waitForDelivery('n1', { intervalMs: 60_000, signal: controller.signal });
    setTimeout(() => controller.abort(new Error('stop')), 20);
    await assert.rejects(waiting, /stop/);
  });
});

describe('identities', () => {
  it('does not retry an erasure after a 5xx: the first attempt may have used its challenge up', async () => {
    const { seen, fetch } = scripted(unavailable, [200, { deleted: true }]);
    const identities = new Identities(new RequestCore({ baseUrl: 'http://gateway.test', fetch, ...fakeTime().options }));
    const error = await identities.delete(message.wallet, { nonce: 'n', signature: 's' }).catch((e) => e);
    assert.ok(error instanceof HeraldApiError && error.statusCode === 503);
    assert.equal(seen.length, 1);
  });

  it('retries a verification after a 5xx: a repeat of one that succeeded is answered alike', async () => {
    const verified = { wallet: message.wallet, channel: 'email', verified: true };
    const { seen, fetch } = scripted(unavailable, [200, verified]);
    const identities = new Identities(new RequestCore({ baseUrl: 'http://gateway.test', fetch, ...fakeTime().options }));
    assert.deepEqual(await identities.verify({ wallet: message.wallet, channel: 'email', code: '123456' }), verified);
    assert.equal(seen.length, 2);
  });

  it('never sends the API key to the public routes', async () => {
    const { seen, fetch } = scripted([200, { message: 'm', nonce: 'n', expiresAt: '2026-01-01T00:00:00.000Z' }]);
    await new Identities(new RequestCore({ baseUrl: 'http://gateway.test', token: 'hrld_live_secret', fetch })).challenge({ wallet: message.wallet });
    assert.equal(seen[0].headers.authorization, undefined);
    assert.deepEqual(seen[0].body, { wallet: message.wallet });
  });
});
