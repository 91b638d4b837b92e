import { claimBatchesToProve, confirmReceipts, failReceipt, findUnproven, releaseProvingClaim, type ClaimedBatch, type UnprovenReceipt } from './batch-store.js';
import { leafFields, parseField } from './field-encoding.js';
import type { ReceiptWork } from './receipt-work.js';

export interface ProveOptions {
  /** Stop starting proofs after this long, so a big batch does not hold the loop. */
  sliceMs: number;
  /** Proofs in flight at once (the prover spreads each over the cores); also batches claimed at once. */
  parallel: number;
  stopping: () => boolean;
}

type Proven = { batch: ClaimedBatch; notificationId: string; proof: unknown; publicSignals: string[] };

// circom's witness calculator reports unsatisfiable inputs with these: proving again cannot help.
const UNSATISFIABLE = /Assert Failed|Error in template|Not all inputs have been set|Too many values/;

/**
 * Step 4: proofs for batches whose root is on chain. Each proven receipt is confirmed at once
 * (proof stored, `receipt_status` confirmed, `receipt_tx` set, `receipt.confirmed` event) in one
 * transaction, so `confirmed` always means "on chain and verifiable". Several batches are claimed
 * together so that small batches still keep `parallel` proofs in flight.
 */
export async function proveReceipts(work: ReceiptWork, options: ProveOptions): Promise<number> {
  const batches = await claimBatchesToProve(work.db, options.parallel, options.sliceMs * 4 + 60_000, work.now());
  // Each receipt records the key that proved it, so a batch begun with other keys (before a new
  // circuit or key was deployed) is finished with ours.
  const keyId = work.verificationKey.id;
  if (batches.length === 0) return 0;
  const byId = new Map(batches.map((b) => [b.id, b]));
  let confirmed = 0;
  const started = Date.now();
  try {
    while (!options.stopping() && Date.now() - started < options.sliceMs) {
      const todo = await findUnproven(work.db, [...byId.keys()], options.parallel);
      if (todo.length === 0) break;
      const proven = (await Promise.all(todo.map((r) => proveOne(work, byId.get(r.batch_id)!, r)))).filter((p): p is Proven => p !== undefined);
      if (proven.length) confirmed += await work.db.transaction((tx) => confirmProven(tx, proven, keyId, work.now()));
    }
  } finally {
    await Promise.all(batches.map((b) => releaseProvingClaim(work.db, b.id)));
  }
  return confirmed;
}

async function confirmProven(tx: Parameters<typeof confirmReceipts>[0], proven: Proven[], keyId: string, now: Date): Promise<number> {
  let confirmed = 0;
  for (const batch of new Set(proven.map((p) => p.batch))) {
    const mine = proven.filter((p) => p.batch === batch);
    confirmed += await confirmReceipts(tx, { id: batch.id, tx: batch.tx!, verificationKeyId: keyId }, mine, now);
  }
  return confirmed;
}

async function proveOne(work: ReceiptWork, batch: ClaimedBatch, r: UnprovenReceipt): Promise<Proven | undefined> {
  try {
    const fields = leafFields({
      id: r.notification_id,
      wallet: r.wallet,
      channel: r.channel,
      deliveredAt: r.delivered_at,
      contentHash: parseField(r.content_hash),
      salt: parseField(r.salt),
    });
    const { proof, publicSignals } = await work.crypto.prove({ fields, root: parseField(batch.root), leafIndex: r.leaf_index, path: r.merkle_path.map(parseField) });
    return { batch, notificationId: r.notification_id, proof, publicSignals };
  } catch (error) {
    const message = (error as Error).message;
    if (!UNSATISFIABLE.test(message)) throw error;
    await failReceipt(work.db, r.notification_id, `proof generation failed: ${message.slice(0, 500)}`, work.now());
    return undefined;
  }
}
