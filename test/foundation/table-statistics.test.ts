import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import pino from 'pino';
import type { Database } from '../../packages/server/src/db/connection.js';
import { tableStatistics } from '../../packages/server/src/db/table-statistics.js';
import { emptyDatabase } from '../support/database.js';
import { onPostgres, sleep, waitFor } from '../support/gateway.js';

describe('tableStatistics', () => {
  let db: Database;
  let dispose: () => Promise<void>;

  before(async () => {
    ({ db, dispose } = await emptyDatabase());
  });
  after(() => dispose());

  const silent = pino({ level: 'silent' });
  const tuples = async (table: string) => (await db.query<{ n: number }>(`SELECT reltuples::int AS n FROM pg_class WHERE oid = $1::regclass`, [table]))[0].n;
  const changed = async (table: string) =>
    (await db.query<{ n: number }>('SELECT n_mod_since_analyze::int AS n FROM pg_stat_user_tables WHERE relid = $1::regclass', [table]))[0]?.n ?? 0;
  const fill = (table: string, from: number, to: number) => db.query(`INSERT INTO ${table} SELECT generate_series(${from}, ${to})`);

  it('analyzes a busy table at once, then not again within the interval for a small change', async () => {
    await db.exec('CREATE TABLE jobs_small (id int PRIMARY KEY)');
    const stats = tableStatistics(db, 'jobs_small', silent, { intervalMs: 60_000, checkMs: 0 });
    await fill('jobs_small', 1, 5000);
    stats.busy();
    await waitFor(async () => (await tuples('jobs_small')) === 5000);
    await fill('jobs_small', 5001, 5100);
    if (onPostgres) await waitFor(async () => (await changed('jobs_small')) >= 100, 15_000, 100);
    stats.busy();
    await sleep(300);
    assert.equal(await tuples('jobs_small'), 5000, '100 changed rows of 5,000 do not call for new statistics');
  });

  it('analyzes again within the interval once a fifth of the table has changed (PostgreSQL)', async () => {
    await db.exec('CREATE TABLE jobs_growing (id int PRIMARY KEY)');
    const stats = tableStatistics(db, 'jobs_growing', silent, { intervalMs: 60_000, checkMs: 0 });
    await fill('jobs_growing', 1, 5000);
    stats.busy();
    await waitFor(async () => (await tuples('jobs_growing')) === 5000);
    await fill('jobs_growing', 5001, 20_000);
    if (!onPostgres) {
      // PGlite keeps no count of changed rows: only the interval applies.
      stats.busy();
      await sleep(300);
      assert.equal(await tuples('jobs_growing'), 5000);
      return;
    }
    // PostgreSQL publishes a session's counts about a second after its transaction ends.
    await waitFor(
      async () => {
        stats.busy();
        return (await tuples('jobs_growing')) === 20_000;
      },
      15_000,
      100,
    );
  });

  it('logs instead of throwing when the table cannot be analyzed', async () => {
    const lines: string[] = [];
    const log = pino({ level: 'debug' }, { write: (line: string) => void lines.push(line) });
    tableStatistics(db, 'missing_table', log).busy();
    await waitFor(async () => lines.join('').includes('could not refresh table statistics'));
  });
});
