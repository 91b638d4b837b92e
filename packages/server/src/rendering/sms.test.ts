import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { countSmsSegments, renderSmsText, SMS_MAX_CHARS, truncateSmsText } from './sms.js';

describe('countSmsSegments', () => {
  it('counts an empty text as no segment', () => {
    assert.deepEqual(countSmsSegments(''), { encoding: 'GSM-7', segments: 0, characters: 0 });
  });

  it('fits 160 GSM-7 characters in one segment and splits 161 into two', () => {
    assert.deepEqual(countSmsSegments('a'.repeat(160)), { encoding: 'GSM-7', segments: 1, characters: 160 });
    assert.deepEqual(countSmsSegments('a'.repeat(161)), { encoding: 'GSM-7', segments: 2, characters: 161 });
    assert.deepEqual(countSmsSegments('a'.repeat(306)), { encoding: 'GSM-7', segments: 2, characters: 306 });
    assert.deepEqual(countSmsSegments('a'.repeat(307)), { encoding: 'GSM-7', segments: 3, characters: 307 });
  });

  it('keeps the whole GSM 03.38 basic set in GSM-7', () => {
    const basic =
      '@£$¥èéùìòÇ\nØø\rÅåΔ_ΦΓΛΩΠΨΣΘΞÆæßÉ !"#¤%&\'()*+,-./0123456789:;<=>?' +
      '¡ABCDEFGHIJKLMNOPQRSTUVWXYZÄÖÑÜ§¿abcdefghijklmnopqrstuvwxyzäöñüà';
    assert.deepEqual(countSmsSegments(basic), { encoding: 'GSM-7', segments: 1, characters: 127 });
  });

  it('counts each extension character as two septets', () => {
    for (const char of ['€', '[', ']', '{', '}', '^', '~', '|', '\\', '\f']) {
      assert.deepEqual(countSmsSegments(char), { encoding: 'GSM-7', segments: 1, characters: 2 }, JSON.stringify(char));
    }
    assert.deepEqual(countSmsSegments('€'.repeat(80)), { encoding: 'GSM-7', segments: 1, characters: 160 });
    assert.deepEqual(countSmsSegments(`${'€'.repeat(80)}a`), { encoding: 'GSM-7', segments: 2, characters: 161 });
  });

  it('never splits an escape pair across segments', () => {
    // 306 septets would fit two segments of 153, but the € cannot straddle the boundary.
    assert.deepEqual(countSmsSegments(`${'a'.repeat(152)}€${'a'.repeat(152)}`), { encoding: 'GSM-7', segments: 3, characters: 306 });
    assert.deepEqual(countSmsSegments(`${'a'.repeat(151)}€${'a'.repeat(153)}`), { encoding: 'GSM-7', segments: 2, characters: 306 });
  });

  it('fits 70 UCS-2 characters in one segment and splits 71 into two', () => {
    assert.deepEqual(countSmsSegments('ж'.repeat(70)), { encoding: 'UCS-2', segments: 1, characters: 70 });
    assert.deepEqual(countSmsSegments('ж'.repeat(71)), { encoding: 'UCS-2', segments: 2, characters: 71 });
    assert.deepEqual(countSmsSegments('ж'.repeat(134)), { encoding: 'UCS-2', segments: 2, characters: 134 });
    assert.deepEqual(countSmsSegments('ж'.repeat(135)), { encoding: 'UCS-2', segments: 3, characters: 135 });
  });

  it('switches the whole message to UCS-2 for one character outside GSM-7', () => {
    assert.deepEqual(countSmsSegments(`${'a'.repeat(69)}ж`), { encoding: 'UCS-2', segments: 1, characters: 70 });
    assert.deepEqual(countSmsSegments(`${'a'.repeat(70)}ж`), { encoding: 'UCS-2', segments: 2, characters: 71 });
    for (const char of ['`', '•', '…', '’', 'ç', '中', '🚀']) {
      assert.equal(countSmsSegments(`a${char}`).encoding, 'UCS-2', char);
    }
  });

  it('counts emoji as two UTF-16 units and never splits a surrogate pair', () => {
    assert.deepEqual(countSmsSegments('🚀'.repeat(35)), { encoding: 'UCS-2', segments: 1, characters: 70 });
    assert.deepEqual(countSmsSegments('🚀'.repeat(36)), { encoding: 'UCS-2', segments: 2, characters: 72 });
    assert.deepEqual(countSmsSegments(`${'ж'.repeat(66)}🚀${'ж'.repeat(66)}`), { encoding: 'UCS-2', segments: 3, characters: 134 });
  });
});

describe('renderSmsText', () => {
  it('joins subject and body and strips markdown', () => {
    const body = '# Heads up\n\nYour **position** is _at risk_.\n\n- repay\n- add `collateral`\n\n> see [the docs](https://docs.example/r?a=1&b=2)';
    assert.equal(
      renderSmsText('Liquidation warning', body),
      'Liquidation warning: Heads up Your position is at risk. - repay - add collateral see the docs (https://docs.example/r?a=1&b=2)',
    );
  });

  it('shows bare links and addresses once and mailto links as their address', () => {
    assert.equal(
      renderSmsText('S', 'www.example.com <https://a.example> [write](mailto:ops@example.com) ![logo](https://cdn.example/l.png) ![x](http://cdn.example/x.png)'),
      'S: www.example.com https://a.example write (ops@example.com) logo (https://cdn.example/l.png) x',
    );
  });

  it('leaves hostile markup as inert text', () => {
    assert.equal(
      renderSmsText('S', '<script>alert(1)</script> [x](javascript:alert(1)) &lt;b&gt;'),
      'S: <script>alert(1)</script> [x](javascript:alert(1)) <b>',
    );
  });

  it('collapses whitespace and drops rules', () => {
    assert.equal(renderSmsText('S', 'a\n\n\n   b\t\tc\n\n---\n\nd'), 'S: a b c d');
  });

  it('drops characters that show nothing, so they cannot make the message UCS-2', () => {
    const text = renderSmsText('Heads\u00ADup\u200B', 'Claim\u2060 now\uFEFF, Ca\u0301fe\u0301 \u{1F44D}\u{1F3FD} \u{1F469}\u200D\u{1F4BB}');
    assert.equal(text, 'Headsup: Claim now, Ca\u0301fe\u0301 \u{1F44D}\u{1F3FD} \u{1F469}\u200D\u{1F4BB}');
    assert.equal(countSmsSegments(renderSmsText('Heads\u00ADup', 'Claim\u200B now\u2060')).encoding, 'GSM-7');
  });

  it('is just the subject when the body is empty', () => {
    assert.equal(renderSmsText('Only subject', '  \n'), 'Only subject');
  });
});

describe('truncateSmsText', () => {
  it('leaves a text of up to 1,600 characters alone', () => {
    const text = 'a'.repeat(SMS_MAX_CHARS);
    assert.equal(truncateSmsText(text), text);
    assert.equal(truncateSmsText('€'.repeat(SMS_MAX_CHARS / 2)), '€'.repeat(SMS_MAX_CHARS / 2), 'an extension character is two septets');
  });

  it('cuts a longer text to 1,600 characters ending in three dots, never inside a surrogate pair', () => {
    const cut = truncateSmsText('word '.repeat(400));
    assert.ok(cut.length <= SMS_MAX_CHARS);
    assert.ok(/\S\.\.\.$/.test(cut), 'no space before the dots');
    assert.equal(countSmsSegments(cut).encoding, 'GSM-7', 'the cut keeps a GSM-7 text in GSM-7');
    // counted as the encoding counts them: an emoji is two UCS-2 units, an extension character two septets
    const emoji = truncateSmsText('😀'.repeat(SMS_MAX_CHARS));
    assert.equal(emoji, `${'😀'.repeat((SMS_MAX_CHARS - 4) / 2)}...`);
    assert.ok(countSmsSegments(emoji).characters <= SMS_MAX_CHARS);
    const euros = truncateSmsText('€'.repeat(SMS_MAX_CHARS));
    assert.equal(euros, `${'€'.repeat((SMS_MAX_CHARS - 4) / 2)}...`);
    assert.equal(countSmsSegments(euros).characters, SMS_MAX_CHARS - 1);
  });
});
