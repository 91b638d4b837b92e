import assert from 'node:assert/strict';
import { InvalidArgumentError } from 'commander';
import { describe, it } from 'node:test';
import { integerIn, listOf, parseDuration, parseTier, parseTimestamp } from './parse-options.js';

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

  it('parseDuration reads units and takes a bare number as seconds', () => {
    assert.equal(parseDuration('500ms'), 500);
    assert.equal(parseDuration('30s'), 30_000);
    assert.equal(parseDuration('2m'), 120_000);
    assert.equal(parseDuration('1h'), 3_600_000);
    assert.equal(parseDuration('45'), 45_000);
    assert.equal(parseDuration('1.5s'), 1500);
    for (const bad of ['', 'soon', '-1s', '0', '25h', '1d']) assert.throws(() => parseDuration(bad), InvalidArgumentError, bad);
  });

  it('listOf splits, checks and de-duplicates', () => {
    const channels = listOf(['email', 'sms']);
    assert.deepEqual(channels('email, sms,email'), ['email', 'sms']);
    for (const bad of ['', ',', 'fax', 'email,fax']) assert.throws(() => channels(bad), InvalidArgumentError, bad);
  });
});
