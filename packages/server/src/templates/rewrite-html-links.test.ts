import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { rewriteHtmlLinks } from './rewrite-html-links.js';

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

  it('reads tags as a browser does: quotes, comments and raw text cannot hide a link from it', () => {
    const cases: [string, string][] = [
      // a ">" inside an earlier quoted value does not end the tag
      [`<a title='>' href="javascript:alert(1)">x</a>`, `<a title='>' href="#">x</a>`],
      [`<a foo=">" href="javascript:alert(1)">x</a>`, `<a foo=">" href="#">x</a>`],
      // a quote inside an attribute name is part of the name
      [`<a x" href="javascript:alert(1)">x</a>`, `<a x" href="#">x</a>`],
      // a comment ends at its first -->, and a style element at its first </style>
      [`<!-- <a title=" --> <a href="javascript:alert(1)">" -->`, `<!-- <a title=" --> <a href="#">" -->`],
      [`<style><x title="</style><a href='javascript:alert(1)'>">`, `<style><x title="</style><a href="#">">`],
      // upper case, and inside a <template>
      [`<A HREF="javascript:alert(1)">x</A>`, `<A HREF="#">x</A>`],
      [`<template><a href="javascript:alert(1)">x</a></template>`, `<template><a href="#">x</a></template>`],
    ];
    for (const [html, expected] of cases) assert.equal(rewriteHtmlLinks(html), expected, html);
    // text that only looks like a tag is left alone
    for (const html of ['<style>a[href="javascript:x"]{}</style>', '<!-- <a href="javascript:x"> -->', '<textarea><a href="javascript:x"></textarea>']) {
      assert.equal(rewriteHtmlLinks(html), html);
    }
  });

  it('reads a <noscript> both ways: as markup, as a mail client does with scripts off, and as text', () => {
    // With scripts off its links are markup: made safe, and tracked.
    assert.equal(
      rewriteHtmlLinks('<noscript><a href="javascript:fetch(1)">a</a> <a href="https://t.example/">t</a></noscript>', track),
      `<noscript><a href="#">a</a> <a href="${track('https://t.example/')}">t</a></noscript>`,
    );
    // With scripts on, a </noscript> inside an attribute ends the element, and what follows is markup.
    const early = '<noscript><a title="</noscript><a href=javascript:alert(1)>">x</a></noscript>';
    const safe = rewriteHtmlLinks(early);
    assert.doesNotMatch(safe, /javascript:/);
    assert.equal(rewriteHtmlLinks(safe), safe, 'the answer is stable: rewriting it again changes nothing');
    // Text inside a <noscript> that is no link under either reading keeps its bytes.
    const plain = '<noscript><p>Enable images to see the chart.</p></noscript><a href="mailto:x@y.z">m</a>';
    assert.equal(rewriteHtmlLinks(plain, track), plain);
  });

  it('writes a tag with a repeated attribute again from the attribute a browser keeps (the first)', () => {
    assert.equal(rewriteHtmlLinks('<a href="https://ok.example/" href="javascript:alert(1)" class=b>x</a>', track), `<a href="${track('https://ok.example/')}" class="b">x</a>`);
    assert.equal(rewriteHtmlLinks(`<a href="javascript:alert(1)" href='https://ok.example/'>x</a>`), '<a href="#">x</a>');
    assert.equal(rewriteHtmlLinks('<img src="https://i.example/a.png" src="x" alt="&quot;a&quot;"/>'), '<img src="https://i.example/a.png" alt="&quot;a&quot;" />');
    // Only the tags that repeat an attribute are written again; their neighbours keep their bytes.
    assert.equal(
      rewriteHtmlLinks(`<a href='javascript:1'>x</a><b c=1 c=2>y</b><i d=1>z</i><a href="javascript:2" e=3 e=4>w</a>`),
      `<a href="#">x</a><b c="1">y</b><i d=1>z</i><a href="#" e="3">w</a>`,
    );
  });

  it('keeps every other byte: unclosed tags, stray brackets and odd markup pass through', () => {
    for (const html of ['<a', '<a href="https://x.example"', 'a < b > c', '<p>x<br/>y</p><!--[if mso]><v:rect/><![endif]-->', '<<a>>', '']) {
      assert.equal(rewriteHtmlLinks(html), html, html);
    }
    // a template of many unclosed tags is read in one pass (a backtracking pattern took minutes)
    const unclosed = '<a'.repeat(100_000);
    assert.equal(rewriteHtmlLinks(unclosed), unclosed);
    const many = '<a title=x'.repeat(20_000) + ' href="javascript:alert(1)">x</a>';
    assert.doesNotMatch(rewriteHtmlLinks(many), /javascript:/);
  });
});
