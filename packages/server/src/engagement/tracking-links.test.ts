import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { redirectTarget } from './tracking-links.js';

describe('redirectTarget', () => {
  it('writes an http(s) link as a URL parser does: punycode host, percent-encoded path and query, no line breaks', () => {
    assert.equal(redirectTarget('https://café.example/menü?q=é'), 'https://xn--caf-dma.example/men%C3%BC?q=%C3%A9');
    assert.equal(redirectTarget('https://shop.example/商品/42'), 'https://shop.example/%E5%95%86%E5%93%81/42');
    assert.equal(redirectTarget('https://app.example/a\nb\tc'), 'https://app.example/abc');
    assert.equal(redirectTarget('HTTP://Example.COM/Path'), 'http://example.com/Path');
    assert.equal(redirectTarget('https://app.example.com/positions?id=p<1>&src=mail'), 'https://app.example.com/positions?id=p%3C1%3E&src=mail');
  });

  it('refuses what is not an http(s) URL a parser reads', () => {
    for (const url of [undefined, '', 'javascript:alert(1)', 'mailto:a@b.c', 'ftp://x.example/', '//x.example/', 'https://exa mple.com/', 'https://', 'http://[::1']) {
      assert.equal(redirectTarget(url), undefined, String(url));
    }
  });
});
