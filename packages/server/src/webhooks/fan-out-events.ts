import type { Database } from '../db/connection.js';
import { newId } from '../ids.js';

/**
 * Copies events not yet fanned out into one pending delivery per matching endpoint (active, same
 * protocol, subscribed to the type), oldest events first, and marks them fanned out, all in one
 * transaction. Rows are taken with SKIP LOCKED, so several workers can fan out at once; the unique
 * (event, endpoint) index makes a repeated fan-out harmless. The matching endpoints are locked
 * against deletion (FOR KEY SHARE) until the deliveries are written: one deleted meanwhile is
 * skipped, instead of failing the pass (and every protocol's events in it) on the foreign key.
 * Returns how many events it handled.
 */
export async function fanOutEvents(db: Database, { now, limit }: { now: Date; limit: number }): Promise<number> {
  return db.transaction(async (tx) => {
    const events = await tx.query<{ id: string }>(
      `SELECT id FROM events WHERE fanned_out_at IS NULL ORDER BY created_at, id LIMIT $1 FOR UPDATE SKIP LOCKED`,
      [limit],
    );
    if (events.length === 0) return 0;
    const eventIds = events.map((event) => event.id);
    const matches = await tx.query<{ event_id: string; endpoint_id: string; protocol_id: string; created_at: Date }>(
      `SELECT e.id AS event_id, w.id AS endpoint_id, e.protocol_id, e.created_at
       FROM events e
       JOIN webhook_endpoints w ON w.protocol_id = e.protocol_id AND w.is_active AND e.type = ANY(w.events)
       WHERE e.id = ANY($1::text[])
       ORDER BY e.created_at, e.id, w.id
       FOR KEY SHARE OF w`,
      [eventIds],
    );
    if (matches.length) {
      // Due at the event's own time (never later than now), so the claim order follows event order.
      const due = matches.map((m) => new Date(Math.min(m.created_at.getTime(), now.getTime())).toISOString());
      await tx.query(
        `INSERT INTO webhook_deliveries (id, endpoint_id, event_id, protocol_id, status, next_attempt_at, created_at)
         SELECT d.id, d.endpoint_id, d.event_id, d.protocol_id, 'pending', d.due, $6
         FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::timestamptz[]) AS d(id, endpoint_id, event_id, protocol_id, due)
         ON CONFLICT (event_id, endpoint_id) DO NOTHING`,
        [matches.map(() => newId.webhookDelivery()), matches.map((m) => m.endpoint_id), matches.map((m) => m.event_id), matches.map((m) => m.protocol_id), due, now],
      );
    }
    await tx.query('UPDATE events SET fanned_out_at = $2 WHERE id = ANY($1::text[])', [eventIds, now]);
    return events.length;
  });
}
