import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import Stripe from 'stripe';
import { verifyWebhookSignature } from '../../packages/sdk/src/webhooks.js';
import { recordQuotaExceeded } from '../../packages/server/src/limits/record-quota-exceeded.js';
import { fanOutEvents } from '../../packages/server/src/webhooks/fan-out-events.js';
import { call, onPostgres, type TestProtocol } from '../support/gateway.js';
import { deliveriesOf, recordNotificationEvent, registerHook, startHarness, TIMEOUT_MS, WALLET, type Harness } from './harness.js';
import { startReceiver, type Receiver } from './receiver.js';

const stripe = new Stripe('sk_test_unused');

describe('webhook delivery', () => {
  let h: Harness;
  let receiver: Receiver;
  let acme: TestProtocol;

  before(async () => {
    [h, receiver] = await Promise.all([startHarness(), startReceiver()]);
    acme = await h.gw.createProtocol({ tier: 3 });
    receiver.answer = (req) => {
      const [, kind, arg] = req.path.split('/');
      if (kind === 'status') return { status: Number(arg), body: arg === '500' ? 'x'.repeat(3000) : `answer ${arg}` };
      if (kind === 'hang') return 'hang';
      if (kind === 'redirect') return { status: 302, headers: { location: `${receiver.url}/target` } };
      if (kind === 'slow') return { status: 200, body: 'ok', delayMs: 150 };
      return { status: 200, body: 'ok' };
    };
  });
  after(async () => {
    await receiver.close();
    await h.close();
  });

  const requestsTo = (path: string) => receiver.requests.filter((r) => r.path === path);
  const remove = (id: string) => call(h.gw.url, acme.apiKey, 'DELETE', `/v1/webhooks/${id}`);

  it('sends the envelope, signed so that our SDK and stripe.webhooks.constructEvent both accept it', async () => {
    const hook = await registerHook(h, acme.apiKey, `${receiver.url}/signed`, ['notification.delivered']);
    const eventId = await recordNotificationEvent(h, acme.id, 'notification.delivered', 'n_signed');
    await h.drain();
    const [request] = requestsTo('/signed');
    assert.equal(request.method, 'POST');
    assert.equal(request.headers['content-type'], 'application/json');
    assert.match(String(request.headers['user-agent']), /^Herald-Webhooks\//);
    const header = String(request.headers['x-service-signature']);
    const t = Math.floor(h.clock.now.getTime() / 1000);
    assert.match(header, new RegExp(`^t=${t},v1=[0-9a-f]{64}$`));

    assert.deepEqual(JSON.parse(request.body), {
      id: eventId,
      type: 'notification.delivered',
      created: t,
      data: { notification_id: 'n_signed', wallet: WALLET, channel: 'email', delivered_at: h.clock.now.toISOString() },
    });

    const now = h.clock.now.getTime();
    assert.equal(verifyWebhookSignature(request.body, header, hook.secret, { now }), true);
    const event = stripe.webhooks.constructEvent(request.body, header, hook.secret, 300, undefined, now) as unknown as { id: string };
    assert.equal(event.id, eventId);

    const tampered = request.body.replace('n_signed', 'n_forged');
    assert.equal(verifyWebhookSignature(tampered, header, hook.secret, { now }), false);
    assert.throws(() => stripe.webhooks.constructEvent(tampered, header, hook.secret, 300, undefined, now), /No signatures found/);
    assert.equal(verifyWebhookSignature(request.body, header, hook.secret, { now: now + 301_000 }), false);
    assert.throws(() => stripe.webhooks.constructEvent(request.body, header, hook.secret, 300, undefined, now + 301_000), /tolerance/);
    assert.equal(verifyWebhookSignature(request.body, header, 'whsec_someone_else', { now }), false);

    const log = await deliveriesOf(h, acme.apiKey, hook.id);
    assert.equal(log.total, 1);
    const [delivery] = log.data;
    assert.match(delivery.id, /^whd_/);
    assert.equal(delivery.eventId, eventId);
    assert.equal(delivery.eventType, 'notification.delivered');
    assert.equal(delivery.status, 'succeeded');
    assert.equal(delivery.nextAttemptAt, null);
    assert.equal(delivery.lastStatusCode, 200);
    assert.deepEqual(delivery.event, JSON.parse(request.body));
    assert.equal(delivery.attempts.length, 1);
    assert.deepEqual({ ...delivery.attempts[0], latencyMs: 0 }, { statusCode: 200, latencyMs: 0, responseBody: 'ok', error: null, createdAt: h.clock.now.toISOString() });
    assert.ok(Number.isInteger(delivery.attempts[0].latencyMs) && delivery.attempts[0].latencyMs >= 0);
    await remove(hook.id);
  });

  it('fans an event out only to active endpoints of its protocol subscribed to its type, once each', async () => {
    const other = await h.gw.createProtocol({ tier: 3 });
    const yes = await registerHook(h, acme.apiKey, `${receiver.url}/fan/yes`, ['notification.bounced']);
    const alsoYes = await registerHook(h, acme.apiKey, `${receiver.url}/fan/also`, ['quota.exceeded', 'notification.bounced']);
    const wrongType = await registerHook(h, acme.apiKey, `${receiver.url}/fan/type`, ['notification.delivered']);
    const inactive = await registerHook(h, acme.apiKey, `${receiver.url}/fan/inactive`, ['notification.bounced']);
    await call(h.gw.url, acme.apiKey, 'PATCH', `/v1/webhooks/${inactive.id}`, { isActive: false });
    const foreign = await registerHook(h, other.apiKey, `${receiver.url}/fan/foreign`, ['notification.bounced']);
    const eventId = await recordNotificationEvent(h, acme.id, 'notification.bounced', 'n_fan');
    await h.drain();
    await h.drain();
    assert.equal(requestsTo('/fan/yes').length, 1);
    assert.equal(requestsTo('/fan/also').length, 1);
    for (const path of ['/fan/type', '/fan/inactive', '/fan/foreign']) assert.equal(requestsTo(path).length, 0, path);
    const body = JSON.parse(requestsTo('/fan/yes')[0].body);
    assert.deepEqual(body.data, { notification_id: 'n_fan', wallet: WALLET, channel: 'email', delivered_at: null, reason: 'mailbox full', attempts: 3 });
    const rows = await h.gw.herald.deps.db.query('SELECT endpoint_id FROM webhook_deliveries WHERE event_id = $1', [eventId]);
    assert.equal(rows.length, 2);
    for (const hook of [yes, alsoYes, wrongType, inactive]) await remove(hook.id);
    await call(h.gw.url, other.apiKey, 'DELETE', `/v1/webhooks/${foreign.id}`);
  });

  describe('an endpoint changed while its claimed deliveries are being sent', () => {
    const EVENTS = 8;
    const waitUntil = async (done: () => boolean) => {
      const deadline = Date.now() + 5000;
      while (!done()) {
        if (Date.now() > deadline) throw new Error('timed out');
        await new Promise((resolve) => setTimeout(resolve, 5));
      }
    };
    /** Claims EVENTS deliveries for a slow endpoint, waits for the first two requests, then runs `change`. */
    async function changeMidChain(path: string, change: (id: string) => Promise<unknown>) {
      const hook = await registerHook(h, acme.apiKey, `${receiver.url}${path}`, ['notification.failed']);
      for (let i = 0; i < EVENTS; i++) await recordNotificationEvent(h, acme.id, 'notification.failed');
      await h.dispatcher.pass();
      await waitUntil(() => requestsTo(path).length >= 2);
      const sentBefore = requestsTo(path).length;
      await change(hook.id);
      await h.dispatcher.idle();
      return { hook, sentBefore };
    }

    it('stops sending once it is deactivated, and fails the rest as inactive', async () => {
      const { hook, sentBefore } = await changeMidChain('/slow/deactivated', (id) => call(h.gw.url, acme.apiKey, 'PATCH', `/v1/webhooks/${id}`, { isActive: false }));
      const sent = requestsTo('/slow/deactivated').length;
      assert.ok(sent <= sentBefore + 1, `at most the request in flight goes out after the change: ${sentBefore} then ${sent}`);
      assert.ok(sent < EVENTS);
      const rows = await h.gw.herald.deps.db.query<{ status: string; n: number }>(
        'SELECT status, count(*)::int AS n FROM webhook_deliveries WHERE endpoint_id = $1 GROUP BY status ORDER BY status',
        [hook.id],
      );
      assert.deepEqual(rows, [
        { status: 'failed', n: EVENTS - sent },
        { status: 'succeeded', n: sent },
      ]);
      await remove(hook.id);
    });

    it('stops sending once it is deleted', async () => {
      const { sentBefore } = await changeMidChain('/slow/deleted', (id) => remove(id));
      assert.ok(requestsTo('/slow/deleted').length <= sentBefore + 1);
    });

    it('sends the rest to its new URL once it is re-pointed', async () => {
      const { hook, sentBefore } = await changeMidChain('/slow/before', (id) =>
        call(h.gw.url, acme.apiKey, 'PATCH', `/v1/webhooks/${id}`, { url: `${receiver.url}/slow/after` }),
      );
      const before = requestsTo('/slow/before').length;
      assert.ok(before <= sentBefore + 1);
      assert.equal(before + requestsTo('/slow/after').length, EVENTS, 'every event once, to one URL or the other');
      await remove(hook.id);
    });
  });

  // PGlite runs one transaction at a time, so the deletion and the pass cannot overlap there.
  it('fans out past an endpoint deleted while the pass runs', { skip: !onPostgres && 'needs concurrent transactions (PostgreSQL)' }, async () => {
    const kept = await registerHook(h, acme.apiKey, `${receiver.url}/fan/kept`, ['notification.failed']);
    const doomed = await registerHook(h, acme.apiKey, `${receiver.url}/fan/doomed`, ['notification.failed']);
    const eventId = await recordNotificationEvent(h, acme.id, 'notification.failed');
    const { db } = h.gw.herald.deps;
    // The deletion is made, not yet committed, when the pass reads the endpoints; it commits during the pass.
    let commit!: () => void;
    const held = new Promise<void>((resolve) => (commit = resolve));
    let deleted!: () => void;
    const deleting = new Promise<void>((resolve) => (deleted = resolve));
    const deletion = db.transaction(async (tx) => {
      await tx.query('DELETE FROM webhook_endpoints WHERE id = $1', [doomed.id]);
      deleted();
      await held;
    });
    await deleting;
    const pass = fanOutEvents(db, { now: h.clock.now, limit: 50 });
    await new Promise((resolve) => setTimeout(resolve, 100));
    commit();
    await deletion;
    assert.equal(await pass, 1);
    const rows = await db.query<{ endpoint_id: string }>('SELECT endpoint_id FROM webhook_deliveries WHERE event_id = $1', [eventId]);
    assert.deepEqual(rows.map((row) => row.endpoint_id), [kept.id]);
    await remove(kept.id);
  });

  it('counts any 2xx as success', async () => {
    const hooks = [];
    for (const status of [200, 201, 202, 204, 299]) {
      hooks.push(await registerHook(h, acme.apiKey, `${receiver.url}/status/${status}`, ['notification.failed']));
    }
    await recordNotificationEvent(h, acme.id, 'notification.failed');
    await h.drain();
    for (const hook of hooks) {
      const [delivery] = (await deliveriesOf(h, acme.apiKey, hook.id)).data;
      assert.equal(delivery.status, 'succeeded');
      assert.equal(delivery.attempts[0].error, null);
      await remove(hook.id);
    }
  });

  it('records 4xx, 5xx, a hang and a redirect as failed attempts, due again in 5 s, and never follows the redirect', async () => {
    const bad = await registerHook(h, acme.apiKey, `${receiver.url}/status/400`, ['receipt.confirmed']);
    const broken = await registerHook(h, acme.apiKey, `${receiver.url}/status/500`, ['receipt.confirmed']);
    const hang = await registerHook(h, acme.apiKey, `${receiver.url}/hang`, ['receipt.confirmed']);
    const moved = await registerHook(h, acme.apiKey, `${receiver.url}/redirect`, ['receipt.confirmed']);
    await h.gw.herald.deps.db.query(
      "INSERT INTO events (id, protocol_id, type, data, created_at) VALUES ('evt_receipt_1', $1, 'receipt.confirmed', $2, $3)",
      [acme.id, JSON.stringify({ notification_id: 'n1', receipt_tx: 'tx1' }), h.clock.now],
    );
    await h.drain();
    const due = new Date(h.clock.now.getTime() + 5000).toISOString();
    const attemptOf = async (id: string) => {
      const [delivery] = (await deliveriesOf(h, acme.apiKey, id)).data;
      assert.equal(delivery.status, 'pending');
      assert.equal(delivery.nextAttemptAt, due);
      assert.equal(delivery.attempts.length, 1);
      return { delivery, attempt: delivery.attempts[0] };
    };

    const a400 = await attemptOf(bad.id);
    assert.equal(a400.attempt.statusCode, 400);
    assert.equal(a400.attempt.responseBody, 'answer 400');
    assert.equal(a400.attempt.error, 'receiver answered 400');
    assert.equal(a400.delivery.lastStatusCode, 400);
    assert.equal(a400.delivery.lastError, 'receiver answered 400');

    const a500 = await attemptOf(broken.id);
    assert.equal(a500.attempt.statusCode, 500);
    assert.equal(a500.attempt.responseBody, 'x'.repeat(1024));

    const aHang = await attemptOf(hang.id);
    assert.equal(aHang.attempt.statusCode, null);
    assert.equal(aHang.attempt.responseBody, null);
    assert.equal(aHang.attempt.error, `no answer within ${TIMEOUT_MS} ms`);
    assert.ok(aHang.attempt.latencyMs >= TIMEOUT_MS - 5, String(aHang.attempt.latencyMs));

    const a302 = await attemptOf(moved.id);
    assert.equal(a302.attempt.statusCode, 302);
    assert.match(a302.attempt.error, /^receiver answered 302 redirecting to http:\/\/127\.0\.0\.1:\d+\/target; redirects are not followed$/);
    assert.equal(requestsTo('/target').length, 0);

    for (const hook of [bad, broken, hang, moved]) await remove(hook.id);
  });

  it('delivers quota.exceeded events written by recordQuotaExceeded', async () => {
    const dev = await h.gw.createProtocol({ tier: 0 });
    const hook = await registerHook(h, dev.apiKey, `${receiver.url}/quota`, ['quota.exceeded']);
    await recordQuotaExceeded(h.gw.herald.deps.db, { id: dev.id, tier: 0, overage_enabled: false }, h.clock.now, 3);
    await recordQuotaExceeded(h.gw.herald.deps.db, { id: dev.id, tier: 0, overage_enabled: false }, h.clock.now, 3);
    await h.drain();
    const requests = requestsTo('/quota');
    assert.equal(requests.length, 1, 'one quota.exceeded per period');
    const body = JSON.parse(requests[0].body);
    assert.equal(body.type, 'quota.exceeded');
    assert.match(body.id, /^evt_/);
    assert.deepEqual(body.data, {
      protocol_id: dev.id,
      period: '2026-03',
      period_start: '2026-03-01T00:00:00.000Z',
      resets_at: '2026-04-01T00:00:00.000Z',
      limit: 1000,
      usage: 0,
      requested: 3,
      exceeded_at: h.clock.now.toISOString(),
    });
    assert.equal(verifyWebhookSignature(requests[0].body, String(requests[0].headers['x-service-signature']), hook.secret, { now: h.clock.now }), true);
  });

  describe('POST /v1/webhooks/:id/test', () => {
    it('sends a signed synthetic notification.delivered to that endpoint only, at once, and records it', async () => {
      const hook = await registerHook(h, acme.apiKey, `${receiver.url}/test/ok`, ['quota.exceeded']);
      const bystander = await registerHook(h, acme.apiKey, `${receiver.url}/test/bystander`, ['notification.delivered']);
      const res = await call(h.gw.url, acme.apiKey, 'POST', `/v1/webhooks/${hook.id}/test`);
      assert.equal(res.status, 200);
      assert.deepEqual(res.body, { sent: true });
      const [request] = requestsTo('/test/ok');
      const body = JSON.parse(request.body);
      assert.equal(body.type, 'notification.delivered');
      assert.match(body.data.notification_id, /^test_/);
      assert.equal(body.data.wallet, '11111111111111111111111111111111');
      assert.equal(body.data.channel, 'email');
      assert.equal(body.data.delivered_at, h.clock.now.toISOString());
      assert.equal(body.data.environment, 'production', "the environment of the key that asked");
      assert.equal(verifyWebhookSignature(request.body, String(request.headers['x-service-signature']), hook.secret, { now: h.clock.now }), true);

      await h.drain();
      assert.equal(requestsTo('/test/bystander').length, 0);
      assert.equal(requestsTo('/test/ok').length, 1);
      const log = await deliveriesOf(h, acme.apiKey, hook.id);
      assert.equal(log.total, 1);
      assert.equal(log.data[0].status, 'succeeded');
      assert.equal(log.data[0].eventId, body.id);
      assert.equal(log.data[0].attempts.length, 1);
      await remove(hook.id);
      await remove(bystander.id);
    });

    it('keeps calling an endpoint stored before the rules that registration adds (a URL ending in a space)', async () => {
      const hook = await registerHook(h, acme.apiKey, `${receiver.url}/test/legacy`, ['quota.exceeded']);
      await h.gw.herald.deps.db.query('UPDATE webhook_endpoints SET url = $1 WHERE id = $2', [`${receiver.url}/test/legacy `, hook.id]);
      const res = await call(h.gw.url, acme.apiKey, 'POST', `/v1/webhooks/${hook.id}/test`);
      assert.deepEqual(res.body, { sent: true });
      assert.equal(requestsTo('/test/legacy').length, 1);
      // …while registering that URL again is refused.
      const again = await call(h.gw.url, acme.apiKey, 'POST', '/v1/webhooks', { url: `${receiver.url}/test/legacy `, events: ['quota.exceeded'] });
      assert.equal(again.status, 400);
      await remove(hook.id);
    });

    it('answers sent: false for a 5xx, a hang or a redirect, and does not retry the test', async () => {
      for (const path of ['/status/503', '/hang', '/redirect']) {
        const hook = await registerHook(h, acme.apiKey, `${receiver.url}${path}`, ['quota.exceeded']);
        const before = requestsTo(path).length;
        const res = await call(h.gw.url, acme.apiKey, 'POST', `/v1/webhooks/${hook.id}/test`);
        assert.equal(res.status, 200);
        assert.deepEqual(res.body, { sent: false }, path);
        const [delivery] = (await deliveriesOf(h, acme.apiKey, hook.id)).data;
        assert.equal(delivery.status, 'failed');
        assert.equal(delivery.nextAttemptAt, null);
        h.clock.advance(60_000);
        await h.drain();
        assert.equal(requestsTo(path).length, before + 1, path);
        // The endpoint's failure streak ignores tests.
        const [row] = await h.gw.herald.deps.db.query('SELECT failing_since FROM webhook_endpoints WHERE id = $1', [hook.id]);
        assert.equal(row.failing_since, null);
        await remove(hook.id);
      }
    });

    it('tests an inactive endpoint too', async () => {
      const hook = await registerHook(h, acme.apiKey, `${receiver.url}/test/inactive`, ['quota.exceeded']);
      await call(h.gw.url, acme.apiKey, 'PATCH', `/v1/webhooks/${hook.id}`, { isActive: false });
      const res = await call(h.gw.url, acme.apiKey, 'POST', `/v1/webhooks/${hook.id}/test`);
      assert.deepEqual(res.body, { sent: true });
      await remove(hook.id);
    });
  });

  it('pages the delivery log newest first', async () => {
    const hook = await registerHook(h, acme.apiKey, `${receiver.url}/log`, ['notification.delivered']);
    const ids = [];
    for (let i = 0; i < 3; i++) {
      ids.push(await recordNotificationEvent(h, acme.id, 'notification.delivered', `n_log_${i}`));
      await h.drain();
      h.clock.advance(1000);
    }
    const first = await deliveriesOf(h, acme.apiKey, hook.id, '?limit=2');
    assert.equal(first.total, 3);
    assert.equal(first.page, 1);
    assert.deepEqual(first.data.map((d: any) => d.eventId), [ids[2], ids[1]]);
    const second = await deliveriesOf(h, acme.apiKey, hook.id, '?limit=2&page=2');
    assert.deepEqual(second.data.map((d: any) => d.eventId), [ids[0]]);
    assert.equal(second.page, 2);
    const beyond = await deliveriesOf(h, acme.apiKey, hook.id, '?page=9');
    assert.deepEqual(beyond.data, []);
    for (const query of ['?limit=0', '?limit=101', '?page=0', '?limit=abc']) {
      const res = await call(h.gw.url, acme.apiKey, 'GET', `/v1/webhooks/${hook.id}/deliveries${query}`);
      assert.equal(res.status, 400, query);
      assert.equal(res.body.code, 'VALIDATION_ERROR');
    }
    await remove(hook.id);
  });
});
