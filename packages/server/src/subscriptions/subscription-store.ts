import type { Channel } from '../channels/provider.js';
import type { Queryable } from '../db/connection.js';

export interface SubscriptionRow {
  wallet: string;
  channels: Channel[];
  subscribed: boolean;
  subscribed_at: Date;
  unsubscribed_at: Date | null;
}

export async function isRegistered(db: Queryable, wallet: string): Promise<boolean> {
  return (await db.query('SELECT 1 FROM identities WHERE wallet = $1', [wallet])).length === 1;
}

/**
 * The identity of the wallet in `$2`, locked (FOR SHARE) by the statement that writes its
 * subscription. An erasure running at the same time either waits for that statement and then
 * erases the row it wrote, or commits first and leaves nothing for the statement to write (a
 * check made beforehand could pass, and the row be written after the erasure). FOR SHARE rather
 * than FOR KEY SHARE: a change of the identity's channels waits too, so the audience counters'
 * triggers on either table see the other's write (migration 005).
 */
const LOCKED_IDENTITY = 'FROM identities WHERE wallet = $2 FOR SHARE';

/**
 * Subscribes (or re-subscribes) the wallet; `created` tells whether the row is new. Undefined
 * when the wallet has no identity (nothing is written).
 */
export async function upsertSubscription(
  db: Queryable,
  protocolId: string,
  wallet: string,
  channels: Channel[],
  now: Date,
): Promise<(SubscriptionRow & { created: boolean }) | undefined> {
  const [row] = await db.query<SubscriptionRow & { created: boolean }>(
    `INSERT INTO subscriptions AS s (protocol_id, wallet, channels, subscribed, subscribed_at)
     SELECT $1, $2, $3::text[], true, $4 ${LOCKED_IDENTITY}
     ON CONFLICT (protocol_id, wallet) DO UPDATE SET
       channels = EXCLUDED.channels,
       subscribed = true,
       -- Never before the opt-out it ends: two requests racing commit in one order, and their
       -- clocks, read before, may say the other.
       subscribed_at = CASE WHEN s.subscribed THEN s.subscribed_at ELSE greatest(EXCLUDED.subscribed_at, s.unsubscribed_at) END,
       unsubscribed_at = NULL
     RETURNING wallet, channels, subscribed, subscribed_at, unsubscribed_at, (xmax = 0) AS created`,
    [protocolId, wallet, channels, now],
  );
  return row;
}

export async function findSubscription(db: Queryable, protocolId: string, wallet: string): Promise<SubscriptionRow | undefined> {
  const [row] = await db.query<SubscriptionRow>(
    'SELECT wallet, channels, subscribed, subscribed_at, unsubscribed_at FROM subscriptions WHERE protocol_id = $1 AND wallet = $2',
    [protocolId, wallet],
  );
  return row;
}

/**
 * Opts the wallet out of this protocol's messages. A wallet that never subscribed gets a row too:
 * the opt-out must hold for direct sends as well. Undefined when the wallet has no identity
 * (nothing is written).
 */
export async function unsubscribe(db: Queryable, protocolId: string, wallet: string, now: Date): Promise<SubscriptionRow | undefined> {
  const [row] = await db.query<SubscriptionRow>(
    `INSERT INTO subscriptions AS s (protocol_id, wallet, channels, subscribed, subscribed_at, unsubscribed_at)
     SELECT $1, $2, '{}'::text[], false, $3::timestamptz, $3::timestamptz ${LOCKED_IDENTITY}
     ON CONFLICT (protocol_id, wallet) DO UPDATE SET
       subscribed = false,
       -- Never before the subscription it ends (see upsertSubscription).
       unsubscribed_at = CASE WHEN s.subscribed THEN greatest(EXCLUDED.unsubscribed_at, s.subscribed_at) ELSE s.unsubscribed_at END
     RETURNING wallet, channels, subscribed, subscribed_at, unsubscribed_at`,
    [protocolId, wallet, now],
  );
  return row;
}
