import type { Channel } from '../channels/provider.js';

/** Order used when the sender expresses no preference: instant and free first, SMS (paid) last. */
export const DEFAULT_CHANNEL_ORDER: readonly Channel[] = ['telegram', 'email', 'sms'];

/** A channel is reachable when its contact (of identities `i`) is stored and verified (linked, for Telegram). */
export const VERIFIED: Record<Channel, string> = {
  email: '(i.email_enc IS NOT NULL AND i.email_verified_at IS NOT NULL)',
  sms: '(i.phone_enc IS NOT NULL AND i.phone_verified_at IS NOT NULL)',
  telegram: '(i.telegram_chat_enc IS NOT NULL AND i.telegram_linked_at IS NOT NULL)',
};

/** Why a registered, subscribed wallet gets no channel (the notification's `last_error`). */
export const NO_CHANNEL = {
  unregistered: 'wallet not registered',
  noneVerified: 'wallet has no verified channel',
  noneSubscribed: 'no verified channel among the subscribed channels',
} as const;

/**
 * Where each notification goes (DESIGN §6), as SQL: the CTEs `reach` and `decided` over the
 * relation `drafts` (a FROM item named `r` with at least `protocol_id`, `wallet` and
 * `preferred_channel`). `decided` has every column of `r` and:
 * - `registered`: the wallet has an identity;
 * - `channel`: the wallet's verified channels, narrowed to its subscription's channels when it has
 *   one; the preferred channel when it is left, else the first of DEFAULT_CHANNEL_ORDER; null when
 *   none is left, or when the wallet is unregistered or opted out;
 * - `status`: `opted_out` (a subscription with subscribed = false), `failed` (no channel) or `queued`;
 * - `last_error`: why a `failed` notification has no channel.
 *
 * The choice is made in the statement that writes the rows, so what a send decides and what it
 * writes come from the same snapshot, in one round trip.
 */
export function decideChannels(drafts: string): string {
  const allowed = (c: Channel) => `${c}_allowed`;
  return `reach AS (
       SELECT r.*, i.wallet IS NOT NULL AS registered, coalesce(NOT s.subscribed, false) AS opted_out,
              coalesce(${DEFAULT_CHANNEL_ORDER.map((c) => VERIFIED[c]).join(' OR ')}, false) AS has_verified,
              ${DEFAULT_CHANNEL_ORDER.map((c) => `coalesce(${VERIFIED[c]} AND (s.wallet IS NULL OR '${c}' = ANY(s.channels)), false) AS ${allowed(c)}`).join(',\n              ')}
       FROM ${drafts}
       LEFT JOIN identities i ON i.wallet = r.wallet
       LEFT JOIN subscriptions s ON s.protocol_id = r.protocol_id AND s.wallet = r.wallet
     ), chosen AS (
       SELECT reach.*, CASE WHEN registered AND NOT opted_out THEN CASE
                ${DEFAULT_CHANNEL_ORDER.map((c) => `WHEN preferred_channel = '${c}' AND ${allowed(c)} THEN '${c}'`).join(' ')}
                ${DEFAULT_CHANNEL_ORDER.map((c) => `WHEN ${allowed(c)} THEN '${c}'`).join(' ')}
              END END AS channel
       FROM reach
     ), decided AS (
       SELECT chosen.*,
              CASE WHEN registered AND opted_out THEN 'opted_out' WHEN channel IS NULL THEN 'failed' ELSE 'queued' END AS status,
              CASE WHEN NOT registered THEN '${NO_CHANNEL.unregistered}'
                   WHEN opted_out OR channel IS NOT NULL THEN NULL
                   WHEN has_verified THEN '${NO_CHANNEL.noneSubscribed}'
                   ELSE '${NO_CHANNEL.noneVerified}' END AS last_error
       FROM chosen
     )`;
}
