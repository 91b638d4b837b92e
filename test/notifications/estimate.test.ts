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

  it('samples a long queue less often', async () => {
    let clock = Date.now();
    let samples = 0;
    // The gateway's own database, counting the estimator's counts of the queue.
    const db = {
      query: (text: string, params?: unknown[]) => {
        if (text.includes("status IN ('queued', 'sending')")) samples++;
        return gw.herald.deps.db.query(text, params);
      },
    };
    const other = await gw.createProtocol({ tier: 3 });
    await gw.herald.deps.db.query(
      `INSERT INTO notifications (id, protocol_id, environment, wallet, subject, body, category, channel, status, next_attempt_at)
       SELECT 'long' || i, $1, 'sandbox', $2, 's', 'b', 'system', 'sms', 'queued', now() + interval '1 day' FROM generate_series(1, 60000) i`,
      [other.id, wallet],
    );
    try {
      const estimator = new DeliveryEstimator(db, () => clock);
      await estimator.sample();
      assert.ok(estimator.estimate('sms') > 60_000, 'the queue was counted');
      clock += 1100;
      estimator.estimate('sms');
      assert.equal(samples, 1, 'not again after a second: 60,000 rows wait 1.5 s');
      clock += 500;
      estimator.estimate('sms');
      await new Promise((resolve) => setTimeout(resolve, 200));
      assert.equal(samples, 2);
    } finally {
      await gw.herald.deps.db.query("DELETE FROM notifications WHERE id LIKE 'long%'");
    }
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
