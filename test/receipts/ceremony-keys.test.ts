import assert from 'node:assert/strict';
import { copyFileSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { before, describe, it } from 'node:test';
import pino from 'pino';
import { verifyReceipt } from '../../packages/sdk/src/receipts.js';
import { call, startGateway, sleep, waitFor, type TestGateway } from '../support/gateway.js';
import { logLines } from '../support/log-lines.js';
import { registeredWallet } from '../support/wallets.js';

const BUILD = fileURLToPath(new URL('../../packages/server/circuits/build/', import.meta.url));

/** A gateway whose log lines are kept. */
async function gatewayWithKeys(zkey: string, vkey: string, batchMs = 100): Promise<{ gw: TestGateway; lines: string[] }> {
  const log = logLines();
  const gw = await startGateway({
    logger: pino({ level: 'warn' }, log.stream),
    env: { HERALD_RECEIPT_ZKEY: zkey, HERALD_RECEIPT_VKEY: vkey, HERALD_WORKER_POLL_MS: '50', HERALD_RECEIPT_BATCH_MS: String(batchMs) },
  });
  return { gw, lines: log.lines };
}

describe("receipt keys from configuration (a ceremony's output)", () => {
  let dir: string;
  before(() => {
    dir = mkdtempSync(path.join(tmpdir(), 'herald-ceremony-'));
  });

  const sendWithReceipt = async (gw: TestGateway) => {
    const protocol = await gw.createProtocol();
    const wallet = await registeredWallet(gw.url, { telegramChatId: '31337' });
    const res = await call(gw.url, protocol.apiKey, 'POST', '/v1/notify', { wallet, subject: 'S', body: 'B', category: 'system', receipt: true });
    return { protocol, id: res.body.notificationId as string };
  };

  it('uses configured keys, answers receipts with that key, and fails a receipt whose stored values no longer match its leaf', async () => {
    copyFileSync(path.join(BUILD, 'receipt.zkey'), path.join(dir, 'ceremony.zkey'));
    copyFileSync(path.join(BUILD, 'verification_key.json'), path.join(dir, 'ceremony_vkey.json'));
    const { gw } = await gatewayWithKeys(path.join(dir, 'ceremony.zkey'), path.join(dir, 'ceremony_vkey.json'), 2000);
    try {
      const { protocol, id } = await sendWithReceipt(gw);
      const receipt = await waitFor(async () => {
        const res = await call(gw.url, protocol.apiKey, 'GET', `/v1/notifications/${id}/receipt`);
        return res.status === 200 ? res.body : undefined;
      }, 90_000, 100);
      assert.deepEqual(receipt.verificationKey, JSON.parse(readFileSync(path.join(dir, 'ceremony_vkey.json'), 'utf8')));
      assert.equal((await verifyReceipt(receipt)).valid, true);

      // Altered between commitment and proof (the batch waits 2 s): the circuit cannot be satisfied.
      const altered = await sendWithReceipt(gw);
      await waitFor(async () => (await gw.herald.deps.db.query('SELECT 1 FROM receipts WHERE notification_id = $1', [altered.id])).length > 0, 30_000, 20);
      const changed = await gw.herald.deps.db.query(`UPDATE receipts SET salt = '0x01' WHERE notification_id = $1 AND batch_id IS NULL RETURNING 1`, [altered.id]);
      assert.equal(changed.length, 1, 'altered before its batch closed');
      const failed = await waitFor(async () => {
        const body = (await call(gw.url, altered.protocol.apiKey, 'GET', `/v1/notifications/${altered.id}`)).body;
        return body.receipt_status !== 'pending' ? body : undefined;
      }, 90_000, 100);
      assert.equal(failed.receipt_status, 'failed');
      assert.match(failed.receipt_failure_reason, /^proof generation failed: /);
      assert.ok(failed.last_receipt_attempt_at, 'the memo was written before proving');
    } finally {
      await gw.close();
    }
  });

  it('refuses to move any receipt when the verification key does not belong to the proving key', async () => {
    const vkey = JSON.parse(readFileSync(path.join(BUILD, 'verification_key.json'), 'utf8'));
    vkey.vk_delta_2 = vkey.vk_gamma_2;
    writeFileSync(path.join(dir, 'other_vkey.json'), JSON.stringify(vkey));
    const { gw, lines } = await gatewayWithKeys(path.join(BUILD, 'receipt.zkey'), path.join(dir, 'other_vkey.json'));
    try {
      const { protocol, id } = await sendWithReceipt(gw);
      await waitFor(async () => lines.some((line) => line.includes('does not belong to the proving key')), 60_000, 100);
      await sleep(300);
      const record = (await call(gw.url, protocol.apiKey, 'GET', `/v1/notifications/${id}`)).body;
      assert.equal(record.status, 'delivered');
      assert.equal(record.receipt_status, 'pending');
      assert.equal((await gw.herald.deps.db.query('SELECT 1 FROM receipts')).length, 0);
      assert.equal((await gw.herald.deps.db.query('SELECT 1 FROM receipt_batches')).length, 0);
    } finally {
      await gw.close();
    }
  });
});
