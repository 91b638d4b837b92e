import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import pino from 'pino';
import { openPglite, type Database } from './connection.js';
import { tableStatistics } from './table-statistics.js';

describe('tableStatistics', () => {
  let db: Database;
  before(async () => {
    db = await openPglite(undefined);
    await db.exec('CREATE TABLE jobs (id int PRIMARY KEY)');
  });
  after(() => db.close());

  const tuples = async () => (await db.query<{ n: number }>(`SELECT reltuples::int AS n FROM pg_class WHERE relname = 'jobs'`))[0].n;
  const settle = () => new Promise((resolve) => setTimeout(resolve, 200));

  it('analyzes a busy table, at most once per interval', async () => {
    const stats = tableStatistics(db, 'jobs', pino({ level: 'silent' }), 60_000);
    await db.query('INSERT INTO jobs SELECT generate_series(1, 500)');
    stats.busy();
    await settle();
    assert.equal(await tuples(), 500);
    await db.query('INSERT INTO jobs SELECT generate_series(501, 1000)');
    stats.busy();
    await settle();
    assert.equal(await tuples(), 500, 'a second call within the interval does nothing');
  });

  it('logs instead of throwing when the table cannot be analyzed', async () => {
    const lines: string[] = [];
    const log = pino({ level: 'debug' }, { write: (line: string) => void lines.push(line) });
    tableStatistics(db, 'missing_table', log).busy();
    await settle();
    assert.match(lines.join(''), /could not refresh table statistics/);
  });
});
