import bs58 from 'bs58';
import { Type } from '@sinclair/typebox';

/** A Solana wallet address: base58 text that decodes to a 32-byte ed25519 public key. */
export function isWalletAddress(value: string): boolean {
  if (value.length < 32 || value.length > 44) return false;
  try {
    return bs58.decode(value).length === 32;
  } catch {
    return false;
  }
}

/** The 32 public-key bytes of a wallet address (call isWalletAddress first). */
export function walletPublicKey(wallet: string): Uint8Array {
  return bs58.decode(wallet);
}

/** Schema for a wallet field; the `solana-wallet` format runs isWalletAddress. */
export const WalletSchema = Type.String({ format: 'solana-wallet', description: 'Solana wallet address (base58, 32 bytes)' });
