import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { WebhookDispatcher } from '../../packages/server/src/webhooks/dispatcher.js';
import { WebhookSender } from '../../packages/server/src/webhooks/webhook-sender.js';
import { sleep, type TestProtocol } from '../support/gateway.js';
import { recordNotificationEvent, registerHook, startHarness, type Harness } from './harness.js';
import { startReceiver, type Receiver } from './receiver.js';

const SLOW_ENDPOINTS = 20;
const EVENTS = 100;

/**
 * Receivers that take the whole time limit hold their claimed deliveries for most of a lease. They
 * must not hold back the deliveries of other endpoints: here one protocol's twenty endpoints (a
 * Scale tier's all) each hold a full claim of a hundred deliveries, and another protocol's event
 * still goes out in the next pass.
 */
describe('webhook dispatcher fairness', () => {
  let h: Harness;
  let receiver: Receiver;
  let sender: WebhookSender;
  let dispatcher: WebhookDispatcher;
  let slow: TestProtocol;
  let other: TestProtocol;

  before(async () => {
    [h, receiver] = await Promise.all([startHarness(), startReceiver()]);
    receiver.answer = (req) => (req.path.startsWith('/slow') ? 'hang' : { status: 200, body: 'ok' });
    slow = await h.gw.createProtocol({ tier: 2, name: 'Slow receivers' });
    other = await h.gw.createProtocol({ tier: 1, name: 'Other' });
    const config = h.gw.herald.deps.config;
    sender = new WebhookSender({ allowPrivate: true, timeoutMs: config.webhookTimeoutMs, now: () => h.clock.now });
    // The default claim size, unlike the harness's own dispatcher.
    dispatcher = new WebhookDispatcher(h.gw.herald.deps, { sender });
  });
  after(async () => {
    await dispatcher.stop();
    sender.close();
    await receiver.close();
    await h.close();
  });

  it("sends another endpoint's delivery in the next pass while slow receivers hold full claims", async () => {
    for (let i = 0; i < SLOW_ENDPOINTS; i++) await registerHook(h, slow.apiKey, `${receiver.url}/slow/${i}`, ['notification.delivered']);
    for (let i = 0; i < EVENTS; i++) await recordNotificationEvent(h, slow.id);
    // Fan out and claim until every slow endpoint is being sent to (each chain holds a claim of
    // up to a hundred deliveries; its requests time out one after another).
    const slowSentTo = () => new Set(receiver.requests.filter((r) => r.path.startsWith('/slow/')).map((r) => r.path)).size;
    for (let pass = 0; pass < 40 && slowSentTo() < SLOW_ENDPOINTS; pass++) {
      await dispatcher.pass();
      await sleep(20);
    }
    assert.equal(slowSentTo(), SLOW_ENDPOINTS, 'every slow endpoint is being sent to');

    await registerHook(h, other.apiKey, `${receiver.url}/fast`, ['notification.delivered']);
    await recordNotificationEvent(h, other.id, 'notification.delivered', 'n_fast');
    const passed = dispatcher.pass();
    const deadline = Date.now() + 60_000;
    while (!receiver.requests.some((r) => r.path === '/fast') && Date.now() < deadline) await sleep(10);
    const fast = receiver.requests.findIndex((r) => r.path === '/fast');
    assert.ok(fast >= 0, 'the other endpoint was sent to');
    // Sent while the slow endpoints were still early in their claims, not after they gave them
    // back: a dispatcher full of their claims would wait for those chains to end.
    const slowBefore = receiver.requests.slice(0, fast).filter((r) => r.path.startsWith('/slow/')).length;
    assert.ok(slowBefore < (SLOW_ENDPOINTS * EVENTS) / 4, `${slowBefore} slow requests went first`);
    assert.match(receiver.requests[fast].body, /"notification_id":"n_fast"/);
    await passed;
  });
});
