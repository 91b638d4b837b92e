import assert from 'node:assert/strict';
import { generateKeyPairSync } from 'node:crypto';
import bs58 from 'bs58';
import { describe, it } from 'node:test';
import { notificationProblems } from './notification-input.js';
import { isWalletAddress } from './wallet-address.js';

const WALLET = '7EcDhSYGxXyscszYEp35KHN8vvw3svAuLKTzXwCFLtV';
const valid = { wallet: WALLET, subject: 'Hi', body: 'Hello', category: 'defi' };

describe('isWalletAddress', () => {
  it('agrees with a base58 decoder on real keys and on edge cases', () => {
    for (let i = 0; i < 50; i++) {
      const { publicKey } = generateKeyPairSync('ed25519');
      const address = bs58.encode(Buffer.from(publicKey.export({ format: 'jwk' }).x!, 'base64url'));
      assert.equal(isWalletAddress(address), true, address);
    }
    const zeros = bs58.encode(Buffer.alloc(32));
    assert.equal(isWalletAddress(zeros), true, 'all-zero key: 32 ones');
    assert.equal(isWalletAddress(bs58.encode(Buffer.concat([Buffer.alloc(1), Buffer.alloc(31, 255)]))), true, 'leading zero byte');
    assert.equal(isWalletAddress(bs58.encode(Buffer.alloc(33, 1))), false, '33 bytes');
    assert.equal(isWalletAddress(bs58.encode(Buffer.alloc(31, 200))), false, '31 bytes');
    assert.equal(isWalletAddress('14vJ9JU1bJJE96FWSJKvHsmmFADCg4gpZQff4P3bkLKi'), false, '33 bytes, as the gateway tests');
    assert.equal(isWalletAddress('0OIl'.repeat(10)), false, 'not base58');
    assert.equal(isWalletAddress('11111111111111111111111111111'), false, 'too short');
  });
});

describe('notificationProblems', () => {
  it('accepts a valid notification with every optional field', () => {
    const full = { ...valid, priority: 'critical', preferredChannel: 'sms', receipt: true, templateId: 'tmpl_1', templateVariables: { a: 1 }, idempotencyKey: 'k' };
    assert.deepEqual(notificationProblems(full), []);
  });

  it('names every problem', () => {
    assert.deepEqual(notificationProblems([]), ['must be a JSON object']);
    assert.deepEqual(notificationProblems({}), ['wallet is required', 'subject is required', 'body is required', 'category is required']);
    assert.deepEqual(
      notificationProblems({ ...valid, wallet: 'abc', category: 'spam', subject: '', receipt: 'yes', preferedChannel: 'sms', idempotencyKey: 'k'.repeat(256) }),
      [
        'wallet must be a Solana wallet address (base58, 32 bytes)',
        'subject must not be empty',
        'category must be one of: defi, governance, system, marketing, security',
        'receipt must be true or false',
        'unknown field "preferedChannel"',
        'idempotencyKey must be at most 255 characters',
      ],
    );
    assert.deepEqual(notificationProblems({ ...valid, templateVariables: [1], priority: 'urgent' }), [
      'templateVariables must be an object',
      'priority must be one of: normal, important, critical',
    ]);
  });
});
