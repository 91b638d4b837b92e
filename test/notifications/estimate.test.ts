import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { DeliveryEstimator } from '../../packages/server/src/notifications/delivery-estimate.js';
import { call, startGateway, type TestGateway, type TestProtocol } from '../support/gateway.js';
import { registeredWallet } from '../support/wallets.js';

describe('estimatedDeliveryMs', () => {
  let gw: TestGateway;
  let acme: TestProtocol;
  let wallet: string;

  before(async () => {
    gw = await startGateway({ env: { HERALD_ROLE: 'api' } });
    acme = await gw.createProtocol({ tier: 3 });
    wallet = await registeredWallet(gw.url, { email: 'q@example.com', telegramChatId: '1' });
  });
  after(() => gw.close());

  it("follows the chosen channel's queue depth", async () => {
    let clock = Date.now();
    const estimator = new DeliveryEstimator(gw.herald.deps.db, () => clock);
    await estimator.sample();
    const emptyEmail = estimator.estimate('email');
    const notifications = Array.from({ length: 100 }, () => ({ wallet, subject: 's', body: 'b', category: 'system', preferredChannel: 'email' }));
    for (let i = 0; i < 5; i++) assert.equal((await call(gw.url, acme.apiKey, 'POST', '/v1/notify/bulk', { notifications })).status, 202);
    clock += 2000;
    await estimator.sample();
    const loadedEmail = estimator.estimate('email');
    assert.ok(loadedEmail > emptyEmail, `${loadedEmail} > ${emptyEmail}`);
    // the other channel's queue is still empty
    assert.equal(estimator.estimate('telegram'), new DeliveryEstimator(gw.herald.deps.db).estimate('telegram'));
  });

  it('samples a queue that is slow to count less often', async () => {
    let clock = Date.now();
    let samples = 0;
    // The gateway's own database; each count of the queue is made to take 300 ms on the clock.
    const db = {
      query: async (text: string, params?: unknown[]) => {
        if (text.includes("status IN ('queued', 'sending')")) {
          samples++;
          clock += 300;
        }
        return gw.herald.deps.db.query(text, params);
      },
    };
    const estimator = new DeliveryEstimator(db, () => clock);
    await estimator.sample();
    clock += 1000;
    estimator.estimate('email');
    assert.equal(samples, 1, 'not again a second later');
    clock += 14_000;
    estimator.estimate('email');
    await new Promise((resolve) => setTimeout(resolve, 100));
    assert.equal(samples, 2, 'again once 50 times the count has passed');
  });

  it('answers through POST /v1/notify with the live estimate', async () => {
    const first = await call(gw.url, acme.apiKey, 'POST', '/v1/notify', { wallet, subject: 's', body: 'b', category: 'system', preferredChannel: 'email' });
    await new Promise((resolve) => setTimeout(resolve, 1100));
    await call(gw.url, acme.apiKey, 'POST', '/v1/notify', { wallet, subject: 's', body: 'b', category: 'system', preferredChannel: 'email' });
    await new Promise((resolve) => setTimeout(resolve, 200));
    const later = await call(gw.url, acme.apiKey, 'POST', '/v1/notify', { wallet, subject: 's', body: 'b', category: 'system', preferredChannel: 'email' });
    assert.ok(later.body.estimatedDeliveryMs > first.body.estimatedDeliveryMs || first.body.estimatedDeliveryMs > 5000);
  });
});
