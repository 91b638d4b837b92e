import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { call, isErrorBody, startGateway, type TestGateway, type TestProtocol } from '../support/gateway.js';
import { makeWallet } from '../support/wallets.js';

describe('POST /v1/preview', () => {
  let gw: TestGateway;
  let acme: TestProtocol;
  const wallet = makeWallet().address;

  before(async () => {
    gw = await startGateway({ env: { HERALD_ROLE: 'api' } });
    acme = await gw.createProtocol({ tier: 1, name: 'Acme <Lending>' });
  });
  after(() => gw.close());

  const preview = (body: unknown, key = acme.apiKey) => call(gw.url, key, 'POST', '/v1/preview', body);

  it('renders hostile markdown safely for every channel', async () => {
    const res = await preview({
      wallet,
      subject: 'Alert <b>&</b> "quotes"',
      body: [
        '# Heads up',
        '<script>alert(1)</script>',
        '<img src=x onerror=alert(1)>',
        '[click](javascript:alert(1)) and [ok](https://example.com/a?b=1&c=2)',
        'Price < 5 & > 3 — €',
      ].join('\n\n'),
      category: 'defi',
    });
    assert.equal(res.status, 200);
    const { renderedHtml, telegramText, smsText } = res.body;
    assert.ok(!/<script/i.test(renderedHtml));
    assert.ok(!/onerror=/i.test(renderedHtml.replace(/&lt;img[^]*?&gt;/g, '')));
    assert.ok(!/href="javascript:/i.test(renderedHtml));
    assert.match(renderedHtml, /href="https:\/\/example\.com\/a\?b=1&amp;c=2"/);
    assert.match(renderedHtml, /&lt;script&gt;/);
    assert.match(renderedHtml, /<title>Alert &lt;b&gt;&amp;&lt;\/b&gt; &quot;quotes&quot;<\/title>/);
    assert.match(renderedHtml, /unsubscribe/i);
    assert.match(renderedHtml, /Acme &lt;Lending&gt;/);
    // Telegram HTML: only its subset of tags, text escaped
    assert.ok(!/<script|<img/i.test(telegramText));
    assert.match(telegramText, /&lt;script&gt;/);
    assert.match(telegramText, /Price &lt; 5 &amp; &gt; 3/);
    for (const tag of telegramText.match(/<\/?([a-z]+)/gi) ?? []) {
      assert.ok(/^<\/?(b|strong|i|em|u|s|code|pre|a|blockquote)$/i.test(tag), tag);
    }
    // SMS: plain text, where markup typed by the sender is just characters
    assert.ok(!smsText.includes('href='));
    assert.match(smsText, /ok \(https:\/\/example\.com\/a\?b=1&c=2\)/);
    assert.match(smsText, /^Alert <b>&<\/b> "quotes"/);
    assert.equal(res.body.sms.encoding, 'UCS-2');
  });

  it('counts SMS segments', async () => {
    const res = await preview({ wallet, subject: 'Hi', body: 'x'.repeat(200), category: 'system' });
    assert.equal(res.body.sms.encoding, 'GSM-7');
    assert.equal(res.body.sms.segments, 2);
    // Twilio takes at most 1,600 characters: a longer SMS is cut, and counted as cut
    const long = await preview({ wallet, subject: 'Hi', body: 'x'.repeat(2000), category: 'system' });
    assert.equal(long.body.smsText.length, 1600);
    assert.ok(long.body.smsText.endsWith('x...'));
    assert.deepEqual(long.body.sms, { encoding: 'GSM-7', segments: 11, characters: 1600 });
  });

  it('validates like a send', async () => {
    const bad = await preview({ wallet: 'nope', subject: 's', body: 'b', category: 'defi' });
    assert.equal(bad.status, 400);
    assert.ok(isErrorBody(bad.body));
    assert.match(bad.body.message, /^wallet must be a Solana wallet address/);
    const missing = await preview({ wallet, subject: 's', body: 'b' });
    assert.match(missing.body.message, /^category is required$/);
    const blank = await preview({ wallet, subject: '\u202e ', body: 'b', category: 'defi' });
    assert.equal(blank.status, 400);
    assert.equal(blank.body.message, 'subject is blank: it must hold something to show, not only spaces, control or zero-width characters');
    const unknown = await preview({ wallet, subject: 's', body: 'b', category: 'defi', templateId: 'tmpl_x' });
    assert.equal(unknown.status, 404);
    assert.equal(unknown.body.code, 'TEMPLATE_NOT_FOUND');
    const dev = await gw.createProtocol({ tier: 0 });
    const gated = await preview({ wallet, subject: 's', body: 'b', category: 'defi', templateId: 'tmpl_x' }, dev.apiKey);
    assert.equal(gated.status, 403);
    assert.equal(gated.body.code, 'TIER_REQUIRED');
  });
});
