import assert from 'node:assert/strict';
import { generateKeyPairSync } from 'node:crypto';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, it } from 'node:test';
import { ConfigError } from '../config.js';
import { receiptConfig } from './receipt-config.js';

/** A Solana CLI key file's bytes: the 32-byte seed, then the public key. */
function solanaKeypair(): number[] {
  const { privateKey, publicKey } = generateKeyPairSync('ed25519');
  const seed = Buffer.from(privateKey.export({ format: 'jwk' }).d!, 'base64url');
  const pub = Buffer.from(publicKey.export({ format: 'jwk' }).x!, 'base64url');
  return [...seed, ...pub];
}

function failure(env: Record<string, string>): ConfigError {
  try {
    receiptConfig(env);
  } catch (error) {
    assert.ok(error instanceof ConfigError, String(error));
    return error;
  }
  assert.fail(`accepted ${JSON.stringify(env)}`);
}

describe('receipt configuration', () => {
  it('defaults to the in-process chain, full batches and the shipped keys', () => {
    const config = receiptConfig({});
    assert.equal(config.rpcUrl, undefined);
    assert.equal(config.keypair, undefined);
    assert.equal(config.batchSize, 1024);
    assert.equal(config.batchMs, 5000);
    assert.equal(config.zkeyPath, undefined);
    assert.equal(config.retry.maxAttempts, 6);
  });

  it('reads the key pair inline or from a file and checks that its halves belong together', () => {
    const bytes = solanaKeypair();
    assert.deepEqual([...receiptConfig({ HERALD_RECEIPT_KEYPAIR: JSON.stringify(bytes) }).keypair!], bytes);
    const file = path.join(mkdtempSync(path.join(tmpdir(), 'herald-key-')), 'id.json');
    writeFileSync(file, JSON.stringify(bytes));
    const config = receiptConfig({ SOLANA_RPC_URL: 'https://api.devnet.solana.com', HERALD_RECEIPT_KEYPAIR: file, HERALD_SOLANA_CLUSTER: 'devnet' });
    assert.deepEqual([...config.keypair!], bytes);
    assert.equal(config.cluster, 'devnet');

    const swapped = [...bytes.slice(0, 32), ...solanaKeypair().slice(32)];
    assert.match(failure({ HERALD_RECEIPT_KEYPAIR: JSON.stringify(swapped) }).message, /not a valid key pair/);
    assert.equal(failure({ HERALD_RECEIPT_KEYPAIR: JSON.stringify(bytes.slice(0, 32)) }).variable, 'HERALD_RECEIPT_KEYPAIR');
    assert.equal(failure({ HERALD_RECEIPT_KEYPAIR: '[1,2,"x"]' }).variable, 'HERALD_RECEIPT_KEYPAIR');
    assert.equal(failure({ HERALD_RECEIPT_KEYPAIR: '/nonexistent/id.json' }).variable, 'HERALD_RECEIPT_KEYPAIR');
  });

  it('never echoes the secret key in an error', () => {
    const bytes = solanaKeypair();
    bytes[40] ^= 1;
    assert.ok(!failure({ HERALD_RECEIPT_KEYPAIR: JSON.stringify(bytes) }).message.includes(String(bytes[0]) + ','));
  });

  it('refuses incomplete or out-of-range settings', () => {
    assert.equal(failure({ SOLANA_RPC_URL: 'https://api.devnet.solana.com' }).variable, 'HERALD_RECEIPT_KEYPAIR');
    assert.equal(failure({ SOLANA_RPC_URL: 'ws://localhost:8900' }).variable, 'SOLANA_RPC_URL');
    assert.equal(failure({ HERALD_RECEIPT_BATCH_SIZE: '1025' }).variable, 'HERALD_RECEIPT_BATCH_SIZE');
    assert.equal(failure({ HERALD_RECEIPT_BATCH_SIZE: '0' }).variable, 'HERALD_RECEIPT_BATCH_SIZE');
    assert.equal(failure({ HERALD_RECEIPT_BATCH_MS: 'soon' }).variable, 'HERALD_RECEIPT_BATCH_MS');
    assert.equal(failure({ HERALD_SOLANA_CLUSTER: 'Main Net' }).variable, 'HERALD_SOLANA_CLUSTER');
    assert.equal(failure({ HERALD_RECEIPT_ZKEY: import.meta.filename }).variable, 'HERALD_RECEIPT_VKEY');
    assert.equal(failure({ HERALD_RECEIPT_ZKEY: '/nonexistent.zkey', HERALD_RECEIPT_VKEY: import.meta.filename }).variable, 'HERALD_RECEIPT_ZKEY');
  });
});
