import type { Channel } from '../channels/provider.js';
import type { Queryable } from '../db/connection.js';
import { DEFAULT_CHANNEL_ORDER, NO_CHANNEL, VERIFIED } from '../notifications/choose-channel.js';
import type { NotificationStatus } from '../notifications/notification-store.js';
import { sqlBase32Suffix } from './fan-out-ids.js';

/** decideChannels for subscribers, who have no preferred channel: the first subscribed and verified channel in the default order. */
const CHOSEN_CHANNEL = `CASE ${DEFAULT_CHANNEL_ORDER.map((c) => `WHEN '${c}' = ANY(s.channels) AND ${VERIFIED[c]} THEN '${c}'`).join(' ')} END`;

export interface FanOut {
  protocolId: string;
  environment: 'production' | 'sandbox';
  broadcastId: string;
  idPrefix: string;
  subject: string;
  body: string;
  category: string;
  payloadHash: string;
  templateId: string | null;
  templateVersion: number | null;
  templateVariables: Record<string, unknown> | null;
  writeReceipt: boolean;
  now: Date;
}

/**
 * One notification per active subscriber of the protocol (subscriptions ⋈ identities), in one
 * INSERT … SELECT: queued on its channel when it has one (verified ∩ subscribed, default order),
 * else `failed` with the same reason a direct send gives. Opted-out wallets (subscribed = false)
 * get nothing. Returns the number of rows per channel (null: no deliverable channel).
 */
export async function fanOutBroadcast(db: Queryable, f: FanOut): Promise<{ channel: Channel | null; count: number }[]> {
  return db.query(
    `WITH audience AS (
       SELECT s.wallet, row_number() OVER (ORDER BY s.wallet) AS n, ${CHOSEN_CHANNEL} AS channel,
              (${VERIFIED.email} OR ${VERIFIED.sms} OR ${VERIFIED.telegram}) AS has_verified
       FROM subscriptions s JOIN identities i ON i.wallet = s.wallet
       WHERE s.protocol_id = $1 AND s.subscribed
     ), inserted AS (
       INSERT INTO notifications (id, protocol_id, environment, wallet, subject, body, category, priority, channel, status,
                                  payload_hash, template_id, template_version, template_variables, broadcast_id, last_error,
                                  write_receipt, receipt_status, receipt_requested_at, receipt_failure_reason, next_attempt_at,
                                  created_at, updated_at)
       SELECT $13::text || ${sqlBase32Suffix('a.n')}, $1, $2, a.wallet, $3, $4, $5, 'normal', a.channel,
              CASE WHEN a.channel IS NULL THEN 'failed' ELSE 'queued' END,
              $6, $7::text, $8::int, $9::jsonb, $10,
              CASE WHEN a.channel IS NOT NULL THEN NULL
                   WHEN a.has_verified THEN '${NO_CHANNEL.noneSubscribed}'
                   ELSE '${NO_CHANNEL.noneVerified}' END,
              $11::boolean,
              CASE WHEN NOT $11::boolean THEN 'disabled' WHEN a.channel IS NULL THEN 'failed' ELSE 'pending' END,
              CASE WHEN $11::boolean THEN $12::timestamptz END,
              CASE WHEN $11::boolean AND a.channel IS NULL THEN 'notification was not delivered (failed)' END,
              CASE WHEN a.channel IS NOT NULL THEN $12::timestamptz END,
              $12::timestamptz, $12::timestamptz
       FROM audience a
       RETURNING channel
     )
     SELECT channel, count(*)::int AS count FROM inserted GROUP BY channel`,
    [
      f.protocolId,
      f.environment,
      f.subject,
      f.body,
      f.category,
      f.payloadHash,
      f.templateId,
      f.templateVersion,
      f.templateVariables ? JSON.stringify(f.templateVariables) : null,
      f.broadcastId,
      f.writeReceipt,
      f.now,
      f.idPrefix,
    ],
  );
}

export interface BroadcastRow {
  id: string;
  protocol_id: string;
  environment: string;
  subject: string;
  category: string;
  write_receipt: boolean;
  template_id: string | null;
  template_version: number | null;
  total_subscribers: number;
  queued_count: number;
  created_at: Date;
}

export async function insertBroadcast(db: Queryable, b: Omit<BroadcastRow, 'created_at'> & { body: string; now: Date }): Promise<void> {
  await db.query(
    `INSERT INTO broadcasts (id, protocol_id, environment, subject, body, category, write_receipt, template_id, template_version,
                             total_subscribers, queued_count, created_at)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12)`,
    [b.id, b.protocol_id, b.environment, b.subject, b.body, b.category, b.write_receipt, b.template_id, b.template_version, b.total_subscribers, b.queued_count, b.now],
  );
}

export async function findBroadcast(db: Queryable, protocolId: string, id: string): Promise<BroadcastRow | undefined> {
  const [row] = await db.query<BroadcastRow>(
    `SELECT id, protocol_id, environment, subject, category, write_receipt, template_id, template_version, total_subscribers, queued_count, created_at
     FROM broadcasts WHERE id = $1 AND protocol_id = $2`,
    [id, protocolId],
  );
  return row;
}

/** The broadcast's notifications by current status (broadcast_counts, kept by a trigger on notifications). */
export async function countBroadcastStatuses(db: Queryable, broadcastId: string): Promise<Map<NotificationStatus, number>> {
  const rows = await db.query<{ status: NotificationStatus; count: number }>('SELECT status, count::int AS count FROM broadcast_counts WHERE broadcast_id = $1', [
    broadcastId,
  ]);
  return new Map(rows.map((r) => [r.status, r.count]));
}
