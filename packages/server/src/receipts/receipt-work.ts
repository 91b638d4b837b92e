import type { Logger } from 'pino';
import type { Database } from '../db/connection.js';
import type { VerificationKey } from './circuit-artifacts.js';
import type { ReceiptChain } from './receipt-chain.js';
import type { ReceiptConfig } from './receipt-config.js';
import type { ReceiptCrypto } from './receipt-crypto.js';
import type { Environment } from './receipt-store.js';

/** What the receipt stages share: storage, the prover process, and one chain per environment. */
export interface ReceiptWork {
  db: Database;
  log: Logger;
  now: () => Date;
  config: ReceiptConfig;
  crypto: ReceiptCrypto;
  /** Production goes to the configured chain; sandbox always to the in-process litesvm. */
  chains: Record<Environment, ReceiptChain>;
  verificationKey: VerificationKey;
  /** Memo writes under way in each environment (writeBatchMemos), which run beside the passes. */
  writes: Record<Environment, Set<Promise<void>>>;
  /** Called when a memo write ends, to run the next pass. */
  written: () => void;
  /** Aborted when the gateway stops: writes under way end. */
  stopping: AbortController;
}
