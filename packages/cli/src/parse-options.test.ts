import assert from 'node:assert/strict';
import { InvalidArgumentError } from 'commander';
import { describe, it } from 'node:test';
import { integerIn, parseTier, parseTimestamp } from './parse-options.js';

describe('option parsers', () => {
  it('parseTier takes numbers and names', () => {
    assert.equal(parseTier('0'), 0);
    assert.equal(parseTier('Growth'), 1);
    assert.equal(parseTier(' enterprise '), 3);
    for (const bad of ['4', '-1', '1.5', 'gold', '']) assert.throws(() => parseTier(bad), InvalidArgumentError, bad);
  });

  it('integerIn enforces whole numbers within bounds', () => {
    const limit = integerIn(1, 100);
    assert.equal(limit('100'), 100);
    for (const bad of ['0', '101', 'abc', '1e2', '5.5']) assert.throws(() => limit(bad), InvalidArgumentError, bad);
  });

  it('parseTimestamp normalises to UTC ISO 8601', () => {
    assert.equal(parseTimestamp('2030-01-02'), '2030-01-02T00:00:00.000Z');
    assert.equal(parseTimestamp('2030-01-02T10:00:00+02:00'), '2030-01-02T08:00:00.000Z');
    assert.throws(() => parseTimestamp('next tuesday'), InvalidArgumentError);
  });
});
