/**
 * A notification still being sent is never taken by another delivery loop: while a batch is in
 * flight its leases are renewed, so a provider slower than HERALD_DELIVERY_LEASE_MS does not make
 * the message go out twice.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import pg from 'pg';
import { renewLeases } from '../../packages/server/src/delivery/delivery-store.js';
import { call, onPostgres, startGateway, waitFor, type TestGateway, type TestProtocol } from '../support/gateway.js';
import { startTelegramApi, type TestTelegramApi } from '../support/telegram-api.js';
import { registeredWallet } from '../support/wallets.js';

const LEASE_MS = 1000;

describe('delivery leases', () => {
  let gw: TestGateway;
  let telegram: TestTelegramApi;
  let acme: TestProtocol;

  before(async () => {
    telegram = await startTelegramApi();
    gw = await startGateway({
      env: {
        TELEGRAM_BOT_TOKEN: telegram.token,
        TELEGRAM_API_URL: telegram.url,
        HERALD_DELIVERY_LEASE_MS: String(LEASE_MS),
        // Two loops polling often: either would take an expired claim at once.
        HERALD_WORKER_LOOPS: '2',
        HERALD_WORKER_POLL_MS: '50',
      },
    });
    acme = await gw.createProtocol({ tier: 3, name: 'Acme' });
  });
  after(async () => {
    await gw.close();
    await telegram.close();
  });

  it('sends once when the provider answers after three times the lease, and keeps the claim leased meanwhile', async () => {
    const chatId = '700001';
    const wallet = await registeredWallet(gw.url, { telegramChatId: chatId });
    telegram.script({ kind: 'delay', ms: 3 * LEASE_MS + 500 }, { chatId });
    const sent = await call(gw.url, acme.apiKey, 'POST', '/v1/notify', { wallet, subject: 'Slow provider', body: 'One message only', category: 'system' });
    assert.equal(sent.status, 202, JSON.stringify(sent.body));
    const id = sent.body.notificationId as string;

    // Mid-send, well past the first lease's end, the row is still leased into the future.
    await waitFor(async () => (telegram.received.length > 0 || (await leaseOf(id))?.status === 'sending' ? true : undefined), 5000);
    await new Promise((resolve) => setTimeout(resolve, 2 * LEASE_MS));
    const midway = await leaseOf(id);
    assert.equal(midway?.status, 'sending');
    assert.ok(midway.locked_until > new Date(), `lease ran out mid-send: ${midway.locked_until.toISOString()}`);

    const record = await waitFor(async () => {
      const res = await call(gw.url, acme.apiKey, 'GET', `/v1/notifications/${id}`);
      return res.body.status === 'delivered' ? res.body : undefined;
    }, 15_000);
    // Time for a second send to show up, had the claim been taken again.
    await new Promise((resolve) => setTimeout(resolve, LEASE_MS));
    const sends = telegram.received.filter((r) => r.body.chat_id === chatId);
    assert.equal(sends.length, 1, `the message went out ${sends.length} times`);
    assert.equal(record.attempts.length, 1);
    const settled = await leaseOf(id);
    assert.equal(settled?.locked_until, null);
  });

  it('commits the fast sends of a batch while a slow one of the same batch is still being sent', async () => {
    // One bulk request: the five rows are claimed together, by one pass of one loop.
    const slowChat = '700101';
    const wallets = [await registeredWallet(gw.url, { telegramChatId: slowChat })];
    for (let i = 0; i < 4; i++) wallets.push(await registeredWallet(gw.url, { telegramChatId: String(700102 + i) }));
    telegram.script({ kind: 'delay', ms: 4 * LEASE_MS }, { chatId: slowChat });
    const sent = await call(gw.url, acme.apiKey, 'POST', '/v1/notify/bulk', {
      notifications: wallets.map((wallet, i) => ({ wallet, subject: `Batch ${i}`, body: 'as they come', category: 'system' })),
    });
    assert.equal(sent.status, 202, JSON.stringify(sent.body));
    const [slow, ...fast] = (sent.body.results as { notificationId: string }[]).map((r) => r.notificationId);

    // The four fast outcomes are committed (and so safe from a kill) before the slow answer comes.
    await waitFor(async () => {
      const statuses = await Promise.all(fast.map(async (id) => (await leaseOf(id))?.status));
      return statuses.every((status) => status === 'delivered') ? true : undefined;
    }, 3 * LEASE_MS);
    assert.equal((await leaseOf(slow))?.status, 'sending', 'the slow send was still in flight');
    await waitFor(async () => ((await leaseOf(slow))?.status === 'delivered' ? true : undefined), 15_000);
    assert.equal(telegram.received.filter((r) => r.body.chat_id === slowChat).length, 1);
  });

  it('renews without waiting for rows another transaction holds, and leaves them as that transaction leaves them (PostgreSQL)', { skip: !onPostgres && 'needs PostgreSQL' }, async () => {
    // Two email notifications (captured here, so delivered at once), then put back in `sending`
    // under a long lease as if a worker held them with attempt 1.
    const wallet = await registeredWallet(gw.url, { email: 'lease@example.com' });
    const ids: string[] = [];
    for (const subject of ['held', 'free']) {
      const res = await call(gw.url, acme.apiKey, 'POST', '/v1/notify', { wallet, subject, body: 'lease', category: 'system' });
      assert.equal(res.status, 202, JSON.stringify(res.body));
      ids.push(res.body.notificationId as string);
    }
    await waitFor(async () => ((await leaseOf(ids[1]))?.status === 'delivered' && (await leaseOf(ids[0]))?.status === 'delivered' ? true : undefined), 10_000);
    const db = gw.herald.deps.db;
    const claimedUntil = new Date(Date.now() + 3_600_000);
    await db.query(`UPDATE notifications SET status = 'sending', attempts = 1, locked_until = $2 WHERE id = ANY($1::text[])`, [ids, claimedUntil]);

    // Another transaction (a commit settling the batch) holds the first row.
    const other = new pg.Client({ connectionString: gw.databaseUrl });
    await other.connect();
    try {
      await other.query('BEGIN');
      await other.query('SELECT id FROM notifications WHERE id = $1 FOR UPDATE', [ids[0]]);
      const renewedUntil = new Date(claimedUntil.getTime() + 60_000);
      const outcome = await Promise.race([
        renewLeases(db, ids.map((id) => ({ id, attempts: 1 })), renewedUntil),
        new Promise((resolve) => setTimeout(() => resolve('waited'), 3000)),
      ]);
      assert.notEqual(outcome, 'waited', 'the renewal waited for a row lock');
      assert.deepEqual([...(outcome as Set<string>)], [], 'a row only locked for a moment is still held');
      assert.equal((await leaseOf(ids[0]))!.locked_until.getTime(), claimedUntil.getTime());
      assert.equal((await leaseOf(ids[1]))!.locked_until.getTime(), renewedUntil.getTime());
      await other.query('ROLLBACK');
      // Settled (or taken over): no longer held, and said so.
      await db.query(`UPDATE notifications SET status = 'delivered', locked_until = NULL WHERE id = $1`, [ids[1]]);
      assert.deepEqual([...(await renewLeases(db, ids.map((id) => ({ id, attempts: 1 })), renewedUntil))], [ids[1]]);
    } finally {
      await other.end();
      await db.query(`UPDATE notifications SET status = 'delivered', locked_until = NULL WHERE id = ANY($1::text[])`, [ids]);
    }
  });

  it('keeps renewing a claim while an insert referring to its row holds a key-share lock, and sends once (PostgreSQL)', { skip: !onPostgres && 'needs PostgreSQL' }, async () => {
    const chatId = '700201';
    const wallet = await registeredWallet(gw.url, { telegramChatId: chatId });
    telegram.script({ kind: 'delay', ms: 5 * LEASE_MS }, { chatId });
    const sent = await call(gw.url, acme.apiKey, 'POST', '/v1/notify', { wallet, subject: 'Locked a while', body: 'One message only', category: 'system' });
    assert.equal(sent.status, 202, JSON.stringify(sent.body));
    const id = sent.body.notificationId as string;
    await waitFor(async () => (telegram.received.some((r) => r.body.chat_id === chatId) ? true : undefined), 5000);
    // A key-share lock, as an insert referring to the row takes, held longer than the lease.
    const other = new pg.Client({ connectionString: gw.databaseUrl });
    await other.connect();
    try {
      await other.query('BEGIN');
      await other.query('SELECT id FROM notifications WHERE id = $1 FOR KEY SHARE', [id]);
      await new Promise((resolve) => setTimeout(resolve, 1.5 * LEASE_MS));
      assert.ok((await leaseOf(id))!.locked_until > new Date(), 'the lease ran out while the row was key-share locked');
      await other.query('COMMIT');
    } finally {
      await other.end();
    }
    const record = await waitFor(async () => {
      const res = await call(gw.url, acme.apiKey, 'GET', `/v1/notifications/${id}`);
      return res.body.status === 'delivered' ? res.body : undefined;
    }, 15_000);
    await new Promise((resolve) => setTimeout(resolve, LEASE_MS));
    assert.equal(telegram.received.filter((r) => r.body.chat_id === chatId).length, 1, 'the message went out more than once');
    assert.equal(record.attempts.length, 1);
  });

  const leaseOf = async (id: string) =>
    (await gw.herald.deps.db.query<{ status: string; locked_until: Date }>('SELECT status, locked_until FROM notifications WHERE id = $1', [id]))[0];
});
