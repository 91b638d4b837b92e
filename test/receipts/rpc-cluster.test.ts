import assert from 'node:assert/strict';
import { generateKeyPairSync } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import bs58 from 'bs58';
import { verifyReceipt, type Receipt, type ReceiptVerification } from '../../packages/sdk/src/receipts.js';
import { loadConfig } from '../../packages/server/src/config.js';
import { createLogger } from '../../packages/server/src/runtime.js';
import { call, freshSchema, onPostgres, startGateway, testEnv, waitFor, type TestGateway, type TestProtocol } from '../support/gateway.js';
import { logLines } from '../support/log-lines.js';
import { registeredWallet } from '../support/wallets.js';
import { RpcChain } from '../../packages/server/src/receipts/rpc-chain.js';
import { startSolanaRpc, type SolanaRpc } from './solana-rpc.js';

const PROOF_WAIT_MS = 90_000;

/** A Solana CLI key pair (seed then public key) and its address. */
function keypair(): { json: string; address: string } {
  const { privateKey, publicKey } = generateKeyPairSync('ed25519');
  const pub = Buffer.from(publicKey.export({ format: 'jwk' }).x!, 'base64url');
  const seed = Buffer.from(privateKey.export({ format: 'jwk' }).d!, 'base64url');
  return { json: JSON.stringify([...seed, ...pub]), address: bs58.encode(pub) };
}

function clusterEnv(rpc: SolanaRpc, key: string): Record<string, string> {
  return {
    SOLANA_RPC_URL: rpc.url,
    HERALD_RECEIPT_KEYPAIR: key,
    HERALD_SOLANA_CLUSTER: 'localnet',
    HERALD_WORKER_POLL_MS: '50',
    HERALD_RECEIPT_BATCH_MS: '100',
    HERALD_RECEIPT_MAX_ATTEMPTS: '3',
    HERALD_RECEIPT_RETRY_BASE_MS: '50',
    HERALD_RECEIPT_CONFIRM_TIMEOUT_MS: '5000',
  };
}

describe('receipts on a Solana cluster through JSON-RPC (@solana/kit)', () => {
  let rpc: SolanaRpc;
  let gw: TestGateway;
  let acme: TestProtocol;
  let wallet: string;
  const signer = keypair();

  before(async () => {
    rpc = await startSolanaRpc();
    rpc.airdrop(signer.address, 2);
    gw = await startGateway({ env: clusterEnv(rpc, signer.json) });
    acme = await gw.createProtocol({ name: 'Acme' });
    wallet = await registeredWallet(gw.url, { telegramChatId: '5150' });
  });
  after(async () => {
    await gw?.close();
    await rpc?.close();
  });

  const send = async (gateway: TestGateway, key: string, body: Record<string, unknown> = {}) => {
    const res = await call(gateway.url, key, 'POST', '/v1/notify', { wallet: gateway === gw ? wallet : await registeredWallet(gateway.url, { telegramChatId: '6' }), subject: 'Claim ready', body: 'Claim it.', category: 'defi', receipt: true, ...body });
    assert.equal(res.status, 202, JSON.stringify(res.body));
    return res.body.notificationId as string;
  };
  const settled = (gateway: TestGateway, key: string, id: string) =>
    waitFor(async () => {
      const body = (await call(gateway.url, key, 'GET', `/v1/notifications/${id}`)).body;
      return body.receipt_status === 'confirmed' || body.receipt_status === 'failed' ? body : undefined;
    }, PROOF_WAIT_MS, 100);

  let receipt: Receipt;

  it('writes the root in a real transaction, retrying a node that refuses it', async () => {
    const before = Number(rpc.svm.getBalance(signer.address as any));
    rpc.failSends(2);
    const id = await send(gw, acme.apiKey);
    const record = await settled(gw, acme.apiKey, id);
    assert.equal(record.receipt_status, 'confirmed', record.receipt_failure_reason);
    assert.ok(record.last_receipt_attempt_at);
    const [batch] = await gw.herald.deps.db.query(
      'SELECT b.attempts, b.status, b.cluster, b.signer FROM receipt_batches b JOIN receipts r ON r.batch_id = b.id WHERE r.notification_id = $1',
      [id],
    );
    assert.deepEqual(batch, { attempts: 3, status: 'confirmed', cluster: 'localnet', signer: signer.address });
    assert.equal(rpc.calls.filter((m) => m === 'sendTransaction').length, 3);
    assert.ok(Number(rpc.svm.getBalance(signer.address as any)) < before, 'the gateway key paid the fee');

    const res = await call(gw.url, acme.apiKey, 'GET', `/v1/notifications/${id}/receipt`);
    assert.equal(res.status, 200);
    receipt = res.body;
    assert.equal(receipt.tx, record.receipt_tx);
    assert.equal(receipt.cluster, 'localnet');
    assert.equal(receipt.signer, signer.address);
  });

  it("names a node's own JSON-RPC error, also one @solana/kit has no description for", async () => {
    const chain = new RpcChain({ url: rpc.url, secretKey: Uint8Array.from(JSON.parse(signer.json)), cluster: 'localnet', confirmTimeoutMs: 5000 });
    // -32005 without `data` is one kit describes by a template it cannot fill ("behind by
    // $numSlotsBehind slots"), or under NODE_ENV=production by its code alone.
    // A refusal before forwarding (-32002 preflight, here without the `data` kit reads, and
    // -32005) clears the recorded transaction: it cannot land, so the next attempt sends anew.
    for (const [code, message, refused] of [
      [-32000, 'Server is busy', false],
      [-32429, 'Too many requests for a specific RPC call', false],
      [-32005, 'Node is behind by 42 slots', true],
      [-32002, 'Transaction simulation failed: Blockhash not found', true],
    ] as const) {
      rpc.failSends(1, { code, message });
      const recorded: unknown[] = [];
      await assert.rejects(chain.writeMemo(`herald test ${code}`, { record: async (sent) => void recorded.push(sent) }), {
        message: `the node answered JSON-RPC error ${code}: ${message}`,
      });
      assert.equal(recorded.at(-1) === null, refused, `${code}: recorded ${recorded.map((r) => (r === null ? 'null' : 'a transaction')).join(", ")}`);
    }
  });

  it('names an answer that is not from a Solana node, instead of a parser or property error', async () => {
    for (const [type, body, message] of [
      ['text/html', '<html>502 Bad Gateway</html>', /^the node's answer is not JSON \(/],
      ['application/json', '{"hello":"world"}', /^the node's answer is not a JSON-RPC response: \{"hello":"world"\}$/],
      ['application/json', '{"jsonrpc":"2.0","id":1,"result":{}}', /^the node answered getLatestBlockhash without a blockhash: \{\}$/],
    ] as const) {
      const server = createServer((req, res) => {
        req.resume();
        req.on('end', () => res.writeHead(200, { 'content-type': type }).end(body));
      });
      await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
      try {
        const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
        const chain = new RpcChain({ url, secretKey: Uint8Array.from(JSON.parse(signer.json)), cluster: 'localnet', confirmTimeoutMs: 5000 });
        await assert.rejects(chain.writeMemo('herald test not a node'), (error: Error) => message.test(error.message) && !(error instanceof TypeError));
      } finally {
        await new Promise((resolve) => server.close(resolve));
      }
    }
  });

  it('verifies against the cluster: the transaction landed, the gateway signed it and its memo names the root', async () => {
    const result = await verifyReceipt(receipt, { rpcUrl: rpc.url, signer: signer.address });
    assert.deepEqual(result, { valid: true, checks: { proof: true, publicSignals: true, merklePath: true, onChain: true, signer: true }, errors: [] });
  });

  it('fails a tampered proof, path, wallet, notification id or transaction', async () => {
    const other = await registeredWallet(gw.url, { telegramChatId: '1' });
    const piA = [...receipt.proof.pi_a];
    piA[0] = (BigInt(piA[0]) + 1n).toString();
    const path = [...receipt.merklePath];
    path[0] = '0x' + (BigInt(path[0]) ^ 1n).toString(16).padStart(64, '0');
    const cases: [string, Receipt, keyof ReceiptVerification['checks']][] = [
      ['proof', { ...receipt, proof: { ...receipt.proof, pi_a: piA } }, 'proof'],
      ['path', { ...receipt, merklePath: path }, 'merklePath'],
      ['wallet', { ...receipt, wallet: other }, 'publicSignals'],
      ['notification id', { ...receipt, notificationId: '01ARZ3NDEKTSV4RRFFQ69G5FAV' }, 'publicSignals'],
      // Signals edited to match another wallet: consistent, but the proof no longer verifies.
      ['forged signals', { ...receipt, wallet: other, publicSignals: forgedSignals(receipt, other) }, 'proof'],
    ];
    for (const [what, tampered, check] of cases) {
      const result = await verifyReceipt(tampered);
      assert.equal(result.valid, false, what);
      assert.equal(result.checks[check], false, what);
    }
    const wrongTx = await verifyReceipt({ ...receipt, tx: bs58.encode(new Uint8Array(64).fill(3)) }, { rpcUrl: rpc.url });
    assert.equal(wrongTx.checks.onChain, false);
    assert.match(wrongTx.errors.join(), /not found/);
    const wrongSigner = await verifyReceipt(receipt, { rpcUrl: rpc.url, signer: keypair().address });
    assert.equal(wrongSigner.checks.onChain, false);
    assert.equal(wrongSigner.checks.signer, false, 'the receipt names another signer too');
    assert.match(wrongSigner.errors.join(), /signed by/);
    // A node that takes the request and never answers fails the on-chain check in bounded time.
    const silent = createServer(() => {});
    await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
    try {
      const stalled = await verifyReceipt(receipt, { rpcUrl: `http://127.0.0.1:${(silent.address() as AddressInfo).port}`, rpcTimeoutMs: 300 });
      assert.equal(stalled.checks.onChain, false);
      assert.match(stalled.errors.join(), /did not answer within 300 ms/);
    } finally {
      silent.closeAllConnections();
      await new Promise((resolve) => silent.close(resolve));
    }
  });

  it('fails the receipt after the last attempt when the key cannot pay, while sandbox receipts stay on litesvm', async () => {
    const broke = keypair();
    const poor = await startGateway({ env: clusterEnv(rpc, broke.json) });
    try {
      const protocol = await poor.createProtocol({ name: 'Poor' });
      const live = await send(poor, protocol.apiKey);
      const test = await send(poor, protocol.sandboxApiKey);
      const failed = await settled(poor, protocol.apiKey, live);
      assert.equal(failed.receipt_status, 'failed');
      assert.match(failed.receipt_failure_reason, /^on-chain write failed: .+ \(gave up after 3 attempts\)$/);
      assert.equal(failed.receipt_tx, null);
      assert.ok(failed.last_receipt_attempt_at);
      const res = await call(poor.url, protocol.apiKey, 'GET', `/v1/notifications/${live}/receipt`);
      assert.equal(res.status, 404);
      assert.equal(res.body.code, 'RECEIPT_NOT_FOUND');
      const events = await poor.herald.deps.db.query(`SELECT 1 FROM events WHERE type = 'receipt.confirmed' AND data->>'notification_id' = $1`, [live]);
      assert.equal(events.length, 0);

      const sandbox = await settled(poor, protocol.sandboxApiKey, test);
      assert.equal(sandbox.receipt_status, 'confirmed');
      const proof = (await call(poor.url, protocol.sandboxApiKey, 'GET', `/v1/notifications/${test}/receipt`)).body as Receipt;
      assert.equal(proof.cluster, 'litesvm');
      assert.notEqual(proof.signer, broke.address);
    } finally {
      await poor.close();
    }
  });

  const batchOf = (gateway: TestGateway, id: string) =>
    gateway.herald.deps.db.query<{ id: string; attempts: number; tx: string | null; sent_tx: string | null }>(
      'SELECT b.id, b.attempts, b.tx, b.sent_tx FROM receipt_batches b JOIN receipts r ON r.batch_id = b.id WHERE r.notification_id = $1',
      [id],
    );
  const memosOf = (batchId: string) => rpc.memos().filter((memo) => memo.includes(`:${batchId}:`));

  it('writes a root once when the node lands the memo but answers an error: the next attempt finds it', async () => {
    rpc.landThenFailSends(1);
    const id = await send(gw, acme.apiKey);
    const record = await settled(gw, acme.apiKey, id);
    assert.equal(record.receipt_status, 'confirmed', record.receipt_failure_reason);
    const [batch] = await batchOf(gw, id);
    assert.equal(batch.attempts, 2);
    assert.equal(batch.tx, batch.sent_tx, "the first attempt's transaction");
    assert.equal(record.receipt_tx, batch.tx);
    assert.equal(memosOf(batch.id).length, 1, 'one memo names the batch');
  });

  it('ends an attempt on a node that stops answering within HERALD_RECEIPT_CONFIRM_TIMEOUT_MS, and sends anew once the lost transaction expired', async () => {
    const quick = await startGateway({ env: { ...clusterEnv(rpc, signer.json), HERALD_RECEIPT_CONFIRM_TIMEOUT_MS: '1000' } });
    try {
      const protocol = await quick.createProtocol({ name: 'Lost transaction' });
      rpc.hangSends(1);
      const id = await send(quick, protocol.apiKey);
      const [lost] = await waitFor(async () => ((await batchOf(quick, id))[0]?.sent_tx ? batchOf(quick, id) : undefined), PROOF_WAIT_MS, 50);
      // Time passes on the chain: the lost transaction's blockhash expires.
      rpc.advance(200);
      const record = await settled(quick, protocol.apiKey, id);
      assert.equal(record.receipt_status, 'confirmed', record.receipt_failure_reason);
      const [batch] = await batchOf(quick, id);
      assert.equal(batch.attempts, 2);
      assert.notEqual(batch.tx, lost.sent_tx, 'a new transaction, the lost one having expired');
      assert.equal(memosOf(batch.id).length, 1);
    } finally {
      await quick.close();
    }
  });

  it("follows the last attempt's transaction a while longer before failing the batch, and confirms it when it lands late", { timeout: 120_000 }, async () => {
    const once = await startGateway({ env: { ...clusterEnv(rpc, signer.json), HERALD_RECEIPT_MAX_ATTEMPTS: '1', HERALD_RECEIPT_CONFIRM_TIMEOUT_MS: '1000' } });
    try {
      const protocol = await once.createProtocol({ name: 'Congested cluster' });
      rpc.holdSends(1);
      const id = await send(once, protocol.apiKey);
      // The only attempt ends with its transaction unconfirmed: the batch is followed, not failed.
      const [followed] = await waitFor(async () => {
        const rows = await once.herald.deps.db.query<{ id: string; attempts: number; status: string; failure_reason: string | null }>(
          'SELECT b.id, b.attempts, b.status, b.failure_reason FROM receipt_batches b JOIN receipts r ON r.batch_id = b.id WHERE r.notification_id = $1',
          [id],
        );
        return rows[0]?.failure_reason ? rows : undefined;
      }, PROOF_WAIT_MS, 50);
      assert.equal(followed.status, 'pending');
      assert.match(followed.failure_reason!, /not confirmed within 1000 ms/);
      rpc.landHeld();
      const record = await settled(once, protocol.apiKey, id);
      assert.equal(record.receipt_status, 'confirmed', record.receipt_failure_reason);
      assert.equal(memosOf(followed.id).length, 1, 'the late transaction, nothing sent after it');
    } finally {
      await once.close();
    }
  });

  it('holds up only its own batches while the node does not answer: sandbox receipts confirm meanwhile, and stopping ends the wait', { timeout: 120_000 }, async () => {
    const patient = await startGateway({ env: { ...clusterEnv(rpc, signer.json), HERALD_RECEIPT_CONFIRM_TIMEOUT_MS: '600000' } });
    try {
      const protocol = await patient.createProtocol({ name: 'Silent node' });
      // As many production batches as may be written at a time, each waiting on the node.
      rpc.hangSends(4);
      const live: string[] = [];
      for (let i = 0; i < 4; i++) {
        const id = await send(patient, protocol.apiKey);
        await waitFor(async () => (await batchOf(patient, id))[0]?.sent_tx, PROOF_WAIT_MS, 50);
        live.push(id);
      }
      const test = await send(patient, protocol.sandboxApiKey);
      const sandbox = await settled(patient, protocol.sandboxApiKey, test);
      assert.equal(sandbox.receipt_status, 'confirmed');
      for (const id of live) {
        const waiting = (await call(patient.url, protocol.apiKey, 'GET', `/v1/notifications/${id}`)).body;
        assert.equal(waiting.receipt_status, 'pending');
        assert.equal((await batchOf(patient, id))[0].attempts, 1, 'still in its first attempt');
      }
    } finally {
      // Stopping aborts the writes under way rather than waiting for the node (the test's timeout
      // is far below the attempts' 10 minutes).
      await patient.close();
    }
  });

  it('gives a write stopped with the gateway back uncounted: the next gateway follows its transaction', { timeout: 120_000 }, async () => {
    const schema = onPostgres ? await freshSchema() : undefined;
    const dir = schema ? undefined : await mkdtemp(join(tmpdir(), 'herald-receipts-'));
    const storage = schema ? { DATABASE_URL: schema.url } : { HERALD_DATA_DIR: dir! };
    try {
      const first = await startGateway({ env: { ...clusterEnv(rpc, signer.json), ...storage, HERALD_RECEIPT_CONFIRM_TIMEOUT_MS: '600000' } });
      let protocol: TestProtocol;
      let id: string;
      try {
        protocol = await first.createProtocol({ name: 'Restarted' });
        rpc.hangSends(1);
        id = await send(first, protocol.apiKey);
        await waitFor(async () => (await batchOf(first, id))[0]?.sent_tx, PROOF_WAIT_MS, 50);
      } finally {
        await first.close();
      }
      // The lost transaction expires while no gateway runs.
      rpc.advance(200);
      const second = await startGateway({ env: { ...clusterEnv(rpc, signer.json), ...storage } });
      try {
        const record = await settled(second, protocol.apiKey, id);
        assert.equal(record.receipt_status, 'confirmed', record.receipt_failure_reason);
        const [batch] = await batchOf(second, id);
        assert.equal(batch.attempts, 1, "the stopped attempt was not counted");
        assert.equal(memosOf(batch.id).length, 1);
      } finally {
        await second.close();
      }
    } finally {
      await schema?.drop();
      if (dir) await rm(dir, { recursive: true, force: true });
    }
  });
});

describe('receipts when the Solana RPC node answers HTTP errors', () => {
  it('fails the receipt after the last attempt, logging each failure (the node errors are frozen objects)', async () => {
    // A node behind a proxy that answers 404 to everything, as a wrong RPC URL does.
    const node = createServer((_req, res) => res.writeHead(404, { 'content-type': 'text/plain' }).end('Not Found'));
    await new Promise<void>((resolve) => node.listen(0, '127.0.0.1', resolve));
    const url = `http://127.0.0.1:${(node.address() as AddressInfo).port}`;
    const log = logLines();
    const env = { ...clusterEnv({ url } as SolanaRpc, keypair().json), LOG_LEVEL: 'warn' };
    const logger = createLogger(loadConfig(testEnv(env)), log.stream);
    const gateway = await startGateway({ env, logger });
    try {
      const protocol = await gateway.createProtocol({ name: 'Misconfigured' });
      const id = await (async () => {
        const wallet = await registeredWallet(gateway.url, { telegramChatId: '7' });
        const res = await call(gateway.url, protocol.apiKey, 'POST', '/v1/notify', { wallet, subject: 's', body: 'b', category: 'defi', receipt: true });
        assert.equal(res.status, 202, JSON.stringify(res.body));
        return res.body.notificationId as string;
      })();
      const failed = await waitFor(async () => {
        const body = (await call(gateway.url, protocol.apiKey, 'GET', `/v1/notifications/${id}`)).body;
        return body.receipt_status === 'failed' ? body : undefined;
      }, PROOF_WAIT_MS, 100);
      assert.match(failed.receipt_failure_reason, /^on-chain write failed: .+ \(gave up after 3 attempts\)$/);
      const [batch] = await gateway.herald.deps.db.query('SELECT b.attempts FROM receipt_batches b JOIN receipts r ON r.batch_id = b.id WHERE r.notification_id = $1', [id]);
      assert.equal(batch.attempts, 3, 'no attempt beyond the last');
      const logged = log.records();
      assert.ok(logged.some((entry) => entry.err && typeof entry.err.message === 'string'), 'the failures are logged with their error');
      assert.ok(!logged.some((entry) => /job loop pass failed/.test(entry.msg)), log.lines.join(''));
    } finally {
      await gateway.close();
      await new Promise((resolve) => node.close(resolve));
    }
  });
});

function forgedSignals(receipt: Receipt, wallet: string): string[] {
  const hex = Buffer.from(bs58.decode(wallet)).toString('hex');
  return [...receipt.publicSignals.slice(0, 3), BigInt('0x' + hex.slice(0, 32)).toString(), BigInt('0x' + hex.slice(32)).toString()];
}
