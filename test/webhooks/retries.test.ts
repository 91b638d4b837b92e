import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { call, type TestProtocol } from '../support/gateway.js';
import { deliveriesOf, recordNotificationEvent, registerHook, startHarness, type Harness } from './harness.js';
import { startReceiver, type Receiver } from './receiver.js';

const SECOND = 1000;
const MINUTE = 60 * SECOND;
const HOUR = 60 * MINUTE;
const DAY = 24 * HOUR;

describe('webhook retries, ordering, replay and deactivation (fake clock)', () => {
  let h: Harness;
  let receiver: Receiver;
  let acme: TestProtocol;
  /** Status answered per path; 200 when unset. */
  const statusFor = new Map<string, number | ((eventId: string) => number)>();

  before(async () => {
    [h, receiver] = await Promise.all([startHarness(), startReceiver()]);
    acme = await h.gw.createProtocol({ tier: 3 });
    receiver.answer = (req) => {
      const rule = statusFor.get(req.path) ?? 200;
      const status = typeof rule === 'number' ? rule : rule(JSON.parse(req.body).id);
      return { status, body: String(status) };
    };
  });
  after(async () => {
    await receiver.close();
    await h.close();
  });

  const requestsTo = (path: string) => receiver.requests.filter((r) => r.path === path);
  const remove = (id: string) => call(h.gw.url, acme.apiKey, 'DELETE', `/v1/webhooks/${id}`);

  it('retries after 5 s, 5 min, 30 min, 2 h, 5 h, 10 h and 10 h, then fails for good', async () => {
    statusFor.set('/schedule', 503);
    const hook = await registerHook(h, acme.apiKey, `${receiver.url}/schedule`, ['notification.failed']);
    await recordNotificationEvent(h, acme.id, 'notification.failed');
    await h.drain();
    assert.equal(requestsTo('/schedule').length, 1, 'first attempt at once');
    const waits = [5 * SECOND, 5 * MINUTE, 30 * MINUTE, 2 * HOUR, 5 * HOUR, 10 * HOUR, 10 * HOUR];
    for (const [i, wait] of waits.entries()) {
      const [pending] = (await deliveriesOf(h, acme.apiKey, hook.id)).data;
      assert.equal(pending.status, 'pending');
      assert.equal(pending.nextAttemptAt, new Date(h.clock.now.getTime() + wait).toISOString());
      h.clock.advance(wait - 1);
      await h.drain();
      assert.equal(requestsTo('/schedule').length, i + 1, `not before ${wait} ms`);
      h.clock.advance(1);
      await h.drain();
      assert.equal(requestsTo('/schedule').length, i + 2, `attempt ${i + 2} after ${wait} ms`);
    }
    const [failed] = (await deliveriesOf(h, acme.apiKey, hook.id)).data;
    assert.equal(failed.status, 'failed');
    assert.equal(failed.nextAttemptAt, null);
    assert.equal(failed.completedAt, h.clock.now.toISOString());
    assert.equal(failed.attempts.length, 8);
    assert.ok(failed.attempts.every((a: any) => a.statusCode === 503 && a.error === 'receiver answered 503'));
    h.clock.advance(100 * HOUR);
    await h.drain();
    assert.equal(requestsTo('/schedule').length, 8);
    // Each attempt is signed afresh: the timestamps differ.
    const stamps = new Set(requestsTo('/schedule').map((r) => /t=(\d+)/.exec(String(r.headers['x-service-signature']))![1]));
    assert.equal(stamps.size, 8);
    await remove(hook.id);
  });

  it('stops retrying once the receiver answers 2xx', async () => {
    statusFor.set('/recover', 500);
    const hook = await registerHook(h, acme.apiKey, `${receiver.url}/recover`, ['notification.delivered']);
    await recordNotificationEvent(h, acme.id);
    await h.drain();
    statusFor.set('/recover', 200);
    h.clock.advance(5 * SECOND);
    await h.drain();
    h.clock.advance(DAY);
    await h.drain();
    assert.equal(requestsTo('/recover').length, 2);
    const [delivery] = (await deliveriesOf(h, acme.apiKey, hook.id)).data;
    assert.equal(delivery.status, 'succeeded');
    assert.deepEqual(delivery.attempts.map((a: any) => a.statusCode), [500, 200]);
    await remove(hook.id);
  });

  it('sends one endpoint its events in creation order', async () => {
    const hook = await registerHook(h, acme.apiKey, `${receiver.url}/order`, ['notification.delivered']);
    const ids = [];
    for (let i = 0; i < 12; i++) {
      ids.push(await recordNotificationEvent(h, acme.id));
      h.clock.advance(1);
    }
    await h.drain();
    assert.deepEqual(requestsTo('/order').map((r) => JSON.parse(r.body).id), ids);
    await remove(hook.id);
  });

  it('does not hold later events back while an earlier one waits for its retry', async () => {
    const hook = await registerHook(h, acme.apiKey, `${receiver.url}/overtake`, ['notification.delivered']);
    const first = await recordNotificationEvent(h, acme.id);
    h.clock.advance(1);
    const second = await recordNotificationEvent(h, acme.id);
    h.clock.advance(1);
    const third = await recordNotificationEvent(h, acme.id);
    let failFirst = true;
    statusFor.set('/overtake', (id) => (id === first && failFirst ? 500 : 200));
    await h.drain();
    assert.deepEqual(requestsTo('/overtake').map((r) => JSON.parse(r.body).id), [first, second, third]);
    failFirst = false;
    h.clock.advance(5 * SECOND);
    await h.drain();
    assert.deepEqual(requestsTo('/overtake').map((r) => JSON.parse(r.body).id), [first, second, third, first]);
    await remove(hook.id);
  });

  it('replays a delivery: 202, due now with a fresh schedule, sent by the next pass', async () => {
    statusFor.set('/replay', 500);
    const hook = await registerHook(h, acme.apiKey, `${receiver.url}/replay`, ['notification.delivered']);
    await recordNotificationEvent(h, acme.id);
    await h.drain();
    for (let i = 0; i < 8; i++) {
      h.clock.advance(11 * HOUR);
      await h.drain();
    }
    let [delivery] = (await deliveriesOf(h, acme.apiKey, hook.id)).data;
    assert.equal(delivery.status, 'failed');
    assert.equal(delivery.attempts.length, 8);

    statusFor.set('/replay', 204);
    const res = await call(h.gw.url, acme.apiKey, 'POST', `/v1/webhooks/${hook.id}/deliveries/${delivery.id}/retry`);
    assert.equal(res.status, 202);
    assert.equal(res.body.id, delivery.id);
    assert.equal(res.body.status, 'pending');
    assert.equal(res.body.nextAttemptAt, h.clock.now.toISOString());
    assert.equal(res.body.completedAt, null);
    assert.equal(res.body.attempts.length, 8, 'earlier attempts stay in the log');
    await h.drain();
    [delivery] = (await deliveriesOf(h, acme.apiKey, hook.id)).data;
    assert.equal(delivery.status, 'succeeded');
    assert.equal(delivery.attempts.length, 9);
    assert.equal(requestsTo('/replay').length, 9);

    // A succeeded delivery can be replayed too; a failure then starts the schedule from the top.
    statusFor.set('/replay', 500);
    await call(h.gw.url, acme.apiKey, 'POST', `/v1/webhooks/${hook.id}/deliveries/${delivery.id}/retry`);
    await h.drain();
    [delivery] = (await deliveriesOf(h, acme.apiKey, hook.id)).data;
    assert.equal(delivery.status, 'pending');
    assert.equal(delivery.nextAttemptAt, new Date(h.clock.now.getTime() + 5 * SECOND).toISOString());
    await remove(hook.id);
  });

  it('refuses to replay on an inactive endpoint with 409', async () => {
    const hook = await registerHook(h, acme.apiKey, `${receiver.url}/replay-off`, ['notification.delivered']);
    await recordNotificationEvent(h, acme.id);
    await h.drain();
    const [delivery] = (await deliveriesOf(h, acme.apiKey, hook.id)).data;
    await call(h.gw.url, acme.apiKey, 'PATCH', `/v1/webhooks/${hook.id}`, { isActive: false });
    const res = await call(h.gw.url, acme.apiKey, 'POST', `/v1/webhooks/${hook.id}/deliveries/${delivery.id}/retry`);
    assert.equal(res.status, 409);
    assert.equal(res.body.code, 'CONFLICT');
    assert.match(res.body.message, /inactive/);
    await remove(hook.id);
  });

  it('sets an endpoint inactive after 5 days of nothing but failures; a success restarts the count', async () => {
    const path = '/failing';
    statusFor.set(path, 500);
    const hook = await registerHook(h, acme.apiKey, `${receiver.url}${path}`, ['notification.delivered']);
    const failingSince = async () =>
      (await h.gw.herald.deps.db.query('SELECT failing_since FROM webhook_endpoints WHERE id = $1', [hook.id]))[0].failing_since as Date | null;
    const isActive = async () => (await call(h.gw.url, acme.apiKey, 'GET', '/v1/webhooks')).body.find((w: any) => w.id === hook.id).isActive;

    const t0 = h.clock.now;
    await recordNotificationEvent(h, acme.id);
    await h.drain();
    assert.deepEqual(await failingSince(), t0);

    h.clock.advance(3 * DAY);
    statusFor.set(path, 200);
    await recordNotificationEvent(h, acme.id);
    await h.drain();
    assert.equal(await failingSince(), null, 'a success ends the streak');

    statusFor.set(path, 500);
    const streakStart = h.clock.now;
    await recordNotificationEvent(h, acme.id);
    await h.drain();
    assert.deepEqual(await failingSince(), streakStart);

    h.clock.advance(5 * DAY - MINUTE);
    await recordNotificationEvent(h, acme.id);
    await h.drain();
    assert.equal(await isActive(), true, 'one minute short of 5 days');

    h.clock.advance(MINUTE);
    await recordNotificationEvent(h, acme.id);
    await h.drain();
    assert.equal(await isActive(), false);
    const [row] = await h.gw.herald.deps.db.query('SELECT disabled_reason FROM webhook_endpoints WHERE id = $1', [hook.id]);
    assert.match(row.disabled_reason, /failed for 5 days/);

    // Nothing more is sent: pending deliveries end as failed without a request, new events skip it.
    const sent = requestsTo(path).length;
    await recordNotificationEvent(h, acme.id);
    h.clock.advance(DAY);
    await h.drain();
    assert.equal(requestsTo(path).length, sent);
    const log = await deliveriesOf(h, acme.apiKey, hook.id, '?limit=100');
    assert.ok(log.data.every((d: any) => d.status !== 'pending'));
    assert.ok(log.data.some((d: any) => d.lastError === 'endpoint is inactive'));
    const events = log.total;

    // Turning it on again clears the streak; it receives new events.
    const res = await call(h.gw.url, acme.apiKey, 'PATCH', `/v1/webhooks/${hook.id}`, { isActive: true });
    assert.equal(res.body.isActive, true);
    assert.equal(await failingSince(), null);
    statusFor.set(path, 200);
    await recordNotificationEvent(h, acme.id);
    await h.drain();
    assert.equal(requestsTo(path).length, sent + 1);
    assert.equal((await deliveriesOf(h, acme.apiKey, hook.id)).total, events + 1);
    await remove(hook.id);
  });

  it('sends nothing to an endpoint deleted before its event went out', async () => {
    const hook = await registerHook(h, acme.apiKey, `${receiver.url}/deleted`, ['notification.delivered']);
    await recordNotificationEvent(h, acme.id);
    await remove(hook.id);
    await h.drain();
    assert.equal(requestsTo('/deleted').length, 0);
  });
});
