const ALPHABET = '123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz';

/**
 * The gateway's rule for a wallet, checked locally so a batch is refused before anything is sent:
 * base58 text that decodes to exactly 32 bytes (an ed25519 public key). Each leading `1` stands
 * for a zero byte; the rest is a big-endian number.
 */
export function isWalletAddress(text: string): boolean {
  if (text.length < 32 || text.length > 44) return false;
  let value = 0n;
  for (const char of text) {
    const digit = ALPHABET.indexOf(char);
    if (digit < 0) return false;
    value = value * 58n + BigInt(digit);
  }
  let zeros = 0;
  while (text[zeros] === '1') zeros++;
  const hex = value === 0n ? '' : value.toString(16);
  return zeros + Math.ceil(hex.length / 2) === 32;
}
