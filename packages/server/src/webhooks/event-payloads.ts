import type { Environment } from '../auth/api-keys.js';
import type { EventType } from '../events/record-event.js';

export type NotificationEventType = 'notification.delivered' | 'notification.bounced' | 'notification.failed';

export interface NotificationOutcome {
  notificationId: string;
  wallet: string;
  /** The channel the message went out on (or was last tried on). */
  channel: string | null;
  /** When the provider accepted the message; only `notification.delivered` carries it. */
  deliveredAt?: Date | null;
  /** Why the message bounced or failed (provider answer or our own reason). */
  reason?: string | null;
  /** Delivery attempts made, for bounced and failed messages. */
  attempts?: number;
  /** The key's environment the notification was sent with: endpoints receive both. */
  environment: Environment;
}

/**
 * `data` of the notification events. Every one has notification_id, wallet, channel and
 * delivered_at (an ISO timestamp for delivered, null for bounced and failed), and environment
 * (`production` or `sandbox`: endpoints receive the events of both, and a receiver tells them apart
 * by it); bounced and failed also carry reason (string or null) and attempts (integer).
 */
export function notificationEventData(type: NotificationEventType, outcome: NotificationOutcome): Record<string, unknown> {
  const data: Record<string, unknown> = {
    notification_id: outcome.notificationId,
    wallet: outcome.wallet,
    channel: outcome.channel,
    delivered_at: null,
    environment: outcome.environment,
  };
  if (type === 'notification.delivered') {
    if (!outcome.deliveredAt) throw new RangeError('a notification.delivered event needs deliveredAt');
    data.delivered_at = outcome.deliveredAt.toISOString();
    return data;
  }
  data.reason = outcome.reason ?? null;
  data.attempts = outcome.attempts ?? 0;
  return data;
}

/** `data` of `receipt.confirmed`: the notification fields plus receipt_tx and confirmed_at. */
export function receiptConfirmedEventData(receipt: {
  notificationId: string;
  wallet: string;
  channel: string | null;
  deliveredAt: Date;
  receiptTx: string;
  confirmedAt: Date;
  environment: Environment;
}): Record<string, unknown> {
  return {
    ...notificationEventData('notification.delivered', receipt),
    receipt_tx: receipt.receiptTx,
    confirmed_at: receipt.confirmedAt.toISOString(),
  };
}

export interface EventEnvelope {
  id: string;
  type: EventType;
  /** Unix time in seconds of the event. */
  created: number;
  data: Record<string, unknown>;
}

/**
 * The order `data` fields are sent in: the contract's (notification_id, wallet, channel,
 * delivered_at), then the others. Events are stored as jsonb, which keeps keys in an order of its
 * own (shortest first); a reader may rely on neither, but people read the body too.
 */
const DATA_ORDER = [
  'notification_id',
  'wallet',
  'channel',
  'delivered_at',
  'environment',
  'reason',
  'attempts',
  'receipt_tx',
  'confirmed_at',
  'protocol_id',
  'period',
  'period_start',
  'resets_at',
  'limit',
  'usage',
  'requested',
  'exceeded_at',
];
const rank = (key: string) => {
  const at = DATA_ORDER.indexOf(key);
  return at === -1 ? DATA_ORDER.length : at;
};

function ordered(data: Record<string, unknown>): Record<string, unknown> {
  return Object.fromEntries(Object.entries(data).sort(([a], [b]) => rank(a) - rank(b)));
}

/** The body every webhook request carries: `{id, type, created, data}`. */
export function eventEnvelope(event: { id: string; type: string; data: Record<string, unknown>; created_at: Date }): EventEnvelope {
  return { id: event.id, type: event.type as EventType, created: Math.floor(event.created_at.getTime() / 1000), data: ordered(event.data) };
}
