import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { describe, it } from 'node:test';
import { splitStatements } from './migrate.js';

describe('splitStatements', () => {
  it('splits on statement-ending semicolons and drops comment and blank lines', () => {
    const sql = `-- a comment; with a semicolon
CREATE TABLE a (
  id int -- trailing
);

CREATE INDEX a_id ON a (id);
`;
    assert.deepEqual(splitStatements(sql), ['CREATE TABLE a (\n  id int -- trailing\n);', 'CREATE INDEX a_id ON a (id);']);
  });

  it('keeps a dollar-quoted body whole, semicolons and all', () => {
    const sql = `CREATE FUNCTION f() RETURNS trigger AS $$
BEGIN
  NEW.updated_at = now();
  RETURN NEW;
END;
$$ LANGUAGE plpgsql;
SELECT 1;`;
    const statements = splitStatements(sql);
    assert.equal(statements.length, 2);
    assert.match(statements[0], /^CREATE FUNCTION[\s\S]*RETURN NEW;[\s\S]*LANGUAGE plpgsql;$/);
    assert.equal(statements[1], 'SELECT 1;');
  });

  it('keeps a last statement that lacks its semicolon', () => {
    assert.deepEqual(splitStatements('SELECT 1;\nSELECT 2'), ['SELECT 1;', 'SELECT 2']);
  });

  it('splits every shipped migration into complete statements', () => {
    const dir = new URL('../../migrations/', import.meta.url);
    for (const name of readdirSync(dir).filter((n) => n.endsWith('.sql'))) {
      const statements = splitStatements(readFileSync(new URL(name, dir), 'utf8'));
      assert.ok(statements.length > 0, name);
      for (const statement of statements) assert.match(statement, /;$/, `${name}: ${statement.slice(0, 80)}`);
    }
  });
});
