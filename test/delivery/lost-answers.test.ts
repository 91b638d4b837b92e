/**
 * The delivery worker commits a batch's outcomes again when the database's answer does not come
 * (see jobs/until-done.ts). A commit that went through although its answer was lost must not list
 * its attempts twice.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { Database, Queryable } from '../../packages/server/src/db/connection.js';
import { connectionLost } from '../support/database.js';
import { call, startGateway, type TestGateway, type TestProtocol } from '../support/gateway.js';
import { startSmtpServer, type TestSmtpServer } from '../support/smtp-server.js';
import { registeredWallet } from '../support/wallets.js';

describe('delivery outcomes when the database answer is lost', () => {
  let gw: TestGateway;
  let smtp: TestSmtpServer;
  let acme: TestProtocol;
  let db: Database;
  let realTransaction: Database['transaction'];

  before(async () => {
    smtp = await startSmtpServer();
    gw = await startGateway({
      env: { SMTP_URL: smtp.url, EMAIL_FROM: 'Herald <notify@herald.test>', HERALD_WORKER_POLL_MS: '50', HERALD_DELIVERY_RETRY_BASE_MS: '100' },
    });
    acme = await gw.createProtocol({ tier: 3 });
    db = gw.herald.deps.db;
    realTransaction = db.transaction;
  });
  after(async () => {
    db.transaction = realTransaction;
    await gw.close();
    await smtp.close();
  });

  /**
   * Makes the next transaction that records delivery attempts commit, then lose its answer.
   * `retried` settles once the worker's next try of it has committed.
   */
  function loseOneCommitAnswer(): { retried: Promise<void> } {
    let lost = false;
    let retried!: () => void;
    const done = new Promise<void>((resolve) => (retried = resolve));
    db.transaction = async <T>(fn: (tx: Queryable) => Promise<T>): Promise<T> => {
      let recordsAttempts = false;
      const result = await realTransaction.call(db, (tx: Queryable) =>
        fn({
          query: (sql, params) => {
            if (sql.includes('INSERT INTO delivery_attempts')) recordsAttempts = true;
            return tx.query(sql, params);
          },
        }),
      );
      if (recordsAttempts && lost) {
        db.transaction = realTransaction;
        retried();
      }
      if (recordsAttempts && !lost) {
        lost = true;
        throw connectionLost();
      }
      return result;
    };
    return { retried: done };
  }

  for (const [outcome, status, answer] of [
    ['delivered', 'delivered', undefined],
    ['bounced', 'bounced', 550],
  ] as const) {
    it(`lists one attempt for one ${outcome} message when its commit lost its answer`, async () => {
      const email = `${outcome}@example.com`;
      const wallet = await registeredWallet(gw.url, { email });
      if (answer) smtp.script(email, { code: answer });
      const fault = loseOneCommitAnswer();
      const sent = await call(gw.url, acme.apiKey, 'POST', '/v1/notify', { wallet, subject: 'Heads up', body: 'Once', category: 'defi' });
      assert.equal(sent.status, 202, JSON.stringify(sent.body));
      await fault.retried;
      const record = (await call(gw.url, acme.apiKey, 'GET', `/v1/notifications/${sent.body.notificationId}`)).body;
      assert.equal(record.status, status);
      assert.equal(smtp.received.filter((m) => m.to.includes(email)).length, answer ? 0 : 1);
      assert.equal(record.attempts.length, 1, JSON.stringify(record.attempts));
      const events = await db.query<{ type: string }>("SELECT type FROM events WHERE data->>'notification_id' = $1", [sent.body.notificationId]);
      assert.deepEqual(events.map((e) => e.type), [`notification.${outcome}`], 'one event');
    });
  }
});
