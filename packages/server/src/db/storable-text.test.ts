import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { storableText } from './storable-text.js';

describe('storableText', () => {
  it('drops the NUL characters PostgreSQL refuses and keeps everything else', () => {
    assert.equal(storableText('550 bad\u0000user\u0000'), '550 baduser');
    const text = 'tabs\tnew\nlines, émoji 🎉, \u0001 control';
    assert.equal(storableText(text), text);
  });
});
