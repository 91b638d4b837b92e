/** Real ed25519 wallets for identity tests, and the HTTP steps of registration they sign for. */
import { generateKeyPairSync, sign, type KeyObject } from 'node:crypto';
import bs58 from 'bs58';
import { call, type TestGateway } from '../support/gateway.js';

export interface TestWallet {
  address: string;
  privateKey: KeyObject;
  /** The raw 64-byte signature of the UTF-8 message. */
  sign(message: string): Buffer;
}

export function newWallet(): TestWallet {
  const { publicKey, privateKey } = generateKeyPairSync('ed25519');
  const raw = Buffer.from(publicKey.export({ format: 'jwk' }).x!, 'base64url');
  return { address: bs58.encode(raw), privateKey, sign: (message) => sign(null, Buffer.from(message, 'utf8'), privateKey) };
}

export async function challenge(gw: TestGateway, wallet: string, purpose?: 'register' | 'delete') {
  const res = await call(gw.url, undefined, 'POST', '/v1/identities/challenge', { wallet, ...(purpose ? { purpose } : {}) });
  if (res.status !== 200) throw new Error(`challenge failed: ${res.status} ${JSON.stringify(res.body)}`);
  return res.body as { message: string; nonce: string; expiresAt: string };
}

/** Signs a fresh challenge and posts the registration; returns the raw answer. */
export async function register(gw: TestGateway, wallet: TestWallet, contacts: { email?: string | null; phone?: string | null } = {}) {
  const { message, nonce } = await challenge(gw, wallet.address);
  return call(gw.url, undefined, 'POST', '/v1/identities', { wallet: wallet.address, nonce, signature: bs58.encode(wallet.sign(message)), ...contacts });
}

/** The last code the capture provider kept for a wallet's channel. */
export async function lastCode(gw: TestGateway, wallet: string, channel: 'email' | 'sms'): Promise<string> {
  const [row] = await gw.herald.deps.db.query<{ text: string }>(
    `SELECT text FROM captured_messages WHERE wallet = $1 AND channel = $2 ORDER BY id DESC LIMIT 1`,
    [wallet, channel],
  );
  const code = row && /\b(\d{6})\b/.exec(row.text)?.[1];
  if (!code) throw new Error(`no ${channel} code captured for ${wallet}`);
  return code;
}

export function verify(gw: TestGateway, wallet: string, channel: 'email' | 'sms', code: string) {
  return call(gw.url, undefined, 'POST', '/v1/identities/verify', { wallet, channel, code });
}

/** A gateway clock that tests move forward. */
export function testClock() {
  let offset = 0;
  return {
    now: () => new Date(Date.now() + offset),
    advance(ms: number) {
      offset += ms;
    },
  };
}
