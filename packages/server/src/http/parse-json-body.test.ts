import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ApiError } from './errors.js';
import { MAX_JSON_DEPTH, nestsDeeperThan, parseJsonBody } from './parse-json-body.js';

const nested = (depth: number) => '['.repeat(depth) + ']'.repeat(depth);

describe('parseJsonBody', () => {
  it('parses JSON and reads an empty body as no body', () => {
    assert.deepEqual(parseJsonBody('{"a":[1,{"b":"c"}]}'), { a: [1, { b: 'c' }] });
    assert.equal(parseJsonBody(''), undefined);
  });

  it('accepts nesting up to the limit and refuses one level more, before parsing', () => {
    assert.ok(Array.isArray(parseJsonBody(nested(MAX_JSON_DEPTH))));
    assert.throws(() => parseJsonBody(nested(MAX_JSON_DEPTH + 1)), (error: unknown) => error instanceof ApiError && error.code === 'VALIDATION_ERROR');
    assert.throws(() => parseJsonBody(`{"a":${nested(200_000)}}`), ApiError);
  });

  it('does not count brackets inside strings, escaped quotes included', () => {
    assert.equal(nestsDeeperThan(JSON.stringify({ text: '['.repeat(100), quoted: '"[[[[' }), 2), false);
    assert.equal(nestsDeeperThan('{"a":"\\\\"}', 1), false);
    assert.equal(nestsDeeperThan('{"a":"\\"[[["}', 1), false);
  });

  it('answers malformed JSON with a 400 SyntaxError', () => {
    assert.throws(() => parseJsonBody('{"a":'), (error: unknown) => error instanceof SyntaxError && (error as { statusCode?: number }).statusCode === 400);
  });
});
