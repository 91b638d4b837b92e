import type { Queryable } from '../db/connection.js';
import { countAndPage } from '../db/count-and-page.js';

export interface DeliveryRow {
  id: string;
  endpoint_id: string;
  event_id: string;
  status: 'pending' | 'succeeded' | 'failed';
  attempts: number;
  next_attempt_at: Date | null;
  locked_until: Date | null;
  last_status_code: number | null;
  last_error: string | null;
  created_at: Date;
  completed_at: Date | null;
  event_type: string;
  event_data: Record<string, unknown>;
  event_created_at: Date;
}

export interface AttemptRow {
  id: number;
  delivery_id: string;
  status_code: number | null;
  latency_ms: number;
  response_body: string | null;
  error: string | null;
  created_at: Date;
}

const DELIVERY_COLUMNS = `d.id, d.endpoint_id, d.event_id, d.status, d.attempts, d.next_attempt_at, d.locked_until, d.last_status_code,
  d.last_error, d.created_at, d.completed_at, e.type AS event_type, e.data AS event_data, e.created_at AS event_created_at`;

/** One page of an endpoint's deliveries, newest first, and how many there are in all. */
export async function listDeliveries(db: Queryable, endpointId: string, limit: number, offset: number): Promise<{ rows: DeliveryRow[]; total: number }> {
  return countAndPage<DeliveryRow>(
    db,
    { text: 'SELECT count(*)::int AS total FROM webhook_deliveries WHERE endpoint_id = $1', params: [endpointId] },
    {
      text: `SELECT ${DELIVERY_COLUMNS} FROM webhook_deliveries d JOIN events e ON e.id = d.event_id
     WHERE d.endpoint_id = $1 ORDER BY d.created_at DESC, d.id DESC LIMIT $2 OFFSET $3`,
      params: [endpointId, limit, offset],
    },
  );
}

export async function findDelivery(db: Queryable, endpointId: string, id: string): Promise<DeliveryRow | undefined> {
  const [row] = await db.query<DeliveryRow>(
    `SELECT ${DELIVERY_COLUMNS} FROM webhook_deliveries d JOIN events e ON e.id = d.event_id WHERE d.id = $1 AND d.endpoint_id = $2`,
    [id, endpointId],
  );
  return row;
}

/** Every attempt of the given deliveries, oldest first. */
export async function listAttempts(db: Queryable, deliveryIds: string[]): Promise<AttemptRow[]> {
  if (!deliveryIds.length) return [];
  return db.query<AttemptRow>('SELECT * FROM webhook_attempts WHERE delivery_id = ANY($1::text[]) ORDER BY id', [deliveryIds]);
}

/**
 * Puts a delivery back in the queue, due now, with a fresh retry schedule. Clearing the lease
 * also voids the outcome of an attempt in flight (it is still logged), so the replay always runs.
 */
export async function requeueDelivery(db: Queryable, endpointId: string, id: string, now: Date): Promise<boolean> {
  const rows = await db.query(
    `UPDATE webhook_deliveries SET status = 'pending', attempts = 0, next_attempt_at = $3, locked_until = NULL, completed_at = NULL
     WHERE id = $1 AND endpoint_id = $2 RETURNING id`,
    [id, endpointId, now],
  );
  return rows.length === 1;
}

/** A delivery for one endpoint only, leased by the caller who sends it at once (the test event). */
export async function insertLeasedDelivery(
  db: Queryable,
  row: { id: string; endpointId: string; eventId: string; protocolId: string; now: Date; lease: Date },
): Promise<void> {
  await db.query(
    `INSERT INTO webhook_deliveries (id, endpoint_id, event_id, protocol_id, status, next_attempt_at, locked_until, created_at)
     VALUES ($1, $2, $3, $4, 'pending', NULL, $6, $5)`,
    [row.id, row.endpointId, row.eventId, row.protocolId, row.now, row.lease],
  );
}
