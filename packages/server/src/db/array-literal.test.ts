import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { PGlite } from '@electric-sql/pglite';
import { textArrayLiteral } from './array-literal.js';

describe('textArrayLiteral', () => {
  it('round-trips every kind of text through PostgreSQL, NULL and the empty string included', async () => {
    const values = ['plain', '', 'with "quotes"', 'back\\slash', '\\"', 'comma, {braces} and NULL', 'NULL', ' spaced ', 'ünïcødé 👩‍👩‍👧', 'line\nbreak\ttab', null, '{"json": [1, "two"]}'];
    const db = new PGlite();
    try {
      const { rows } = await db.query<{ v: string | null }>('SELECT v FROM unnest($1::text[]) WITH ORDINALITY AS t(v, n) ORDER BY n', [textArrayLiteral(values)]);
      assert.deepEqual(
        rows.map((row) => row.v),
        values,
      );
    } finally {
      await db.close();
    }
  });

  it('writes an empty array as {}', () => {
    assert.equal(textArrayLiteral([]), '{}');
  });
});
