import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { PGlite } from '@electric-sql/pglite';
import { decodeTime, isValid } from 'ulid';
import { base32Suffix, broadcastIdPrefix, sqlBase32Suffix } from './fan-out-ids.js';

describe('broadcast notification ids', () => {
  it('start with the time of the broadcast and 6 random characters', () => {
    const now = new Date('2025-06-15T12:00:00.123Z');
    const prefix = broadcastIdPrefix(now);
    assert.equal(prefix.length, 16);
    const id = prefix + base32Suffix(1);
    assert.ok(isValid(id));
    assert.equal(decodeTime(id), now.getTime());
    assert.notEqual(broadcastIdPrefix(now), prefix);
  });

  it('encode the row number in SQL exactly as in JavaScript, in order', async () => {
    const db = new PGlite();
    try {
      const numbers = [0, 1, 31, 32, 1023, 1_000_000, 2 ** 40 + 7, 2 ** 50 - 1];
      const rows = await db.query<{ n: string; s: string }>(
        `SELECT n::text AS n, ${sqlBase32Suffix('n')} AS s FROM unnest($1::bigint[]) AS n`,
        [numbers.map(String)],
      );
      assert.deepEqual(
        rows.rows.map((r) => r.s),
        numbers.map(base32Suffix),
      );
      const sorted = [...numbers.map(base32Suffix)].sort();
      assert.deepEqual(sorted, numbers.map(base32Suffix), 'suffixes sort like the numbers');
      assert.equal(base32Suffix(0), '0000000000');
      assert.equal(base32Suffix(2 ** 50 - 1), 'ZZZZZZZZZZ');
    } finally {
      await db.close();
    }
  });
});
