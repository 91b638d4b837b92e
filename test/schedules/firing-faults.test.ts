/**
 * A group of schedules whose firing transaction the database could not take (a dropped
 * connection) is fired again while its lease lasts, and once; any other failure waits for the
 * lease to run out.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { Database } from '../../packages/server/src/db/connection.js';
import pg from 'pg';
import { connectionLost } from '../support/database.js';
import { call, onPostgres, type TestProtocol } from '../support/gateway.js';
import { registeredWallet } from '../support/wallets.js';
import { createOnce, notificationsOf, runsOf, startClockGateway, type ClockGateway } from './harness.js';

describe('firing schedules when the database fails', () => {
  let gw: ClockGateway;
  let acme: TestProtocol;
  let wallet: string;
  let db: Database;

  before(async () => {
    gw = await startClockGateway('2026-04-10T00:00:00Z');
    acme = await gw.createProtocol({ tier: 3 });
    wallet = await registeredWallet(gw.url, { email: 'holder@example.com' });
    db = gw.herald.deps.db;
  });
  after(() => gw.close());

  /**
   * A one-time schedule due now, fired by one pass whose first transaction is `first` instead
   * (given the way to run the real one); answers how many transactions the pass began.
   */
  async function fireWithFirstTransaction(first: (run: () => Promise<unknown>) => Promise<unknown>) {
    const at = new Date(gw.advance(3_600_000).getTime() + 60_000).toISOString();
    const created = await createOnce(gw, acme.apiKey, wallet, at);
    gw.setClock(at);
    const real = db.transaction;
    let transactions = 0;
    db.transaction = ((fn) => (++transactions === 1 ? first(() => real.call(db, fn)) : real.call(db, fn))) as Database['transaction'];
    let claimed: number;
    try {
      claimed = await gw.fire();
    } finally {
      db.transaction = real;
    }
    assert.equal(claimed, 1);
    return { created, transactions };
  }

  async function assertFiredOnce(id: string) {
    assert.equal((await notificationsOf(gw, id)).length, 1);
    assert.equal((await runsOf(gw, id)).length, 1);
    assert.equal((await call(gw.url, acme.apiKey, 'GET', `/v1/schedule/${id}`)).body.status, 'COMPLETED');
  }

  it('fires a group again at once when the database refused its transaction', async () => {
    const { created, transactions } = await fireWithFirstTransaction(async () => {
      throw connectionLost();
    });
    assert.equal(transactions, 2);
    await assertFiredOnce(created.id);
  });

  it('sends nothing twice when the transaction committed and its answer was lost', async () => {
    const { created, transactions } = await fireWithFirstTransaction(async (run) => {
      await run();
      throw connectionLost();
    });
    assert.equal(transactions, 2);
    await assertFiredOnce(created.id);
  });

  it('leaves a group to its lease when the lost try still holds its rows', { skip: !onPostgres && 'needs a second connection (PostgreSQL)' }, async () => {
    // The server has not noticed yet that the first try's client is gone: its transaction still
    // holds the schedule's row, here held by another connection.
    const holder = new pg.Client({ connectionString: gw.databaseUrl });
    await holder.connect();
    try {
      const started = Date.now();
      const { created, transactions } = await fireWithFirstTransaction(async () => {
        await holder.query('BEGIN');
        await holder.query("SELECT id FROM schedules WHERE status = 'PENDING' FOR UPDATE");
        throw connectionLost();
      });
      assert.equal(transactions, 2);
      assert.ok(Date.now() - started < 15_000, 'the retry did not wait for the lock until it was released');
      await holder.query('ROLLBACK');
      assert.equal(await gw.fire(), 0, 'still leased');
      gw.advance(31_000);
      assert.equal(await gw.fire(), 1, 'claimed again once the lease ran out');
      await assertFiredOnce(created.id);
    } finally {
      await holder.end();
    }
  });

  it('leaves a group that failed for another reason to its lease', async () => {
    const { created, transactions } = await fireWithFirstTransaction(async () => {
      throw Object.assign(new Error('relation "schedules" does not exist'), { code: '42P01' });
    });
    assert.equal(transactions, 1, 'not tried again');
    assert.equal(await gw.fire(), 0, 'still leased');
    gw.advance(31_000);
    assert.equal(await gw.fire(), 1, 'claimed again once the lease ran out');
    await assertFiredOnce(created.id);
  });
});
