import { createHash, randomBytes } from 'node:crypto';
import type { Channel } from '../channels/provider.js';
import { walletPublicKey } from '../wallet.js';

/** The BN254 scalar field: every circuit input and Poseidon hash is an element of it. */
export const FIELD_PRIME = 21888242871839275222246405745257275088548364400416034343698204186575808495617n;

const CROCKFORD = '0123456789ABCDEFGHJKMNPQRSTVWXYZ';

/** A notification id (a ULID: 26 Crockford base32 characters) read as its 128-bit integer. */
export function notificationIdField(id: string): bigint {
  if (!/^[0-7][0-9A-HJKMNP-TV-Z]{25}$/i.test(id)) throw new RangeError(`not a ULID: ${id}`);
  let value = 0n;
  for (const char of id.toUpperCase()) value = (value << 5n) | BigInt(CROCKFORD.indexOf(char));
  return value;
}

/** The wallet's 32 public-key bytes as two big-endian 128-bit limbs, [high, low]. */
export function walletLimbs(wallet: string): [bigint, bigint] {
  const hex = Buffer.from(walletPublicKey(wallet)).toString('hex');
  if (hex.length !== 64) throw new RangeError('a wallet address decodes to 32 bytes');
  return [BigInt('0x' + hex.slice(0, 32)), BigInt('0x' + hex.slice(32))];
}

export const CHANNEL_CODES: Record<Channel, bigint> = { email: 1n, telegram: 2n, sms: 3n };

/** SHA-256 of the JSON array [subject, body] (unambiguous for any text), reduced into the field. */
export function contentHash(subject: string, body: string): bigint {
  const digest = createHash('sha256').update(JSON.stringify([subject, body]), 'utf8').digest('hex');
  return BigInt('0x' + digest) % FIELD_PRIME;
}

/** 248 random bits: uniformly below the field prime, and enough that a leaf cannot be guessed. */
export function randomSalt(): bigint {
  return BigInt('0x' + randomBytes(31).toString('hex'));
}

/** A field element as 0x + 64 lowercase hex digits, the form stored and answered. */
export function fieldHex(value: bigint): string {
  return '0x' + value.toString(16).padStart(64, '0');
}

/** Reads a stored field element (0x-hex or decimal). */
export function parseField(value: string): bigint {
  const parsed = BigInt(value);
  if (parsed < 0n || parsed >= FIELD_PRIME) throw new RangeError('not a field element');
  return parsed;
}

/** The values a leaf commits to, as field elements (the circuit's inputs of the same names). */
export interface LeafFields {
  notificationId: bigint;
  walletHi: bigint;
  walletLo: bigint;
  channel: bigint;
  /** Milliseconds since the Unix epoch. */
  deliveredAt: bigint;
  contentHash: bigint;
  salt: bigint;
}

export function leafFields(n: { id: string; wallet: string; channel: Channel; deliveredAt: Date; contentHash: bigint; salt: bigint }): LeafFields {
  const [walletHi, walletLo] = walletLimbs(n.wallet);
  return {
    notificationId: notificationIdField(n.id),
    walletHi,
    walletLo,
    channel: CHANNEL_CODES[n.channel],
    deliveredAt: BigInt(n.deliveredAt.getTime()),
    contentHash: n.contentHash,
    salt: n.salt,
  };
}

/** The memo written on Solana for a batch: names the batch and carries its root. */
export function receiptMemo(batchId: string, root: bigint): string {
  return `herald:receipt:v1:${batchId}:${fieldHex(root)}`;
}
