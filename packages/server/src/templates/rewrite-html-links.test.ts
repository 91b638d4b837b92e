import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { decodeHtmlEntities, rewriteHtmlLinks } from './rewrite-html-links.js';

const track = (url: string) => `https://gw.example/track/click/${encodeURIComponent(url)}`;

describe('rewriteHtmlLinks', () => {
  it('sends every http(s) anchor through the rewrite, whatever the quoting', () => {
    const html = `<a href="https://a.example/x?b=1&amp;c=2">1</a> <a class="btn" href='http://b.example/'>2</a> <a href=https://c.example/>3</a>`;
    assert.equal(
      rewriteHtmlLinks(html, track),
      `<a href="${track('https://a.example/x?b=1&c=2').replace(/&/g, '&amp;')}">1</a> ` +
        `<a class="btn" href="${track('http://b.example/')}">2</a> <a href="${track('https://c.example/')}">3</a>`,
    );
  });

  it('leaves mailto, tel, anchors, images and data-href alone', () => {
    const html = '<a href="mailto:x@y.z">m</a><a href="tel:+1">t</a><a href="#top">a</a><img src="https://i.example/p.png"><a data-href="https://x.example">d</a>';
    assert.equal(rewriteHtmlLinks(html, track), html);
    assert.equal(rewriteHtmlLinks('<a href="https://x.example">x</a>'), '<a href="https://x.example">x</a>', 'no rewrite without tracking');
  });

  it('neutralises script and data links, however they are disguised', () => {
    for (const href of [
      'javascript:alert(1)',
      'JaVaScRiPt:alert(1)',
      'java&#x09;script:alert(1)',
      ' vbscript:x',
      'data:text/html;base64,PHNjcmlwdD4=',
      '&#106;avascript:alert(1)',
      '&#106avascript:alert(1)',
      '&#x6A&#x61vascript:alert(1)',
      'javascript&colon;alert(1)',
      'java&Tab;script:alert(1)',
      'java&NewLine;script:alert(1)',
    ]) {
      assert.equal(rewriteHtmlLinks(`<a href="${href}">x</a>`, track), '<a href="#">x</a>', href);
      assert.equal(rewriteHtmlLinks(`<a href="${href}">x</a>`), '<a href="#">x</a>', href);
    }
  });

  it('neutralises every link attribute of every tag, not only an anchor written the usual way', () => {
    const cases: [string, string][] = [
      ['<a/href="javascript:alert(1)">x</a>', '<a/href="#">x</a>'],
      ['<area shape="rect" href="javascript:alert(1)">', '<area shape="rect" href="#">'],
      ['<svg><a xlink:href="javascript:alert(1)"><text>x</text></a></svg>', '<svg><a xlink:href="#"><text>x</text></a></svg>'],
      ['<form action="javascript:alert(1)"><button formaction=\'vbscript:x\'>b</button></form>', '<form action="#"><button formaction="#">b</button></form>'],
      ['<a title="t" href="https://ok.example" data-x="1">x</a>', '<a title="t" href="https://ok.example" data-x="1">x</a>'],
    ];
    for (const [html, expected] of cases) assert.equal(rewriteHtmlLinks(html), expected, html);
    // click tracking for anchors and areas only, never for a form's action
    assert.equal(rewriteHtmlLinks('<area href="https://a.example/">', track), `<area href="${track('https://a.example/')}">`);
    assert.equal(rewriteHtmlLinks('<form action="https://a.example/">', track), '<form action="https://a.example/">');
  });
});

describe('decodeHtmlEntities', () => {
  it('decodes named, decimal and hex entities and keeps unknown ones', () => {
    assert.equal(decodeHtmlEntities('&amp;&lt;&gt;&quot;&#x27;&#39;&#x3D;&nbsp;&#0;'), `&<>"''=&nbsp;&#0;`);
    assert.equal(decodeHtmlEntities('&#106avascript&colon;&Tab;&NewLine;'), 'javascript:\t\n', 'numeric references without ";" and the names a URL hides in');
  });
});
