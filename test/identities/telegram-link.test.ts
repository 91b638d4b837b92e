import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { loadContacts } from '../../packages/server/src/identities/identity-store.js';
import { call, isErrorBody, startGateway, type TestGateway, type TestProtocol } from '../support/gateway.js';
import { newWallet, register, testClock } from './wallet-key.js';

const SECRET = 'tg-webhook_secret-0123';

describe('telegram linking', () => {
  let gw: TestGateway;
  let acme: TestProtocol;
  const clock = testClock();
  let updateId = 1;

  before(async () => {
    gw = await startGateway({ env: { HERALD_IP_RATE_LIMIT: '100000', TELEGRAM_WEBHOOK_SECRET: SECRET, TELEGRAM_BOT_USERNAME: 'AcmeAlertsBot' }, now: clock.now });
    acme = await gw.createProtocol({ tier: 3 });
  });
  after(() => gw.close());

  /** `secret: null` sends no secret header. */
  function update(chatId: number, text?: string, secret: string | null = SECRET) {
    const body = { update_id: updateId++, message: { message_id: 1, date: 0, chat: { id: chatId, type: 'private' }, from: { id: chatId, is_bot: false, first_name: 'A' }, text } };
    return call(gw.url, undefined, 'POST', '/v1/telegram/webhook', body, secret === null ? {} : { 'x-telegram-bot-api-secret-token': secret });
  }
  const tokenOf = (link: string) => new URL(link).searchParams.get('start')!;
  const channels = async (wallet: string) => (await call(gw.url, acme.apiKey, 'GET', `/v1/wallets/${wallet}/status`)).body.channels;
  async function lastReply(): Promise<{ text: string; wallet: string; protocol_id: string; environment: string }> {
    const [row] = await gw.herald.deps.db.query<any>(`SELECT * FROM captured_messages WHERE channel = 'telegram' ORDER BY id DESC LIMIT 1`);
    return row;
  }

  it('links the chat of /start <token> to the wallet and answers in the chat', async () => {
    const wallet = newWallet();
    const reg = await register(gw, wallet);
    assert.match(reg.body.telegramLink, /^https:\/\/t\.me\/AcmeAlertsBot\?start=/);
    const res = await update(777001, `/start ${tokenOf(reg.body.telegramLink)}`);
    assert.equal(res.status, 200);
    assert.deepEqual(res.body, { ok: true });
    assert.deepEqual(await channels(wallet.address), ['telegram']);
    const reply = await lastReply();
    assert.equal(reply.text, `Linked to wallet ${wallet.address.slice(0, 4)}…${wallet.address.slice(-4)}. Notifications for it will arrive in this chat.`);
    assert.equal(reply.protocol_id, 'herald');
    assert.equal(reply.environment, 'production');
    assert.deepEqual(await loadContacts(gw.herald.deps.db, gw.herald.deps.secrets, wallet.address), { telegramChatId: '777001' });
    const again = await register(gw, wallet);
    assert.equal(again.body.channels.telegram, 'verified');
  });

  it('accepts the /start@BotName form and negative (group) chat ids', async () => {
    const wallet = newWallet();
    const reg = await register(gw, wallet);
    assert.equal((await update(-1001234567890, `/start@AcmeAlertsBot ${tokenOf(reg.body.telegramLink)}`)).status, 200);
    assert.deepEqual(await loadContacts(gw.herald.deps.db, gw.herald.deps.secrets, wallet.address), { telegramChatId: '-1001234567890' });
  });

  it('uses a link once', async () => {
    const wallet = newWallet();
    const token = tokenOf((await register(gw, wallet)).body.telegramLink);
    await update(555001, `/start ${token}`);
    const res = await update(555002, `/start ${token}`);
    assert.equal(res.status, 200);
    assert.equal((await lastReply()).text, 'This link has expired. Register your wallet again to get a new one.');
    assert.deepEqual(await loadContacts(gw.herald.deps.db, gw.herald.deps.secrets, wallet.address), { telegramChatId: '555001' });
  });

  it('answers a /start that Telegram sends again, from the chat the link went to, as it answered the first', async () => {
    const wallet = newWallet();
    const token = tokenOf((await register(gw, wallet)).body.telegramLink);
    const linked = `Linked to wallet ${wallet.address.slice(0, 4)}…${wallet.address.slice(-4)}. Notifications for it will arrive in this chat.`;
    assert.equal((await update(555101, `/start ${token}`)).status, 200);
    assert.equal((await lastReply()).text, linked);
    // The same update again (Telegram saw no 2xx in time): the same answer, nothing changed.
    assert.equal((await update(555101, `/start ${token}`)).status, 200);
    assert.equal((await lastReply()).text, linked);
    assert.deepEqual(await loadContacts(gw.herald.deps.db, gw.herald.deps.secrets, wallet.address), { telegramChatId: '555101' });
    // Once the wallet has moved to another chat, the old link is dead for its first chat too.
    await update(555102, `/start ${tokenOf((await register(gw, wallet)).body.telegramLink)}`);
    await update(555101, `/start ${token}`);
    assert.equal((await lastReply()).text, 'This link has expired. Register your wallet again to get a new one.');
    assert.deepEqual(await loadContacts(gw.herald.deps.db, gw.herald.deps.secrets, wallet.address), { telegramChatId: '555102' });
  });

  it('refuses an expired link, an unknown token and a link replaced by a newer one', async () => {
    const expired = newWallet();
    const token = tokenOf((await register(gw, expired)).body.telegramLink);
    clock.advance(10 * 60_000 + 1000);
    assert.equal((await update(444001, `/start ${token}`)).status, 200);
    assert.equal((await lastReply()).text, 'This link has expired. Register your wallet again to get a new one.');
    assert.deepEqual(await channels(expired.address), []);

    assert.equal((await update(444002, '/start AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA')).status, 200);
    assert.equal((await lastReply()).text, 'This link has expired. Register your wallet again to get a new one.');

    const replaced = newWallet();
    const first = tokenOf((await register(gw, replaced)).body.telegramLink);
    const second = tokenOf((await register(gw, replaced)).body.telegramLink);
    await update(444003, `/start ${first}`);
    assert.deepEqual(await channels(replaced.address), []);
    await update(444003, `/start ${second}`);
    assert.deepEqual(await channels(replaced.address), ['telegram']);
  });

  it('answers a bare /start with help and ignores other messages and updates', async () => {
    const before = (await gw.herald.deps.db.query<{ n: number }>(`SELECT count(*)::int AS n FROM captured_messages WHERE channel = 'telegram'`))[0].n;
    assert.equal((await update(333001, '/start')).status, 200);
    assert.match((await lastReply()).text, /^Open the Telegram link/);
    for (const text of ['hello', '/help', undefined]) assert.equal((await update(333001, text)).status, 200);
    const other = await call(gw.url, undefined, 'POST', '/v1/telegram/webhook', { update_id: updateId++, edited_message: { text: 'x' } }, { 'x-telegram-bot-api-secret-token': SECRET });
    assert.deepEqual([other.status, other.body], [200, { ok: true }]);
    const afterCount = (await gw.herald.deps.db.query<{ n: number }>(`SELECT count(*)::int AS n FROM captured_messages WHERE channel = 'telegram'`))[0].n;
    assert.equal(afterCount, before + 1);
  });

  it('refuses updates without the secret header or with a wrong one', async () => {
    const wallet = newWallet();
    const token = tokenOf((await register(gw, wallet)).body.telegramLink);
    for (const secret of [null, 'wrong', SECRET + 'x', '', SECRET.toUpperCase()]) {
      const res = await update(222001, `/start ${token}`, secret);
      assert.equal(res.status, 403, String(secret));
      assert.ok(isErrorBody(res.body));
      assert.equal(res.body.code, 'FORBIDDEN');
    }
    assert.deepEqual(await channels(wallet.address), []);
    // The token survived the refused attempts.
    await update(222001, `/start ${token}`);
    assert.deepEqual(await channels(wallet.address), ['telegram']);
  });

  it('counts Telegram, proven by its secret, apart from keyless callers; a stranger per client IP', async () => {
    const tight = await startGateway({ env: { HERALD_IP_RATE_LIMIT: '2', TELEGRAM_WEBHOOK_SECRET: SECRET, TELEGRAM_BOT_USERNAME: 'AcmeAlertsBot' } });
    try {
      const send = (secret: string) =>
        call(tight.url, undefined, 'POST', '/v1/telegram/webhook', { update_id: updateId++, edited_message: { text: 'x' } }, { 'x-telegram-bot-api-secret-token': secret });
      // Far more updates in a burst than the per-IP limit allows, from one address, as Telegram sends them.
      const updates = await Promise.all(Array.from({ length: 12 }, () => send(SECRET)));
      assert.deepEqual([...new Set(updates.map((res) => res.status))], [200]);
      assert.ok(updates.every((res) => res.headers.get('x-ratelimit-limit') === '1000'));
      const strangers = await Promise.all(Array.from({ length: 8 }, () => send('wrong')));
      assert.ok(strangers.every((res) => [403, 429].includes(res.status)), strangers.map((res) => res.status).join());
      assert.ok(strangers.some((res) => res.status === 429));
      assert.ok(strangers.every((res) => res.headers.get('x-ratelimit-limit') === '2'));
      // Over that limit, the right secret gets the same 429 as a wrong one: a guess learns nothing.
      // (Tried again unless a guess was refused 429 in the second the right secret fell in: the
      // address was over its limit in that window, whichever way the burst straddled seconds.)
      let checked = false;
      for (let attempt = 0; attempt < 5 && !checked; attempt++) {
        const burst = await Promise.all(Array.from({ length: 5 }, () => send('wrong')));
        const right = await send(SECRET);
        const window = right.headers.get('x-ratelimit-reset');
        if (!burst.some((res) => res.status === 429 && res.headers.get('x-ratelimit-reset') === window)) continue;
        checked = true;
        assert.equal(right.status, 429);
        assert.equal(right.headers.get('x-ratelimit-limit'), '2');
      }
      assert.ok(checked, 'a refused guess and the right secret fell in the same second');
    } finally {
      await tight.close();
    }
  });

  it('answers 400 to a malformed update', async () => {
    const headers = { 'x-telegram-bot-api-secret-token': SECRET };
    for (const body of [{}, { update_id: 'x' }, { update_id: 1, message: { text: '/start abc' } }]) {
      const res = await call(gw.url, undefined, 'POST', '/v1/telegram/webhook', body, headers);
      assert.equal(res.status, 400, JSON.stringify(body));
      assert.ok(isErrorBody(res.body));
    }
  });
});

describe('telegram webhook without a secret', () => {
  let gw: TestGateway;
  before(async () => {
    gw = await startGateway();
  });
  after(() => gw.close());

  it('does not exist', async () => {
    const res = await call(gw.url, undefined, 'POST', '/v1/telegram/webhook', { update_id: 1, message: { chat: { id: 1 }, text: '/start x' } }, { 'x-telegram-bot-api-secret-token': 'anything' });
    assert.equal(res.status, 404);
    assert.ok(isErrorBody(res.body));
    assert.equal(res.body.code, 'NOT_FOUND');
  });
});
