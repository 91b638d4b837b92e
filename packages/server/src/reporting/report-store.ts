/**
 * Report queries. They read the counter tables of migrations/005_reporting.sql (kept exact by
 * triggers in the transaction of every write), never the notification rows, so their cost
 * depends on the hours in the range, not on how many notifications were sent.
 */
import type { Queryable } from '../db/connection.js';
import type { NotificationStatus } from '../notifications/notification-store.js';

type Environment = 'production' | 'sandbox';

/** Notifications of the protocol and environment created in the hours from `since`, by status. */
export async function countSendsByStatus(db: Queryable, protocolId: string, environment: Environment, since: Date): Promise<Map<NotificationStatus, number>> {
  const rows = await db.query<{ status: NotificationStatus; count: number }>(
    `SELECT status, sum(count)::int AS count FROM notification_counts
     WHERE protocol_id = $1 AND environment = $2 AND hour >= $3
     GROUP BY status`,
    [protocolId, environment, since],
  );
  return new Map(rows.map((r) => [r.status, r.count]));
}

export interface EngagementCounts {
  delivered: number;
  opened: number;
  clicked: number;
  unsubscribed: number;
}

/**
 * Delivered emails of the protocol and environment created in the hours of [start, end), and how
 * many of them were opened, clicked or unsubscribed from (each email counted once per kind,
 * whenever the event came). An email delivered by its SMS fallback is not an email delivery.
 */
export async function countEngagement(db: Queryable, protocolId: string, environment: Environment, start: Date, end: Date): Promise<EngagementCounts> {
  const [row] = await db.query<EngagementCounts>(
    `SELECT
       (SELECT coalesce(sum(count), 0)::int FROM notification_counts
        WHERE protocol_id = $1 AND environment = $2 AND hour >= $3 AND hour < $4 AND status = 'delivered' AND delivery_channel = 'email') AS delivered,
       coalesce(sum(count) FILTER (WHERE kind = 'open'), 0)::int AS opened,
       coalesce(sum(count) FILTER (WHERE kind = 'click'), 0)::int AS clicked,
       coalesce(sum(count) FILTER (WHERE kind = 'unsubscribe'), 0)::int AS unsubscribed
     FROM engagement_counts WHERE protocol_id = $1 AND environment = $2 AND hour >= $3 AND hour < $4`,
    [protocolId, environment, start, end],
  );
  return row;
}

export interface AudienceCounts {
  totalRegistered: number;
  broadcastable: number;
  email: number;
  telegram: number;
  sms: number;
}

/**
 * The protocol's audience: registered wallets that subscribed at least once (still subscribed or
 * opted out since), and among the active subscribers those reachable on each channel (subscribed
 * to it and verified on it) and on at least one.
 */
export async function countAudience(db: Queryable, protocolId: string): Promise<AudienceCounts> {
  const [row] = await db.query<AudienceCounts>(
    `SELECT coalesce(sum(registered), 0)::int AS "totalRegistered", coalesce(sum(broadcastable), 0)::int AS broadcastable,
            coalesce(sum(email), 0)::int AS email, coalesce(sum(telegram), 0)::int AS telegram, coalesce(sum(sms), 0)::int AS sms
     FROM audience_counts WHERE protocol_id = $1`,
    [protocolId],
  );
  return row;
}

/** Audience wallets by the UTC day their subscription started, from `since` (YYYY-MM-DD). */
export async function countSubscriptionsByDay(db: Queryable, protocolId: string, since: string): Promise<Map<string, number>> {
  const rows = await db.query<{ day: string; count: number }>(
    `SELECT to_char(day, 'YYYY-MM-DD') AS day, registered::int AS count FROM audience_counts
     WHERE protocol_id = $1 AND day >= $2::date AND registered <> 0`,
    [protocolId, since],
  );
  return new Map(rows.map((r) => [r.day, r.count]));
}
