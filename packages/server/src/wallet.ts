import bs58 from 'bs58';
import { Type } from '@sinclair/typebox';
import { ApiError } from './http/errors.js';

/**
 * Addresses already found valid. A protocol sends to the same wallets again and again, and
 * decoding base58 is quadratic in its length: the check was most of a bulk item's validation.
 * Cleared whole when full, which bounds it at a few megabytes.
 */
const validAddresses = new Set<string>();
const MAX_REMEMBERED = 50_000;

/** A Solana wallet address: base58 text that decodes to a 32-byte ed25519 public key. */
export function isWalletAddress(value: string): boolean {
  if (validAddresses.has(value)) return true;
  if (value.length < 32 || value.length > 44) return false;
  let valid: boolean;
  try {
    valid = bs58.decode(value).length === 32;
  } catch {
    valid = false;
  }
  if (valid) {
    if (validAddresses.size >= MAX_REMEMBERED) validAddresses.clear();
    validAddresses.add(value);
  }
  return valid;
}

/** The 32 public-key bytes of a wallet address (call isWalletAddress first). */
export function walletPublicKey(wallet: string): Uint8Array {
  return bs58.decode(wallet);
}

/** Schema for a wallet field; the `solana-wallet` format runs isWalletAddress. */
export const WalletSchema = Type.String({ format: 'solana-wallet', description: 'Solana wallet address (base58, 32 bytes)' });

/** The 404 for a wallet that has no identity (DESIGN §6): a single send, a schedule, a subscription. */
export const walletNotRegistered = (wallet: string) => new ApiError('WALLET_NOT_REGISTERED', `Wallet ${wallet} has no identity with Herald`);
