import { createKeyPairSignerFromBytes, generateKeyPairSigner, getSignatureFromTransaction, lamports, type KeyPairSigner } from '@solana/kit';
import type { LiteSVM } from 'litesvm';
import { signMemoTransaction } from './memo-transaction.js';
import type { ReceiptChain } from './receipt-chain.js';

const FUNDING = lamports(10_000_000_000n);
const LOW_BALANCE = 100_000_000n;

/**
 * The embedded chain: a litesvm instance in this process, so receipts work with zero setup. Its
 * transactions are real (signed, executed by the memo program, fees charged) but live only in
 * this process's memory: a development and sandbox chain, not a public record.
 */
export class LiteSvmChain implements ReceiptChain {
  readonly cluster = 'litesvm';
  private state: Promise<{ svm: LiteSVM; payer: KeyPairSigner }> | undefined;

  /** `secretKey`: 64 bytes (Solana CLI format); a fresh key pair when absent. */
  constructor(private readonly secretKey?: Uint8Array) {}

  async signer(): Promise<string> {
    return (await this.open()).payer.address;
  }

  async writeMemo(memo: string): Promise<string> {
    const { svm, payer } = await this.open();
    if ((svm.getBalance(payer.address) ?? 0n) < LOW_BALANCE) svm.airdrop(payer.address, FUNDING);
    const { FailedTransactionMetadata } = await import('litesvm');
    const transaction = await signMemoTransaction(payer, memo, { blockhash: svm.latestBlockhash(), lastValidBlockHeight: 0n });
    const result = svm.sendTransaction(transaction);
    // A new blockhash per write: a retried memo is a new transaction, never "already processed".
    svm.expireBlockhash();
    if (result instanceof FailedTransactionMetadata) {
      throw new Error(`litesvm rejected the memo transaction: ${result.err()} ${result.meta().logs().join(' | ')}`);
    }
    return getSignatureFromTransaction(transaction);
  }

  async close(): Promise<void> {}

  private open() {
    this.state ??= (async () => {
      // Loaded on first use: most gateways never write a receipt.
      const { LiteSVM } = await import('litesvm');
      const svm = new LiteSVM();
      const payer = this.secretKey ? await createKeyPairSignerFromBytes(this.secretKey) : await generateKeyPairSigner();
      svm.airdrop(payer.address, FUNDING);
      return { svm, payer };
    })();
    return this.state;
  }
}
