import type { Queryable } from '../db/connection.js';

export type EngagementKind = 'open' | 'click' | 'unsubscribe';

/**
 * Records an engagement with a notification, resolving its protocol and wallet from the row.
 * Returns the wallet and protocol, or undefined when the notification no longer exists.
 */
export async function recordEngagement(
  db: Queryable,
  notificationId: string,
  kind: EngagementKind,
  url: string | null,
  now: Date,
): Promise<{ protocol_id: string; wallet: string } | undefined> {
  const [row] = await db.query<{ protocol_id: string; wallet: string }>(
    `INSERT INTO engagement_events (protocol_id, notification_id, wallet, kind, url, created_at)
     SELECT protocol_id, id, wallet, $2, $3, $4 FROM notifications WHERE id = $1
     RETURNING protocol_id, wallet`,
    [notificationId, kind, url, now],
  );
  return row;
}
