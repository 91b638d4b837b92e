import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import pino from 'pino';
import { call, startGateway, waitFor, type TestGateway } from '../support/gateway.js';
import { logLines } from '../support/log-lines.js';
import { startSmtpServer, type TestSmtpServer } from '../support/smtp-server.js';
import { startTelegramApi, type TestTelegramApi } from '../support/telegram-api.js';
import { startTwilioApi, type TestTwilioApi } from '../support/twilio-api.js';
import { importIdentity, makeWallet } from '../support/wallets.js';

const WEBHOOK_SECRET = 'wiring-test-secret';

describe('live providers in a running gateway', () => {
  let smtp: TestSmtpServer;
  let telegram: TestTelegramApi;
  let twilio: TestTwilioApi;
  let gw: TestGateway;

  before(async () => {
    [smtp, telegram, twilio] = await Promise.all([startSmtpServer({ user: 'herald', password: 'secret' }), startTelegramApi(), startTwilioApi()]);
    gw = await startGateway({
      env: {
        SMTP_URL: smtp.url,
        EMAIL_FROM: 'Herald <codes@herald.test>',
        TELEGRAM_BOT_TOKEN: telegram.token,
        TELEGRAM_API_URL: telegram.url,
        TELEGRAM_WEBHOOK_SECRET: WEBHOOK_SECRET,
        TWILIO_ACCOUNT_SID: twilio.accountSid,
        TWILIO_AUTH_TOKEN: twilio.authToken,
        TWILIO_FROM: '+15005550006',
        TWILIO_API_URL: twilio.url,
      },
    });
  });
  after(async () => {
    await gw?.close();
    await Promise.all([smtp?.close(), telegram?.close(), twilio?.close()]);
  });

  it('reports the provider of each channel on /health', async () => {
    const res = await call(gw.url, undefined, 'GET', '/health');
    assert.equal(res.status, 200);
    assert.deepEqual(res.body.channels, { email: 'smtp', telegram: 'telegram', sms: 'twilio' });
  });

  it('sends verification codes by SMTP and Twilio, and the Telegram link reply by the Bot API', async () => {
    const wallet = makeWallet();
    const challenge = await call(gw.url, undefined, 'POST', '/v1/identities/challenge', { wallet: wallet.address });
    assert.equal(challenge.status, 200, JSON.stringify(challenge.body));
    const registered = await call(gw.url, undefined, 'POST', '/v1/identities', {
      wallet: wallet.address,
      nonce: challenge.body.nonce,
      signature: wallet.sign(challenge.body.message),
      email: 'holder@example.com',
      phone: '+14155550123',
    });
    assert.equal(registered.status, 201, JSON.stringify(registered.body));

    const mail = smtp.received.find((m) => m.to.includes('holder@example.com'));
    assert.ok(mail, 'the email code reached the SMTP server');
    assert.equal(mail.user, 'herald');
    assert.equal(mail.from, 'codes@herald.test');
    const emailCode = /\b(\d{6})\b/.exec(mail.text ?? '')?.[1];
    assert.ok(emailCode && mail.html?.includes(emailCode));

    const sms = twilio.received.find((r) => r.form.To === '+14155550123');
    assert.ok(sms, 'the SMS code reached Twilio');
    assert.equal(sms.form.From, '+15005550006');
    const smsCode = /\b(\d{6})\b/.exec(sms.form.Body)?.[1];
    assert.ok(smsCode);

    for (const [channel, code] of [['email', emailCode], ['sms', smsCode]]) {
      const verified = await call(gw.url, undefined, 'POST', '/v1/identities/verify', { wallet: wallet.address, channel, code });
      assert.equal(verified.status, 200, JSON.stringify(verified.body));
    }

    const token = new URL(registered.body.telegramLink).searchParams.get('start');
    const update = await call(gw.url, undefined, 'POST', '/v1/telegram/webhook', { update_id: 1, message: { chat: { id: 777001 }, text: `/start ${token}` } }, {
      'x-telegram-bot-api-secret-token': WEBHOOK_SECRET,
    });
    assert.equal(update.status, 200, JSON.stringify(update.body));
    const reply = telegram.received.find((r) => r.body.chat_id === '777001');
    assert.ok(reply, 'the link reply reached the Bot API');
    assert.equal(reply.status, 200);
    assert.equal(reply.body.parse_mode, 'HTML');
    assert.match(String(reply.body.text), /^Linked to wallet /);
  });
});

describe('delivery attempts in the log', () => {
  let telegram: TestTelegramApi;
  let gw: TestGateway;
  const log = logLines();

  before(async () => {
    telegram = await startTelegramApi();
    gw = await startGateway({
      // A token the Bot API does not know: every Telegram message fails on the gateway's setting.
      env: { TELEGRAM_BOT_TOKEN: '999999:WRONGTOKEN', TELEGRAM_API_URL: telegram.url, HERALD_WORKER_POLL_MS: '50' },
      logger: pino({ level: 'debug' }, log.stream),
    });
  });
  after(async () => {
    await gw?.close();
    await telegram?.close();
  });

  it('logs each attempt at debug, and a provider refusing the gateway setting once at warn, naming no contact', async () => {
    const protocol = await gw.createProtocol({ tier: 3 });
    const ids: string[] = [];
    for (const chat of ['70001', '70002', '70003']) {
      const wallet = makeWallet().address;
      await importIdentity(gw.url, wallet, { telegramChatId: chat });
      const sent = await call(gw.url, protocol.apiKey, 'POST', '/v1/notify', { wallet, subject: 's', body: 'b', category: 'defi' });
      assert.equal(sent.status, 202, JSON.stringify(sent.body));
      ids.push(sent.body.notificationId);
    }
    for (const id of ids) {
      await waitFor(async () => (await call(gw.url, protocol.apiKey, 'GET', `/v1/notifications/${id}`)).body.status === 'failed' || undefined);
    }
    const records = log.records();
    const attempts = records.filter((line) => line.msg === 'delivery attempt');
    assert.deepEqual(
      ids.map((id) => attempts.filter((line) => line.notificationId === id).map((line) => [line.level, line.channel, line.provider, line.outcome])),
      ids.map(() => [[20, 'telegram', 'telegram', 'failed']]),
    );
    assert.match(attempts[0].error, /check TELEGRAM_BOT_TOKEN/);
    const warnings = records.filter((line) => line.level === 40 && /refuses this gateway's settings/.test(line.msg));
    assert.equal(warnings.length, 1, 'once a minute per channel, not once a message');
    assert.equal(warnings[0].msg, "telegram refuses this gateway's settings: telegram messages fail until they are fixed");
    const all = log.lines.join('\n');
    for (const secret of ['70001', '70002', '70003', 'WRONGTOKEN']) assert.ok(!all.includes(secret), `${secret} in the log`);
  });
});
