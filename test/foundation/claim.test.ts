import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { claimDue } from '../../packages/server/src/db/claim-due.js';
import { openPostgres, type Database } from '../../packages/server/src/db/connection.js';
import { emptyDatabase } from '../support/database.js';
import { onPostgres } from '../support/gateway.js';

const target = { table: 'test_jobs', dueColumn: 'due_at', where: "state = 'ready'", set: 'attempts = attempts + 1' };
const T = new Date('2026-05-01T12:00:00.000Z');
const at = (ms: number) => new Date(T.getTime() + ms);

describe('claimDue', () => {
  let db: Database;
  let url: string | undefined;
  let dispose: () => Promise<void>;

  before(async () => {
    ({ db, url, dispose } = await emptyDatabase({ max: 4 }));
    await db.exec(`CREATE TABLE test_jobs (
      id integer PRIMARY KEY,
      state text NOT NULL DEFAULT 'ready',
      due_at timestamptz NOT NULL,
      locked_until timestamptz,
      attempts integer NOT NULL DEFAULT 0,
      grp text NOT NULL DEFAULT 'a'
    )`);
    await db.exec(`CREATE INDEX test_jobs_grp_due ON test_jobs (grp, due_at) WHERE state = 'ready'`);
    await db.exec(`CREATE INDEX test_jobs_grp_lease ON test_jobs (grp, locked_until) WHERE state = 'ready'`);
  });
  after(async () => {
    await dispose();
  });

  async function reset(rows: { id: number; dueMs: number; state?: string; grp?: string }[]) {
    await db.query('DELETE FROM test_jobs');
    for (const row of rows) {
      await db.query('INSERT INTO test_jobs (id, due_at, state, grp) VALUES ($1, $2, $3, $4)', [row.id, at(row.dueMs), row.state ?? 'ready', row.grp ?? 'a']);
    }
  }

  it('leases a row and gives it out again only once the lease has expired', async () => {
    await reset([{ id: 1, dueMs: -1000 }]);
    const first = await claimDue<{ id: number; locked_until: Date; attempts: number }>(db, target, { limit: 10, leaseMs: 1000, now: T });
    assert.deepEqual(
      first.map((r) => r.id),
      [1],
    );
    assert.equal(first[0].locked_until.toISOString(), at(1000).toISOString());
    assert.equal(first[0].attempts, 1, 'the `set` assignments are applied');
    assert.deepEqual(await claimDue(db, target, { limit: 10, leaseMs: 1000, now: at(500) }), []);
    assert.deepEqual(await claimDue(db, target, { limit: 10, leaseMs: 1000, now: at(999) }), []);
    const again = await claimDue<{ id: number; attempts: number }>(db, target, { limit: 10, leaseMs: 1000, now: at(1001) });
    assert.deepEqual(
      again.map((r) => [r.id, r.attempts]),
      [[1, 2]],
    );
  });

  it('leaves rows that are not yet due, or that the condition excludes', async () => {
    await reset([
      { id: 1, dueMs: 0 },
      { id: 2, dueMs: 1 },
      { id: 3, dueMs: 60_000 },
      { id: 4, dueMs: -5000, state: 'done' },
    ]);
    const claimed = await claimDue<{ id: number }>(db, target, { limit: 10, leaseMs: 120_000, now: T });
    assert.deepEqual(
      claimed.map((r) => r.id),
      [1],
    );
    const later = await claimDue<{ id: number }>(db, target, { limit: 10, leaseMs: 30_000, now: at(60_000) });
    assert.deepEqual(later.map((r) => r.id).sort(), [2, 3]);
  });

  it('claims the most overdue rows first, at most `limit` of them', async () => {
    await reset([
      { id: 1, dueMs: -100 },
      { id: 2, dueMs: -300 },
      { id: 3, dueMs: -200 },
    ]);
    const claimed = await claimDue<{ id: number }>(db, target, { limit: 2, leaseMs: 30_000, now: T });
    assert.deepEqual(claimed.map((r) => r.id).sort(), [2, 3]);
  });

  describe('by group', () => {
    const grouped = { ...target, group: { column: 'grp', perGroup: 2 } };
    const claim = async (limit: number, now = T, leaseMs = 30_000) =>
      (await claimDue<{ id: number; grp: string }>(db, grouped, { limit, leaseMs, now })).map((r) => r.id).sort((x, y) => x - y);

    it('takes at most perGroup of each group, oldest rows of the group with the oldest row first', async () => {
      await reset([
        { id: 1, dueMs: -500, grp: 'b' },
        { id: 2, dueMs: -400, grp: 'a' },
        { id: 3, dueMs: -300, grp: 'b' },
        { id: 4, dueMs: -200, grp: 'a' },
        { id: 5, dueMs: -100, grp: 'b' },
        { id: 6, dueMs: -50, grp: 'a' },
        { id: 7, dueMs: -600, grp: 'c', state: 'done' },
        { id: 8, dueMs: 5000, grp: 'd' },
      ]);
      assert.deepEqual(await claim(3), [1, 2, 3], "group b's oldest row is the oldest: its two first, then a's first");
    });

    it('skips a group while one of its rows is leased, and takes it again once that lease expires', async () => {
      await reset([
        { id: 1, dueMs: -500, grp: 'a' },
        { id: 2, dueMs: -400, grp: 'a' },
        { id: 3, dueMs: -300, grp: 'a' },
        { id: 4, dueMs: -200, grp: 'b' },
      ]);
      assert.deepEqual(await claim(10, T, 1000), [1, 2, 4]);
      await db.query('UPDATE test_jobs SET locked_until = NULL WHERE id = 4');
      assert.deepEqual(await claim(10, at(10)), [4], "row 3 waits: group a's rows 1 and 2 are still leased");
      await db.query(`UPDATE test_jobs SET state = 'done' WHERE id = 1`);
      assert.deepEqual(await claim(10, at(20)), [], 'one leased row is enough to hold the group back');
      assert.deepEqual(await claim(10, at(1001)), [2, 3], 'after the lease, the oldest due rows of the group again');
    });

    it('leaves groups whose rows are all in the future or excluded', async () => {
      await reset([
        { id: 1, dueMs: 1000, grp: 'a' },
        { id: 2, dueMs: -100, grp: 'b', state: 'done' },
      ]);
      assert.deepEqual(await claim(10), []);
    });

    it('covers every group when many are ready, within the limit', async () => {
      await db.query('DELETE FROM test_jobs');
      await db.query(`INSERT INTO test_jobs (id, due_at, grp) SELECT g, $1::timestamptz - (g || ' ms')::interval, 'g' || (g % 40) FROM generate_series(1, 400) g`, [T]);
      const first = await claimDue<{ grp: string }>(db, grouped, { limit: 1000, leaseMs: 30_000, now: T });
      assert.equal(first.length, 80, 'two rows from each of the 40 groups');
      assert.equal(new Set(first.map((r) => r.grp)).size, 40);
      assert.deepEqual(await claim(1000), [], 'every group is now busy');
    });
  });

  it('never gives one row to two concurrent claimers on separate connections', { skip: !onPostgres && 'needs PostgreSQL: PGlite serves one connection, so there is no concurrency to test' }, async () => {
    const rows = Array.from({ length: 200 }, (_, i) => i + 1);
    await db.query('DELETE FROM test_jobs');
    await db.query(`INSERT INTO test_jobs (id, due_at) SELECT g, $1::timestamptz - (g || ' ms')::interval FROM generate_series(1, 200) g`, [T]);
    const a = await openPostgres({ url: url!, max: 1 });
    const b = await openPostgres({ url: url!, max: 1 });
    try {
      async function claimer(conn: Database) {
        const got: number[] = [];
        let batches = 0;
        for (;;) {
          const batch = await claimDue<{ id: number }>(conn, target, { limit: 10, leaseMs: 60_000, now: T });
          if (batch.length === 0) return { got, batches };
          assert.ok(batch.length <= 10);
          batches++;
          got.push(...batch.map((r) => r.id));
        }
      }
      const [fromA, fromB] = await Promise.all([claimer(a), claimer(b)]);
      const all = [...fromA.got, ...fromB.got];
      assert.equal(new Set(all).size, all.length, 'a row was claimed twice');
      assert.deepEqual(
        all.sort((x, y) => x - y),
        rows,
      );
      assert.ok(fromA.batches > 0 && fromB.batches > 0, `both claimers worked (${fromA.batches} + ${fromB.batches} batches)`);
      const [{ max }] = await db.query<{ max: number }>('SELECT max(attempts)::int AS max FROM test_jobs');
      assert.equal(max, 1);
    } finally {
      await a.close();
      await b.close();
    }
  });
});
