import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { acceptsJson } from './accepts-json.js';

describe('acceptsJson', () => {
  it('accepts JSON alone, wildcards and no header; refuses a header without JSON', () => {
    for (const accept of [undefined, '', 'application/json', '*/*', 'application/*', 'text/plain, application/json;q=0.9']) assert.ok(acceptsJson(accept), String(accept));
    for (const accept of ['text/html', 'text/event-stream', 'application/jsonl']) assert.equal(acceptsJson(accept), false, accept);
  });
});
