import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { renderNotification, type RenderInput } from './render-notification.js';

const base: RenderInput = {
  subject: 'Position at risk',
  body: 'Your loan on **SOL** is close to liquidation. [Repay now](https://app.example/repay?id=7&x=1).',
  category: 'defi',
  protocolName: 'Acme Lend',
  unsubscribeUrl: 'https://herald.example/u/abc',
};

const HOSTILE = [
  '<script>alert(1)</script>',
  '<img src=x onerror=alert(1)>',
  '<a href="javascript:alert(1)">raw</a>',
  '[a](javascript:alert(1)) [b](JaVaScRiPt:alert(1)) [c](data:text/html,<script>alert(1)</script>) [d](vbscript:x)',
  '<div style="x" onmouseover="alert(1)">block</div>',
  '![i](javascript:alert(1)) ![j](http://insecure.example/i.png)',
  '&lt;script&gt; &#x3C;b&#x3E; &amp;',
  '```html\n<script>alert(1)</script>\n```',
].join('\n\n');

describe('renderNotification', () => {
  it('renders every channel from one input', () => {
    const out = renderNotification(base);
    assert.equal(out.subject, 'Position at risk');
    assert.match(
      out.html,
      /<p style="margin:0 0 16px 0;">Your loan on <strong>SOL<\/strong> is close to liquidation\. <a href="https:\/\/app\.example\/repay\?id=7&amp;x=1" [^>]*>Repay now<\/a>\.<\/p>/,
    );
    assert.equal(
      out.text,
      'Position at risk\n\nYour loan on SOL is close to liquidation. Repay now (https://app.example/repay?id=7&x=1).\n\n-- \n' +
        'You received this DeFi update from Acme Lend because your wallet is registered to receive notifications through Herald.\n' +
        'Unsubscribe from Acme Lend: https://herald.example/u/abc\nSent via Herald\n',
    );
    assert.equal(
      out.telegramText,
      '<b>Position at risk</b>\n\nYour loan on <b>SOL</b> is close to liquidation. <a href="https://app.example/repay?id=7&amp;x=1">Repay now</a>.',
    );
    assert.deepEqual(out.sms, {
      text: 'Position at risk: Your loan on SOL is close to liquidation. Repay now (https://app.example/repay?id=7&x=1).',
      encoding: 'GSM-7',
      segments: 1,
      characters: 107,
    });
  });

  it('keeps hostile markdown inert in every channel', () => {
    const out = renderNotification({ ...base, body: HOSTILE });
    for (const [tag, name, attributes] of out.html.matchAll(/<([a-zA-Z][a-zA-Z0-9]*)([^>]*)>/g)) {
      assert.doesNotMatch(name, /^(?:script|iframe|object|embed|div|svg|style)$/i, tag);
      for (const [, attribute, value] of attributes.matchAll(/\s([^\s=]+)(?:="([^"]*)")?/g)) {
        assert.doesNotMatch(attribute, /^on/i, tag);
        if (attribute === 'href' || attribute === 'src') assert.match(value, /^https:\/\//, tag);
      }
    }
    assert.ok(out.html.includes('&lt;script&gt;alert(1)&lt;/script&gt;'));
    assert.ok(out.html.includes('[a](javascript:alert(1))'));
    for (const [tag] of out.telegramText.matchAll(/<\/?([^\s>]+)[^>]*>/g)) {
      assert.match(tag, /^<\/?(?:b|i|s|code|pre|blockquote|a)(?: href="https:[^"]*")?>$/, tag);
    }
    assert.ok(out.telegramText.includes('&lt;script&gt;alert(1)&lt;/script&gt;'));
    assert.ok(out.sms.text.includes('<script>alert(1)</script> <img src=x onerror=alert(1)>'));
    assert.ok(out.text.includes('[b](JaVaScRiPt:alert(1))'));
  });

  it('cleans the subject and escapes & < > wherever it is markup', () => {
    const out = renderNotification({ ...base, subject: '  Rates <up> & "fees"\n\tnow\u0000 ' });
    assert.equal(out.subject, 'Rates <up> & "fees" now');
    assert.match(out.html, /<title>Rates &lt;up&gt; &amp; &quot;fees&quot; now<\/title>/);
    assert.match(out.telegramText, /^<b>Rates &lt;up&gt; &amp; "fees" now<\/b>\n\n/);
    assert.match(out.text, /^Rates <up> & "fees" now\n\n/);
    assert.match(out.sms.text, /^Rates <up> & "fees" now: /);
  });

  it('removes control characters from the body', () => {
    const out = renderNotification({ ...base, body: 'a\u0000b\u0007c\u001bd\u202ee' });
    assert.equal(out.sms.text, 'Position at risk: abcde');
    assert.equal(out.sms.encoding, 'GSM-7');
  });

  it('keeps unicode and emoji, and SMS switches to UCS-2 for them', () => {
    const out = renderNotification({ ...base, subject: 'Награда 🎉', body: 'Claim your **空投** 🚀' });
    assert.match(out.html, /<title>Награда 🎉<\/title>/);
    assert.match(out.html, /Claim your <strong>空投<\/strong> 🚀/);
    assert.equal(out.telegramText, '<b>Награда 🎉</b>\n\nClaim your <b>空投</b> 🚀');
    assert.deepEqual(out.sms, { text: 'Награда 🎉: Claim your 空投 🚀', encoding: 'UCS-2', segments: 1, characters: 28 });
  });

  it('counts 160 GSM-7 characters as one SMS and 161 as two', () => {
    const at = (length: number) => renderNotification({ ...base, subject: 'S', body: 'x'.repeat(length - 3) }).sms;
    assert.deepEqual([at(160).characters, at(160).segments], [160, 1]);
    assert.deepEqual([at(161).characters, at(161).segments], [161, 2]);
  });

  it('counts GSM extension characters from the body as two septets', () => {
    const sms = renderNotification({ ...base, subject: 'Fee', body: '€5 [max] {a} ^ ~ | \\\\' }).sms;
    assert.deepEqual(sms, { text: 'Fee: €5 [max] {a} ^ ~ | \\', encoding: 'GSM-7', segments: 1, characters: 34 });
  });

  it('sends only http(s) body links through rewriteLink', () => {
    const seen: string[] = [];
    const out = renderNotification({
      ...base,
      body: '[a](https://a.example) [b](http://b.example) [m](mailto:m@example.com) [j](javascript:alert(1)) ![i](https://cdn.example/i.png)',
      rewriteLink: (url) => (seen.push(url), `https://herald.example/c/${seen.length}`),
    });
    assert.deepEqual(seen, [], 'nothing is rendered for email before the email is read');
    assert.match(out.telegramText, /<a href="https:\/\/a\.example">a<\/a>/);
    assert.deepEqual(seen, [], 'reading the Telegram text renders no email');
    assert.match(out.html, /<a href="https:\/\/herald\.example\/c\/1" [^>]*>a<\/a> <a href="https:\/\/herald\.example\/c\/2" [^>]*>b<\/a>/);
    assert.deepEqual(seen, ['https://a.example', 'http://b.example']);
    assert.ok(out.text.length > 0);
    assert.equal(seen.length, 2, 'the email is rendered once for its HTML and text parts');
    assert.match(out.html, /<a href="https:\/\/herald\.example\/u\/abc" /, 'the unsubscribe link is not rewritten');
    assert.match(out.telegramText, /<a href="https:\/\/a\.example">a<\/a>/, 'Telegram keeps the original links');
  });

  it('appends the open pixel to the HTML only', () => {
    const out = renderNotification({ ...base, openPixelUrl: 'https://herald.example/o/abc.gif' });
    assert.match(out.html, /<img src="https:\/\/herald\.example\/o\/abc\.gif" width="1" height="1" alt=""[^>]*>\n<\/body>/);
    assert.doesNotMatch(out.text + out.telegramText + out.sms.text, /abc\.gif/);
  });

  it('keeps the unsubscribe link for marketing even with footer none, and drops it for security', () => {
    assert.match(renderNotification({ ...base, category: 'marketing', footer: 'none' }).html, />Unsubscribe from Acme Lend<\/a>/);
    assert.doesNotMatch(renderNotification({ ...base, category: 'security', footer: 'none' }).html, /Unsubscribe/);
  });

  it('renders very long input completely, except Telegram which is cut to its limit', () => {
    const body = Array.from({ length: 2000 }, (_, i) => `## Item ${i}\n\nText **${i}** & [link](https://x.example/${i}) 🚀`).join('\n\n');
    const out = renderNotification({ ...base, body });
    assert.ok(out.html.includes('Item 1999'));
    assert.ok(out.text.includes('Text 1999 & link (https://x.example/1999) 🚀'));
    const visible = out.telegramText.replace(/<[^>]*>/g, '').replace(/&(?:amp|lt|gt|quot);/g, '&');
    assert.ok(visible.length <= 4096 && visible.endsWith('…'));
    assert.equal(out.sms.encoding, 'UCS-2');
    // Emoji never straddle two segments, so a few segments carry 66 units instead of 67.
    assert.ok(out.sms.segments >= Math.ceil(out.sms.characters / 67));
    assert.ok(out.sms.segments <= Math.ceil(out.sms.characters / 66));
  });
  it('shows the address of a link whose label is blank, in every channel', () => {
    const out = renderNotification({ ...base, body: 'Go [ ](https://b.example/x) and [\n](https://c.example) and [](https://d.example) and [\u200b](https://f.example) and [*\u200b*](https://g.example)' });
    for (const host of ['b', 'c', 'd', 'f', 'g']) {
      assert.match(out.html, new RegExp(`<a href="https://${host}\\.example[^"]*"[^>]*>https://${host}\\.example`), host);
      assert.match(out.telegramText, new RegExp(`<a href="https://${host}\\.example[^"]*">https://${host}\\.example`), host);
      assert.match(out.sms.text, new RegExp(`https://${host}\\.example`), host);
    }
    assert.doesNotMatch(out.sms.text, /\( ?https/);
    // A label with something to show keeps it.
    const labelled = renderNotification({ ...base, body: '[ Docs ](https://b.example)' });
    assert.match(labelled.telegramText, /<a href="https:\/\/b\.example">\s*Docs\s*<\/a>/);
  });
});
