import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { call, isErrorBody, startGateway, type TestGateway, type TestProtocol } from '../support/gateway.js';
import { registeredWallet } from '../support/wallets.js';
import { listStatements } from '../../packages/server/src/notifications/notification-reads.js';

describe('GET /v1/notifications and /v1/notifications/:id', () => {
  let gw: TestGateway;
  let acme: TestProtocol;
  let rival: TestProtocol;
  let w1: string;
  let w2: string;
  const ids: string[] = [];

  before(async () => {
    // API role only: nothing is delivered, so statuses stay as submitted.
    gw = await startGateway({ env: { HERALD_ROLE: 'api' } });
    acme = await gw.createProtocol({ tier: 3 });
    rival = await gw.createProtocol({ tier: 3 });
    w1 = await registeredWallet(gw.url, { email: 'one@example.com' });
    w2 = await registeredWallet(gw.url, { telegramChatId: '99' });
    for (let i = 0; i < 25; i++) {
      const res = await call(gw.url, acme.apiKey, 'POST', '/v1/notify', {
        wallet: i % 5 === 0 ? w2 : w1,
        subject: `s${i}`,
        body: 'b',
        category: 'system',
        receipt: i === 24,
      });
      ids.push(res.body.notificationId);
    }
    await call(gw.url, rival.apiKey, 'POST', '/v1/notify', { wallet: w1, subject: 'rival', body: 'b', category: 'system' });
  });
  after(() => gw.close());

  it('returns the status record in the contract shape', async () => {
    const res = await call(gw.url, acme.apiKey, 'GET', `/v1/notifications/${ids[1]}`);
    assert.equal(res.status, 200);
    const r = res.body;
    assert.equal(r.notification_id, ids[1]);
    assert.equal(r.wallet, w1);
    assert.equal(r.subject, 's1');
    assert.equal(r.status, 'queued');
    assert.equal(r.delivery_channel, 'email');
    assert.equal(r.delivered_at, null);
    assert.ok(!Number.isNaN(Date.parse(r.created_at)));
    assert.equal(r.write_receipt, false);
    assert.equal(r.receipt_status, 'disabled');
    assert.equal(r.receipt_tx, null);
    assert.equal(r.receipt_failure_reason, null);
    assert.equal(r.last_receipt_attempt_at, null);
    assert.deepEqual(r.attempts, []);
  });

  it('marks a requested receipt as pending', async () => {
    const res = await call(gw.url, acme.apiKey, 'GET', `/v1/notifications/${ids[24]}`);
    assert.equal(res.body.write_receipt, true);
    assert.equal(res.body.receipt_status, 'pending');
    assert.ok(res.body.receipt_requested_at);
  });

  it("answers 404 for unknown ids and for another protocol's ids", async () => {
    for (const [key, id] of [
      [rival.apiKey, ids[0]],
      [acme.apiKey, '01ARZ3NDEKTSV4RRFFQ69G5FAV'],
      [acme.apiKey, 'not-an-id'],
    ]) {
      const res = await call(gw.url, key, 'GET', `/v1/notifications/${id}`);
      assert.equal(res.status, 404);
      assert.ok(isErrorBody(res.body));
      assert.equal(res.body.code, 'NOTIFICATION_NOT_FOUND');
    }
  });

  it('answers an empty id as an unknown path (404 NOT_FOUND), as every other id route does', async () => {
    for (const path of ['/v1/notifications/', '/v1/notifications//receipt']) {
      const res = await call(gw.url, acme.apiKey, 'GET', path);
      assert.equal(res.status, 404, path);
      assert.ok(isErrorBody(res.body));
      assert.equal(res.body.code, 'NOT_FOUND');
      assert.equal(res.body.message, `Route GET ${path} not found`);
    }
  });

  it('lists newest first with default page 1 and limit 20', async () => {
    const res = await call(gw.url, acme.apiKey, 'GET', '/v1/notifications');
    assert.equal(res.status, 200);
    assert.equal(res.body.total, 25);
    assert.equal(res.body.page, 1);
    assert.equal(res.body.data.length, 20);
    assert.deepEqual(
      res.body.data.map((d: any) => d.notification_id),
      [...ids].reverse().slice(0, 20),
    );
    assert.deepEqual(Object.keys(res.body.data[0]).sort(), [
      'created_at',
      'delivery_channel',
      'notification_id',
      'receipt_status',
      'receipt_tx',
      'status',
      'subject',
      'wallet',
    ]);
    const page2 = await call(gw.url, acme.apiKey, 'GET', '/v1/notifications?page=2&limit=20');
    assert.equal(page2.body.data.length, 5);
    assert.equal(page2.body.page, 2);
  });

  it('filters by wallet and status', async () => {
    const byWallet = await call(gw.url, acme.apiKey, 'GET', `/v1/notifications?wallet=${w2}&limit=100`);
    assert.equal(byWallet.body.total, 5);
    assert.ok(byWallet.body.data.every((d: any) => d.wallet === w2));
    const byStatus = await call(gw.url, acme.apiKey, 'GET', '/v1/notifications?status=delivered');
    assert.equal(byStatus.body.total, 0);
  });

  it('finds a protocol\'s rows, and a wallet\'s, through their indexes', async () => {
    /** Indexes the statement's plan reads, with `before` run first in the same transaction, which is then undone. */
    const indexesRead = async (statement: { text: string; params: unknown[] }, before?: string) => {
      let names: string[] = [];
      await gw.herald.deps.db
        .transaction(async (tx) => {
          // Tables this small are cheaper to scan: only an index the statement cannot use stays unused.
          await tx.query('SET LOCAL enable_seqscan = off');
          if (before) await tx.query(before);
          const [row] = await tx.query<{ 'QUERY PLAN': unknown }>(`EXPLAIN (FORMAT JSON) ${statement.text}`, statement.params);
          names = [...JSON.stringify(row['QUERY PLAN']).matchAll(/"Index Name":"([^"]+)"/g)].map((m) => m[1]);
          throw new Error('undo');
        })
        .catch((error: Error) => assert.equal(error.message, 'undo'));
      return names;
    };
    const all = listStatements({ protocolId: acme.id, page: 1, limit: 20 });
    assert.deepEqual(await indexesRead(all.page), ['notifications_protocol_created']);
    assert.deepEqual(await indexesRead(all.count), ['notifications_protocol_created']);
    // Without the protocol's index, the wallet filter still finds its rows by index.
    const byWallet = listStatements({ protocolId: acme.id, page: 1, limit: 20, wallet: w2 });
    assert.deepEqual(await indexesRead(byWallet.page, 'DROP INDEX notifications_protocol_created'), ['notifications_wallet']);
  });

  it('never shows another protocol its rows', async () => {
    const res = await call(gw.url, rival.apiKey, 'GET', '/v1/notifications?limit=100');
    assert.equal(res.body.total, 1);
    assert.equal(res.body.data[0].subject, 'rival');
  });

  it('refuses bad pagination and filters', async () => {
    // numbers as a person writes them: hex, exponents and padding are not read as numbers
    for (const query of ['page=0', 'page=-1', 'limit=0', 'limit=101', 'limit=abc', 'page=1.5', 'status=lost', 'wallet=xyz', 'limit=0x10', 'limit=1e1', 'limit=%2010', 'page=']) {
      const res = await call(gw.url, acme.apiKey, 'GET', `/v1/notifications?${query}`);
      assert.equal(res.status, 400, query);
      assert.ok(isErrorBody(res.body));
      assert.equal(res.body.code, 'VALIDATION_ERROR');
      assert.match(res.body.message, new RegExp(`^${query.split('=')[0]} `), query);
    }
    assert.equal((await call(gw.url, acme.apiKey, 'GET', '/v1/notifications?limit=0x10')).body.message, 'limit must be an integer');
    assert.equal((await call(gw.url, acme.apiKey, 'GET', '/v1/notifications?limit=05&page=1')).body.data.length, 5, 'leading zeros are still decimal');
    for (const [query, message] of [
      ['limit=1&limit=2', 'limit must be given once, not 2 times'],
      ['status=queued&status=failed&status=sent', 'status must be given once, not 3 times'],
      ['page=1&page=1', 'page must be given once, not 2 times'],
    ]) {
      const res = await call(gw.url, acme.apiKey, 'GET', `/v1/notifications?${query}`);
      assert.deepEqual([res.status, res.body.code, res.body.message], [400, 'VALIDATION_ERROR', message], query);
    }
  });
});
