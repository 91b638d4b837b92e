import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { ServiceFooter } from '../rendering/render-notification.js';
import { renderTemplatedNotification, type TemplateVersion } from './render-templated-notification.js';

let version = 0;
const template = (overrides: Partial<TemplateVersion> = {}): TemplateVersion => ({
  templateId: 'tmpl_unit',
  version: ++version,
  subjectTemplate: 'Hello {{name}}',
  htmlSource: '<p>Hi {{name}}, <a href="https://example.com/a?x={{name}}">go</a></p>',
  textSource: 'Hi {{name}}.\n\nLine two.',
  serviceFooter: 'full',
  ...overrides,
});
const render = (t: TemplateVersion, category: 'marketing' | 'security' = 'marketing') =>
  renderTemplatedNotification({
    template: t,
    variables: { name: 'Ann & <Bob>' },
    category,
    protocolName: 'Acme',
    unsubscribeUrl: 'https://gw.example/unsubscribe/t',
    openPixelUrl: 'https://gw.example/track/open/t',
    rewriteLink: (url) => `https://gw.example/track/click/${encodeURIComponent(url)}`,
  });

describe('renderTemplatedNotification', () => {
  it('puts the rendered HTML in the email layout with the pixel and tracked links', () => {
    const out = render(template());
    assert.equal(out.subject, 'Hello Ann & <Bob>');
    assert.match(out.html, /<p>Hi Ann &amp; &lt;Bob&gt;, <a href="https:\/\/gw\.example\/track\/click\/https%3A%2F%2Fexample\.com%2Fa%3Fx%3DAnn%20%26%20%3CBob%3E">go<\/a><\/p>/);
    assert.match(out.html, /<img src="https:\/\/gw\.example\/track\/open\/t"/);
    assert.match(out.html, /Sent via Herald/);
    assert.match(out.text, /^Hello Ann & <Bob>\n\nHi Ann & <Bob>\.\n\nLine two\./);
    assert.equal(out.sms.text, 'Hello Ann & <Bob>: Hi Ann & <Bob>. Line two.');
    assert.equal(out.telegramText, '<b>Hello Ann &amp; &lt;Bob&gt;</b>\n\nHi Ann &amp; &lt;Bob&gt;.\n\nLine two.');
  });

  it('applies the footer variant, keeping the unsubscribe link unless the category is transactional', () => {
    const cases: [ServiceFooter, 'marketing' | 'security', boolean, boolean][] = [
      ['full', 'security', true, true],
      ['minimal', 'marketing', true, false],
      ['none', 'marketing', true, false],
      ['none', 'security', false, false],
    ];
    for (const [serviceFooter, category, unsubscribe, sentVia] of cases) {
      const out = render(template({ serviceFooter }), category);
      assert.equal(out.html.includes('Unsubscribe from Acme'), unsubscribe, `${serviceFooter}/${category} unsubscribe`);
      assert.equal(out.text.includes('https://gw.example/unsubscribe/t'), unsubscribe, `${serviceFooter}/${category} text unsubscribe`);
      assert.equal(out.html.includes('Sent via Herald'), sentVia, `${serviceFooter}/${category} sent via`);
    }
  });

  it('keeps Telegram within its limit and strips control characters', () => {
    const out = render(template({ textSource: `a\u0007b ${'x'.repeat(5000)}` }));
    assert.ok(!out.text.includes('\u0007'));
    assert.ok(out.telegramText.endsWith('…'));
    const visible = out.telegramText.replace(/<[^>]+>/g, '').replace(/&(amp|lt|gt);/g, '_');
    assert.equal(visible.length, 4096);
  });

  it("strips control and bidi characters from the HTML too, the template's and its variables'", () => {
    const out = renderTemplatedNotification({
      template: template({ htmlSource: '<p>Hello\u0007 {{name}}</p>' }),
      variables: { name: 'A\u0001B\u202eC\u001bE\u2066F' },
      category: 'marketing',
      protocolName: 'Acme',
    });
    assert.match(out.html, /<p>Hello ABCEF<\/p>/);
    assert.doesNotMatch(out.html, /[\u0000-\u0008\u000B\u000C\u000E-\u001F\u007F-\u009F\u202A-\u202E\u2066-\u2069]/);
  });
});
