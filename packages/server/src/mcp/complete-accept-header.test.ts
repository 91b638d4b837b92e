import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { acceptsJson, completeAcceptHeader } from './complete-accept-header.js';

function request(accept?: string) {
  const rawHeaders = ['Content-Type', 'application/json', 'Host', 'x'];
  if (accept !== undefined) rawHeaders.push('accept', accept);
  const headers: Record<string, string> = { 'content-type': 'application/json', host: 'x' };
  if (accept !== undefined) headers.accept = accept;
  return { headers, rawHeaders };
}

const BOTH = 'application/json, text/event-stream';

describe('completeAcceptHeader', () => {
  for (const accept of [undefined, 'application/json', '*/*', 'application/*', 'text/plain, application/json;q=0.9']) {
    it(`serves JSON to a client sending ${accept === undefined ? 'no Accept header' : `Accept: ${accept}`}`, () => {
      const raw = request(accept);
      completeAcceptHeader(raw);
      assert.equal(raw.headers.accept, BOTH);
      assert.deepEqual(raw.rawHeaders, ['Content-Type', 'application/json', 'Host', 'x', 'Accept', BOTH]);
    });
  }

  it('leaves a header that already lists both types alone', () => {
    const raw = request('application/json, text/event-stream');
    completeAcceptHeader(raw);
    assert.deepEqual(raw.rawHeaders, ['Content-Type', 'application/json', 'Host', 'x', 'accept', 'application/json, text/event-stream']);
  });

  it('leaves the header of a client that refuses JSON as it is (the route answers it 406)', () => {
    const raw = request('text/html');
    completeAcceptHeader(raw);
    assert.equal(raw.headers.accept, 'text/html');
    assert.deepEqual(raw.rawHeaders.slice(-2), ['accept', 'text/html']);
  });
});

describe('acceptsJson', () => {
  it('accepts JSON alone, wildcards and no header; refuses a header without JSON', () => {
    for (const accept of [undefined, '', 'application/json', '*/*', 'application/*', 'text/plain, application/json;q=0.9']) assert.ok(acceptsJson(accept), String(accept));
    for (const accept of ['text/html', 'text/event-stream', 'application/jsonl']) assert.equal(acceptsJson(accept), false, accept);
  });
});
