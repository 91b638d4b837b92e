import { createPrivateKey, createPublicKey } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { ConfigError, integer, url } from '../config.js';
import type { RetryPolicy } from '../delivery/retry-policy.js';
import { MAX_BATCH_LEAVES } from './merkle-tree.js';

/** On-chain receipts (DESIGN.md §10); read by loadConfig, like every other setting. */
export interface ReceiptConfig {
  /** SOLANA_RPC_URL: production receipts go to this cluster; unset, to the in-process litesvm. */
  rpcUrl?: string;
  /** HERALD_RECEIPT_KEYPAIR: the 64-byte secret key that signs and pays (required with SOLANA_RPC_URL). */
  keypair?: Uint8Array;
  /** HERALD_SOLANA_CLUSTER: the label receipts of the RPC cluster carry (default `custom`). */
  cluster: string;
  /** HERALD_RECEIPT_BATCH_SIZE: leaves per batch, 1 to 1024 (the circuit's tree), default 1024. */
  batchSize: number;
  /** HERALD_RECEIPT_BATCH_MS: longest wait of a leaf before a partial batch is closed, default 5 000. */
  batchMs: number;
  /** HERALD_RECEIPT_ZKEY / HERALD_RECEIPT_VKEY: a ceremony's keys for the shipped circuit (both or neither). */
  zkeyPath?: string;
  vkeyPath?: string;
  /** HERALD_RECEIPT_MAX_ATTEMPTS (6, the first write included) and HERALD_RECEIPT_RETRY_BASE_MS (10 000): on-chain write retries. */
  retry: RetryPolicy;
  /** HERALD_RECEIPT_CONFIRM_TIMEOUT_MS: how long one write waits for `confirmed` (default 60 000). */
  confirmTimeoutMs: number;
}

type Env = Record<string, string | undefined>;

/** The public half of an ed25519 seed (PKCS#8 wraps the 32 seed bytes behind a fixed prefix). */
function publicKeyOf(seed: Uint8Array): Buffer {
  const der = Buffer.concat([Buffer.from('302e020100300506032b657004220420', 'hex'), seed]);
  return createPublicKey(createPrivateKey({ key: der, format: 'der', type: 'pkcs8' })).export({ format: 'der', type: 'spki' }).subarray(-32);
}

/** A Solana CLI key file's content (a JSON array of 64 bytes), inline or as a path to the file. */
function keypair(env: Env): Uint8Array | undefined {
  const name = 'HERALD_RECEIPT_KEYPAIR';
  const raw = env[name]?.trim();
  if (!raw) return undefined;
  let text = raw;
  if (!raw.startsWith('[')) {
    if (!existsSync(raw)) throw new ConfigError(name, `must be a JSON array of 64 bytes or the path to a key file; ${path.resolve(raw)} does not exist`);
    text = readFileSync(raw, 'utf8');
  }
  let bytes: unknown;
  try {
    bytes = JSON.parse(text);
  } catch {
    bytes = undefined;
  }
  if (!Array.isArray(bytes) || bytes.length !== 64 || !bytes.every((b) => Number.isInteger(b) && b >= 0 && b <= 255)) {
    throw new ConfigError(name, 'must hold a JSON array of 64 bytes (the format of `solana-keygen new`)');
  }
  const key = Uint8Array.from(bytes as number[]);
  if (!publicKeyOf(key.subarray(0, 32)).equals(key.subarray(32))) {
    throw new ConfigError(name, 'is not a valid key pair: its last 32 bytes are not the public key of its first 32');
  }
  return key;
}

function keyFiles(env: Env): { zkeyPath?: string; vkeyPath?: string } {
  const zkey = env.HERALD_RECEIPT_ZKEY || undefined;
  const vkey = env.HERALD_RECEIPT_VKEY || undefined;
  if (!zkey !== !vkey) throw new ConfigError(zkey ? 'HERALD_RECEIPT_VKEY' : 'HERALD_RECEIPT_ZKEY', 'is required when the other receipt key is set');
  for (const [name, file] of [['HERALD_RECEIPT_ZKEY', zkey], ['HERALD_RECEIPT_VKEY', vkey]] as const) {
    if (file && !existsSync(file)) throw new ConfigError(name, `names a file that does not exist: ${path.resolve(file)}`);
  }
  return { zkeyPath: zkey && path.resolve(zkey), vkeyPath: vkey && path.resolve(vkey) };
}

export function receiptConfig(env: Env): ReceiptConfig {
  const rpcUrl = url(env, 'SOLANA_RPC_URL', ['http:', 'https:']);
  const key = keypair(env);
  if (rpcUrl && !key) throw new ConfigError('HERALD_RECEIPT_KEYPAIR', 'is required with SOLANA_RPC_URL (the key that signs receipt transactions)');
  const cluster = env.HERALD_SOLANA_CLUSTER || 'custom';
  if (!/^[a-z0-9][a-z0-9-]{0,31}$/.test(cluster)) throw new ConfigError('HERALD_SOLANA_CLUSTER', 'must be a cluster name such as mainnet-beta or devnet');
  return {
    rpcUrl,
    keypair: key,
    cluster,
    batchSize: integer(env, 'HERALD_RECEIPT_BATCH_SIZE', MAX_BATCH_LEAVES, 1, MAX_BATCH_LEAVES),
    batchMs: integer(env, 'HERALD_RECEIPT_BATCH_MS', 5000, 10, 3_600_000),
    ...keyFiles(env),
    retry: {
      maxAttempts: integer(env, 'HERALD_RECEIPT_MAX_ATTEMPTS', 6, 1, 50),
      baseMs: integer(env, 'HERALD_RECEIPT_RETRY_BASE_MS', 10_000, 1, 3_600_000),
      maxMs: 600_000,
    },
    confirmTimeoutMs: integer(env, 'HERALD_RECEIPT_CONFIRM_TIMEOUT_MS', 60_000, 100, 600_000),
  };
}
