import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { describe, it } from 'node:test';
import bs58 from 'bs58';
import {
  contentHash,
  FIELD_PRIME,
  fieldHex,
  leafFields,
  notificationIdField,
  parseField,
  randomSalt,
  receiptMemo,
  walletLimbs,
} from './field-encoding.js';

describe('receipt field encodings', () => {
  it('reads a ULID as its 128-bit integer', () => {
    assert.equal(notificationIdField('00000000000000000000000000'), 0n);
    assert.equal(notificationIdField('0000000000000000000000000Z'), 31n);
    assert.equal(notificationIdField('7ZZZZZZZZZZZZZZZZZZZZZZZZZ'), 2n ** 128n - 1n);
    // Crockford base32 is case-insensitive.
    assert.equal(notificationIdField('01arz3ndektsv4rrffq69g5fav'), notificationIdField('01ARZ3NDEKTSV4RRFFQ69G5FAV'));
  });

  it('refuses anything that is not a ULID', () => {
    for (const bad of ['', '01ARZ3NDEKTSV4RRFFQ69G5FA', '81ARZ3NDEKTSV4RRFFQ69G5FAV', '01ARZ3NDEKTSV4RRFFQ69G5FAU', 'proto_01ARZ3NDEKTSV4RRFFQ69G5FAV']) {
      assert.throws(() => notificationIdField(bad), RangeError, bad);
    }
  });

  it('splits the wallet key into big-endian 128-bit limbs', () => {
    const key = Uint8Array.from({ length: 32 }, (_, i) => i + 1);
    const [hi, lo] = walletLimbs(bs58.encode(key));
    assert.equal(hi, BigInt('0x' + Buffer.from(key.subarray(0, 16)).toString('hex')));
    assert.equal(lo, BigInt('0x' + Buffer.from(key.subarray(16)).toString('hex')));
  });

  it('hashes subject and body unambiguously and within the field', () => {
    assert.notEqual(contentHash('ab', 'c'), contentHash('a', 'bc'));
    const digest = BigInt('0x' + createHash('sha256').update('["Hi","there"]').digest('hex'));
    assert.equal(contentHash('Hi', 'there'), digest % FIELD_PRIME);
  });

  it('draws salts below the field prime and never the same twice', () => {
    const salts = new Set(Array.from({ length: 50 }, () => randomSalt()));
    assert.equal(salts.size, 50);
    for (const salt of salts) assert.ok(salt > 0n && salt < 2n ** 248n);
  });

  it('writes field elements as 0x + 64 hex digits and reads them back', () => {
    assert.equal(fieldHex(255n), '0x' + '0'.repeat(62) + 'ff');
    assert.equal(parseField(fieldHex(FIELD_PRIME - 1n)), FIELD_PRIME - 1n);
    assert.equal(parseField('12345'), 12345n);
    assert.throws(() => parseField(FIELD_PRIME.toString()), RangeError);
  });

  it('maps a delivered notification to the circuit inputs', () => {
    const wallet = bs58.encode(new Uint8Array(32).fill(7));
    const fields = leafFields({
      id: '01ARZ3NDEKTSV4RRFFQ69G5FAV',
      wallet,
      channel: 'telegram',
      deliveredAt: new Date(1_700_000_000_123),
      contentHash: 5n,
      salt: 9n,
    });
    assert.equal(fields.channel, 2n);
    assert.equal(fields.deliveredAt, 1_700_000_000_123n);
    assert.equal(fields.notificationId, notificationIdField('01ARZ3NDEKTSV4RRFFQ69G5FAV'));
    assert.deepEqual([fields.walletHi, fields.walletLo], walletLimbs(wallet));
  });

  it('names the batch and its root in the memo', () => {
    assert.equal(receiptMemo('rbat_X', 1n), `herald:receipt:v1:rbat_X:0x${'0'.repeat(63)}1`);
  });
});
