import assert from 'node:assert/strict';
import { createHmac } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import Stripe from 'stripe';
import { verifyWebhookSignature } from '../../packages/sdk/src/webhooks.js';
import { call, isErrorBody, type TestProtocol } from '../support/gateway.js';
import { recordNotificationEvent, registerHook, startHarness, type Harness } from './harness.js';
import { startReceiver, type Receiver } from './receiver.js';

const stripe = new Stripe('sk_test_unused');
const DAY_MS = 24 * 60 * 60 * 1000;

/** The v1 entries of a signature header, in order. */
const v1Entries = (header: string) => header.split(',').filter((part) => part.startsWith('v1=')).map((part) => part.slice(3));
const hmac = (secret: string, t: string, body: string) => createHmac('sha256', secret).update(`${t}.${body}`).digest('hex');

describe('webhook secret rotation and GET /v1/webhooks/:id', () => {
  let h: Harness;
  let receiver: Receiver;
  let acme: TestProtocol;
  let rival: TestProtocol;

  before(async () => {
    [h, receiver] = await Promise.all([startHarness(), startReceiver()]);
    acme = await h.gw.createProtocol({ tier: 3 });
    rival = await h.gw.createProtocol({ tier: 3 });
    receiver.answer = () => ({ status: 200, body: 'ok' });
  });
  after(async () => {
    await receiver.close();
    await h.close();
  });

  const rotate = (id: string, body?: unknown, key = acme.apiKey) => call(h.gw.url, key, 'POST', `/v1/webhooks/${id}/rotate-secret`, body);
  const lastRequestTo = (path: string) => receiver.requests.filter((r) => r.path === path).at(-1)!;
  const deliverOne = async (path: string, notificationId: string) => {
    await recordNotificationEvent(h, acme.id, 'notification.delivered', notificationId);
    await h.drain();
    const request = lastRequestTo(path);
    assert.equal(JSON.parse(request.body).data.notification_id, notificationId);
    return { body: request.body, header: String(request.headers['x-service-signature']) };
  };

  it('signs with the new and the old secret until the old one expires, then with the new one only', async () => {
    const hook = await registerHook(h, acme.apiKey, `${receiver.url}/rotating`, ['notification.delivered']);
    const before = await deliverOne('/rotating', 'n_before');
    assert.equal(v1Entries(before.header).length, 1);

    const rotated = await rotate(hook.id);
    assert.equal(rotated.status, 200, JSON.stringify(rotated.body));
    assert.equal(rotated.headers.get('cache-control'), 'no-store', 'an answer holding a secret is not cached');
    assert.deepEqual(Object.keys(rotated.body).sort(), ['events', 'id', 'isActive', 'previousSecretExpiresAt', 'secret', 'url']);
    assert.match(rotated.body.secret, /^whsec_[A-Za-z0-9_-]{43}$/);
    assert.notEqual(rotated.body.secret, hook.secret);
    assert.equal(rotated.body.previousSecretExpiresAt, new Date(h.clock.now.getTime() + DAY_MS).toISOString(), 'the old secret stays valid 24 hours by default');

    const during = await deliverOne('/rotating', 'n_during');
    const t = /^t=(\d+),/.exec(during.header)![1];
    assert.deepEqual(v1Entries(during.header), [hmac(rotated.body.secret, t, during.body), hmac(hook.secret, t, during.body)], 'new secret first, then the old');
    const now = h.clock.now.getTime();
    // A receiver still on the old secret and one already on the new accept it alike.
    assert.equal(verifyWebhookSignature(during.body, during.header, hook.secret, { now }), true);
    assert.equal(verifyWebhookSignature(during.body, during.header, rotated.body.secret, { now }), true);
    assert.ok(stripe.webhooks.constructEvent(during.body, during.header, hook.secret, 300, undefined, now));
    assert.ok(stripe.webhooks.constructEvent(during.body, during.header, rotated.body.secret, 300, undefined, now));

    // The test event is signed the same way.
    const test = await call(h.gw.url, acme.apiKey, 'POST', `/v1/webhooks/${hook.id}/test`);
    assert.deepEqual(test.body, { sent: true });
    assert.equal(v1Entries(String(lastRequestTo('/rotating').headers['x-service-signature'])).length, 2);

    h.clock.advance(DAY_MS);
    const after = await deliverOne('/rotating', 'n_after');
    assert.equal(v1Entries(after.header).length, 1);
    assert.equal(verifyWebhookSignature(after.body, after.header, rotated.body.secret, { now: h.clock.now.getTime() }), true);
    assert.equal(verifyWebhookSignature(after.body, after.header, hook.secret, { now: h.clock.now.getTime() }), false);
    assert.equal((await call(h.gw.url, acme.apiKey, 'GET', `/v1/webhooks/${hook.id}`)).body.previousSecretExpiresAt, null);
  });

  it('keeps only the last secret replaced, for the time asked (0: dropped at once)', async () => {
    const hook = await registerHook(h, acme.apiKey, `${receiver.url}/twice`, ['notification.delivered']);
    const first = await rotate(hook.id, { previousSecretExpiresInSeconds: 60 });
    assert.equal(first.body.previousSecretExpiresAt, new Date(h.clock.now.getTime() + 60_000).toISOString());
    const second = await rotate(hook.id, {});
    const signed = await deliverOne('/twice', 'n_twice');
    const t = /^t=(\d+),/.exec(signed.header)![1];
    assert.deepEqual(v1Entries(signed.header), [hmac(second.body.secret, t, signed.body), hmac(first.body.secret, t, signed.body)], 'the original secret is no longer signed with');

    const dropped = await rotate(hook.id, { previousSecretExpiresInSeconds: 0 });
    assert.equal(dropped.status, 200);
    assert.equal(dropped.body.previousSecretExpiresAt, null);
    const only = await deliverOne('/twice', 'n_only');
    assert.deepEqual(v1Entries(only.header), [hmac(dropped.body.secret, /^t=(\d+),/.exec(only.header)![1], only.body)]);
  });

  it('GET /v1/webhooks/:id answers one endpoint without its secret', async () => {
    const hook = await registerHook(h, acme.apiKey, `${receiver.url}/detail`, ['notification.delivered', 'notification.failed']);
    const res = await call(h.gw.url, acme.apiKey, 'GET', `/v1/webhooks/${hook.id}`);
    assert.equal(res.status, 200);
    assert.deepEqual(Object.keys(res.body).sort(), ['createdAt', 'disabledReason', 'events', 'id', 'isActive', 'previousSecretExpiresAt', 'updatedAt', 'url']);
    assert.deepEqual([res.body.id, res.body.url, res.body.events, res.body.isActive], [hook.id, `${receiver.url}/detail`, ['notification.delivered', 'notification.failed'], true]);
    assert.equal(res.body.disabledReason, null);
    assert.ok(!JSON.stringify(res.body).includes('whsec_'));
    await call(h.gw.url, acme.apiKey, 'PATCH', `/v1/webhooks/${hook.id}`, { isActive: false });
    const off = await call(h.gw.url, acme.apiKey, 'GET', `/v1/webhooks/${hook.id}`);
    assert.deepEqual([off.body.isActive, off.body.disabledReason], [false, 'deactivated through the API']);
  });

  it("answers 404 for another protocol's or an unknown endpoint, and 400 for a bad body", async () => {
    const hook = await registerHook(h, acme.apiKey, `${receiver.url}/mine`, ['notification.delivered']);
    for (const [key, id] of [
      [rival.apiKey, hook.id],
      [rival.sandboxApiKey, hook.id],
      [acme.apiKey, 'wh_missing'],
      [acme.sandboxApiKey, 'wh_missing'],
    ]) {
      for (const res of [await rotate(id, undefined, key), await call(h.gw.url, key, 'GET', `/v1/webhooks/${id}`)]) {
        assert.equal(res.status, 404);
        assert.ok(isErrorBody(res.body));
        assert.equal(res.body.code, 'WEBHOOK_NOT_FOUND');
      }
    }
    // A sandbox key shares the endpoints but may not take over their signing (another protocol's
    // sandbox key still gets the 404 above).
    const sandbox = await rotate(hook.id, {}, acme.sandboxApiKey);
    assert.equal(sandbox.status, 403);
    assert.deepEqual([sandbox.body.code, sandbox.body.message], ['FORBIDDEN', 'Rotating a webhook secret needs a live key (hrld_live_…): webhook endpoints also receive production events']);
    // ... whatever its body: a request it may not make is not judged further.
    for (const body of [{ previousSecretExpiresInSeconds: 604_801 }, { previousSecretExpiresInSeconds: '60' }]) {
      const refused = await rotate(hook.id, body, acme.sandboxApiKey);
      assert.deepEqual([refused.status, refused.body.code], [403, 'FORBIDDEN'], JSON.stringify(body));
    }
    for (const body of [{ previousSecretExpiresInSeconds: -1 }, { previousSecretExpiresInSeconds: 604_801 }, { previousSecretExpiresInSeconds: 1.5 }, { previousSecretExpiresInSeconds: '60' }, [], 'null']) {
      const res = await rotate(hook.id, body);
      assert.equal(res.status, 400, JSON.stringify(body));
      assert.equal(res.body.code, 'VALIDATION_ERROR');
    }
    // A JSON null is a body, and not an object: refused as on every route (none at all is the defaults).
    assert.equal((await rotate(hook.id, 'null')).body.message, 'request body must be an object');
    // Nothing changed: the endpoint still signs with its first secret alone.
    const signed = await deliverOne('/mine', 'n_mine');
    assert.deepEqual(v1Entries(signed.header), [hmac(hook.secret, /^t=(\d+),/.exec(signed.header)![1], signed.body)]);
  });
});
