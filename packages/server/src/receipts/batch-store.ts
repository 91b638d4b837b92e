import type { Channel } from '../channels/provider.js';
import { claimDue } from '../db/claim-due.js';
import type { Queryable } from '../db/connection.js';
import { newId } from '../ids.js';
import { receiptConfirmedEventData } from '../webhooks/event-payloads.js';
import type { Environment } from './receipt-store.js';

export interface ClaimedBatch {
  id: string;
  environment: Environment;
  root: string;
  leaf_count: number;
  status: 'pending' | 'confirmed';
  /** Memo writes tried, counting this claim's; doubles as the claim's fencing token. */
  attempts: number;
  tx: string | null;
  verification_key_id: string | null;
  /** The transaction the last attempt handed to the node, and the last block height it can land at. */
  sent_tx: string | null;
  sent_valid_height: number | null;
}

/** An environment's batches whose memo is due; each claim counts as an attempt. */
export function claimBatchesToWrite(db: Queryable, environment: Environment, limit: number, leaseMs: number, now: Date): Promise<ClaimedBatch[]> {
  const where = `status = 'pending' AND environment = '${environment === 'sandbox' ? 'sandbox' : 'production'}'`;
  return claimDue<ClaimedBatch>(
    db,
    { table: 'receipt_batches', dueColumn: 'next_attempt_at', where, set: 'attempts = job.attempts + 1' },
    { limit, leaseMs, now },
  );
}

/** Batches whose memo is on chain and whose receipts still need proofs. */
export function claimBatchesToProve(db: Queryable, limit: number, leaseMs: number, now: Date): Promise<ClaimedBatch[]> {
  return claimDue<ClaimedBatch>(
    db,
    { table: 'receipt_batches', dueColumn: 'next_attempt_at', where: `status = 'confirmed'` },
    { limit, leaseMs, now },
  );
}

const MEMBERS = 'SELECT notification_id FROM receipts WHERE batch_id = $1';

/** `last_receipt_attempt_at` of every notification in the batch. */
export async function recordWriteAttempt(db: Queryable, batchId: string, now: Date): Promise<void> {
  await db.query(`UPDATE notifications SET last_receipt_attempt_at = $2 WHERE id IN (${MEMBERS})`, [batchId, now]);
}

/**
 * Records the transaction this attempt is about to hand to the node, for the next attempt to
 * follow, or none (null: the node refused it). False when the claim was lost (then it must not be sent).
 */
export async function recordSentMemo(db: Queryable, batch: ClaimedBatch, sent: { signature: string; lastValidBlockHeight: bigint } | null): Promise<boolean> {
  const rows = await db.query(
    `UPDATE receipt_batches SET sent_tx = $3, sent_valid_height = $4 WHERE id = $1 AND attempts = $2 AND status = 'pending' RETURNING id`,
    [batch.id, batch.attempts, sent?.signature ?? null, sent?.lastValidBlockHeight.toString() ?? null],
  );
  return rows.length > 0;
}

/** The memo landed: the batch moves on to proving (due at once). False when the claim was lost. */
export async function markBatchWritten(
  db: Queryable,
  batch: ClaimedBatch,
  written: { tx: string; cluster: string; signer: string; now: Date },
): Promise<boolean> {
  const rows = await db.query(
    `UPDATE receipt_batches SET status = 'confirmed', tx = $3, cluster = $4, signer = $5, confirmed_at = $6,
       failure_reason = NULL, locked_until = NULL, next_attempt_at = $6
     WHERE id = $1 AND attempts = $2 AND status = 'pending' RETURNING id`,
    [batch.id, batch.attempts, written.tx, written.cluster, written.signer, written.now],
  );
  return rows.length > 0;
}

/**
 * Ends a claim without counting it as an attempt: due again at once (the gateway stopped
 * mid-write). Its claimer has finished with it, so its fencing token may be handed out again.
 */
export async function releaseBatchWrite(db: Queryable, batch: ClaimedBatch): Promise<void> {
  await db.query(
    `UPDATE receipt_batches SET locked_until = NULL, attempts = attempts - 1 WHERE id = $1 AND attempts = $2 AND status = 'pending'`,
    [batch.id, batch.attempts],
  );
}

export async function retryBatchWrite(db: Queryable, batch: ClaimedBatch, nextAttemptAt: Date, reason: string): Promise<void> {
  await db.query(
    `UPDATE receipt_batches SET next_attempt_at = $3, failure_reason = $4, locked_until = NULL
     WHERE id = $1 AND attempts = $2 AND status = 'pending'`,
    [batch.id, batch.attempts, nextAttemptAt, reason],
  );
}

/** The memo could not be written: the batch and every pending receipt in it fail. */
export async function failBatchWrite(tx: Queryable, batch: ClaimedBatch, reason: string, now: Date): Promise<void> {
  const rows = await tx.query(
    `UPDATE receipt_batches SET status = 'failed', failure_reason = $3, next_attempt_at = NULL, locked_until = NULL
     WHERE id = $1 AND attempts = $2 AND status = 'pending' RETURNING id`,
    [batch.id, batch.attempts, reason],
  );
  if (rows.length === 0) return;
  await tx.query(
    `UPDATE notifications SET receipt_status = 'failed', receipt_failure_reason = $2, updated_at = $3
     WHERE id IN (${MEMBERS}) AND receipt_status = 'pending'`,
    [batch.id, reason, now],
  );
}

export interface UnprovenReceipt {
  batch_id: string;
  notification_id: string;
  wallet: string;
  channel: Channel;
  delivered_at: Date;
  content_hash: string;
  salt: string;
  leaf_index: number;
  merkle_path: string[];
}

/** Pending receipts of these batches that have no proof yet, oldest batch first. */
export function findUnproven(db: Queryable, batchIds: string[], limit: number): Promise<UnprovenReceipt[]> {
  return db.query<UnprovenReceipt>(
    `SELECT r.batch_id, r.notification_id, n.wallet, COALESCE(n.fallback_channel, n.channel) AS channel, n.delivered_at,
            r.content_hash, r.salt, r.leaf_index, r.merkle_path
     FROM receipts r JOIN notifications n ON n.id = r.notification_id
     WHERE r.batch_id = ANY($1::text[]) AND r.proof IS NULL AND n.receipt_status = 'pending'
     ORDER BY r.batch_id, r.leaf_index
     LIMIT $2`,
    [batchIds, limit],
  );
}

/**
 * Stores proofs and confirms their receipts, with one `receipt.confirmed` event each, in the
 * caller's transaction. A receipt proven by another worker meanwhile keeps that proof.
 */
export async function confirmReceipts(
  tx: Queryable,
  batch: { id: string; tx: string; verificationKeyId: string },
  proven: { notificationId: string; proof: unknown; publicSignals: string[] }[],
  now: Date,
): Promise<number> {
  const stored = await tx.query<{ notification_id: string }>(
    `UPDATE receipts AS r SET proof = p.proof, public_signals = p.public_signals, verification_key_id = $5
     FROM unnest($1::text[], $2::jsonb[], $3::jsonb[]) AS p(id, proof, public_signals)
     WHERE r.notification_id = p.id AND r.batch_id = $4 AND r.proof IS NULL
     RETURNING r.notification_id`,
    [proven.map((p) => p.notificationId), proven.map((p) => JSON.stringify(p.proof)), proven.map((p) => JSON.stringify(p.publicSignals)), batch.id, batch.verificationKeyId],
  );
  // The key the batch's first proofs used (receipts record their own).
  await tx.query('UPDATE receipt_batches SET verification_key_id = COALESCE(verification_key_id, $2) WHERE id = $1', [batch.id, batch.verificationKeyId]);
  const confirmed = await tx.query<{ id: string; protocol_id: string; wallet: string; channel: string; delivered_at: Date; environment: Environment }>(
    `UPDATE notifications SET receipt_status = 'confirmed', receipt_tx = $2, receipt_failure_reason = NULL, updated_at = $3
     WHERE id = ANY($1::text[]) AND receipt_status = 'pending'
     RETURNING id, protocol_id, wallet, COALESCE(fallback_channel, channel) AS channel, delivered_at, environment`,
    [stored.map((s) => s.notification_id), batch.tx, now],
  );
  if (confirmed.length) {
    // The event's confirmed_at is the receipt's confirmedAt: when the batch's memo was confirmed.
    const [{ confirmed_at: confirmedAt }] = await tx.query<{ confirmed_at: Date | null }>('SELECT confirmed_at FROM receipt_batches WHERE id = $1', [batch.id]);
    await tx.query(
      `INSERT INTO events (id, protocol_id, type, data, created_at)
       SELECT id, protocol_id, 'receipt.confirmed', data, $4 FROM unnest($1::text[], $2::text[], $3::jsonb[]) AS e(id, protocol_id, data)`,
      [
        confirmed.map(() => newId.event()),
        confirmed.map((n) => n.protocol_id),
        confirmed.map((n) =>
          JSON.stringify(
            receiptConfirmedEventData({
              notificationId: n.id,
              wallet: n.wallet,
              channel: n.channel,
              deliveredAt: n.delivered_at,
              receiptTx: batch.tx,
              confirmedAt: confirmedAt ?? now,
              environment: n.environment,
            }),
          ),
        ),
        now,
      ],
    );
  }
  return confirmed.length;
}

/** A receipt that cannot be proven (its witness does not satisfy the circuit) fails alone. */
export async function failReceipt(db: Queryable, notificationId: string, reason: string, now: Date): Promise<void> {
  await db.query(
    `UPDATE notifications SET receipt_status = 'failed', receipt_failure_reason = $2, updated_at = $3 WHERE id = $1 AND receipt_status = 'pending'`,
    [notificationId, reason, now],
  );
}

/** Ends a proving claim: the batch stays due while a pending receipt of it lacks a proof. */
export async function releaseProvingClaim(db: Queryable, batchId: string): Promise<void> {
  await db.query(
    `UPDATE receipt_batches b SET locked_until = NULL,
       next_attempt_at = CASE WHEN EXISTS (
         SELECT 1 FROM receipts r JOIN notifications n ON n.id = r.notification_id
         WHERE r.batch_id = b.id AND r.proof IS NULL AND n.receipt_status = 'pending'
       ) THEN b.next_attempt_at ELSE NULL END
     WHERE id = $1`,
    [batchId],
  );
}
