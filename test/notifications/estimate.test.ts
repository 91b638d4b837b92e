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

  /** The gateway's own database, counting the estimator's counts of the queue (`reads.samples`). */
  function countingQueueReads() {
    const reads = {
      samples: 0,
      db: {
        query: (text: string, params?: unknown[]) => {
          if (text.includes("status IN ('queued', 'sending')")) reads.samples++;
          return gw.herald.deps.db.query(text, params);
        },
      },
    };
    return reads;
  }

  /** `count` queued SMS of the protocol to `wallet`, ids `<prefix><n>`, due after `due` (an interval). */
  const queueSms = (protocolId: string, prefix: string, count: number, due: string) =>
    gw.herald.deps.db.query(
      `INSERT INTO notifications (id, protocol_id, environment, wallet, subject, body, category, channel, status, next_attempt_at)
       SELECT $3 || i, $1, 'sandbox', $2, 's', 'b', 'system', 'sms', 'queued', now() + $4::interval FROM generate_series(1, $5::int) i`,
      [protocolId, wallet, prefix, due, count],
    );

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
    const reads = countingQueueReads();
    const other = await gw.createProtocol({ tier: 3 });
    await queueSms(other.id, 'long', 60_000, '1 day');
    try {
      const estimator = new DeliveryEstimator(reads.db, () => clock);
      await estimator.sample();
      assert.ok(estimator.estimate('sms') > 60_000, 'the queue was counted');
      clock += 1100;
      estimator.estimate('sms');
      assert.equal(reads.samples, 1, 'not again after a second: 60,000 rows wait 1.5 s');
      clock += 500;
      estimator.estimate('sms');
      await new Promise((resolve) => setTimeout(resolve, 200));
      assert.equal(reads.samples, 2);
    } finally {
      await gw.herald.deps.db.query("DELETE FROM notifications WHERE id LIKE 'long%'");
    }
  });

  it('estimates the items of a bulk request by their place in the queue, per channel', async () => {
    const item = (preferredChannel: string) => ({ wallet, subject: 's', body: 'b', category: 'system', preferredChannel });
    const res = await call(gw.url, acme.apiKey, 'POST', '/v1/notify/bulk', {
      notifications: [item('email'), item('telegram'), item('email'), item('email'), item('telegram')],
    });
    assert.equal(res.status, 202);
    const [e1, t1, e2, e3, t2] = res.body.results.map((r: any) => r.estimatedDeliveryMs);
    assert.ok(e1 < e2 && e2 < e3, `email ${e1} < ${e2} < ${e3}`);
    assert.ok(t1 < t2, `telegram ${t1} < ${t2}`);
    // each place adds one message's share of the channel's rate, not another channel's
    assert.equal(e3 - e2, e2 - e1);
  });

  it('samples again before answering when the last sample is long overdue (an idle gateway)', async () => {
    let clock = Date.now();
    const reads = countingQueueReads();
    // A generous bound on the wait, so a loaded machine cannot make the sample miss it.
    const estimator = new DeliveryEstimator(reads.db, () => clock, 10_000);
    await estimator.fresh();
    assert.equal(reads.samples, 1, 'the first answer waits for a first sample');
    const before = estimator.estimate('sms');
    await queueSms(acme.id, 'idle', 500, '1 day');
    try {
      clock += 2000;
      assert.equal(estimator.fresh(), undefined, 'a sample just due is not waited for');
      assert.equal(reads.samples, 1);
      estimator.estimate('sms'); // ...but taken in the background
      await new Promise((resolve) => setTimeout(resolve, 100));
      assert.equal(reads.samples, 2);
      assert.ok(estimator.estimate('sms') > before + 5000, 'the 500 queued messages are counted');

      await gw.herald.deps.db.query("DELETE FROM notifications WHERE id LIKE 'idle%'");
      clock += 60_000;
      // a burst after the quiet minute: every request waits for the one new sample
      await Promise.all([estimator.fresh(), estimator.fresh(), estimator.fresh()]);
      assert.equal(reads.samples, 3, 'after a minute without requests the answers wait for one new sample');
      assert.equal(estimator.estimate('sms'), before, 'the drained queue is seen at once');
    } finally {
      await gw.herald.deps.db.query("DELETE FROM notifications WHERE id LIKE 'idle%'");
    }
  });

  it('answers a broadcast on an idle gateway from the queue as it is now, not as last sampled', async () => {
    let clock = Date.now();
    const db = gw.herald.deps.db;
    const served = gw.herald.deps.estimator;
    // The real estimator on a clock the test moves, with a generous bound on the wait for a sample.
    const estimator = new DeliveryEstimator(db, () => clock, 10_000);
    gw.herald.deps.estimator = estimator;
    const caster = await gw.createProtocol({ tier: 3 });
    const subscriber = await registeredWallet(gw.url, { phone: '+15555550177' });
    const subscribed = await call(gw.url, caster.apiKey, 'POST', '/v1/subscriptions', { walletAddress: subscriber, channels: ['sms'] });
    assert.equal(subscribed.status, 201, JSON.stringify(subscribed.body));
    try {
      await queueSms(caster.id, 'busy', 5000, '1 day');
      await estimator.sample();
      assert.ok(estimator.estimate('sms') > 100_000, 'the 5,000 queued messages were counted');
      await db.query("DELETE FROM notifications WHERE id LIKE 'busy%'");
      clock += 60_000; // a quiet minute: the last sample still shows the drained queue

      const res = await call(gw.url, caster.apiKey, 'POST', '/v1/broadcast', { subject: 'Upgrade', body: 'Tonight.', category: 'governance' });
      assert.equal(res.status, 202, JSON.stringify(res.body));
      assert.equal(res.body.queued_count, 1);
      assert.ok(res.body.estimated_delivery_s >= 1 && res.body.estimated_delivery_s <= 5, `estimated_delivery_s ${res.body.estimated_delivery_s}`);
    } finally {
      gw.herald.deps.estimator = served;
      // the broadcast's own message too, which no worker delivers here
      await db.query('DELETE FROM notifications WHERE protocol_id = $1', [caster.id]);
    }
  });

  it('learns no lower rate from a window whose only queued messages wait for a later retry', async () => {
    let clock = Date.now();
    const db = gw.herald.deps.db;
    const estimator = new DeliveryEstimator(db, () => clock);
    const other = await gw.createProtocol({ tier: 3 });
    try {
      await estimator.sample(); // the first sample only marks where attempts start
      // 100 SMS delivered in the next second: faster than the default rate, so it is learnt
      await queueSms(other.id, 'done', 100, '0 s');
      await db.query(`INSERT INTO delivery_attempts (notification_id, attempt, channel, provider, outcome, duration_ms) SELECT 'done' || i, 1, 'sms', 'twilio', 'delivered', 300 FROM generate_series(1, 100) i`);
      await db.query("UPDATE notifications SET status = 'delivered', delivered_at = now() WHERE id LIKE 'done%'");
      clock += 1000;
      await estimator.sample();
      // then only messages waiting for a retry an hour away, and nothing delivered for two windows
      await queueSms(other.id, 'later', 10, '1 hour');
      clock += 1000;
      await estimator.sample();
      const learnt = estimator.estimate('sms');
      clock += 1000;
      await estimator.sample();
      assert.equal(estimator.estimate('sms'), learnt, 'the rate did not drop: nothing was due');
      assert.equal(learnt, Math.round((10 / 100) * 1000 + 300), '10 queued at the 100 a second seen, plus the 300 ms hand-off');
    } finally {
      await db.query("DELETE FROM notifications WHERE id LIKE 'done%' OR id LIKE 'later%'");
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
