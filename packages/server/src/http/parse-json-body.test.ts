import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ApiError } from './errors.js';
import { MAX_JSON_DEPTH, nestsDeeperThan, parseJsonBody, unstorableTextProblem, utf8Text } from './parse-json-body.js';

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

  it('refuses a NUL character in any value or key, naming where it stands', () => {
    const refused = (text: string, message: string) =>
      assert.throws(() => parseJsonBody(text), (error: unknown) => error instanceof ApiError && error.code === 'VALIDATION_ERROR' && error.message === message);
    refused('{"subject":"a\\u0000b"}', 'subject must not contain the NUL character (\\u0000)');
    refused('{"notifications":[{"body":"x"},{"body":"\\u0000"}]}', 'notifications[1].body must not contain the NUL character (\\u0000)');
    refused('{"templateVariables":{"a\\u0000":1}}', 'templateVariables.a\\u0000 must not contain the NUL character (\\u0000)');
    refused('"\\u0000"', 'body must not contain the NUL character (\\u0000)');
    // An escaped backslash before "u0000" is text, not the character.
    assert.deepEqual(parseJsonBody('{"a":"\\\\u0000"}'), { a: '\\u0000' });
    assert.equal(unstorableTextProblem({ a: [1, null, true, { b: 'c' }] }), undefined);
  });

  it('refuses half a surrogate pair, which would be stored as U+FFFD, and keeps whole pairs', () => {
    const refused = (text: string, field: string) =>
      assert.throws(
        () => parseJsonBody(text),
        (error: unknown) => error instanceof ApiError && error.message === `${field} must be valid Unicode text (it has an unpaired surrogate, \\uD800-\\uDFFF)`,
        text,
      );
    refused('{"subject":"\\ud800"}', 'subject');
    refused('{"subject":"a\\uDC00b"}', 'subject');
    refused('{"notifications":[{"body":"\\ud83d\\ud83d\\ude80"}]}', 'notifications[0].body');
    assert.deepEqual(parseJsonBody('{"subject":"\\ud83d\\ude80 \\uD83D\\uDE80"}'), { subject: '🚀 🚀' });
  });

  it('reads a body as UTF-8 text, refusing bytes that are not UTF-8 and keeping a U+FFFD that was sent', () => {
    assert.equal(utf8Text(Buffer.from('{"a":"é€😀"}')), '{"a":"é€😀"}');
    assert.equal(utf8Text(Buffer.from('{"a":"\uFFFD"}')), '{"a":"\uFFFD"}');
    for (const bytes of [[0xff], [0xc3], [0xed, 0xa0, 0x80], [0xe2, 0x82]]) {
      assert.throws(() => utf8Text(Buffer.concat([Buffer.from('{"a":"'), Buffer.from(bytes), Buffer.from('"}')])), (error: unknown) => {
        assert.ok(error instanceof ApiError);
        assert.equal(error.message, 'Request body is not valid UTF-8 text');
        return true;
      });
    }
  });

  it('does not count brackets inside strings, escaped quotes included', () => {
    assert.equal(nestsDeeperThan(JSON.stringify({ text: '['.repeat(100), quoted: '"[[[[' }), 2), false);
    assert.equal(nestsDeeperThan('{"a":"\\\\"}', 1), false);
    assert.equal(nestsDeeperThan('{"a":"\\"[[["}', 1), false);
    // A string ending in an escaped backslash closes at the quote after it.
    assert.equal(nestsDeeperThan('{"a":"x\\\\","b":[[1]]}', 2), true);
    assert.equal(nestsDeeperThan('{"a":"x\\\\\\"[[[[\\""}', 1), false, 'an odd run of backslashes escapes the quote: the brackets are still in the string');
    // An unterminated string hides the rest; JSON.parse refuses the body.
    assert.equal(nestsDeeperThan('{"a":"[[[[', 2), false);
  });

  it('agrees with a walk over the parsed value for random documents', () => {
    const depthOf = (value: unknown): number =>
      value !== null && typeof value === 'object' ? 1 + Math.max(0, ...Object.values(value as object).map(depthOf)) : 0;
    const pieces = ['"', '\\', '[', ']', '{', '}', 'a', ' '];
    let seed = 7;
    const random = (n: number) => ((seed = (seed * 1103515245 + 12345) % 2 ** 31) % n);
    const value = (depth: number): unknown => {
      const kind = random(4);
      if (depth > 6 || kind === 0) return Array.from({ length: random(6) }, () => pieces[random(pieces.length)]).join('');
      if (kind === 1) return random(100);
      if (kind === 2) return Array.from({ length: random(3) }, () => value(depth + 1));
      return Object.fromEntries(Array.from({ length: random(3) }, (_, i) => [pieces[random(pieces.length)] + i, value(depth + 1)]));
    };
    for (let i = 0; i < 500; i++) {
      const doc = value(0);
      const depth = depthOf(doc);
      const text = JSON.stringify(doc);
      assert.equal(nestsDeeperThan(text, depth), false, text);
      if (depth > 0) assert.equal(nestsDeeperThan(text, depth - 1), true, text);
    }
  });

  it('answers malformed JSON with a 400 SyntaxError', () => {
    assert.throws(() => parseJsonBody('{"a":'), (error: unknown) => error instanceof SyntaxError && (error as { statusCode?: number }).statusCode === 400);
  });
});
