import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { after, before, describe, it } from 'node:test';
import { promisify } from 'node:util';
import { verifyReceipt, type Receipt } from '../../packages/sdk/src/receipts.js';
import { verifyWebhookSignature } from '../../packages/sdk/src/webhooks.js';
import { call, isErrorBody, startGateway, waitFor, type TestGateway, type TestProtocol } from '../support/gateway.js';
import { startSmtpServer, type TestSmtpServer } from '../support/smtp-server.js';
import { registeredWallet } from '../support/wallets.js';
import { startReceiver, type Receiver } from '../webhooks/receiver.js';

const run = promisify(execFile);
/** The SDK's receipts module as a package user loads it: the build. */
const SDK_RECEIPTS = new URL('../../packages/sdk/dist/receipts.js', import.meta.url).href;

// Proofs run in a child process on a shared CI machine: allow for a slow one.
const PROOF_WAIT_MS = 90_000;

describe('receipt lifecycle on the embedded litesvm chain', () => {
  let gw: TestGateway;
  let smtp: TestSmtpServer;
  let receiver: Receiver;
  let hookSecret: string;
  let acme: TestProtocol;
  let rival: TestProtocol;
  let wallet: string;
  let n = 0;

  before(async () => {
    [smtp, receiver] = await Promise.all([startSmtpServer(), startReceiver()]);
    gw = await startGateway({
      env: {
        SMTP_URL: smtp.url,
        HERALD_WORKER_POLL_MS: '50',
        HERALD_DELIVERY_RETRY_BASE_MS: '20',
        HERALD_DELIVERY_MAX_ATTEMPTS: '2',
        HERALD_RECEIPT_BATCH_SIZE: '2',
        HERALD_ALLOW_PRIVATE_WEBHOOKS: 'true',
        HERALD_RECEIPT_BATCH_MS: '200',
      },
    });
    [acme, rival] = await Promise.all([gw.createProtocol({ name: 'Acme' }), gw.createProtocol({ name: 'Rival' })]);
    wallet = await registeredWallet(gw.url, { telegramChatId: '918273645' });
    const hook = await call(gw.url, acme.apiKey, 'POST', '/v1/webhooks', { url: receiver.url, events: ['receipt.confirmed'] });
    assert.equal(hook.status, 201, JSON.stringify(hook.body));
    hookSecret = hook.body.secret;
  });
  after(async () => {
    await gw.close();
    await Promise.all([smtp.close(), receiver.close()]);
  });

  const send = async (body: Record<string, unknown>, key = acme.apiKey) => {
    const res = await call(gw.url, key, 'POST', '/v1/notify', { wallet, subject: 'Vault unlocked', body: 'Your **vault** is open.', category: 'defi', ...body });
    assert.equal(res.status, 202, JSON.stringify(res.body));
    return res.body.notificationId as string;
  };
  const record = async (id: string, key = acme.apiKey) => (await call(gw.url, key, 'GET', `/v1/notifications/${id}`)).body;
  const receiptSettled = (id: string, key = acme.apiKey) =>
    waitFor(async () => {
      const body = await record(id, key);
      return body.receipt_status === 'confirmed' || body.receipt_status === 'failed' ? body : undefined;
    }, PROOF_WAIT_MS, 100);
  const receiptEvents = (id: string) =>
    gw.herald.deps.db.query<{ data: any; created_at: Date }>(`SELECT data, created_at FROM events WHERE type = 'receipt.confirmed' AND data->>'notification_id' = $1`, [id]);

  it('confirms requested receipts in one batch: one memo, one root, a proof each, one event each', async () => {
    // One bulk request: both are delivered in one commit, so they meet in one batch.
    const res = await call(gw.url, acme.apiKey, 'POST', '/v1/notify/bulk', {
      notifications: [
        { wallet, subject: 'Vault unlocked', body: 'Your **vault** is open.', category: 'defi', receipt: true },
        { wallet, subject: 'Second', body: 'Again.', category: 'defi', receipt: true },
      ],
    });
    const [first, second] = res.body.results.map((r: { notificationId: string }) => r.notificationId);
    const pending = await record(first);
    assert.equal(pending.write_receipt, true);
    assert.equal(pending.receipt_status, 'pending');
    assert.ok(pending.receipt_requested_at);
    assert.equal(pending.receipt_tx, null);

    const [a, b] = [await receiptSettled(first), await receiptSettled(second)];
    for (const r of [a, b]) {
      assert.equal(r.status, 'delivered');
      assert.equal(r.receipt_status, 'confirmed', r.receipt_failure_reason);
      assert.match(r.receipt_tx, /^[1-9A-HJ-NP-Za-km-z]{64,88}$/);
      assert.equal(r.receipt_failure_reason, null);
      assert.ok(Date.parse(r.last_receipt_attempt_at) >= Date.parse(r.delivered_at));
    }
    assert.equal(a.receipt_tx, b.receipt_tx, 'a batch is written in one transaction');

    const [event] = await receiptEvents(first);
    assert.deepEqual(Object.keys(event.data).sort(), ['channel', 'confirmed_at', 'delivered_at', 'environment', 'notification_id', 'receipt_tx', 'wallet']);
    assert.equal(event.data.environment, 'production');
    assert.equal(event.data.receipt_tx, a.receipt_tx);
    assert.equal(event.data.wallet, wallet);
    assert.equal(event.data.channel, 'telegram');
    assert.equal(event.data.delivered_at, a.delivered_at);
    assert.ok(Date.parse(event.data.confirmed_at) >= Date.parse(a.delivered_at));
    assert.equal((await receiptEvents(second)).length, 1);
    const delivered = await receiver.waitForRequests(2, 15_000);
    const bodies = delivered.map((r) => JSON.parse(r.body));
    assert.deepEqual(bodies.map((b) => b.type), ['receipt.confirmed', 'receipt.confirmed']);
    assert.deepEqual(bodies.map((b) => b.data.notification_id).sort(), [first, second].sort());
    for (const r of delivered) assert.ok(verifyWebhookSignature(r.body, r.headers['x-service-signature'] as string, hookSecret));

    const list = await call(gw.url, acme.apiKey, 'GET', '/v1/notifications?limit=5');
    const item = list.body.data.find((i: any) => i.notification_id === first);
    assert.equal(item.receipt_status, 'confirmed');
    assert.equal(item.receipt_tx, a.receipt_tx);

    const receipts = await Promise.all([first, second].map(async (id) => (await call(gw.url, acme.apiKey, 'GET', `/v1/notifications/${id}/receipt`)).body as Receipt));
    assert.equal(receipts[0].root, receipts[1].root);
    assert.deepEqual(receipts.map((r) => r.leafIndex).sort(), [0, 1]);
    for (const receipt of receipts) {
      assert.equal(receipt.tx, a.receipt_tx);
      assert.equal(receipt.cluster, 'litesvm');
      assert.equal(receipt.confirmedAt, event.data.confirmed_at, "the event's confirmed_at is the receipt's confirmedAt");
      assert.equal(receipt.status, 'confirmed');
      assert.equal(receipt.memo, `herald:receipt:v1:${receipt.batchId}:${receipt.root}`);
      assert.equal(receipt.merklePath.length, 10);
      const result = await verifyReceipt(receipt);
      assert.deepEqual(result, { valid: true, checks: { proof: true, publicSignals: true, merklePath: true, onChain: null, signer: null }, errors: [] });
      assert.equal(receipt.publicSignals.length, 5);
      assert.equal(BigInt(receipt.publicSignals[0]), BigInt(receipt.commitment), 'the proof is about this leaf');
    }
    // Receipts verified side by side, as a script would with Promise.all: the process still ends
    // by itself once they are done (each used to start a pool of threads, and one was ended).
    const script = `import { verifyReceipt } from ${JSON.stringify(SDK_RECEIPTS)};
      const receipts = JSON.parse(process.env.RECEIPTS);
      const results = await Promise.all([...receipts, ...receipts].map((r) => verifyReceipt(r)));
      console.log(JSON.stringify(results.map((r) => r.valid)));`;
    const verified = await run(process.execPath, ['--input-type=module', '-e', script], { env: { ...process.env, RECEIPTS: JSON.stringify(receipts) }, timeout: 120_000 });
    assert.equal(verified.stdout.trim(), '[true,true,true,true]');
    // The other leaf of the batch, with its own path to the same root, is not this notification's.
    const swapped = { ...receipts[0], commitment: receipts[1].commitment, leafIndex: receipts[1].leafIndex, merklePath: receipts[1].merklePath };
    const refused = await verifyReceipt(swapped);
    assert.deepEqual([refused.valid, refused.checks.merklePath, refused.checks.publicSignals, refused.checks.proof], [false, true, false, true]);
    // The receipt hides what the leaf commits to besides the id and the wallet.
    const text = JSON.stringify(receipts[0]);
    for (const hidden of ['telegram', 'Vault unlocked', '918273645', a.delivered_at, String(Date.parse(a.delivered_at))]) assert.ok(!text.includes(hidden), hidden);
  });

  it('finishes a batch begun with another verification key with its own, each receipt answering with the key that proved it', async () => {
    const res = await call(gw.url, acme.apiKey, 'POST', '/v1/notify/bulk', {
      notifications: [
        { wallet, subject: 'Before the deploy', body: 'One.', category: 'defi', receipt: true },
        { wallet, subject: 'After the deploy', body: 'Two.', category: 'defi', receipt: true },
      ],
    });
    const [first, second] = res.body.results.map((r: { notificationId: string }) => r.notificationId);
    await Promise.all([receiptSettled(first), receiptSettled(second)]);
    const db = gw.herald.deps.db;
    const [{ batch_id: batchId, verification_key_id: ours }] = await db.query<{ batch_id: string; verification_key_id: string }>(
      'SELECT batch_id, verification_key_id FROM receipts WHERE notification_id = $1',
      [first],
    );
    // As a worker with an older key would have left it: the first proven with that key, the second not yet.
    const older = { ...(await db.query<{ verification_key: Record<string, unknown> }>('SELECT verification_key FROM receipt_verification_keys WHERE id = $1', [ours]))[0].verification_key, note: 'older key' };
    await db.query('INSERT INTO receipt_verification_keys (id, verification_key) VALUES ($1, $2)', ['older-key', JSON.stringify(older)]);
    await db.query(`UPDATE receipts SET verification_key_id = 'older-key' WHERE notification_id = $1`, [first]);
    await db.query('UPDATE receipts SET proof = NULL, public_signals = NULL, verification_key_id = NULL WHERE notification_id = $1', [second]);
    await db.query(`UPDATE notifications SET receipt_status = 'pending', receipt_tx = NULL WHERE id = $1`, [second]);
    await db.query(`UPDATE receipt_batches SET verification_key_id = 'older-key', next_attempt_at = now() WHERE id = $1`, [batchId]);

    assert.equal((await receiptSettled(second)).receipt_status, 'confirmed', 'the rest of the batch is proven with the key this worker holds');
    const [a, b] = await Promise.all([first, second].map(async (id) => (await call(gw.url, acme.apiKey, 'GET', `/v1/notifications/${id}/receipt`)).body as Receipt));
    assert.equal(a.verificationKey.note, 'older key', 'a receipt answers with the key that proved it');
    assert.equal(b.verificationKey.note, undefined);
    assert.equal((await verifyReceipt(b)).valid, true);
    const keys = await db.query<{ notification_id: string; verification_key_id: string }>('SELECT notification_id, verification_key_id FROM receipts WHERE batch_id = $1 ORDER BY leaf_index', [batchId]);
    assert.deepEqual(new Map(keys.map((k) => [k.notification_id, k.verification_key_id])), new Map([[first, 'older-key'], [second, ours]]));
  });

  it('never writes a receipt that was not requested', async () => {
    const id = await send({});
    const r = await waitFor(async () => ((await record(id)).status === 'delivered' ? record(id) : undefined));
    assert.equal(r.write_receipt, false);
    assert.equal(r.receipt_status, 'disabled');
    const res = await call(gw.url, acme.apiKey, 'GET', `/v1/notifications/${id}/receipt`);
    assert.equal(res.status, 404);
    assert.ok(isErrorBody(res.body));
    assert.equal(res.body.code, 'RECEIPT_NOT_FOUND');
    const rows = await gw.herald.deps.db.query('SELECT 1 FROM receipts WHERE notification_id = $1', [id]);
    assert.equal(rows.length, 0);
  });

  it('fails the receipt of a message that bounced or failed, and never commits to it', async () => {
    n++;
    const bouncing = await registeredWallet(gw.url, { email: `bounce${n}@example.com` });
    const failing = await registeredWallet(gw.url, { email: `busy${n}@example.com` });
    smtp.script(`bounce${n}@example.com`, { code: 550, message: 'No such user' });
    // A connection dropped at RCPT says nothing of the recipient: retried, then failed.
    smtp.script(`busy${n}@example.com`, { drop: true }, 10);
    const bounced = await send({ wallet: bouncing, receipt: true });
    const failed = await send({ wallet: failing, receipt: true });
    for (const [id, status] of [[bounced, 'bounced'], [failed, 'failed']] as const) {
      const r = await receiptSettled(id);
      assert.equal(r.status, status);
      assert.equal(r.receipt_status, 'failed');
      assert.equal(r.receipt_failure_reason, `notification was not delivered (${status})`);
      assert.equal(r.receipt_tx, null);
      assert.equal(r.last_receipt_attempt_at, null);
      assert.equal((await gw.herald.deps.db.query('SELECT 1 FROM receipts WHERE notification_id = $1', [id])).length, 0);
      const res = await call(gw.url, acme.apiKey, 'GET', `/v1/notifications/${id}/receipt`);
      assert.equal(res.body.code, 'RECEIPT_NOT_FOUND');
      assert.match(res.body.message, /not delivered/);
    }
  });

  it('fails at once a receipt whose notification is never queued', async () => {
    const stranger = 'So11111111111111111111111111111111111111112';
    const res = await call(gw.url, acme.apiKey, 'POST', '/v1/notify/bulk', {
      notifications: [{ wallet: stranger, subject: 's', body: 'b', category: 'system', receipt: true }],
    });
    assert.equal(res.body.results[0].status, 'failed');
    const r = await record(res.body.results[0].notificationId);
    assert.equal(r.receipt_status, 'failed');
    assert.equal(r.receipt_failure_reason, 'notification was not delivered (failed)');
  });

  it('batches sandbox receipts apart from production ones', async () => {
    const live = await send({ receipt: true, subject: 'live' });
    const test = await send({ receipt: true, subject: 'test' }, acme.sandboxApiKey);
    const [l, t] = [await receiptSettled(live), await receiptSettled(test, acme.sandboxApiKey)];
    assert.equal(l.receipt_status, 'confirmed');
    assert.equal(t.receipt_status, 'confirmed');
    assert.notEqual(l.receipt_tx, t.receipt_tx);
    const batches = await gw.herald.deps.db.query<{ environment: string; leaf_count: number }>(
      `SELECT b.environment, b.leaf_count FROM receipt_batches b JOIN receipts r ON r.batch_id = b.id WHERE r.notification_id = ANY($1::text[]) ORDER BY b.environment`,
      [[live, test]],
    );
    assert.deepEqual(batches, [
      { environment: 'production', leaf_count: 1 },
      { environment: 'sandbox', leaf_count: 1 },
    ]);
  });

  it("answers 404 for an unknown id and for another protocol's notification", async () => {
    const id = await send({ subject: 'private' });
    const theirs = await call(gw.url, rival.apiKey, 'GET', `/v1/notifications/${id}/receipt`);
    const unknown = await call(gw.url, acme.apiKey, 'GET', '/v1/notifications/01ARZ3NDEKTSV4RRFFQ69G5FAV/receipt');
    for (const res of [theirs, unknown]) {
      assert.equal(res.status, 404);
      assert.ok(isErrorBody(res.body));
      assert.equal(res.body.code, 'NOTIFICATION_NOT_FOUND');
    }
    const noKey = await call(gw.url, undefined, 'GET', `/v1/notifications/${id}/receipt`);
    assert.equal(noKey.status, 401);
  });
});
