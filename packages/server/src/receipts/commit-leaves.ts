import { failReceipt } from './batch-store.js';
import { contentHash, fieldHex, leafFields, randomSalt, type LeafFields } from './field-encoding.js';
import type { ReceiptWork } from './receipt-work.js';
import { findDeliveredWithoutLeaf, insertLeaves, type DeliveredNotification } from './receipt-store.js';

/**
 * Step 1: a leaf for each delivered notification whose receipt is pending. The salt is drawn
 * here and stored with the leaf; without it nobody can test a guess of the hidden fields.
 */
export async function commitLeaves(work: ReceiptWork, limit = 1024): Promise<number> {
  const delivered = await findDeliveredWithoutLeaf(work.db, limit);
  if (delivered.length === 0) return 0;
  const prepared: { n: DeliveredNotification; salt: bigint; hash: bigint; fields: LeafFields }[] = [];
  for (const n of delivered) {
    const salt = randomSalt();
    const hash = contentHash(n.subject, n.body);
    try {
      prepared.push({ n, salt, hash, fields: leafFields({ id: n.id, wallet: n.wallet, channel: n.channel, deliveredAt: n.delivered_at, contentHash: hash, salt }) });
    } catch (error) {
      // Not expected (ids and wallets are validated on the way in), but one bad row must not stall the rest.
      await failReceipt(work.db, n.id, `cannot commit to this notification: ${(error as Error).message}`, work.now());
    }
  }
  if (prepared.length === 0) return delivered.length;
  const leaves = await work.crypto.leaves(prepared.map((p) => p.fields));
  await insertLeaves(
    work.db,
    prepared.map((p, i) => ({
      notificationId: p.n.id,
      protocolId: p.n.protocol_id,
      environment: p.n.environment,
      leaf: fieldHex(leaves[i]),
      salt: fieldHex(p.salt),
      contentHash: fieldHex(p.hash),
    })),
    work.now(),
  );
  return delivered.length;
}
