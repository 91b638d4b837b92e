/**
 * The channel choice of DESIGN §6, case by case, through every way a send is written: a single
 * send with and without an idempotency key (a transaction, or the batched statement), and bulk
 * with and without keys. Each case checks the answer and the stored record (status, channel,
 * error, receipt status), so the rule holds wherever it is applied.
 */
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { call, startGateway, type TestGateway, type TestProtocol } from '../support/gateway.js';
import { makeWallet, registeredWallet } from '../support/wallets.js';

interface Case {
  name: string;
  wallet: string;
  preferredChannel?: string;
  expect: { status: string; channel: string | null; error: string | null; registered: boolean };
}

describe('channel choice', () => {
  let gw: TestGateway;
  let acme: TestProtocol;
  const cases: Case[] = [];

  before(async () => {
    gw = await startGateway({ env: { HERALD_ROLE: 'api' } });
    acme = await gw.createProtocol({ tier: 3 });
    const db = gw.herald.deps.db;
    const subscribe = async (wallet: string, channels: string[]) =>
      assert.equal((await call(gw.url, acme.apiKey, 'POST', '/v1/subscriptions', { walletAddress: wallet, channels })).status, 201);
    const unverify = (wallet: string, column: string) => db.query(`UPDATE identities SET ${column} = NULL WHERE wallet = $1`, [wallet]);
    const queued = (channel: string) => ({ status: 'queued', channel, error: null, registered: true });
    const failed = (error: string) => ({ status: 'failed', channel: null, error, registered: true });

    const all = await registeredWallet(gw.url);
    const emailOnly = await registeredWallet(gw.url, { email: 'e@example.com' });
    const unverifiedEmail = await registeredWallet(gw.url, { email: 'u@example.com', phone: '+15555550100' });
    await unverify(unverifiedEmail, 'email_verified_at');
    const nothingVerified = await registeredWallet(gw.url, { email: 'n@example.com' });
    await unverify(nothingVerified, 'email_verified_at');
    const unlinkedTelegram = await registeredWallet(gw.url, { email: 't@example.com', telegramChatId: '777' });
    await unverify(unlinkedTelegram, 'telegram_linked_at');
    const subscribedNarrow = await registeredWallet(gw.url);
    await subscribe(subscribedNarrow, ['sms', 'email']);
    const subscribedElsewhere = await registeredWallet(gw.url, { email: 's@example.com' });
    await subscribe(subscribedElsewhere, ['sms']);
    const optedOut = await registeredWallet(gw.url);
    await subscribe(optedOut, ['email']);
    assert.equal((await call(gw.url, acme.apiKey, 'DELETE', `/v1/subscriptions/${optedOut}`)).status, 200);

    cases.push(
      { name: 'no preference: telegram first', wallet: all, expect: queued('telegram') },
      { name: 'a verified preferred channel', wallet: all, preferredChannel: 'sms', expect: queued('sms') },
      { name: 'a preferred channel not verified', wallet: emailOnly, preferredChannel: 'telegram', expect: queued('email') },
      { name: 'a stored but unverified email', wallet: unverifiedEmail, preferredChannel: 'email', expect: queued('sms') },
      { name: 'a stored but unlinked Telegram chat', wallet: unlinkedTelegram, expect: queued('email') },
      { name: 'no verified channel', wallet: nothingVerified, expect: failed('wallet has no verified channel') },
      { name: 'the subscription narrows the choice', wallet: subscribedNarrow, preferredChannel: 'telegram', expect: queued('email') },
      { name: 'no verified channel among the subscribed', wallet: subscribedElsewhere, expect: failed('no verified channel among the subscribed channels') },
      { name: 'an opted-out wallet', wallet: optedOut, expect: { status: 'opted_out', channel: null, error: null, registered: true } },
    );
  });
  after(() => gw.close());

  const item = (c: Case, keyed: boolean) => ({
    wallet: c.wallet,
    subject: c.name,
    body: 'Health factor 1.05',
    category: 'defi',
    receipt: true,
    ...(c.preferredChannel ? { preferredChannel: c.preferredChannel } : {}),
    ...(keyed ? { idempotencyKey: randomUUID() } : {}),
  });

  /** The answer and the stored record agree with the case. */
  async function check(c: Case, answer: { notificationId: string; status: string; deliveryChannel: string | null; recipientRegistered: boolean }, how: string) {
    const { expect } = c;
    assert.deepEqual(
      { status: answer.status, channel: answer.deliveryChannel, registered: answer.recipientRegistered },
      { status: expect.status, channel: expect.channel, registered: expect.registered },
      `${c.name} (${how}): answer`,
    );
    const record = (await call(gw.url, acme.apiKey, 'GET', `/v1/notifications/${answer.notificationId}`)).body;
    const delivered = expect.status === 'queued';
    assert.deepEqual(
      { status: record.status, channel: record.delivery_channel, error: record.error, receipt: record.receipt_status, reason: record.receipt_failure_reason },
      {
        status: expect.status,
        channel: expect.channel,
        error: expect.error,
        receipt: delivered ? 'pending' : 'failed',
        reason: delivered ? null : `notification was not delivered (${expect.status})`,
      },
      `${c.name} (${how}): record`,
    );
  }

  for (const keyed of [false, true]) {
    const how = keyed ? 'with an idempotency key' : 'without a key';
    it(`decides each case for a single send ${how}`, async () => {
      for (const c of cases) {
        const res = await call(gw.url, acme.apiKey, 'POST', '/v1/notify', item(c, keyed));
        assert.equal(res.status, 202, c.name);
        await check(c, res.body, `single, ${how}`);
      }
    });

    it(`decides each case for concurrent single sends ${how}, each answer its own`, async () => {
      const answers = await Promise.all(cases.map((c) => call(gw.url, acme.apiKey, 'POST', '/v1/notify', item(c, keyed))));
      for (const [i, c] of cases.entries()) await check(c, answers[i].body, `concurrent, ${how}`);
    });

    it(`decides each item of one bulk request ${how}, in input order, an unregistered wallet included`, async () => {
      const unregistered: Case = {
        name: 'an unregistered wallet',
        wallet: makeWallet().address,
        expect: { status: 'failed', channel: null, error: 'wallet not registered', registered: false },
      };
      const all = [unregistered, ...cases, ...cases.slice().reverse()];
      const res = await call(gw.url, acme.apiKey, 'POST', '/v1/notify/bulk', { notifications: all.map((c) => item(c, keyed)) });
      assert.equal(res.status, 202);
      assert.equal(res.body.results.length, all.length);
      for (const [i, c] of all.entries()) await check(c, res.body.results[i], `bulk item ${i}, ${how}`);
    });
  }
});
