import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { PGlite } from '@electric-sql/pglite';
import { arrayElement, quotedElement, textArrayLiteral } from './array-literal.js';

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

  it('leaves plain values bare and quotes the rest, alone and as literals nested in another array', async () => {
    const values = ['/v1/plain', 'GET', '', 'NULL', 'null', 'a,b', '{x}', '"q"', 'back\\slash', 'two words', 'tab\there', 'ünïcode'];
    assert.equal(arrayElement('/v1/plain'), '/v1/plain');
    assert.equal(arrayElement('null'), '"null"');
    const db = new PGlite();
    try {
      const flat = await db.query<{ v: string }>('SELECT v FROM unnest($1::text[]) WITH ORDINALITY AS t(v, n) ORDER BY n', [`{${values.map(arrayElement).join(',')}}`]);
      assert.deepEqual(
        flat.rows.map((row) => row.v),
        values,
      );
      // Each inner literal becomes one element of the outer array, read back with its own cast.
      const inner = [values.slice(0, 6), values.slice(6)].map((part) => quotedElement(`{${part.map(arrayElement).join(',')}}`));
      const nested = await db.query<{ v: string[] }>('SELECT v::text[] AS v FROM unnest($1::text[]) WITH ORDINALITY AS t(v, n) ORDER BY n', [`{${inner.join(',')}}`]);
      assert.deepEqual(
        nested.rows.map((row) => row.v),
        [values.slice(0, 6), values.slice(6)],
      );
    } finally {
      await db.close();
    }
  });
});
