import { storableText } from '../db/storable-text.js';
import { nextAttemptAt } from '../delivery/retry-policy.js';
import { claimBatchesToWrite, failBatchWrite, markBatchWritten, recordSentMemo, releaseBatchWrite, recordWriteAttempt, retryBatchWrite, type ClaimedBatch } from './batch-store.js';
import { parseField, receiptMemo } from './field-encoding.js';
import { MemoStillPending } from './receipt-chain.js';
import type { ReceiptWork } from './receipt-work.js';

/**
 * Step 3: writes each due batch's root on chain, one memo transaction per batch. A failed write
 * is retried with backoff; after the last attempt the batch and its receipts fail. Each
 * transaction is recorded before it is sent, and the next attempt, in this worker or another after
 * this one died, follows it first (ReceiptChain's `earlier`), so a root that landed is not written
 * again.
 *
 * Writes run beside the receipt loop's passes, at most `limit` at a time for each environment: a
 * slow node holds up its own batches, not the sandbox's, the other stages or the next batches'
 * proofs. The loop is woken when one ends. Nothing new is claimed once the gateway is stopping.
 */
export async function writeBatchMemos(work: ReceiptWork, limit = 4): Promise<number> {
  const lease = work.config.confirmTimeoutMs + 30_000;
  let started = 0;
  for (const environment of ENVIRONMENTS) {
    const writes = work.writes[environment];
    const room = limit - writes.size;
    if (room <= 0 || work.stopping.signal.aborted) continue;
    const claimed = await claimBatchesToWrite(work.db, environment, room, lease, work.now());
    for (const batch of claimed) {
      const write: Promise<void> = writeBatchMemo(work, batch)
        .catch((error: unknown) => work.log.error({ batch: batch.id, err: error }, 'receipt batch write could not be recorded'))
        .finally(() => {
          writes.delete(write);
          work.written();
        });
      writes.add(write);
    }
    started += claimed.length;
  }
  return started;
}

const ENVIRONMENTS = ['production', 'sandbox'] as const;

/**
 * Attempts past HERALD_RECEIPT_MAX_ATTEMPTS that only follow the last transaction, when the last
 * attempt ended while it could still land, before the batch is given up.
 */
const FOLLOW_ONLY_ATTEMPTS = 3;

async function writeBatchMemo(work: ReceiptWork, batch: ClaimedBatch): Promise<void> {
  await recordWriteAttempt(work.db, batch.id, work.now());
  const chain = work.chains[batch.environment];
  const { retry } = work.config;
  try {
    const earlier = batch.sent_tx === null || batch.sent_valid_height === null ? undefined : { signature: batch.sent_tx, lastValidBlockHeight: BigInt(batch.sent_valid_height) };
    const tx = await chain.writeMemo(receiptMemo(batch.id, parseField(batch.root)), {
      earlier,
      sendNew: batch.attempts <= retry.maxAttempts,
      record: async (sent) => {
        if (!(await recordSentMemo(work.db, batch, sent))) throw new Error('the batch was claimed by another worker');
      },
      signal: work.stopping.signal,
    });
    await markBatchWritten(work.db, batch, { tx, cluster: chain.cluster, signer: await chain.signer(), now: work.now() });
  } catch (error) {
    if (work.stopping.signal.aborted && (error as Error)?.name === 'AbortError') {
      // Not a failure of the write: the batch is due again at once, its attempt not counted, for
      // the next gateway to follow its transaction.
      work.log.info({ batch: batch.id }, 'receipt batch write stopped with the gateway');
      await releaseBatchWrite(work.db, batch);
      return;
    }
    const reason = storableText(`on-chain write failed: ${(error as Error).message}`).slice(0, 1000);
    let next = nextAttemptAt(retry, batch.attempts, work.now());
    if (!next && error instanceof MemoStillPending && batch.attempts < retry.maxAttempts + FOLLOW_ONLY_ATTEMPTS) {
      // Its transaction may still land: look for it again before calling the write failed.
      next = new Date(work.now().getTime() + retry.baseMs);
    }
    work.log.warn({ batch: batch.id, attempts: batch.attempts, cluster: chain.cluster, err: error, retryAt: next }, 'receipt batch write failed');
    if (next) await retryBatchWrite(work.db, batch, next, reason);
    else await work.db.transaction((tx) => failBatchWrite(tx, batch, `${reason} (gave up after ${batch.attempts} attempts)`, work.now()));
  }
}
