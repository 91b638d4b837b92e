import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { acceptsJson } from './accepts-json.js';

describe('acceptsJson', () => {
  it('accepts JSON alone, wildcards and no header; refuses a header without JSON', () => {
    for (const accept of [undefined, '', 'application/json', '*/*', 'application/*', 'text/plain, application/json;q=0.9']) assert.ok(acceptsJson(accept), String(accept));
    for (const accept of ['text/html', 'text/event-stream', 'application/jsonl']) assert.equal(acceptsJson(accept), false, accept);
  });

  it('reads q-values: q=0 refuses, and the most specific range naming JSON decides', () => {
    for (const accept of ['application/json;q=0, text/html', 'application/json; q=0, */*', 'application/*;q=0', '*/*;q=0.0', 'application/*;q=0, */*']) {
      assert.equal(acceptsJson(accept), false, accept);
    }
    for (const accept of ['application/json;q=0.1', 'APPLICATION/JSON', 'text/html;q=1, */*;q=0.5', '*/*;q=0, application/json', 'application/json;charset=utf-8']) {
      assert.ok(acceptsJson(accept), accept);
    }
  });
});
