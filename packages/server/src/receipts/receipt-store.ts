import type { Channel } from '../channels/provider.js';
import type { Queryable } from '../db/connection.js';

export type Environment = 'production' | 'sandbox';

export interface DeliveredNotification {
  id: string;
  protocol_id: string;
  environment: Environment;
  wallet: string;
  subject: string;
  body: string;
  /** The channel that delivered it (the SMS fallback when a critical message fell back). */
  channel: Channel;
  delivered_at: Date;
}

/** Delivered notifications whose receipt is pending and has no leaf yet, oldest delivery first. */
export async function findDeliveredWithoutLeaf(db: Queryable, limit: number): Promise<DeliveredNotification[]> {
  return db.query<DeliveredNotification>(
    `SELECT n.id, n.protocol_id, n.environment, n.wallet, n.subject, n.body,
            COALESCE(n.fallback_channel, n.channel) AS channel, n.delivered_at
     FROM notifications n
     WHERE n.receipt_status = 'pending' AND n.status = 'delivered'
       AND NOT EXISTS (SELECT 1 FROM receipts r WHERE r.notification_id = n.id)
     ORDER BY n.delivered_at
     LIMIT $1`,
    [limit],
  );
}

export interface NewLeaf {
  notificationId: string;
  protocolId: string;
  environment: Environment;
  leaf: string;
  salt: string;
  contentHash: string;
}

/** Stores leaves; a notification that already has one (another worker was first) keeps it. */
export async function insertLeaves(db: Queryable, leaves: NewLeaf[], now: Date): Promise<number> {
  if (leaves.length === 0) return 0;
  const col = <T>(pick: (l: NewLeaf) => T) => leaves.map(pick);
  const inserted = await db.query(
    `INSERT INTO receipts (notification_id, protocol_id, environment, leaf, salt, content_hash, created_at)
     SELECT id, protocol_id, environment, leaf, salt, content_hash, $7
     FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::text[], $6::text[])
       AS l(id, protocol_id, environment, leaf, salt, content_hash)
     ON CONFLICT (notification_id) DO NOTHING
     RETURNING notification_id`,
    [col((l) => l.notificationId), col((l) => l.protocolId), col((l) => l.environment), col((l) => l.leaf), col((l) => l.salt), col((l) => l.contentHash), now],
  );
  return inserted.length;
}

/** Per environment: how many leaves wait for a batch and since when. */
export async function unbatchedBacklog(db: Queryable): Promise<{ environment: Environment; count: number; oldest: Date }[]> {
  return db.query(
    `SELECT environment, count(*)::int AS count, min(created_at) AS oldest
     FROM receipts WHERE batch_id IS NULL GROUP BY environment`,
  );
}

/** Locks the oldest unbatched leaves of one environment (rows another batcher holds are skipped). */
export async function lockUnbatched(tx: Queryable, environment: Environment, limit: number): Promise<{ notification_id: string; leaf: string }[]> {
  return tx.query(
    `SELECT notification_id, leaf FROM receipts
     WHERE batch_id IS NULL AND environment = $1
     ORDER BY created_at, notification_id
     LIMIT $2
     FOR UPDATE SKIP LOCKED`,
    [environment, limit],
  );
}

/** A new batch, due for its memo now, and every member's place and path in its tree. */
export async function insertBatch(
  tx: Queryable,
  batch: { id: string; environment: Environment; root: string; now: Date },
  members: { notificationId: string; leafIndex: number; path: string[] }[],
): Promise<void> {
  await tx.query(
    `INSERT INTO receipt_batches (id, environment, root, leaf_count, status, attempts, next_attempt_at, created_at)
     VALUES ($1, $2, $3, $4, 'pending', 0, $5, $5)`,
    [batch.id, batch.environment, batch.root, members.length, batch.now],
  );
  await tx.query(
    `UPDATE receipts AS r SET batch_id = $1, leaf_index = m.leaf_index, merkle_path = m.path
     FROM unnest($2::text[], $3::int[], $4::jsonb[]) AS m(id, leaf_index, path)
     WHERE r.notification_id = m.id`,
    [batch.id, members.map((m) => m.notificationId), members.map((m) => m.leafIndex), members.map((m) => JSON.stringify(m.path))],
  );
}

export async function saveVerificationKey(db: Queryable, key: { id: string; key: Record<string, unknown> }): Promise<void> {
  await db.query('INSERT INTO receipt_verification_keys (id, verification_key) VALUES ($1, $2) ON CONFLICT (id) DO NOTHING', [
    key.id,
    JSON.stringify(key.key),
  ]);
}

export interface ReceiptRow {
  id: string;
  wallet: string;
  write_receipt: boolean;
  receipt_status: 'disabled' | 'pending' | 'confirmed' | 'failed';
  receipt_failure_reason: string | null;
  leaf: string | null;
  leaf_index: number | null;
  merkle_path: string[] | null;
  proof: Record<string, unknown> | null;
  public_signals: string[] | null;
  batch_id: string | null;
  root: string | null;
  tx: string | null;
  cluster: string | null;
  signer: string | null;
  confirmed_at: Date | null;
  verification_key: Record<string, unknown> | null;
}

/** A notification of the protocol with whatever its receipt has so far (undefined: no such notification). */
export async function findReceipt(db: Queryable, protocolId: string, notificationId: string): Promise<ReceiptRow | undefined> {
  const [row] = await db.query<ReceiptRow>(
    `SELECT n.id, n.wallet, n.write_receipt, n.receipt_status, n.receipt_failure_reason,
            r.leaf, r.leaf_index, r.merkle_path, r.proof, r.public_signals,
            b.id AS batch_id, b.root, b.tx, b.cluster, b.signer, b.confirmed_at, k.verification_key
     FROM notifications n
     LEFT JOIN receipts r ON r.notification_id = n.id
     LEFT JOIN receipt_batches b ON b.id = r.batch_id
     LEFT JOIN receipt_verification_keys k ON k.id = COALESCE(r.verification_key_id, b.verification_key_id)
     WHERE n.id = $1 AND n.protocol_id = $2`,
    [notificationId, protocolId],
  );
  return row;
}
