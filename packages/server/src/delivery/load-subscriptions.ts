import type { Channel } from '../channels/provider.js';
import type { Queryable } from '../db/connection.js';

/** A wallet's subscription to a protocol as delivery reads it. */
export interface SubscriptionState {
  subscribed: boolean;
  channels: Channel[];
}

const keyOf = (protocolId: string, wallet: string) => `${protocolId}\u0000${wallet}`;

/** The subscriptions of a batch's (protocol, wallet) pairs, in one query; a pair without one is absent. */
export async function loadSubscriptionsFor(
  db: Queryable,
  rows: { protocol_id: string; wallet: string }[],
): Promise<(protocolId: string, wallet: string) => SubscriptionState | undefined> {
  const pairs = [...new Map(rows.map((row) => [keyOf(row.protocol_id, row.wallet), row])).values()];
  const found = await db.query<{ protocol_id: string; wallet: string; subscribed: boolean; channels: Channel[] }>(
    `SELECT s.protocol_id, s.wallet, s.subscribed, s.channels
     FROM unnest($1::text[], $2::text[]) AS p(protocol_id, wallet)
     JOIN subscriptions s ON s.protocol_id = p.protocol_id AND s.wallet = p.wallet`,
    [pairs.map((p) => p.protocol_id), pairs.map((p) => p.wallet)],
  );
  const byPair = new Map(found.map((row) => [keyOf(row.protocol_id, row.wallet), { subscribed: row.subscribed, channels: row.channels }]));
  return (protocolId, wallet) => byPair.get(keyOf(protocolId, wallet));
}

/** Why a queued message may no longer be sent on its channel, and how it ends. */
export interface SubscriptionRefusal {
  /** `opted_out` when the wallet opted out of the protocol's messages; `failed` when the channel is not subscribed. */
  status: 'opted_out' | 'failed';
  reason: string;
}

/**
 * Why a message that was queued may no longer be sent on `channel`, or undefined when it may: the
 * wallet opted out of the protocol's messages since (none is sent, not even a `critical` one's SMS
 * fallback), or its subscription does not list the channel first chosen for it. A `critical`
 * message's SMS fallback is not narrowed by the channels, as at the choice.
 */
export function subscriptionRefusal(subscription: SubscriptionState | undefined, channel: Channel, isFallback: boolean): SubscriptionRefusal | undefined {
  if (!subscription) return undefined;
  if (!subscription.subscribed) return { status: 'opted_out', reason: "the wallet opted out of this protocol's messages before delivery" };
  if (!isFallback && !subscription.channels.includes(channel)) return { status: 'failed', reason: `the wallet's subscription does not include ${channel}` };
  return undefined;
}
