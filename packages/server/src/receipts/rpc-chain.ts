import {
  createKeyPairSignerFromBytes,
  createSolanaRpc,
  getBase64EncodedWireTransaction,
  getSignatureFromTransaction,
  type KeyPairSigner,
} from '@solana/kit';
import { signMemoTransaction } from './memo-transaction.js';
import type { ReceiptChain } from './receipt-chain.js';

export interface RpcChainOptions {
  url: string;
  /** 64 bytes, Solana CLI format (secret seed then public key). */
  secretKey: Uint8Array;
  cluster: string;
  /** How long to wait for `confirmed` before giving the attempt up. */
  confirmTimeoutMs: number;
  pollMs?: number;
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const describe = (value: unknown) => JSON.stringify(value, (_key, v) => (typeof v === 'bigint' ? v.toString() : v));

/**
 * A Solana cluster through its JSON-RPC API (@solana/kit): send with preflight, then poll the
 * signature until `confirmed`, failing when the transaction errs, its blockhash expires or the
 * timeout passes. Polling needs no WebSocket endpoint, which many RPC providers meter separately.
 */
export class RpcChain implements ReceiptChain {
  readonly cluster: string;
  private readonly rpc: ReturnType<typeof createSolanaRpc>;
  private payer: Promise<KeyPairSigner> | undefined;

  constructor(private readonly options: RpcChainOptions) {
    this.cluster = options.cluster;
    this.rpc = createSolanaRpc(options.url);
  }

  async signer(): Promise<string> {
    return (await this.keyPair()).address;
  }

  async writeMemo(memo: string): Promise<string> {
    const payer = await this.keyPair();
    const { value: lifetime } = await this.rpc.getLatestBlockhash({ commitment: 'confirmed' }).send();
    const transaction = await signMemoTransaction(payer, memo, lifetime);
    const signature = getSignatureFromTransaction(transaction);
    await this.rpc
      .sendTransaction(getBase64EncodedWireTransaction(transaction), { encoding: 'base64', preflightCommitment: 'confirmed' })
      .send();
    const deadline = Date.now() + this.options.confirmTimeoutMs;
    for (;;) {
      const { value } = await this.rpc.getSignatureStatuses([signature]).send();
      const status = value[0];
      if (status?.err) throw new Error(`transaction ${signature} failed: ${describe(status.err)}`);
      if (status?.confirmationStatus === 'confirmed' || status?.confirmationStatus === 'finalized') return signature;
      const height = await this.rpc.getBlockHeight({ commitment: 'confirmed' }).send();
      if (height > lifetime.lastValidBlockHeight) throw new Error(`transaction ${signature} expired before it was confirmed`);
      if (Date.now() >= deadline) throw new Error(`transaction ${signature} not confirmed within ${this.options.confirmTimeoutMs} ms`);
      await sleep(this.options.pollMs ?? 400);
    }
  }

  async close(): Promise<void> {}

  private keyPair(): Promise<KeyPairSigner> {
    this.payer ??= createKeyPairSignerFromBytes(this.options.secretKey);
    return this.payer;
  }
}
