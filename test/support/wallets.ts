import { generateKeyPairSync, sign, type KeyObject } from 'node:crypto';
import bs58 from 'bs58';
import { ADMIN_TOKEN, call } from './gateway.js';

export interface TestWallet {
  address: string;
  privateKey: KeyObject;
  /** ed25519 signature of the UTF-8 message, base58 (as Solana wallets produce it). */
  sign(message: string): string;
}

/** A real ed25519 key pair; the address is the base58 public key, as for a Solana wallet. */
export function makeWallet(): TestWallet {
  const { publicKey, privateKey } = generateKeyPairSync('ed25519');
  const raw = Buffer.from(publicKey.export({ format: 'jwk' }).x!, 'base64url');
  return {
    address: bs58.encode(raw),
    privateKey,
    sign: (message) => bs58.encode(sign(null, Buffer.from(message, 'utf8'), privateKey)),
  };
}

export interface Contacts {
  email?: string;
  phone?: string;
  telegramChatId?: string;
}

/** Registers a wallet with verified contacts through the admin import. */
export async function importIdentity(url: string, wallet: string, contacts: Contacts): Promise<void> {
  const res = await call(url, ADMIN_TOKEN, 'POST', '/v1/admin/identities', { wallet, ...contacts });
  if (res.status !== 201) throw new Error(`identity import failed: ${res.status} ${JSON.stringify(res.body)}`);
}

/** A new wallet registered with the given contacts (all three by default). */
export async function registeredWallet(
  url: string,
  contacts: Contacts = { email: 'holder@example.com', phone: '+15555550123', telegramChatId: '424242' },
): Promise<string> {
  const wallet = makeWallet().address;
  await importIdentity(url, wallet, contacts);
  return wallet;
}
