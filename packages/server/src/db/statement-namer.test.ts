import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { MAX_PREPARED, statementNamer } from './connection.js';

describe('statementNamer', () => {
  it('gives equal texts one name and different texts different names', () => {
    const nameOf = statementNamer();
    const a = nameOf('SELECT 1');
    assert.ok(a);
    assert.equal(nameOf('SELECT 1'), a);
    assert.notEqual(nameOf('SELECT 2'), a);
  });

  it('stops naming after MAX_PREPARED distinct texts, so run-time SQL cannot pile up statements', () => {
    const nameOf = statementNamer();
    for (let i = 0; i < MAX_PREPARED; i++) assert.ok(nameOf(`SELECT ${i}`));
    assert.equal(nameOf('SELECT -1'), undefined);
    assert.ok(nameOf('SELECT 0'), 'texts named before the cap keep their name');
  });
});
