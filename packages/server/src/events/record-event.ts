import type { Queryable } from '../db/connection.js';
import { newId } from '../ids.js';

export type EventType =
  | 'notification.delivered'
  | 'notification.bounced'
  | 'notification.failed'
  | 'receipt.confirmed'
  | 'quota.exceeded';

export const EVENT_TYPES: readonly EventType[] = [
  'notification.delivered',
  'notification.bounced',
  'notification.failed',
  'receipt.confirmed',
  'quota.exceeded',
];

/**
 * Writes an event row. Call it with the transaction that makes the change the event reports, so
 * the event exists if and only if the change does; the webhook dispatcher fans it out later.
 */
export async function recordEvent(
  db: Queryable,
  event: { protocolId: string; type: EventType; data: Record<string, unknown>; now: Date },
): Promise<string> {
  const id = newId.event();
  await db.query('INSERT INTO events (id, protocol_id, type, data, created_at) VALUES ($1, $2, $3, $4, $5)', [
    id,
    event.protocolId,
    event.type,
    JSON.stringify(event.data),
    event.now,
  ]);
  return id;
}
