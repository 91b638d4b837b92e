import { storableText } from '../db/storable-text.js';
import { nextAttemptAt } from '../delivery/retry-policy.js';
import { claimBatchesToWrite, failBatchWrite, markBatchWritten, recordWriteAttempt, retryBatchWrite, type ClaimedBatch } from './batch-store.js';
import { parseField, receiptMemo } from './field-encoding.js';
import type { ReceiptWork } from './receipt-work.js';

/**
 * Step 3: writes each due batch's root on chain, one memo transaction per batch. A failed write
 * is retried with backoff; after the last attempt the batch and its receipts fail. A worker that
 * dies after the memo landed but before recording it leaves the batch to be written again: the
 * root then appears in two transactions, both naming the same batch.
 */
export async function writeBatchMemos(work: ReceiptWork, limit = 4): Promise<number> {
  const lease = work.config.confirmTimeoutMs + 30_000;
  const claimed = await claimBatchesToWrite(work.db, limit, lease, work.now());
  for (const batch of claimed) await writeBatchMemo(work, batch);
  return claimed.length;
}

async function writeBatchMemo(work: ReceiptWork, batch: ClaimedBatch): Promise<void> {
  await recordWriteAttempt(work.db, batch.id, work.now());
  const chain = work.chains[batch.environment];
  try {
    const tx = await chain.writeMemo(receiptMemo(batch.id, parseField(batch.root)));
    await markBatchWritten(work.db, batch, { tx, cluster: chain.cluster, signer: await chain.signer(), now: work.now() });
  } catch (error) {
    const reason = storableText(`on-chain write failed: ${(error as Error).message}`).slice(0, 1000);
    const next = nextAttemptAt(work.config.retry, batch.attempts, work.now());
    work.log.warn({ batch: batch.id, attempts: batch.attempts, cluster: chain.cluster, err: error, retryAt: next }, 'receipt batch write failed');
    if (next) await retryBatchWrite(work.db, batch, next, reason);
    else await work.db.transaction((tx) => failBatchWrite(tx, batch, `${reason} (gave up after ${batch.attempts} attempts)`, work.now()));
  }
}
