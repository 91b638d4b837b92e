import assert from 'node:assert/strict';
import { generateKeyPairSync, randomBytes, sign } from 'node:crypto';
import bs58 from 'bs58';
import { describe, it } from 'node:test';
import { decodePoint } from './ed25519-point.js';
import { decodeSignature, isWalletSignature } from './wallet-signature.js';

function wallet() {
  const { publicKey, privateKey } = generateKeyPairSync('ed25519');
  // The SPKI DER of an ed25519 key ends with the 32 raw public-key bytes.
  const raw = publicKey.export({ format: 'der', type: 'spki' }).subarray(-32);
  return { address: bs58.encode(raw), sign: (message: string) => sign(null, Buffer.from(message, 'utf8'), privateKey) };
}

describe('decodeSignature', () => {
  const signature = randomBytes(64);

  it('reads base58 and every base64 spelling of 64 bytes', () => {
    for (const text of [
      bs58.encode(signature),
      signature.toString('base64'),
      signature.toString('base64').replace(/=+$/, ''),
      signature.toString('base64url'),
    ]) {
      assert.ok(
        decodeSignature(text).some((bytes) => bytes.equals(signature)),
        text,
      );
    }
  });

  it('finds nothing in texts that are not 64 bytes in either encoding', () => {
    for (const text of [
      '',
      'hello world',
      signature.toString('hex'),
      bs58.encode(signature.subarray(0, 62)),
      bs58.encode(Buffer.concat([signature, signature.subarray(0, 2)])),
      signature.subarray(0, 63).toString('base64'),
      randomBytes(65).toString('base64'),
      signature.toString('base64').replace(/^.{4}/, '!@#$'),
      signature.toString('base64') + '=',
      signature.toString('base64').replace('=', '') + '-_',
    ]) {
      assert.deepEqual(decodeSignature(text), [], text);
    }
  });
});

describe('isWalletSignature', () => {
  const alice = wallet();
  const bob = wallet();
  const message = 'Herald identity verification\n\nNonce: 00ff — ünïcode';

  it('accepts the wallet’s signature of the exact UTF-8 message', () => {
    assert.equal(isWalletSignature(alice.address, message, [alice.sign(message)]), true);
    assert.equal(isWalletSignature(alice.address, message, [randomBytes(64), alice.sign(message)]), true);
  });

  it('refuses another key, another message and random bytes', () => {
    assert.equal(isWalletSignature(alice.address, message, [bob.sign(message)]), false);
    assert.equal(isWalletSignature(alice.address, message + ' ', [alice.sign(message)]), false);
    assert.equal(isWalletSignature(alice.address, message, [randomBytes(64)]), false);
    assert.equal(isWalletSignature(alice.address, message, []), false);
  });

  it('refuses everything for an address that is not a curve point', () => {
    // Solana program-derived addresses are off the curve; about half of random 32-byte strings are.
    let offCurve: Buffer | undefined;
    while (!offCurve) {
      const candidate = randomBytes(32);
      if (!decodePoint(candidate)) offCurve = candidate;
    }
    assert.equal(isWalletSignature(bs58.encode(offCurve), message, [randomBytes(64), alice.sign(message)]), false);
  });

  it('refuses the forged signature (R the identity, S = 0) that satisfies keys of small order', () => {
    // [S]B = R + [k]A holds with S = 0 and R the identity whenever [k]A is the identity: for a
    // key of order 2 on every message, of order 4 or 8 on one in four or eight. A lenient
    // verifier accepts it; no private key gives such a public key.
    const forged = Buffer.concat([Buffer.from([1]), Buffer.alloc(63)]);
    const orderTwo = Buffer.from('ecffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff7f', 'hex');
    const orderFour = Buffer.alloc(32);
    for (const key of [orderTwo, orderFour]) {
      for (let i = 0; i < 16; i++) assert.equal(isWalletSignature(bs58.encode(key), `${message} ${i}`, [forged]), false);
    }
    // Nor does a small-order R pass for a real key.
    assert.equal(isWalletSignature(alice.address, message, [forged]), false);
    const honest = alice.sign(message);
    assert.equal(isWalletSignature(alice.address, message, [Buffer.concat([forged.subarray(0, 32), honest.subarray(32)])]), false);
  });
});
