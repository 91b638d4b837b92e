import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { requestIdGenerator } from './request-id.js';

describe('requestIdGenerator', () => {
  it('keeps a short token the client sent and refuses anything else', () => {
    const next = requestIdGenerator();
    assert.equal(next('abc-123.x_Y'), 'abc-123.x_Y');
    for (const bad of ['../etc', 'x'.repeat(65), '', 'a b', undefined, ['a']]) assert.notEqual(next(bad), bad);
  });

  it('makes ids unique within a process and across processes', () => {
    const a = requestIdGenerator();
    const b = requestIdGenerator();
    const ids = new Set([...Array.from({ length: 1000 }, () => a(undefined)), ...Array.from({ length: 1000 }, () => b(undefined))]);
    assert.equal(ids.size, 2000);
  });
});
