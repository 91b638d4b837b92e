import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { renderEmailLayout } from './email-layout.js';
import type { Category, ServiceFooter } from './render-notification.js';

const base = {
  subject: 'Vote closes soon',
  contentHtml: '<p>Body</p>\n',
  textContent: 'Body',
  protocolName: 'Acme',
  category: 'governance' as Category,
};
const UNSUBSCRIBE = 'https://herald.example/u/tok?a=1&b=2';

describe('renderEmailLayout', () => {
  it('builds a responsive table layout with the subject as title and heading', () => {
    const { html } = renderEmailLayout(base);
    assert.match(html, /^<!DOCTYPE html>\n<html lang="en">/);
    assert.match(html, /<meta name="viewport" content="width=device-width, initial-scale=1">/);
    assert.match(html, /<title>Vote closes soon<\/title>/);
    assert.match(html, /<h1 style="[^"]*">Vote closes soon<\/h1>/);
    assert.match(html, /<table role="presentation"[^>]*style="max-width:600px;background-color:#ffffff;/);
    assert.match(html, /<td dir="auto" style="[^"]*">\n<p>Body<\/p>\n<\/td>/);
    // the heading and body cells wrap long unbroken words instead of widening the card, and take
    // their direction from their text (right to left for Arabic or Hebrew)
    assert.match(html, /<td dir="auto" style="[^"]*overflow-wrap:break-word;[^"]*"><h1/);
    assert.match(html, /<td dir="auto" style="[^"]*overflow-wrap:break-word;[^"]*">\n<p>Body<\/p>/);
    assert.doesNotMatch(html, /<script|<style|\son[a-z]+=/i);
  });

  it('escapes the subject and protocol name everywhere and cleans the subject', () => {
    const { html, text } = renderEmailLayout({ ...base, subject: ' <b>Fees</b> &\r\n"more"\u0007 ', protocolName: 'A&B <Labs>' });
    assert.match(html, /<title>&lt;b&gt;Fees&lt;\/b&gt; &amp; &quot;more&quot;<\/title>/);
    assert.match(html, /<h1 [^>]*>&lt;b&gt;Fees&lt;\/b&gt; &amp; &quot;more&quot;<\/h1>/);
    assert.match(html, /from A&amp;B &lt;Labs&gt; because/);
    assert.match(text, /^<b>Fees<\/b> & "more"\n\nBody\n/);
  });

  it('writes the full footer in HTML and text', () => {
    const { html, text } = renderEmailLayout({ ...base, unsubscribeUrl: UNSUBSCRIBE });
    assert.match(
      html,
      /<p style="margin:0 0 8px 0;">You received this governance update from Acme because your wallet is registered to receive notifications through Herald\.<\/p>\n<p style="margin:0 0 8px 0;"><a href="https:\/\/herald\.example\/u\/tok\?a=1&amp;b=2" target="_blank" rel="noopener noreferrer" style="[^"]*">Unsubscribe from Acme<\/a><\/p>\n<p style="margin:0 0 8px 0;">Sent via Herald<\/p>/,
    );
    assert.equal(
      text,
      'Vote closes soon\n\nBody\n\n-- \n' +
        'You received this governance update from Acme because your wallet is registered to receive notifications through Herald.\n' +
        `Unsubscribe from Acme: ${UNSUBSCRIBE}\nSent via Herald\n`,
    );
  });

  const categories: Category[] = ['defi', 'governance', 'system', 'marketing', 'security'];
  const footers: ServiceFooter[] = ['full', 'minimal', 'none'];
  for (const category of categories) {
    for (const footer of footers) {
      const transactional = category === 'security' || category === 'system';
      const expectUnsubscribe = footer !== 'none' || !transactional;
      it(`${category} with footer ${footer}: unsubscribe ${expectUnsubscribe ? 'shown' : 'hidden'}`, () => {
        const { html, text } = renderEmailLayout({ ...base, category, footer, unsubscribeUrl: UNSUBSCRIBE });
        assert.equal(html.includes('>Unsubscribe from Acme</a>'), expectUnsubscribe);
        assert.equal(text.includes(`Unsubscribe from Acme: ${UNSUBSCRIBE}`), expectUnsubscribe);
        assert.equal(html.includes('Sent via Herald'), footer === 'full');
        assert.equal(text.includes('because your wallet is registered'), footer === 'full');
        if (!expectUnsubscribe) {
          assert.ok(!html.includes('font-size:12px'), 'no footer block at all');
          assert.equal(text, 'Vote closes soon\n\nBody\n');
        }
        if (footer === 'minimal') assert.equal(text, `Vote closes soon\n\nBody\n\n-- \nUnsubscribe from Acme: ${UNSUBSCRIBE}\n`);
      });
    }
  }

  it('defaults to the full footer and names the category', () => {
    const { text } = renderEmailLayout({ ...base, category: 'security' });
    assert.match(text, /You received this security alert from Acme/);
    assert.match(text, /Sent via Herald\n$/);
    assert.doesNotMatch(text, /Unsubscribe/);
  });

  it('appends the open pixel only when asked', () => {
    const { html } = renderEmailLayout({ ...base, openPixelUrl: 'https://herald.example/o/t.gif?x=1&y=2' });
    assert.match(
      html,
      /<img src="https:\/\/herald\.example\/o\/t\.gif\?x=1&amp;y=2" width="1" height="1" alt="" style="display:block;width:1px;height:1px;border:0;">\n<\/body>\n<\/html>\n$/,
    );
    assert.doesNotMatch(renderEmailLayout(base).html, /width="1" height="1"/);
  });

  it('refuses footer and pixel URLs that are not http(s)', () => {
    assert.throws(() => renderEmailLayout({ ...base, unsubscribeUrl: 'javascript:alert(1)' }), /unsubscribeUrl must be an http\(s\) URL/);
    assert.throws(() => renderEmailLayout({ ...base, openPixelUrl: 'data:image/gif;base64,R0lG' }), /openPixelUrl must be an http\(s\) URL/);
  });
});
