import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { call, isErrorBody, startGateway, type TestGateway, type TestProtocol } from '../support/gateway.js';
import { makeWallet, registeredWallet } from '../support/wallets.js';

describe('POST /v1/notify/bulk', () => {
  let gw: TestGateway;
  let acme: TestProtocol;
  let wallet: string;

  before(async () => {
    gw = await startGateway();
    acme = await gw.createProtocol({ tier: 3 });
    wallet = await registeredWallet(gw.url, { email: 'bulk@example.com', telegramChatId: '77' });
  });
  after(() => gw.close());

  const item = (overrides: Record<string, unknown> = {}) => ({ wallet, subject: 'Vote', body: 'Proposal 12 is open', category: 'governance', ...overrides });
  const bulk = (notifications: unknown, key = acme.apiKey) => call(gw.url, key, 'POST', '/v1/notify/bulk', { notifications });

  it('answers one result per item, in input order, without environment', async () => {
    const optedOut = await registeredWallet(gw.url, { email: 'out@example.com' });
    await call(gw.url, acme.apiKey, 'DELETE', `/v1/subscriptions/${optedOut}`);
    const stranger = makeWallet().address;
    const res = await bulk([
      item(),
      item({ wallet: stranger }),
      item({ wallet: optedOut }),
      item({ preferredChannel: 'email' }),
    ]);
    assert.equal(res.status, 202);
    assert.equal(res.body.results.length, 4);
    const [a, b, c, d] = res.body.results;
    assert.deepEqual(Object.keys(a).sort(), ['deliveryChannel', 'estimatedDeliveryMs', 'notificationId', 'recipientRegistered', 'status']);
    assert.equal(a.status, 'queued');
    assert.equal(a.deliveryChannel, 'telegram');
    assert.deepEqual([b.status, b.recipientRegistered, b.deliveryChannel, b.estimatedDeliveryMs], ['failed', false, null, null]);
    assert.deepEqual([c.status, c.recipientRegistered, c.deliveryChannel, c.estimatedDeliveryMs], ['opted_out', true, null, null]);
    assert.equal(d.deliveryChannel, 'email');
    assert.equal(new Set(res.body.results.map((r: any) => r.notificationId)).size, 4);
    // every item is stored, including the failed and opted-out ones, and bills only the queued ones
    for (const r of res.body.results) {
      const rec = await call(gw.url, acme.apiKey, 'GET', `/v1/notifications/${r.notificationId}`);
      assert.equal(rec.status, 200);
    }
  });

  it('refuses 0 and 101 items', async () => {
    const none = await bulk([]);
    assert.equal(none.status, 400);
    assert.equal(none.body.code, 'VALIDATION_ERROR');
    assert.match(none.body.message, /^notifications must hold at least 1 item$/);
    const tooMany = await bulk(Array.from({ length: 101 }, () => item()));
    assert.equal(tooMany.status, 400);
    assert.match(tooMany.body.message, /^notifications must hold at most 100 items$/);
    const missing = await call(gw.url, acme.apiKey, 'POST', '/v1/notify/bulk', {});
    assert.equal(missing.status, 400);
    assert.match(missing.body.message, /^notifications is required$/);
  });

  it('fails the whole request when one item is invalid, naming it', async () => {
    const p = await gw.createProtocol({ tier: 3 });
    const res = await bulk([item(), item(), item(), item({ category: 'nope' })], p.apiKey);
    assert.equal(res.status, 400);
    assert.ok(isErrorBody(res.body));
    assert.match(res.body.message, /^notifications\[3\]\.category must be one of/);
    const missing = await bulk([item(), { ...item(), wallet: undefined }], p.apiKey);
    assert.match(missing.body.message, /^notifications\[1\]\.wallet is required$/);
    const blank = await bulk([item(), item(), item({ body: ' \n ' })], p.apiKey);
    assert.equal(blank.status, 400);
    assert.equal(blank.body.message, 'notifications[2].body is blank: it must hold something to show, not only spaces, control or zero-width characters');
    const rows = await gw.herald.deps.db.query('SELECT 1 FROM notifications WHERE protocol_id = $1', [p.id]);
    assert.equal(rows.length, 0);
  });

  it('accepts 100 items', async () => {
    const res = await bulk(Array.from({ length: 100 }, (_, i) => item({ subject: `n${i}` })));
    assert.equal(res.status, 202);
    assert.equal(res.body.results.length, 100);
    assert.ok(res.body.results.every((r: any) => r.status === 'queued'));
  });

  it('is all-or-nothing on quota', async () => {
    const p = await gw.createProtocol({ tier: 0 });
    await gw.herald.deps.db.query(
      `INSERT INTO usage_periods (protocol_id, period_start, sends) VALUES ($1, date_trunc('month', now() AT TIME ZONE 'UTC')::date, 998)`,
      [p.id],
    );
    const res = await bulk([item(), item(), item()], p.apiKey);
    assert.equal(res.status, 402);
    assert.equal(res.body.code, 'INSUFFICIENT_QUOTA');
    assert.equal(res.body.message, 'This request needs 3 sends and fewer are left of the monthly quota of 1000');
    const rows = await gw.herald.deps.db.query('SELECT 1 FROM notifications WHERE protocol_id = $1', [p.id]);
    assert.equal(rows.length, 0);
    const ok = await bulk([item(), item()], p.apiKey);
    assert.equal(ok.status, 202);
  });

  it('handles idempotency keys per item, within and across requests', async () => {
    const p = await gw.createProtocol({ tier: 3 });
    const first = await bulk([item({ idempotencyKey: 'a' }), item({ idempotencyKey: 'a' }), item({ idempotencyKey: 'b' })], p.apiKey);
    assert.equal(first.status, 202);
    const [a1, a2, b1] = first.body.results;
    assert.equal(a1.status, 'queued');
    assert.equal(a2.status, 'duplicate');
    assert.equal(a2.notificationId, a1.notificationId);
    assert.equal(b1.status, 'queued');
    const again = await bulk([item({ idempotencyKey: 'b' }), item({ idempotencyKey: 'c' })], p.apiKey);
    assert.deepEqual(
      again.body.results.map((r: any) => r.status),
      ['duplicate', 'queued'],
    );
    assert.equal(again.body.results[0].notificationId, b1.notificationId);
    const conflict = await bulk([item({ idempotencyKey: 'd' }), item({ idempotencyKey: 'a', subject: 'different' })], p.apiKey);
    assert.equal(conflict.status, 409);
    assert.equal(conflict.body.code, 'DUPLICATE_IDEMPOTENCY_KEY');
    assert.match(conflict.body.message, /notifications\[1\]\.idempotencyKey/);
    // the same key twice in one request with different payloads: the message names the earlier
    // item, not the id its row had before the request was undone
    const within = await bulk([item({ idempotencyKey: 'e' }), item({ idempotencyKey: 'e', subject: 'different' })], p.apiKey);
    assert.equal(within.status, 409);
    assert.equal(within.body.code, 'DUPLICATE_IDEMPOTENCY_KEY');
    assert.equal(within.body.message, 'notifications[1].idempotencyKey "e" repeats notifications[0].idempotencyKey with a different payload');
    assert.equal((await bulk([item({ idempotencyKey: 'e' })], p.apiKey)).body.results[0].status, 'queued');
    // the conflicting request left nothing behind (its key "d" is still free)
    const d = await bulk([item({ idempotencyKey: 'd' })], p.apiKey);
    assert.equal(d.body.results[0].status, 'queued');
  });
});
