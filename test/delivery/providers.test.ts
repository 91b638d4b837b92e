import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { commitSettlements } from '../../packages/server/src/delivery/delivery-store.js';
import { DEFAULT_RETRY_POLICY } from '../../packages/server/src/delivery/retry-policy.js';
import { settle } from '../../packages/server/src/delivery/settle.js';
import { call, startGateway, waitFor, type TestGateway, type TestProtocol } from '../support/gateway.js';
import { startSmtpServer, type TestSmtpServer } from '../support/smtp-server.js';
import { startTelegramApi, type TestTelegramApi } from '../support/telegram-api.js';
import { startTwilioApi, type TestTwilioApi } from '../support/twilio-api.js';
import { importIdentity, registeredWallet } from '../support/wallets.js';

/** The gateway's settings for email through `smtp` and Telegram through `telegram`. */
const emailAndTelegram = (smtp: TestSmtpServer, telegram: TestTelegramApi) => ({
  SMTP_URL: smtp.url,
  EMAIL_FROM: 'Herald <notify@herald.test>',
  TELEGRAM_BOT_TOKEN: telegram.token,
  TELEGRAM_API_URL: telegram.url,
});

describe('delivery through SMTP, Telegram and Twilio', () => {
  let gw: TestGateway;
  let smtp: TestSmtpServer;
  let telegram: TestTelegramApi;
  let twilio: TestTwilioApi;
  let acme: TestProtocol;
  let n = 0;

  before(async () => {
    [smtp, telegram, twilio] = await Promise.all([startSmtpServer(), startTelegramApi(), startTwilioApi()]);
    gw = await startGateway({
      env: {
        ...emailAndTelegram(smtp, telegram),
        TWILIO_ACCOUNT_SID: twilio.accountSid,
        TWILIO_AUTH_TOKEN: twilio.authToken,
        TWILIO_FROM: '+15005550006',
        TWILIO_API_URL: twilio.url,
        HERALD_WORKER_POLL_MS: '50',
        HERALD_DELIVERY_RETRY_BASE_MS: '100',
        HERALD_DELIVERY_MAX_ATTEMPTS: '3',
      },
    });
    acme = await gw.createProtocol({ tier: 3, name: 'Acme' });
  });
  after(async () => {
    await gw.close();
    await Promise.all([smtp.close(), telegram.close(), twilio.close()]);
  });

  const contacts = () => {
    n++;
    return { email: `holder${n}@example.com`, phone: `+1555000${String(1000 + n)}`, telegramChatId: String(9000 + n) };
  };
  const send = async (body: Record<string, unknown>) => {
    const res = await call(gw.url, acme.apiKey, 'POST', '/v1/notify', { subject: 'Heads up', body: 'Rate < 5% & rising', category: 'defi', ...body });
    assert.equal(res.status, 202, JSON.stringify(res.body));
    return res.body.notificationId as string;
  };
  const settled = (id: string) =>
    waitFor(async () => {
      const res = await call(gw.url, acme.apiKey, 'GET', `/v1/notifications/${id}`);
      return ['delivered', 'bounced', 'failed'].includes(res.body.status) ? res.body : undefined;
    }, 15_000);
  const eventsOf = (id: string) => gw.herald.deps.db.query(`SELECT type, data FROM events WHERE data->>'notification_id' = $1`, [id]);

  it('sends email with a Message-ID from the notification id and RFC 8058 unsubscribe headers', async () => {
    const c = contacts();
    const wallet = await registeredWallet(gw.url, { email: c.email });
    const id = await send({ wallet, body: 'Open [the app](https://app.example.com)' });
    const record = await settled(id);
    assert.equal(record.status, 'delivered');
    assert.equal(record.attempts[0].provider, 'smtp');
    const mail = smtp.received.find((m) => m.to.includes(c.email))!;
    assert.equal(mail.headers['message-id'], `<${id}@herald.test>`);
    assert.match(mail.headers['list-unsubscribe'], /^<http:\/\/[^>]+\/unsubscribe\/[^>]+>$/);
    assert.equal(mail.headers['list-unsubscribe-post'], 'List-Unsubscribe=One-Click');
    assert.equal(mail.subject, 'Heads up');
    assert.match(mail.html!, /\/track\/open\//);
    assert.match(mail.html!, /\/track\/click\//);
    assert.match(mail.html!, /Rate|app/);
    assert.match(mail.text!, /Open the app \(https:\/\/app\.example\.com\)/);
    assert.match(mail.from, /notify@herald\.test/);
  });

  it('sends Telegram HTML with escaping the Bot API accepts', async () => {
    const c = contacts();
    const wallet = await registeredWallet(gw.url, { telegramChatId: c.telegramChatId });
    const id = await send({ wallet });
    assert.equal((await settled(id)).status, 'delivered');
    const req = telegram.received.find((r) => r.body.chat_id === c.telegramChatId)!;
    assert.equal(req.body.parse_mode, 'HTML');
    assert.match(String(req.body.text), /Rate &lt; 5% &amp; rising/);
    assert.equal(req.userAgent, 'Herald/1.0');
  });

  it('sends SMS through Twilio with basic auth and the form fields', async () => {
    const c = contacts();
    const wallet = await registeredWallet(gw.url, { phone: c.phone });
    const id = await send({ wallet });
    assert.equal((await settled(id)).status, 'delivered');
    const req = twilio.received.find((r) => r.form.To === c.phone)!;
    assert.equal(req.form.From, '+15005550006');
    assert.equal(req.userAgent, 'Herald/1.0');
    assert.equal(req.form.Body, 'Heads up: Rate < 5% & rising');
    assert.equal(req.username, twilio.accountSid);
  });

  it('marks an SMTP 550 as bounced at once and emits notification.bounced', async () => {
    const c = contacts();
    const wallet = await registeredWallet(gw.url, { email: c.email });
    smtp.script(c.email, { code: 550, message: 'No such user' });
    const id = await send({ wallet });
    const record = await settled(id);
    assert.equal(record.status, 'bounced');
    assert.equal(record.attempts.length, 1);
    assert.equal(record.attempts[0].outcome, 'bounced');
    assert.ok(!JSON.stringify(record).includes(c.email), 'the address is not shown to the protocol');
    const [event] = await eventsOf(id);
    assert.equal(event.type, 'notification.bounced');
    assert.equal(event.data.delivered_at, null);
    assert.equal(event.data.attempts, 1);
  });

  it('stores a provider answer holding a NUL character without it, so its outcome and the others of its batch are committed', async () => {
    const [poisoned, plain] = [contacts(), contacts()];
    const [poisonedWallet, plainWallet] = await Promise.all([
      registeredWallet(gw.url, { telegramChatId: poisoned.telegramChatId }),
      registeredWallet(gw.url, { telegramChatId: plain.telegramChatId }),
    ]);
    telegram.script({ kind: 'refused', status: 400, description: 'Bad Request: chat\u0000 not found' }, { chatId: poisoned.telegramChatId });
    const [failed, delivered] = await Promise.all([send({ wallet: poisonedWallet }), send({ wallet: plainWallet })]);
    const record = await settled(failed);
    assert.equal(record.status, 'failed');
    assert.match(record.attempts[0].error, /Bad Request: chat not found/);
    const [event] = await eventsOf(failed);
    assert.equal(event.type, 'notification.failed');
    assert.match(event.data.reason, /Bad Request: chat not found/);
    assert.equal((await settled(delivered)).status, 'delivered');
  });

  it('retries an SMTP 451 and then delivers', async () => {
    const c = contacts();
    const wallet = await registeredWallet(gw.url, { email: c.email });
    smtp.script(c.email, { code: 451, message: 'Try later' });
    const record = await settled(await send({ wallet }));
    assert.equal(record.status, 'delivered');
    assert.deepEqual(
      record.attempts.map((a: any) => a.outcome),
      ['retry', 'delivered'],
    );
  });

  it('marks an email whose recipient kept being deferred (SMTP 452 at RCPT) bounced once the retries run out', async () => {
    const c = contacts();
    const wallet = await registeredWallet(gw.url, { email: c.email });
    smtp.script(c.email, { code: 452, message: 'Mailbox full' }, 5);
    const id = await send({ wallet });
    const record = await settled(id);
    assert.equal(record.status, 'bounced');
    assert.deepEqual(
      record.attempts.map((a: any) => a.outcome),
      ['retry', 'retry', 'bounced'],
      'the last attempt reads as what it ended in',
    );
    assert.match(record.error, /^gave up after 3 attempts: SMTP 452 to RCPT TO: 452 Mailbox full/);
    const [event] = await eventsOf(id);
    assert.equal(event.type, 'notification.bounced');
    assert.equal(event.data.attempts, 3);
    assert.equal(event.data.delivered_at, null);
  });

  it("honours Telegram's retry_after on 429", async () => {
    const c = contacts();
    const wallet = await registeredWallet(gw.url, { telegramChatId: c.telegramChatId });
    telegram.script({ kind: 'rate-limited', retryAfter: 1 }, { chatId: c.telegramChatId });
    const record = await settled(await send({ wallet }));
    assert.equal(record.status, 'delivered');
    const tries = telegram.received.filter((r) => r.body.chat_id === c.telegramChatId);
    assert.equal(tries.length, 2);
    assert.ok(tries[1].at - tries[0].at >= 950, `waited ${tries[1].at - tries[0].at} ms`);
  });

  it('fails a blocked Telegram chat without retrying', async () => {
    const c = contacts();
    const wallet = await registeredWallet(gw.url, { telegramChatId: c.telegramChatId });
    telegram.script({ kind: 'blocked' }, { chatId: c.telegramChatId });
    const id = await send({ wallet });
    const record = await settled(id);
    assert.equal(record.status, 'failed');
    assert.equal(record.attempts.length, 1);
    const [event] = await eventsOf(id);
    assert.equal(event.type, 'notification.failed');
    assert.ok(!String(event.data.reason).includes(telegram.token));
  });

  it('stops counting a blocked Telegram chat as verified, so the next send goes to the verified email', async () => {
    const c = contacts();
    const wallet = await registeredWallet(gw.url, { email: c.email, telegramChatId: c.telegramChatId });
    const status = async () => (await call(gw.url, acme.apiKey, 'GET', `/v1/wallets/${wallet}/status`)).body.channels;
    assert.deepEqual(await status(), ['email', 'telegram']);
    telegram.script({ kind: 'blocked' }, { chatId: c.telegramChatId });
    const blocked = await settled(await send({ wallet }));
    assert.equal(blocked.status, 'failed');
    assert.equal(blocked.delivery_channel, 'telegram');
    assert.deepEqual(await status(), ['email'], 'the blocked chat is no longer a verified channel');
    const next = await send({ wallet });
    const delivered = await settled(next);
    assert.equal(delivered.status, 'delivered');
    assert.equal(delivered.delivery_channel, 'email');
  });

  it('stops counting a number opted out with STOP (Twilio 21610) as verified, but only the number that was sent to', async () => {
    const c = contacts();
    const wallet = await registeredWallet(gw.url, { phone: c.phone });
    twilio.script({ kind: 'error', code: 21610 }, { to: c.phone });
    const id = await send({ wallet });
    const first = await settled(id);
    assert.equal(first.status, 'failed');
    assert.deepEqual((await call(gw.url, acme.apiKey, 'GET', `/v1/wallets/${wallet}/status`)).body.channels, []);

    // The owner verifies a new number; a late answer about the old one leaves it alone.
    const [{ phone_enc: oldNumber }] = await gw.herald.deps.db.query<{ phone_enc: string }>('SELECT phone_enc FROM identities WHERE wallet = $1', [wallet]);
    await importIdentity(gw.url, wallet, { phone: contacts().phone });
    const late = settle(
      { id, protocol_id: acme.id, wallet, priority: 'normal', channel: 'sms', fallback_channel: null, attempts: 1, environment: 'production' as const },
      { kind: 'failed', error: 'Twilio 400: 21610', unreachable: true },
      { provider: 'twilio', durationMs: 1, now: new Date(), policy: DEFAULT_RETRY_POLICY, hasPhone: true },
    );
    late.unreachableContact = { wallet, channel: 'sms', sealed: oldNumber };
    await commitSettlements(gw.herald.deps.db, [late], new Date(), { held: true });
    assert.deepEqual((await call(gw.url, acme.apiKey, 'GET', `/v1/wallets/${wallet}/status`)).body.channels, ['sms']);
  });

  it('unverifies both the chat and the number of one wallet refused in the same batch', async () => {
    const c = contacts();
    const wallet = await registeredWallet(gw.url, { telegramChatId: c.telegramChatId, phone: c.phone });
    const [sealed] = await gw.herald.deps.db.query<{ telegram_chat_enc: string; phone_enc: string }>(
      'SELECT telegram_chat_enc, phone_enc FROM identities WHERE wallet = $1',
      [wallet],
    );
    const ctx = { provider: 'test', durationMs: 1, now: new Date(), policy: DEFAULT_RETRY_POLICY, hasPhone: true };
    const refused = (channel: 'telegram' | 'sms', id: string) => {
      const s = settle(
        { id, protocol_id: acme.id, wallet, priority: 'normal', channel, fallback_channel: null, attempts: 1, environment: 'production' as const },
        { kind: 'failed', error: 'refused', unreachable: true },
        ctx,
      );
      s.unreachableContact = { wallet, channel, sealed: channel === 'telegram' ? sealed.telegram_chat_enc : sealed.phone_enc };
      return s;
    };
    await commitSettlements(gw.herald.deps.db, [refused('telegram', await send({ wallet })), refused('sms', await send({ wallet, preferredChannel: 'sms' }))], new Date(), {
      held: true,
    });
    assert.deepEqual((await call(gw.url, acme.apiKey, 'GET', `/v1/wallets/${wallet}/status`)).body.channels, []);
  });

  it('gives up after the configured attempts on repeated Twilio 5xx', async () => {
    const c = contacts();
    const wallet = await registeredWallet(gw.url, { phone: c.phone });
    twilio.script({ kind: 'server-error' }, { to: c.phone, times: 5 });
    const id = await send({ wallet });
    const record = await settled(id);
    assert.equal(record.status, 'failed');
    assert.deepEqual(
      record.attempts.map((a: any) => a.outcome),
      ['retry', 'retry', 'failed'],
    );
    assert.match(record.error, /gave up after 3 attempts/);
    const [event] = await eventsOf(id);
    assert.equal(event.data.attempts, 3);
  });

  it('falls back to SMS for a critical message whose email bounced, keeping both attempts', async () => {
    const c = contacts();
    const wallet = await registeredWallet(gw.url, { email: c.email, phone: c.phone });
    smtp.script(c.email, { code: 550 });
    const id = await send({ wallet, priority: 'critical', preferredChannel: 'email' });
    const record = await settled(id);
    assert.equal(record.status, 'delivered');
    assert.equal(record.delivery_channel, 'sms');
    assert.equal(record.fallback_channel, 'sms');
    assert.deepEqual(
      record.attempts.map((a: any) => [a.channel, a.outcome]),
      [
        ['email', 'bounced'],
        ['sms', 'delivered'],
      ],
    );
    assert.ok(twilio.received.some((r) => r.form.To === c.phone));
    const events = await eventsOf(id);
    assert.deepEqual(
      events.map((e: any) => [e.type, e.data.channel]),
      [['notification.delivered', 'sms']],
    );
    // the list says what the record says: the channel that carried it
    const listed = await call(gw.url, acme.apiKey, 'GET', `/v1/notifications?wallet=${wallet}`);
    assert.deepEqual(
      listed.body.data.map((item: any) => [item.notification_id, item.delivery_channel]),
      [[id, 'sms']],
    );
  });

  it('does not fall back for a normal message, nor without a phone', async () => {
    const a = contacts();
    const withPhone = await registeredWallet(gw.url, { email: a.email, phone: a.phone });
    smtp.script(a.email, { code: 550 });
    assert.equal((await settled(await send({ wallet: withPhone, preferredChannel: 'email' }))).status, 'bounced');
    const b = contacts();
    const noPhone = await registeredWallet(gw.url, { email: b.email });
    smtp.script(b.email, { code: 550 });
    assert.equal((await settled(await send({ wallet: noPhone, priority: 'critical' }))).status, 'bounced');
  });
});

describe('delivery while a provider does not answer', () => {
  let gw: TestGateway;
  let smtp: TestSmtpServer;
  let telegram: TestTelegramApi;
  let acme: TestProtocol;

  before(async () => {
    [smtp, telegram] = await Promise.all([startSmtpServer(), startTelegramApi()]);
    gw = await startGateway({
      env: {
        ...emailAndTelegram(smtp, telegram),
        // One delivery loop, claiming three rows at most: a stalled send is a third of a batch.
        HERALD_WORKER_LOOPS: '1',
        HERALD_WORKER_BATCH: '3',
        // No polling to speak of: every claim here comes from a wake-up (a new notification, a channel with room).
        HERALD_WORKER_POLL_MS: '60000',
      },
    });
    acme = await gw.createProtocol({ tier: 3, name: 'Acme' });
  });
  after(async () => {
    await gw.close();
    await Promise.all([smtp.close(), telegram.close()]);
  });

  const statusOf = async (id: string) => (await call(gw.url, acme.apiKey, 'GET', `/v1/notifications/${id}`)).body.status as string;
  const send = async (wallet: string, preferredChannel: string) => {
    const res = await call(gw.url, acme.apiKey, 'POST', '/v1/notify', { wallet, subject: 'Heads up', body: 'b', category: 'defi', preferredChannel });
    assert.equal(res.status, 202, JSON.stringify(res.body));
    return res.body.notificationId as string;
  };

  it('delivers the other channels, and the same channel to others, while a send waits for its answer', async () => {
    const stalled = await registeredWallet(gw.url, { telegramChatId: '7001' });
    const other = await registeredWallet(gw.url, { email: 'other@example.com', phone: '+15550007002', telegramChatId: '7002' });
    telegram.script({ kind: 'delay', ms: 4000 }, { chatId: '7001' });
    const waiting = await send(stalled, 'telegram');
    await waitFor(async () => (await statusOf(waiting)) === 'sending');

    // Email through SMTP, SMS through the capture provider, Telegram to another chat.
    const others = await Promise.all([send(other, 'email'), send(other, 'sms'), send(other, 'telegram')]);
    for (const id of others) await waitFor(async () => (await statusOf(id)) === 'delivered');
    assert.equal(await statusOf(waiting), 'sending', 'the stalled send is still waiting for Telegram');
    await waitFor(async () => (await statusOf(waiting)) === 'delivered');
  });

  it('goes on claiming while a row of the same batch waits for its answer', async () => {
    const stalled = await registeredWallet(gw.url, { telegramChatId: '7101' });
    const other = await registeredWallet(gw.url, { email: 'other2@example.com', telegramChatId: '7102' });
    const third = await registeredWallet(gw.url, { telegramChatId: '7103' });
    telegram.script({ kind: 'delay', ms: 6000 }, { chatId: '7101' });
    // One request, one transaction: the stalled row and two others, a batch of Telegram rows,
    // are claimed together. The two settle at once, and their places with them.
    const item = (wallet: string) => ({ wallet, subject: 'Heads up', body: 'b', category: 'defi', preferredChannel: 'telegram' });
    const bulk = await call(gw.url, acme.apiKey, 'POST', '/v1/notify/bulk', { notifications: [item(stalled), item(other), item(third)] });
    assert.equal(bulk.status, 202, JSON.stringify(bulk.body));
    const [waiting, ...together] = bulk.body.results.map((r: { notificationId: string }) => r.notificationId);
    for (const id of together) await waitFor(async () => (await statusOf(id)) === 'delivered');

    // Sent after the batch was claimed: delivered while its stalled row still waits.
    const later = await send(other, 'telegram');
    await waitFor(async () => (await statusOf(later)) === 'delivered');
    assert.equal(await statusOf(waiting), 'sending', 'the stalled send is still waiting for Telegram');
    await waitFor(async () => (await statusOf(waiting)) === 'delivered');
  });

  it('claims no more of a channel whose held rows fill a batch, and claims it again once they settle', async () => {
    const chats = ['7201', '7202', '7203'];
    const stalled = await Promise.all(chats.map((chat) => registeredWallet(gw.url, { telegramChatId: chat })));
    const other = await registeredWallet(gw.url, { email: 'other3@example.com', telegramChatId: '7204' });
    for (const chatId of chats) telegram.script({ kind: 'delay', ms: 6000 }, { chatId });
    const waiting = await Promise.all(stalled.map((wallet) => send(wallet, 'telegram')));
    for (const id of waiting) await waitFor(async () => (await statusOf(id)) === 'sending');

    // Telegram holds three rows, a batch: its next row waits, due, while email goes on.
    const nextTelegram = await send(other, 'telegram');
    const email = await send(other, 'email');
    await waitFor(async () => (await statusOf(email)) === 'delivered');
    assert.equal(await statusOf(nextTelegram), 'queued', 'left in the database while Telegram is full');
    assert.deepEqual(await Promise.all(waiting.map(statusOf)), ['sending', 'sending', 'sending']);

    await waitFor(async () => (await statusOf(nextTelegram)) === 'delivered');
    for (const id of waiting) await waitFor(async () => (await statusOf(id)) === 'delivered');
  });
});

describe('delivery stopping while a provider does not answer', () => {
  let gw: TestGateway;
  let telegram: TestTelegramApi;
  let acme: TestProtocol;

  before(async () => {
    telegram = await startTelegramApi();
    gw = await startGateway({
      env: {
        TELEGRAM_BOT_TOKEN: telegram.token,
        TELEGRAM_API_URL: telegram.url,
        // One send at a time: the rows behind a stalled send wait for its lane.
        HERALD_WORKER_LOOPS: '1',
        HERALD_WORKER_CONCURRENCY: '1',
        HERALD_WORKER_POLL_MS: '50',
      },
    });
    acme = await gw.createProtocol({ tier: 3, name: 'Acme' });
  });
  after(async () => {
    await gw.close();
    await telegram.close();
  });

  it('gives back at once the rows waiting behind a stalled send, and finishes the stalled one', async () => {
    const stalled = await registeredWallet(gw.url, { telegramChatId: '7301' });
    const others = await Promise.all(['7302', '7303'].map((chat) => registeredWallet(gw.url, { telegramChatId: chat })));
    telegram.script({ kind: 'delay', ms: 6000 }, { chatId: '7301' });
    const send = async (wallet: string) =>
      (await call(gw.url, acme.apiKey, 'POST', '/v1/notify', { wallet, subject: 'Heads up', body: 'b', category: 'defi', preferredChannel: 'telegram' })).body
        .notificationId as string;
    const rows = (ids: string[]) =>
      gw.herald.deps.db.query<{ id: string; status: string; attempts: number }>('SELECT id, status, attempts FROM notifications WHERE id = ANY($1::text[])', [ids]);

    const first = await send(stalled);
    await waitFor(async () => telegram.received.some((r) => r.body.chat_id === '7301'));
    // Claimed, and waiting for the one lane the stalled send holds.
    const behind = await Promise.all(others.map(send));
    await waitFor(async () => (await rows(behind)).every((r) => r.status === 'sending'));

    const closing = gw.herald.close();
    // While the stalled send still waits for Telegram, the rows behind it are due again, unsent.
    await waitFor(async () => (await rows(behind)).every((r) => r.status === 'queued' && r.attempts === 0));
    assert.equal((await rows([first]))[0].status, 'sending');
    assert.deepEqual(
      telegram.received.map((r) => r.body.chat_id),
      ['7301'],
      'nothing sent to the chats behind it',
    );
    await closing;
  });
});
