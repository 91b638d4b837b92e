import assert from 'node:assert/strict';
import { HeraldApiError, HeraldNetworkError } from '@herald/sdk';
import { CommanderError } from 'commander';
import { describe, it } from 'node:test';
import { CliError, EXIT, exitCodeFor } from './exit-codes.js';

const api = (statusCode: number, code = 'X') => new HeraldApiError({ statusCode, code, message: 'm' });

describe('exitCodeFor', () => {
  it('maps gateway answers by status', () => {
    assert.equal(exitCodeFor(api(401, 'INVALID_API_KEY')), EXIT.auth);
    assert.equal(exitCodeFor(api(403, 'TIER_REQUIRED')), EXIT.auth);
    assert.equal(exitCodeFor(api(404)), EXIT.notFound);
    assert.equal(exitCodeFor(api(429)), EXIT.rateLimited);
    assert.equal(exitCodeFor(api(400, 'VALIDATION_ERROR')), EXIT.usage);
    assert.equal(exitCodeFor(api(402, 'INSUFFICIENT_QUOTA')), EXIT.error);
    assert.equal(exitCodeFor(api(409)), EXIT.error);
    assert.equal(exitCodeFor(api(503)), EXIT.error);
  });

  it('maps every network failure to 6', () => {
    for (const kind of ['timeout', 'connection_refused', 'dns', 'connection_reset', 'network'] as const) {
      assert.equal(exitCodeFor(new HeraldNetworkError(kind, 'x')), EXIT.network);
    }
  });

  it('treats help and version as success and other commander errors as bad usage', () => {
    assert.equal(exitCodeFor(new CommanderError(0, 'commander.helpDisplayed', '')), EXIT.ok);
    assert.equal(exitCodeFor(new CommanderError(0, 'commander.version', '')), EXIT.ok);
    assert.equal(exitCodeFor(new CommanderError(1, 'commander.unknownOption', '')), EXIT.usage);
    assert.equal(exitCodeFor(new CommanderError(1, 'commander.help', '')), EXIT.usage, 'no command: the help shown as an error');
    assert.equal(exitCodeFor(new CommanderError(0, 'commander.help', '')), EXIT.ok, '`herald help`');
  });

  it('keeps a CliError code and calls anything else 1', () => {
    assert.equal(exitCodeFor(new CliError(EXIT.auth, 'NO_API_KEY', 'm')), EXIT.auth);
    assert.equal(exitCodeFor(new Error('bug')), EXIT.error);
  });
});
