import type { Queryable } from '../db/connection.js';

/**
 * New notifications enter the report counters (notification_counts per protocol, environment,
 * hour, status and channel; broadcast_counts per broadcast and status) in the statement or
 * transaction that writes them. Later changes of status and deletions are counted by the triggers
 * on notifications (migrations 007 and 019).
 *
 * Lock order: a writer reserves its quota (usage_periods) before it counts, so a send and a
 * broadcast of the same protocol never wait on each other's rows in opposite orders.
 */

/**
 * CTEs `counted` and `broadcast_counted` adding `rows` to the counters: `rows` names a relation with
 * protocol_id, environment, created_at, status, channel, broadcast_id and n (how many
 * notifications the row stands for). `after`, when given, is a subquery the counting waits for.
 * Counter rows are locked in key order, as the triggers do.
 */
export const COUNT_NEW_NOTIFICATIONS = (rows: string, after?: string) => `counted AS (
         INSERT INTO notification_counts AS c (protocol_id, environment, hour, status, delivery_channel, count)
         SELECT protocol_id, environment, date_trunc('hour', created_at, 'UTC'), status, coalesce(channel, ''), sum(n)
         FROM ${rows}${after ? ` WHERE (${after}) IS NOT NULL` : ''}
         GROUP BY 1, 2, 3, 4, 5 ORDER BY 1, 2, 3, 4, 5
         ON CONFLICT (protocol_id, environment, hour, status, delivery_channel) DO UPDATE SET count = c.count + EXCLUDED.count
       ), broadcast_counted AS (
         INSERT INTO broadcast_counts AS b (broadcast_id, status, count)
         SELECT broadcast_id, status, sum(n) FROM ${rows}
         WHERE broadcast_id IS NOT NULL${after ? ` AND (${after}) IS NOT NULL` : ''}
         GROUP BY 1, 2 ORDER BY 1, 2
         ON CONFLICT (broadcast_id, status) DO UPDATE SET count = b.count + EXCLUDED.count
       )`;

/** Notifications written, as counted: `count` of them with these fields. */
export interface NewNotificationCount {
  protocolId: string;
  environment: string;
  createdAt: Date;
  status: string;
  channel: string | null;
  broadcastId: string | null;
  count: number;
}

/** Adds notifications just written (in the caller's transaction) to the counters. */
export async function countNewNotifications(db: Queryable, counts: NewNotificationCount[]): Promise<void> {
  const live = counts.filter((c) => c.count > 0);
  if (live.length === 0) return;
  const column = <T>(pick: (c: NewNotificationCount) => T) => live.map(pick);
  await db.query(
    `WITH written AS (
       SELECT * FROM unnest($1::text[], $2::text[], $3::timestamptz[], $4::text[], $5::text[], $6::text[], $7::int[])
         AS d(protocol_id, environment, created_at, status, channel, broadcast_id, n)
     ), ${COUNT_NEW_NOTIFICATIONS('written')}
     SELECT 1`,
    [
      column((c) => c.protocolId),
      column((c) => c.environment),
      column((c) => c.createdAt.toISOString()),
      column((c) => c.status),
      column((c) => c.channel),
      column((c) => c.broadcastId),
      column((c) => c.count),
    ],
  );
}
