import assert from 'node:assert/strict';
import { createServer } from 'node:net';
import { after, before, describe, it } from 'node:test';
import type { OutboundMessage } from '../../packages/server/src/channels/provider.js';
import { TelegramProvider } from '../../packages/server/src/channels/telegram.js';
import { renderTelegramText } from '../../packages/server/src/rendering/telegram.js';
import { startTelegramApi, type TestTelegramApi } from '../support/telegram-api.js';

function telegram(to: string, text = '<b>Liquidation warning</b>\n\nHealth factor 1.02'): OutboundMessage {
  return { channel: 'telegram', to, text, meta: { protocolId: 'proto_test', wallet: 'W', environment: 'production' } };
}

describe('Telegram provider', () => {
  let api: TestTelegramApi;
  let provider: TelegramProvider;

  before(async () => {
    api = await startTelegramApi();
    provider = new TelegramProvider({ token: api.token, apiUrl: api.url, ratePerSecond: 1000 });
  });
  after(() => api.close());

  it('posts sendMessage as JSON with HTML parse mode and no link preview', async () => {
    const outcome = await provider.send(telegram('987654321'));
    assert.equal(outcome.kind, 'delivered');
    const request = api.received.at(-1)!;
    assert.match((outcome as { providerResponse: string }).providerResponse, /^message_id \d+$/);
    assert.equal(request.method, 'sendMessage');
    assert.equal(request.token, api.token);
    assert.match(request.contentType, /^application\/json/);
    assert.deepEqual(request.body, {
      chat_id: '987654321',
      text: '<b>Liquidation warning</b>\n\nHealth factor 1.02',
      parse_mode: 'HTML',
      link_preview_options: { is_disabled: true },
    });
  });

  it('keeps the escaping of rendered text intact, and Telegram parses it', async () => {
    const text = renderTelegramText('Swap <USDC> & SOL', 'Price **< 1.00** & falling: see [docs](https://example.com/?a=1&b=2) `x<y`');
    const outcome = await provider.send(telegram('987654321', text));
    assert.equal(outcome.kind, 'delivered', JSON.stringify(outcome));
    const sent = api.received.at(-1)!.body.text as string;
    assert.equal(sent, text);
    assert.ok(sent.includes('Swap &lt;USDC&gt; &amp; SOL'));
    assert.ok(sent.includes('href="https://example.com/?a=1&amp;b=2"'));
    assert.ok(sent.includes('<code>x&lt;y</code>'));
  });

  it('maps text Telegram cannot parse to failed (400)', async () => {
    const outcome = await provider.send(telegram('987654321', 'a <div>b</div> & c'));
    assert.equal(outcome.kind, 'failed');
    assert.match(outcome.kind === 'failed' ? outcome.error : '', /^Telegram 400: Bad Request: can't parse entities/);
  });

  it('maps 429 to retry with retry_after in milliseconds', async () => {
    api.script({ kind: 'rate-limited', retryAfter: 7 });
    const outcome = await provider.send(telegram('987654321'));
    assert.deepEqual(outcome, {
      kind: 'retry',
      error: 'Telegram rate limit: Too Many Requests: retry after 7',
      providerResponse: '429 Too Many Requests: retry after 7',
      retryAfterMs: 7000,
    });
  });

  it('maps a blocked bot (403) to failed', async () => {
    api.script({ kind: 'blocked' }, { chatId: '555001' });
    const outcome = await provider.send(telegram('555001'));
    assert.equal(outcome.kind, 'failed');
    assert.equal(outcome.kind === 'failed' && outcome.error, 'Telegram 403: Forbidden: bot was blocked by the user');
  });

  it('maps an unknown chat (400) to failed', async () => {
    api.script({ kind: 'chat-not-found' }, { chatId: '555002' });
    const outcome = await provider.send(telegram('555002'));
    assert.equal(outcome.kind, 'failed');
    assert.equal(outcome.kind === 'failed' && outcome.error, 'Telegram 400: Bad Request: chat not found');
  });

  it('maps 500 to retry', async () => {
    api.script({ kind: 'server-error' });
    const outcome = await provider.send(telegram('987654321'));
    assert.equal(outcome.kind, 'retry');
    assert.equal(outcome.kind === 'retry' && outcome.retryAfterMs, undefined);
  });

  it('maps a wrong token to failed, naming TELEGRAM_BOT_TOKEN without showing it', async () => {
    const token = '999999:WRONG-token-that-must-never-be-shown';
    const wrong = new TelegramProvider({ token, apiUrl: api.url, ratePerSecond: 1000 });
    const outcome = await wrong.send(telegram('987654321'));
    assert.equal(outcome.kind, 'failed');
    assert.match(outcome.kind === 'failed' ? outcome.error : '', /TELEGRAM_BOT_TOKEN/);
    assert.doesNotMatch(JSON.stringify(outcome), /WRONG-token/);
  });

  it('never shows the token when an answer echoes it, percent-encoded or as it is', async () => {
    const secret = api.token.slice(api.token.indexOf(':') + 1);
    for (const echoed of [api.token, encodeURIComponent(api.token), api.token.replace(':', '%3a'), `${secret} (the secret alone)`]) {
      api.script({ kind: 'refused', status: 404, description: `Not Found: /bot${echoed}/sendMessage` });
      const outcome = await provider.send(telegram('987654321'));
      assert.equal(outcome.kind, 'failed');
      assert.doesNotMatch(JSON.stringify(outcome), new RegExp(secret), echoed);
      assert.match(outcome.kind === 'failed' ? outcome.error : '', /\[token\]/, echoed);
    }
  });

  it('maps a closed port to retry without the token in the error', async () => {
    const server = createServer();
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const { port } = server.address() as { port: number };
    await new Promise((resolve) => server.close(resolve));
    const down = new TelegramProvider({ token: api.token, apiUrl: `http://127.0.0.1:${port}`, ratePerSecond: 1000 });
    const outcome = await down.send(telegram('987654321'));
    assert.deepEqual(outcome, { kind: 'retry', error: 'Telegram unreachable: ECONNREFUSED' });
  });

  it('maps a request that outlives its timeout to retry', async () => {
    api.script({ kind: 'delay', ms: 500 });
    const slow = new TelegramProvider({ token: api.token, apiUrl: api.url, ratePerSecond: 1000, timeoutMs: 100 });
    const outcome = await slow.send(telegram('987654321'));
    assert.deepEqual(outcome, { kind: 'retry', error: 'Telegram unreachable: no answer within 100 ms' });
    assert.doesNotMatch(JSON.stringify(outcome), new RegExp(api.token));
  });

  it('holds sends to the rate limit instead of failing them', async () => {
    const limited = new TelegramProvider({ token: api.token, apiUrl: api.url, ratePerSecond: 30 });
    const before = api.received.length;
    const started = performance.now();
    const outcomes = await Promise.all(Array.from({ length: 60 }, (_, i) => limited.send(telegram(String(100000 + i)))));
    const elapsed = performance.now() - started;
    assert.ok(outcomes.every((o) => o.kind === 'delivered'));
    assert.equal(api.received.length - before, 60);
    // The first goes at once and the others 1/30 s apart: the 60th starts 59/30 s after the first.
    assert.ok(elapsed >= 1950, `60 sends at 30/s took ${Math.round(elapsed)} ms`);
  });
});
