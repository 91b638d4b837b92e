import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { Queryable } from '../../packages/server/src/db/connection.js';
import { recipientReader } from '../../packages/server/src/delivery/recipient-reader.js';
import { createDeliveryWorker } from '../../packages/server/src/delivery/worker.js';
import { call, startGateway, waitFor, type TestGateway, type TestProtocol } from '../support/gateway.js';
import { importIdentity, makeWallet, registeredWallet } from '../support/wallets.js';
import { challenge } from '../identities/wallet-key.js';

/**
 * A message queued before the wallet opted out or narrowed its subscription is checked again when
 * it is sent: the api role stores the sends, the subscription changes, then a worker delivers.
 */
describe('delivery after the subscription changed', () => {
  let gw: TestGateway;
  let acme: TestProtocol;

  before(async () => {
    gw = await startGateway({ env: { HERALD_ROLE: 'api', HERALD_IP_RATE_LIMIT: '10000' } });
    acme = await gw.createProtocol({ tier: 3, name: 'Acme' });
  });
  after(() => gw.close());

  const subscribe = async (wallet: string, channels: string[]) =>
    assert.ok([200, 201].includes((await call(gw.url, acme.apiKey, 'POST', '/v1/subscriptions', { walletAddress: wallet, channels })).status));
  const send = async (body: Record<string, unknown>) => {
    const res = await call(gw.url, acme.apiKey, 'POST', '/v1/notify', { subject: 'Heads up', body: 'b', category: 'defi', ...body });
    assert.deepEqual([res.status, res.body.status], [202, 'queued'], JSON.stringify(res.body));
    return res.body as { notificationId: string; deliveryChannel: string };
  };
  async function deliverAll(ids: string[], final = ['delivered', 'failed', 'bounced']) {
    const worker = createDeliveryWorker(gw.herald.deps, { ...gw.herald.deps.config.delivery, idleMs: 50 });
    worker.start();
    try {
      return await Promise.all(
        ids.map((id) =>
          waitFor(async () => {
            const res = await call(gw.url, acme.apiKey, 'GET', `/v1/notifications/${id}`);
            return final.includes(res.body.status) ? res.body : undefined;
          }),
        ),
      );
    } finally {
      await worker.stop();
    }
  }
  const captured = async (id: string) => (await gw.herald.deps.db.query(`SELECT channel FROM captured_messages WHERE notification_id = $1`, [id])).map((r: any) => r.channel);
  const eventsOf = (id: string) => gw.herald.deps.db.query<any>(`SELECT type, data FROM events WHERE data->>'notification_id' = $1`, [id]);

  it('sends nothing to a wallet that opted out while its message waited, not even a critical SMS fallback: the message ends opted_out', async () => {
    const [plain, critical, kept] = await Promise.all([
      registeredWallet(gw.url, { email: 'leaver@example.com' }),
      registeredWallet(gw.url, { email: 'leaver2@example.com', phone: '+15555550170' }),
      registeredWallet(gw.url, { email: 'stayer@example.com' }),
    ]);
    for (const wallet of [plain, critical, kept]) await subscribe(wallet, ['email', 'sms']);
    const sent = [await send({ wallet: plain, receipt: true }), await send({ wallet: critical, priority: 'critical' }), await send({ wallet: kept })];
    for (const wallet of [plain, critical]) assert.equal((await call(gw.url, acme.apiKey, 'DELETE', `/v1/subscriptions/${wallet}`)).status, 200);

    const [a, b, c] = await deliverAll(sent.map((s) => s.notificationId), ['delivered', 'failed', 'bounced', 'opted_out']);
    for (const record of [a, b]) {
      assert.equal(record.status, 'opted_out');
      assert.equal(record.error, "the wallet opted out of this protocol's messages before delivery");
      assert.deepEqual(record.attempts, [], 'no provider was asked');
      assert.equal(record.delivered_at, null);
      assert.deepEqual(await captured(record.notification_id), []);
      // As for a send answered opted_out: no event.
      assert.deepEqual(await eventsOf(record.notification_id), []);
    }
    assert.deepEqual([a.receipt_status, a.receipt_failure_reason], ['failed', 'notification was not delivered (opted_out)']);
    assert.equal(c.status, 'delivered');
    assert.deepEqual(await captured(c.notification_id), ['email']);
    // Counted in analytics as opted out, as DESIGN.md puts it for sends after an opt-out.
    const analytics = await call(gw.url, acme.apiKey, 'GET', '/v1/analytics?period=7d');
    assert.ok(analytics.body.breakdown.opted_out >= 2, JSON.stringify(analytics.body));
  });

  it("fails a message whose channel the subscription no longer lists, but keeps a critical message's SMS fallback", async () => {
    const [narrowed, critical] = await Promise.all([
      registeredWallet(gw.url, { email: 'n@example.com', telegramChatId: '7001' }),
      registeredWallet(gw.url, { email: 'c@example.com', phone: '+15555550171' }),
    ]);
    await subscribe(narrowed, ['email', 'telegram']);
    await subscribe(critical, ['email']);
    const first = await send({ wallet: narrowed, preferredChannel: 'email' });
    const second = await send({ wallet: critical, priority: 'critical' });
    assert.deepEqual([first.deliveryChannel, second.deliveryChannel], ['email', 'email']);
    await subscribe(narrowed, ['telegram']);
    await subscribe(critical, ['telegram']);

    const [a, b] = await deliverAll([first.notificationId, second.notificationId]);
    assert.equal(a.status, 'failed');
    assert.equal(a.attempts[0].error, "the wallet's subscription does not include email");
    assert.deepEqual(await captured(a.notification_id), []);
    // A subscription's channels narrow the first choice, not a critical message's fallback.
    assert.equal(b.status, 'delivered');
    assert.deepEqual(
      b.attempts.map((t: any) => [t.channel, t.outcome]),
      [
        ['email', 'failed'],
        ['sms', 'delivered'],
      ],
    );
    assert.deepEqual(await captured(b.notification_id), ['sms']);
  });

  it('fails a message whose wallet erased its identity while the message waited, keeping its channel', async () => {
    const key = makeWallet();
    await importIdentity(gw.url, key.address, { email: 'gone@example.com' });
    const { notificationId } = await send({ wallet: key.address });
    const { message, nonce } = await challenge(gw, key.address, 'delete');
    const erased = await call(gw.url, undefined, 'DELETE', `/v1/identities/${key.address}`, { nonce, signature: key.sign(message) });
    assert.equal(erased.status, 200, JSON.stringify(erased.body));

    const [record] = await deliverAll([notificationId]);
    assert.equal(record.status, 'failed');
    assert.equal(record.error, 'the wallet no longer has a verified email contact');
    assert.equal(record.delivery_channel, 'email');
    assert.deepEqual(
      record.attempts.map((t: any) => [t.channel, t.outcome, t.error, t.duration_ms]),
      [['email', 'failed', 'the wallet no longer has a verified email contact', 0]],
    );
    assert.deepEqual(await captured(notificationId), []);
  });

  it('delivers as before once the wallet subscribes again', async () => {
    const wallet = await registeredWallet(gw.url, { email: 'back@example.com' });
    await subscribe(wallet, ['email']);
    const { notificationId } = await send({ wallet });
    await call(gw.url, acme.apiKey, 'DELETE', `/v1/subscriptions/${wallet}`);
    await subscribe(wallet, ['email']);
    const [record] = await deliverAll([notificationId], ['delivered', 'failed', 'bounced', 'opted_out']);
    assert.equal(record.status, 'delivered');
  });

  /**
   * What a claimed batch's rows are checked against before each send: the wallets' contacts and
   * subscriptions, read again for the rows not yet started once the last read began more than half
   * a second before (on the reader's clock, set by the tests).
   */
  describe('the recipient reader of a claimed batch', () => {
    const rowsOf = (wallets: string[]) => wallets.map((wallet, i) => ({ id: `row${i}`, protocol_id: acme.id, wallet }));

    /** The gateway's database, with the wallets each read asked for, and a failure to give once on demand. */
    function watched() {
      const asked: string[][] = [];
      let failNext = false;
      const db: Queryable = {
        query: async (text, params) => {
          if (/FROM identities/.test(text)) {
            asked.push([...(params![0] as string[])].sort());
            if (failNext) {
              failNext = false;
              throw new Error('connection terminated unexpectedly');
            }
          }
          return gw.herald.deps.db.query(text, params);
        },
      };
      return { db, asked, failOnce: () => (failNext = true) };
    }

    it('reads the subscriptions and contacts again for the rows not yet started once the last read is half a second old', async () => {
      const [first, second] = await Promise.all([registeredWallet(gw.url, { email: 'r1@example.com' }), registeredWallet(gw.url, { email: 'r2@example.com' })]);
      for (const wallet of [first, second]) await subscribe(wallet, ['email']);
      const rows = rowsOf([first, second]);
      const { db, secrets } = gw.herald.deps;
      let now = 0;
      const read = await recipientReader(db, secrets, rows, () => now);
      assert.equal((await read.read(rows[0])).subscription?.subscribed, true);
      await call(gw.url, acme.apiKey, 'DELETE', `/v1/subscriptions/${second}`);
      now = 400;
      assert.equal((await read.read(rows[1])).subscription?.subscribed, true, 'within the read');
      now = 0;
      const again = await recipientReader(db, secrets, rows, () => now);
      await again.read(rows[0]);
      now = 501;
      const fresh = await again.read(rows[1]);
      assert.equal(fresh.subscription?.subscribed, false, 'read again once the last read began more than 500 ms before');
      assert.equal(fresh.contacts?.email, 'r2@example.com');
    });

    it('finds no contact for a wallet whose identity was erased since the last read', async () => {
      const key = makeWallet();
      await importIdentity(gw.url, key.address, { email: 'erased@example.com', phone: '+15555550172' });
      const kept = await registeredWallet(gw.url, { email: 'kept@example.com' });
      const rows = rowsOf([kept, key.address]);
      let now = 0;
      const read = await recipientReader(gw.herald.deps.db, gw.herald.deps.secrets, rows, () => now);
      assert.equal((await read.read(rows[0])).contacts?.email, 'kept@example.com');
      const { message, nonce } = await challenge(gw, key.address, 'delete');
      const erased = await call(gw.url, undefined, 'DELETE', `/v1/identities/${key.address}`, { nonce, signature: key.sign(message) });
      assert.equal(erased.status, 200, JSON.stringify(erased.body));
      now = 501;
      assert.deepEqual(await read.read(rows[1]), { contacts: undefined, subscription: undefined });
    });

    it('fails the first read as the batch, before any row is checked', async () => {
      const wallet = await registeredWallet(gw.url, { email: 'first@example.com' });
      const { db, failOnce } = watched();
      failOnce();
      await assert.rejects(recipientReader(db, gw.herald.deps.secrets, rowsOf([wallet])), /connection terminated/);
    });

    it("rejects the rows waiting on a read that failed, keeps what the last good read knew, and reads again for the next row", async () => {
      const wallets = await Promise.all(['a', 'b', 'c'].map((n) => registeredWallet(gw.url, { email: `${n}@example.com`, phone: '+15555550173' })));
      const rows = rowsOf(wallets);
      const { db, asked, failOnce } = watched();
      let now = 0;
      const read = await recipientReader(db, gw.herald.deps.secrets, rows, () => now);
      now = 501;
      failOnce();
      // Two rows starting together share the one read, and its failure.
      const results = await Promise.allSettled([read.read(rows[0]), read.read(rows[1])]);
      assert.deepEqual(results.map((r) => r.status), ['rejected', 'rejected']);
      assert.equal(asked.length, 2, 'the first read, then one shared read');
      // What the last read that succeeded found: the fallback of a critical message still knows the phone.
      assert.equal(read.lastKnown(rows[0]).contacts?.hasPhone, true);
      // The failed read is not kept: the next row reads again, and finds its wallet.
      assert.equal((await read.read(rows[2])).contacts?.email, 'c@example.com');
      assert.equal(asked.length, 3);
    });

    it('leaves rows that will not be sent out of later reads', async () => {
      const wallets = await Promise.all(['d', 'e', 'f'].map((n) => registeredWallet(gw.url, { email: `${n}@example.com` })));
      const rows = rowsOf(wallets);
      const { db, asked } = watched();
      let now = 0;
      const read = await recipientReader(db, gw.herald.deps.secrets, rows, () => now);
      read.skip(rows[1]);
      now = 501;
      await read.read(rows[2]);
      assert.deepEqual(asked, [[...wallets].sort(), [wallets[0], wallets[2]].sort()]);
    });
  });
});
