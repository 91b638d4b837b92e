import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import pg from 'pg';
import { countAndPage } from '../../packages/server/src/db/count-and-page.js';
import { emptyDatabase, withEmptyDatabase } from '../support/database.js';
import { onPostgres } from '../support/gateway.js';

describe('countAndPage', () => {
  it('reads the count and the page of one snapshot while rows are committed in between (PostgreSQL)', { skip: !onPostgres && 'needs PostgreSQL' }, async () => {
    const { db, url, dispose } = await emptyDatabase();
    const other = new pg.Client({ connectionString: url });
    try {
      await db.exec('CREATE TABLE items (n int PRIMARY KEY); INSERT INTO items SELECT generate_series(1, 5);');
      await other.connect();
      // The count waits a moment, and five rows are committed meanwhile: read apart, the page
      // would hold ten rows against a count of five.
      const reading = countAndPage<{ n: number }>(
        db,
        { text: 'SELECT count(*)::int AS total, pg_sleep(0.3) FROM items', params: [] },
        { text: 'SELECT n FROM items ORDER BY n DESC LIMIT $1', params: [100] },
      );
      await new Promise((resolve) => setTimeout(resolve, 100));
      await other.query('INSERT INTO items SELECT generate_series(6, 10)');
      const { rows, total } = await reading;
      assert.equal(total, 5);
      assert.deepEqual(
        rows.map((row) => row.n),
        [5, 4, 3, 2, 1],
      );
      assert.equal((await countAndPage(db, { text: 'SELECT count(*)::int AS total FROM items', params: [] }, { text: 'SELECT n FROM items', params: [] })).total, 10);
    } finally {
      await other.end();
      await dispose();
    }
  });

  it('reads inside a transaction already open with its snapshot, and on either engine', async () => {
    await withEmptyDatabase(async (db) => {
      await db.exec('CREATE TABLE items (n int PRIMARY KEY); INSERT INTO items SELECT generate_series(1, 3);');
      const count = { text: 'SELECT count(*)::int AS total FROM items', params: [] };
      const page = { text: 'SELECT n FROM items ORDER BY n', params: [] };
      assert.deepEqual(await countAndPage(db, count, page), { rows: [{ n: 1 }, { n: 2 }, { n: 3 }], total: 3 });
      const inside = await db.transaction(async (tx) => {
        await tx.query('INSERT INTO items VALUES (4)');
        return countAndPage(tx, count, page);
      });
      assert.equal(inside.total, 4);
      assert.equal(inside.rows.length, 4);
    });
  });
});
