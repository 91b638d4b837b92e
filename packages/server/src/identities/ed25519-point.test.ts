import assert from 'node:assert/strict';
import { generateKeyPairSync } from 'node:crypto';
import { describe, it } from 'node:test';
import { decodePoint, hasSmallOrder, isStrictPoint } from './ed25519-point.js';

const P = 2n ** 255n - 19n;
const D = (((-121665n * powMod(121666n, P - 2n)) % P) + P) % P;

function powMod(base: bigint, exponent: bigint): bigint {
  let result = 1n;
  for (let b = base % P, e = exponent; e > 0n; e >>= 1n, b = (b * b) % P) if (e & 1n) result = (result * b) % P;
  return result;
}

const hex = (text: string) => Uint8Array.from(Buffer.from(text, 'hex'));
const withSignBit = (bytes: Uint8Array) => Uint8Array.from(bytes, (b, i) => (i === 31 ? b | 0x80 : b));
const publicKey = () => Uint8Array.from(Buffer.from(generateKeyPairSync('ed25519').publicKey.export({ format: 'jwk' }).x!, 'base64url'));

/** The eight points of small order, canonically encoded (as libsodium lists them, and their negations). */
const SMALL_ORDER = [
  '0100000000000000000000000000000000000000000000000000000000000000', // the identity (order 1)
  'ecffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff7f', // y = −1 (order 2)
  '0000000000000000000000000000000000000000000000000000000000000000', // y = 0, x even (order 4)
  '0000000000000000000000000000000000000000000000000000000000000080', // y = 0, x odd (order 4)
  '26e8958fc2b227b045c3f489f2ef98f0d5dfac05d3c63339b13802886d53fc05', // order 8
  '26e8958fc2b227b045c3f489f2ef98f0d5dfac05d3c63339b13802886d53fc85',
  'c7176a703d4dd84fba3c0b760d10670f2a2053fa2c39ccc64ec7fd7792ac037a',
  'c7176a703d4dd84fba3c0b760d10670f2a2053fa2c39ccc64ec7fd7792ac03fa',
].map(hex);

describe('ed25519 points', () => {
  it('decodes real public keys to points on the curve, of large order', () => {
    for (let i = 0; i < 20; i++) {
      const key = publicKey();
      const point = decodePoint(key);
      assert.ok(point);
      const x2 = (point.x * point.x) % P;
      const y2 = (point.y * point.y) % P;
      assert.equal((((y2 - x2) % P) + P) % P, (1n + ((D * x2) % P) * y2) % P, 'on the curve −x² + y² = 1 + d·x²·y²');
      assert.equal(Number(point.x & 1n), key[31] >> 7, 'the sign bit is the parity of x');
      assert.equal(hasSmallOrder(key), false);
      assert.equal(isStrictPoint(key), true);
    }
  });

  it('finds every point of small order, each of which a forged signature satisfies', () => {
    for (const point of SMALL_ORDER) {
      assert.ok(decodePoint(point), Buffer.from(point).toString('hex'));
      assert.equal(hasSmallOrder(point), true, Buffer.from(point).toString('hex'));
      assert.equal(isStrictPoint(point), false);
    }
  });

  it('refuses non-canonical encodings: y ≥ p, and x = 0 with the sign bit set', () => {
    const yAtLeastP = ['edffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff7f', 'eeffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff7f'].map(hex);
    for (const point of [...yAtLeastP, withSignBit(SMALL_ORDER[0]), withSignBit(SMALL_ORDER[1])]) {
      assert.equal(decodePoint(point), undefined, Buffer.from(point).toString('hex'));
      assert.equal(isStrictPoint(point), false);
    }
  });

  it('answers undefined for a y with no x on the curve, and for the wrong length', () => {
    let offCurve = 0;
    for (let y = 2; y < 40; y++) {
      const bytes = new Uint8Array(32);
      bytes[0] = y;
      if (decodePoint(bytes) === undefined) offCurve++;
    }
    assert.ok(offCurve > 5, 'about half of all y have no point');
    assert.equal(decodePoint(new Uint8Array(31)), undefined);
    assert.equal(isStrictPoint(new Uint8Array(33)), false);
  });
});
