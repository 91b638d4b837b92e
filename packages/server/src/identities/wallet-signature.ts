import { createPublicKey, verify } from 'node:crypto';
import bs58 from 'bs58';
import { walletPublicKey } from '../wallet.js';
import { isStrictPoint } from './ed25519-point.js';

const SIGNATURE_BYTES = 64;
const BASE58 = /^[1-9A-HJ-NP-Za-km-z]+$/;
const BASE64 = /^[A-Za-z0-9+/]+$/;
const BASE64URL = /^[A-Za-z0-9_-]+$/;

/**
 * The 64-byte ed25519 signatures a text may stand for: base58 (what Solana tooling prints) or
 * base64 (standard or URL-safe, padding optional). Some strings are valid in both alphabets, so
 * every reading that yields 64 bytes is returned and each is tried; none means the text is malformed.
 */
export function decodeSignature(text: string): Buffer[] {
  const candidates: Buffer[] = [];
  if (BASE58.test(text)) {
    try {
      candidates.push(Buffer.from(bs58.decode(text)));
    } catch {
      // not base58 after all
    }
  }
  const unpadded = text.replace(/={1,2}$/, '');
  const urlSafe = BASE64URL.test(unpadded);
  if (urlSafe || BASE64.test(unpadded)) {
    const bytes = Buffer.from(unpadded, 'base64');
    // Node skips characters it does not know; re-encoding proves the text was canonical.
    const again = urlSafe ? bytes.toString('base64url') : bytes.toString('base64').replace(/=+$/, '');
    if (again === unpadded) candidates.push(bytes);
  }
  return candidates.filter((bytes) => bytes.length === SIGNATURE_BYTES);
}

/**
 * True when one reading of `signatures` is the wallet's ed25519 signature of the UTF-8 message.
 * Strict, as ed25519-dalek's `verify_strict`: a key or signature point of small order, or encoded
 * non-canonically, is refused (ed25519-point.ts), since forged signatures satisfy such keys and no
 * wallet has one.
 */
export function isWalletSignature(wallet: string, message: string, signatures: Buffer[]): boolean {
  const publicKey = walletPublicKey(wallet);
  let key;
  try {
    key = createPublicKey({
      key: { kty: 'OKP', crv: 'Ed25519', x: Buffer.from(publicKey).toString('base64url') },
      format: 'jwk',
    });
  } catch {
    // Off-curve addresses (program-derived) have no private key, so nothing can sign for them.
    return false;
  }
  const data = Buffer.from(message, 'utf8');
  // The strict checks (about 0.3 ms each) run only for a signature that verifies, so a
  // stream of wrong ones costs no more than before.
  return signatures.some((signature) => {
    try {
      return verify(null, data, key, signature) && isStrictPoint(publicKey) && isStrictPoint(signature.subarray(0, 32));
    } catch {
      return false;
    }
  });
}
