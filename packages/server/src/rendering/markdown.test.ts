import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { isAllowedLinkUrl, parseMarkdown, renderMarkdownHtml } from './markdown.js';

const P = 'style="margin:0 0 16px 0;"';
const A = 'style="color:#2563eb;text-decoration:underline;" target="_blank" rel="noopener noreferrer"';

/** Every tag must be one markdown can produce, without event handlers and with safe URLs only. */
function assertSafeHtml(html: string): void {
  assert.doesNotMatch(html, /<script/i);
  // Text never holds a raw "<" and attribute values never a raw '"', so this scan sees every real tag.
  for (const [tag, name, attributes] of html.matchAll(/<([a-zA-Z][a-zA-Z0-9]*)([^>]*)>/g)) {
    assert.doesNotMatch(name, /^(?:iframe|object|embed|style|form|input|svg|math|div|span|base|link|meta)$/i, tag);
    for (const [, attribute, value] of attributes.matchAll(/\s([^\s=]+)(?:="([^"]*)")?/g)) {
      assert.doesNotMatch(attribute, /^on/i, tag);
      if (attribute === 'href' || attribute === 'src') assert.match(value, /^(?:https?:\/\/|mailto:)/i, tag);
    }
  }
}

describe('renderMarkdownHtml', () => {
  it('has a safety check that catches what it claims to', () => {
    assert.throws(() => assertSafeHtml('<img src=x onerror=alert(1)>'));
    assert.throws(() => assertSafeHtml('<a href="javascript:alert(1)">x</a>'));
    assert.throws(() => assertSafeHtml('<iframe>'));
    assert.doesNotThrow(() => assertSafeHtml('<a href="https://a" title="x onclick=1">&lt;script&gt;</a>'));
  });

  it('escapes a script tag instead of passing it through', () => {
    const html = renderMarkdownHtml('<script>alert(1)</script>');
    assert.equal(html, `<p ${P}>&lt;script&gt;alert(1)&lt;/script&gt;</p>\n`);
  });

  it('escapes an inline <img onerror> as text', () => {
    const html = renderMarkdownHtml('hi <img src=x onerror=alert(1)> there');
    assert.equal(html, `<p ${P}>hi &lt;img src=x onerror=alert(1)&gt; there</p>\n`);
    assertSafeHtml(html);
  });

  it('escapes raw HTML blocks', () => {
    const html = renderMarkdownHtml('<div onclick="steal()">\n<iframe src="/frame"></iframe>\n<style>*{}</style>\n</div>');
    assert.equal(
      html,
      `<p ${P}>&lt;div onclick=&quot;steal()&quot;&gt;\n&lt;iframe src=&quot;/frame&quot;&gt;&lt;/iframe&gt;\n` +
        '&lt;style&gt;*{}&lt;/style&gt;\n&lt;/div&gt;</p>\n',
    );
    assertSafeHtml(html);
  });

  it('leaves a javascript: link as its literal text', () => {
    assert.equal(renderMarkdownHtml('[x](javascript:alert(1))'), `<p ${P}>[x](javascript:alert(1))</p>\n`);
    assert.equal(renderMarkdownHtml('[x](JaVaScRiPt:alert(1))'), `<p ${P}>[x](JaVaScRiPt:alert(1))</p>\n`);
  });

  const refused = [
    '[x](data:text/html,<script>alert(1)</script>)',
    '[x](data:text/html;base64,PHNjcmlwdD4=)',
    '[x](vbscript:msgbox(1))',
    '[x](&#106;avascript:alert(1))',
    '[x](&#x6A;avascript:alert(1))',
    '[x](<javascript:alert(1)>)',
    '[x](java\nscript:alert(1))',
    '<javascript:alert(1)>',
    '[x]\n\n[x]: javascript:alert(1)',
    '[x](/relative/path)',
    '[x](//evil.example/path)',
    '[x](ftp://files.example/f)',
    '[x](file:///etc/passwd)',
    '![x](javascript:alert(1))',
    '![x](data:image/svg+xml,<svg onload=alert(1)>)',
    // a browser reads these as https://evil.example/, which click tracking would not see
    '[x](https:evil.example)',
    '[x](HTTPS:/evil.example)',
    '[x](http:\\\\evil.example)',
  ];
  for (const markdown of refused) {
    it(`renders no link or image for ${JSON.stringify(markdown)}`, () => {
      const html = renderMarkdownHtml(markdown);
      assert.doesNotMatch(html, /<a |<img /);
      assert.doesNotMatch(html, /href=|src=/);
      assertSafeHtml(html);
    });
  }

  it('keeps http, https and mailto links with rel and target', () => {
    assert.equal(
      renderMarkdownHtml('[docs](https://example.com/a?b=1&c=2) [old](HTTP://example.com) [mail](mailto:ops@example.com)'),
      `<p ${P}><a href="https://example.com/a?b=1&amp;c=2" ${A}>docs</a> <a href="HTTP://example.com" ${A}>old</a> ` +
        `<a href="mailto:ops@example.com" ${A}>mail</a></p>\n`,
    );
  });

  it('shows the address of a link without a label, which would otherwise be invisible', () => {
    assert.match(renderMarkdownHtml('[](https://a.example/x?y=1&z=2)'), /<a href="https:\/\/a\.example\/x\?y=1&amp;z=2"[^>]*>https:\/\/a\.example\/x\?y=1&amp;z=2<\/a>/);
  });

  it('linkifies bare URLs and addresses', () => {
    assert.equal(
      renderMarkdownHtml('see www.example.com or ops@example.com'),
      `<p ${P}>see <a href="http://www.example.com" ${A}>www.example.com</a> or <a href="mailto:ops@example.com" ${A}>ops@example.com</a></p>\n`,
    );
  });

  it('escapes quotes in titles so they cannot open an attribute', () => {
    const html = renderMarkdownHtml('[x](https://a.example "t\\" onmouseover=\\"alert(1)")');
    assert.equal(html, `<p ${P}><a href="https://a.example" title="t&quot; onmouseover=&quot;alert(1)" ${A}>x</a></p>\n`);
    assertSafeHtml(html);
  });

  it('shows https images and replaces other images with their alt text', () => {
    const img = 'style="max-width:100%;height:auto;border:0;"';
    assert.equal(
      renderMarkdownHtml('![a "chart"](https://cdn.example/c.png) ![plain](http://cdn.example/c.png)'),
      `<p ${P}><img src="https://cdn.example/c.png" alt="a &quot;chart&quot;" ${img}> plain</p>\n`,
    );
  });

  it('sends http(s) links, linkified ones included, through rewriteLink and nothing else', () => {
    const seen: string[] = [];
    const html = renderMarkdownHtml(
      '[a](https://a.example/x) [b](http://b.example) www.example.com [m](mailto:m@example.com) ![i](https://cdn.example/i.png) [j](javascript:alert(1))',
      { rewriteLink: (url) => (seen.push(url), `https://track.example/c?u=${encodeURIComponent(url)}`) },
    );
    assert.deepEqual(seen, ['https://a.example/x', 'http://b.example', 'http://www.example.com']);
    assert.match(html, /<a href="https:\/\/track\.example\/c\?u=https%3A%2F%2Fa\.example%2Fx"/);
    assert.match(html, /<a href="mailto:m@example.com"/);
    assert.match(html, /<img src="https:\/\/cdn\.example\/i\.png"/);
  });

  it('decodes markdown entities and escapes them again', () => {
    assert.equal(
      renderMarkdownHtml('&lt;b&gt; &amp; &copy; &#60;script&#62; &quot;'),
      `<p ${P}>&lt;b&gt; &amp; © &lt;script&gt; &quot;</p>\n`,
    );
  });

  it('drops the language class of a fenced block and escapes its content', () => {
    const html = renderMarkdownHtml('```"><script>alert(1)</script>\n<b>x</b>\n```');
    assert.match(html, /^<pre style="[^"]*"><code>&lt;b&gt;x&lt;\/b&gt;\n<\/code><\/pre>\n$/);
  });

  it('leaves parsed tokens unchanged so one parse can feed every renderer', () => {
    const tokens = parseMarkdown('# T\n\n[a](https://a.example) | x |\n\n| h |\n|:-:|\n| c |');
    const snapshot = JSON.stringify(tokens);
    const first = renderMarkdownHtml(tokens, { rewriteLink: () => 'https://track.example/' });
    assert.equal(JSON.stringify(tokens), snapshot);
    assert.equal(renderMarkdownHtml(tokens, { rewriteLink: () => 'https://track.example/' }), first);
    assert.match(renderMarkdownHtml(tokens), /<a href="https:\/\/a\.example"/);
  });

  it('inlines styles on every block element', () => {
    const html = renderMarkdownHtml('# T\n\n> q\n\n- a\n\n1. b\n\n---\n\n| h |\n|:-:|\n| c |\n\n`x`');
    for (const [tag] of html.matchAll(/<(?:h1|p|blockquote|ul|ol|li|hr|table|th|td|code)\b[^>]*>/g)) {
      assert.match(tag, /style="[^"]+"/, tag);
    }
    assert.match(html, /<th style="[^"]*text-align:left;text-align:center">/);
  });
});

describe('isAllowedLinkUrl', () => {
  it('accepts http, https and mailto in any case and nothing else', () => {
    for (const url of ['http://a', 'https://a', 'HTTPS://a', 'mailto:a@b', 'MailTo:a@b']) assert.ok(isAllowedLinkUrl(url), url);
    for (const url of ['javascript:x', ' https://a', 'data:x', 'vbscript:x', '/x', '//a', 'ftp://a', 'tel:+1', '', 'https:a', 'http:/a', 'https:\\\\a']) {
      assert.ok(!isAllowedLinkUrl(url), url);
    }
  });
});
