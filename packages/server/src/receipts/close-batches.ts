import { newId } from '../ids.js';
import { fieldHex, parseField } from './field-encoding.js';
import type { ReceiptWork } from './receipt-work.js';
import { insertBatch, lockUnbatched, unbatchedBacklog, type Environment } from './receipt-store.js';

/**
 * Step 2: groups leaves into batches of HERALD_RECEIPT_BATCH_SIZE, or fewer once the oldest
 * waiting leaf is HERALD_RECEIPT_BATCH_MS old, per environment. Each batch gets its Merkle root
 * and every member its path, in the transaction that takes the leaves.
 */
export async function closeBatches(work: ReceiptWork): Promise<number> {
  const { batchSize, batchMs } = work.config;
  let closed = 0;
  for (const { environment, count, oldest } of await unbatchedBacklog(work.db)) {
    let remaining = count;
    while (remaining >= batchSize) {
      const taken = await closeBatch(work, environment);
      if (taken === 0) break;
      remaining -= taken;
      closed++;
    }
    // `oldest` is the age of the backlog's first leaf: it only speaks for a remainder nothing was taken from.
    if (remaining > 0 && remaining === count && work.now().getTime() - oldest.getTime() >= batchMs) {
      if ((await closeBatch(work, environment)) > 0) closed++;
    }
  }
  return closed;
}

async function closeBatch(work: ReceiptWork, environment: Environment): Promise<number> {
  return work.db.transaction(async (tx) => {
    const leaves = await lockUnbatched(tx, environment, work.config.batchSize);
    if (leaves.length === 0) return 0;
    const tree = await work.crypto.tree(leaves.map((l) => parseField(l.leaf)));
    await insertBatch(
      tx,
      { id: newId.receiptBatch(), environment, root: fieldHex(tree.root), now: work.now() },
      leaves.map((l, i) => ({ notificationId: l.notification_id, leafIndex: i, path: tree.paths[i].map(fieldHex) })),
    );
    return leaves.length;
  });
}
