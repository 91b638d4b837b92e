import assert from 'node:assert/strict';
import { readdirSync } from 'node:fs';
import { describe, it } from 'node:test';
import { openPostgres } from '../../packages/server/src/db/connection.js';
import { migrate } from '../../packages/server/src/db/migrate.js';
import { emptyDatabase, withEmptyDatabase } from '../support/database.js';
import { onPostgres } from '../support/gateway.js';

const shipped = () =>
  readdirSync(new URL('../../packages/server/migrations/', import.meta.url))
    .filter((name) => name.endsWith('.sql'))
    .sort();

describe('migrations', () => {
  it('apply every shipped file once, and a second run applies nothing', async () => {
    await withEmptyDatabase(async (db) => {
      assert.deepEqual(await migrate(db), shipped());
      assert.deepEqual(await migrate(db), []);
      const rows = await db.query<{ name: string }>('SELECT name FROM schema_migrations ORDER BY name');
      assert.deepEqual(
        rows.map((r) => r.name),
        shipped(),
      );
      // The schema is really there: a table of the first migration answers.
      assert.deepEqual(await db.query('SELECT count(*)::int AS n FROM protocols'), [{ n: 0 }]);
    });
  });

  it('survive two processes migrating a fresh PostgreSQL schema at the same time', { skip: !onPostgres && 'needs PostgreSQL (PGlite has one connection)' }, async () => {
    const { db, url, dispose } = await emptyDatabase();
    const other = await openPostgres({ url: url!, max: 2 });
    try {
      const [a, b] = await Promise.all([migrate(db), migrate(other)]);
      // The advisory lock serialises them: one applies everything, the other finds it done.
      assert.deepEqual([a, b].map((applied) => applied.length).sort(), [0, shipped().length]);
      assert.deepEqual([...a, ...b], shipped());
      const rows = await db.query<{ name: string; n: number }>('SELECT name, count(*)::int AS n FROM schema_migrations GROUP BY name ORDER BY name');
      assert.deepEqual(
        rows,
        shipped().map((name) => ({ name, n: 1 })),
      );
    } finally {
      await other.close();
      await dispose();
    }
  });
});
