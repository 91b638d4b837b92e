import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { renderTelegramText, TELEGRAM_MAX_CHARS, truncateTelegramHtml } from './telegram.js';

const SUBSET = new Set(['b', 'strong', 'i', 'em', 'u', 's', 'code', 'pre', 'a', 'blockquote']);

/** Only subset tags, only href on <a>, balanced, and no bare & or < outside tags and entities. */
function assertTelegramHtml(html: string): void {
  const open: string[] = [];
  for (const [piece, closing, name, rest] of html.matchAll(/<(\/?)([^\s>]*)([^>]*)>/g)) {
    assert.ok(SUBSET.has(name), `tag outside the subset: ${piece}`);
    if (closing) assert.equal(open.pop(), name, `unbalanced ${piece}`);
    else {
      assert.ok(rest === '' || (name === 'a' && /^ href="[^"<>]*"$/.test(rest)), `attributes on ${piece}`);
      open.push(name);
    }
  }
  assert.deepEqual(open, [], 'unclosed tags');
  const text = html.replace(/<[^>]*>/g, '');
  assert.doesNotMatch(text, /<|>|&(?!(?:amp|lt|gt|quot);)/, 'unescaped text');
}

/** Length as Telegram counts it: tags removed, each entity one character. */
function visibleLength(html: string): number {
  return html.replace(/<[^>]*>/g, '').replace(/&(?:amp|lt|gt|quot);/g, '&').length;
}

describe('renderTelegramText', () => {
  it('puts the subject first in bold and escapes it', () => {
    assert.equal(renderTelegramText('Fees & <limits>', 'Body'), '<b>Fees &amp; &lt;limits&gt;</b>\n\nBody');
  });

  it('escapes HTML typed in the body, <b> included', () => {
    const text = renderTelegramText('S', '<b>bold</b> & <script>alert(1)</script> 1 < 2 > 0');
    assert.equal(text, '<b>S</b>\n\n&lt;b&gt;bold&lt;/b&gt; &amp; &lt;script&gt;alert(1)&lt;/script&gt; 1 &lt; 2 &gt; 0');
  });

  it('maps markdown onto the Telegram subset', () => {
    const body = [
      '# Title',
      'Some **bold**, *italic*, ~~gone~~ and `a<b`.',
      '- one\n- two\n  - nested',
      '3. third\n4. fourth',
      '> quoted [link](https://example.com/?a=1&b=2)',
      '```js\nif (a < b && c) {}\n```',
      '---',
      '| k | v |\n|---|---|\n| x | 1 |',
    ].join('\n\n');
    assert.equal(
      renderTelegramText('Report', body),
      [
        '<b>Report</b>',
        '<b>Title</b>',
        'Some <b>bold</b>, <i>italic</i>, <s>gone</s> and <code>a&lt;b</code>.',
        '• one\n• two\n  • nested',
        '3. third\n4. fourth',
        '<blockquote>quoted <a href="https://example.com/?a=1&amp;b=2">link</a></blockquote>',
        '<pre>if (a &lt; b &amp;&amp; c) {}</pre>',
        '———',
        '<b>k</b> | <b>v</b>\nx | 1',
      ].join('\n\n'),
    );
  });

  it('keeps hostile links as text', () => {
    const text = renderTelegramText('S', '[x](javascript:alert(1)) [y](JaVaScRiPt:alert(1)) [z](data:text/html,<script>)');
    assert.equal(text, '<b>S</b>\n\n[x](javascript:alert(1)) [y](JaVaScRiPt:alert(1)) [z](data:text/html,&lt;script&gt;)');
    assertTelegramHtml(text);
  });

  it('escapes quotes and ampersands inside href', () => {
    const text = renderTelegramText('S', '[q](https://example.com/"x"?a=1&b=<2>)');
    assert.equal(text, '<b>S</b>\n\n<a href="https://example.com/%22x%22?a=1&amp;b=%3C2%3E">q</a>');
  });

  it('turns mailto links into text, shows https images as links and drops other images to alt text', () => {
    assert.equal(
      renderTelegramText('S', '[mail **us**](mailto:ops@example.com) ops@example.com ![chart](https://cdn.example/c.png) ![x<y](http://cdn.example/c.png)'),
      '<b>S</b>\n\nmail us (ops@example.com) ops@example.com <a href="https://cdn.example/c.png">chart</a> x&lt;y',
    );
  });

  it('flattens nested quotes and code inside links, which Telegram refuses', () => {
    assert.equal(
      renderTelegramText('S', '> a\n> > b\n\n[`code`](https://example.com)'),
      '<b>S</b>\n\n<blockquote>a\n\nb</blockquote>\n\n<a href="https://example.com">code</a>',
    );
  });

  it('keeps a linked image as one link, since Telegram refuses a link inside a link', () => {
    const text = renderTelegramText('S', '[![img](https://i.example/a.png)](https://l.example) [**![x](https://i.example/b.png)** y](https://m.example)');
    assert.equal(text, '<b>S</b>\n\n<a href="https://l.example">img</a> <a href="https://m.example"><b>x</b> y</a>');
    assertTelegramHtml(text);
  });

  it('cuts a very long paragraph at whole clusters, a cluster across the limit left out', () => {
    assert.equal(renderTelegramText('S', `${'a'.repeat(262_000)}🚀`), `<b>S</b>\n\n${'a'.repeat(TELEGRAM_MAX_CHARS - 4)}…`);
    // The family emoji (8 units) would end 4 units past the budget: it is dropped whole.
    const family = '👨‍👩‍👧';
    const text = renderTelegramText('S', `${'a'.repeat(TELEGRAM_MAX_CHARS - 8)}${family}${'b'.repeat(100_000)}`);
    assert.equal(text, `<b>S</b>\n\n${'a'.repeat(TELEGRAM_MAX_CHARS - 8)}…`);
  });

  it('never produces a tag outside the subset for hostile input', () => {
    const hostile = [
      '<img src=x onerror=alert(1)>',
      '<div>\n<span>raw</span>\n</div>',
      '<u>u</u> <tg-spoiler>s</tg-spoiler>',
      '**[*x*](https://a.example)** ~~`y`~~',
      '&lt;b&gt; &amp;amp; &#60;i&#62; &quot;',
      '1. **a**\n   > q\n   ```\n   <pre>\n   ```',
      '![](https://cdn.example/i.png) [](https://a.example)',
    ].join('\n\n');
    const text = renderTelegramText('<i>S</i>', hostile);
    assertTelegramHtml(text);
    assert.match(text, /^<b>&lt;i&gt;S&lt;\/i&gt;<\/b>/);
    assert.match(text, /&lt;b&gt; &amp;amp; &lt;i&gt; "/);
  });

  it('keeps unicode and emoji as they are', () => {
    assert.equal(renderTelegramText('Ünïcødé 🚀', '**Привет** 👨‍👩‍👧 中文'), '<b>Ünïcødé 🚀</b>\n\n<b>Привет</b> 👨‍👩‍👧 中文');
  });

  it('truncates a long body to 4096 visible characters ending with …', () => {
    const text = renderTelegramText('S', 'a'.repeat(10_000));
    assert.equal(visibleLength(text), TELEGRAM_MAX_CHARS);
    assert.equal(text, `<b>S</b>\n\n${'a'.repeat(TELEGRAM_MAX_CHARS - 4)}…`);
  });

  it('closes tags left open by the cut', () => {
    const text = renderTelegramText('S', `**${'b'.repeat(5000)}** tail`);
    assert.equal(text, `<b>S</b>\n\n<b>${'b'.repeat(TELEGRAM_MAX_CHARS - 4)}…</b>`);
    assertTelegramHtml(text);
  });

  it('never cuts an entity', () => {
    const text = renderTelegramText('S', '&'.repeat(5000));
    assert.equal(text, `<b>S</b>\n\n${'&amp;'.repeat(TELEGRAM_MAX_CHARS - 4)}…`);
  });

  it('never splits a surrogate pair or an emoji sequence', () => {
    const rockets = renderTelegramText('S', '🚀'.repeat(3000));
    assert.doesNotMatch(rockets, /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/, 'lone surrogate');
    // 4095 units before the ellipsis: "S", "\n\n" and 2046 rockets of two units each.
    assert.ok(rockets === `<b>S</b>\n\n${'🚀'.repeat(2046)}…`, 'whole rockets only');
    const family = '👨‍👩‍👧'; // 8 UTF-16 units
    const families = renderTelegramText('S', family.repeat(1000));
    assert.ok(families === `<b>S</b>\n\n${family.repeat(511)}…`, 'whole families only');
    assert.ok(visibleLength(families) <= TELEGRAM_MAX_CHARS);
  });

  it('keeps every piece balanced when cutting a mix of tags and entities', () => {
    const body = Array.from({ length: 400 }, (_, i) => `> **${i}** & [l<${i}>](https://a.example/${i}) \`c&${i}\``).join('\n\n');
    const text = renderTelegramText('S', body);
    assert.ok(visibleLength(text) <= TELEGRAM_MAX_CHARS);
    assert.match(text, /…(?:<\/[a-z]+>)*$/);
    assertTelegramHtml(text);
  });
});

describe('truncateTelegramHtml', () => {
  it('returns text within the limit unchanged', () => {
    assert.equal(truncateTelegramHtml('<b>abc</b>&amp;', 4), '<b>abc</b>&amp;');
  });

  it('counts tags as nothing and entities as one character', () => {
    assert.equal(truncateTelegramHtml('<b>abc</b><a href="https://x.example/?a&amp;b">defg</a>', 5), '<b>abc</b><a href="https://x.example/?a&amp;b">d…</a>');
    assert.equal(truncateTelegramHtml('<b>abc</b>defg', 3), '<b>ab…</b>');
    assert.equal(truncateTelegramHtml('ab&lt;&gt;cd', 4), 'ab&lt;…');
  });

  it('drops trailing whitespace before the ellipsis', () => {
    assert.equal(truncateTelegramHtml('abc   \n\ndefgh', 8), 'abc…');
  });
});
