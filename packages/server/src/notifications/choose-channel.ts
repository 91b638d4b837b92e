import type { Channel } from '../channels/provider.js';

/** Order used when the sender expresses no preference: instant and free first, SMS (paid) last. */
export const DEFAULT_CHANNEL_ORDER: readonly Channel[] = ['telegram', 'email', 'sms'];

export interface Reachability {
  /** Channels the wallet has verified. */
  verified: Channel[];
  /** The wallet's subscription to this protocol, if it has one. */
  subscription?: { subscribed: boolean; channels: Channel[] };
}

export type ChannelChoice = { outcome: 'queued'; channel: Channel } | { outcome: 'opted_out' } | { outcome: 'failed'; reason: string };

/**
 * Where a notification goes: the wallet's verified channels, narrowed to its subscription's
 * channels when it has one; the preferred channel when it is left, else the default order.
 */
export function chooseChannel(reach: Reachability, preferred?: Channel): ChannelChoice {
  if (reach.subscription && !reach.subscription.subscribed) return { outcome: 'opted_out' };
  const allowed = reach.subscription ? reach.verified.filter((c) => reach.subscription!.channels.includes(c)) : reach.verified;
  if (allowed.length === 0) {
    return {
      outcome: 'failed',
      reason: reach.verified.length === 0 ? 'wallet has no verified channel' : 'no verified channel among the subscribed channels',
    };
  }
  if (preferred && allowed.includes(preferred)) return { outcome: 'queued', channel: preferred };
  return { outcome: 'queued', channel: DEFAULT_CHANNEL_ORDER.find((c) => allowed.includes(c))! };
}
