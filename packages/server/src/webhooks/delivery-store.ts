import { claimDue } from '../db/claim-due.js';
import type { Queryable } from '../db/connection.js';
import type { PostResult } from './post-webhook.js';

/** A claimed delivery with what sending it needs: its event and its endpoint. */
export interface DispatchRow {
  id: string;
  attempts: number;
  locked_until: Date;
  event_id: string;
  event_type: string;
  event_data: Record<string, unknown>;
  event_created_at: Date;
  endpoint_id: string;
  url: string;
  secret_enc: string;
  previous_secret_enc: string | null;
  previous_secret_expires_at: Date | null;
  is_active: boolean;
}

/** Deliveries of one endpoint taken in one claim, at most: one chain's worth. */
export const DELIVERIES_PER_ENDPOINT = 100;

/**
 * Claims due pending deliveries by endpoint: endpoints that already have a leased delivery (one
 * being sent by this or another worker) are skipped, so one endpoint gets one request at a time,
 * and each other endpoint gives up to DELIVERIES_PER_ENDPOINT of its oldest due deliveries, the
 * endpoint with the oldest first, from at most `endpoints` endpoints. Two workers claiming in the
 * same instant can still both pick rows of one endpoint: the rule is best effort across processes
 * and exact within one.
 */
export async function claimDeliveries(
  db: Queryable,
  { now, limit, leaseMs, endpoints }: { now: Date; limit: number; leaseMs: number; endpoints?: number },
): Promise<string[]> {
  const rows = await claimDue<{ id: string }>(
    db,
    {
      table: 'webhook_deliveries',
      dueColumn: 'next_attempt_at',
      where: `status = 'pending'`,
      group: { column: 'endpoint_id', perGroup: DELIVERIES_PER_ENDPOINT },
      returning: ['id'],
    },
    { now, limit, leaseMs, groups: endpoints },
  );
  return rows.map((row) => row.id);
}

/** What sending to an endpoint needs from its row, as it is now. */
export type EndpointState = Pick<DispatchRow, 'url' | 'secret_enc' | 'previous_secret_enc' | 'previous_secret_expires_at' | 'is_active'>;

/** The endpoint's row as it is now; undefined once deleted (its deliveries are gone with it). */
export async function loadEndpointState(db: Queryable, endpointId: string): Promise<EndpointState | undefined> {
  const [row] = await db.query<EndpointState>(
    'SELECT url, secret_enc, previous_secret_enc, previous_secret_expires_at, is_active FROM webhook_endpoints WHERE id = $1',
    [endpointId],
  );
  return row;
}

/** The claimed rows with event and endpoint, in event order. Deleted endpoints' rows are gone. */
export async function loadDispatchRows(db: Queryable, ids: string[]): Promise<DispatchRow[]> {
  return db.query<DispatchRow>(
    `SELECT d.id, d.attempts, d.locked_until, d.event_id, e.type AS event_type, e.data AS event_data, e.created_at AS event_created_at,
            d.endpoint_id, w.url, w.secret_enc, w.previous_secret_enc, w.previous_secret_expires_at, w.is_active
     FROM webhook_deliveries d
     JOIN events e ON e.id = d.event_id
     JOIN webhook_endpoints w ON w.id = d.endpoint_id
     WHERE d.id = ANY($1::text[])
     ORDER BY e.created_at, e.id`,
    [ids],
  );
}

export interface AttemptRecord {
  deliveryId: string;
  endpointId: string;
  /** The lease the sender holds; the delivery row changes only if it still holds it. */
  lease: Date | null;
  result: PostResult;
  attempts: number;
  status: 'pending' | 'succeeded' | 'failed';
  nextAttemptAt: Date | null;
  now: Date;
  /** Whether the attempt counts in the endpoint's failure streak (test sends do not). */
  trackEndpointHealth: boolean;
  /** Failures before this instant mean the endpoint has failed for too long: set it inactive. */
  deactivateIfFailingSince: Date | null;
  deactivationReason: string;
}

/**
 * Writes one attempt in a single statement: the attempt row, the delivery's new state, and the
 * endpoint's failure streak (started by a failure, ended by a success; an endpoint whose streak
 * began before `deactivateIfFailingSince` is set inactive). Answers whether that happened.
 * Written again after a try whose answer was lost (its commit may have gone through), it adds no
 * second attempt row (the attempt's time identifies it) and still answers the deactivation.
 */
export async function recordAttempt(db: Queryable, record: AttemptRecord): Promise<{ deactivated: boolean }> {
  const { result } = record;
  const [row] = await db.query<{ deactivated: boolean }>(
    `WITH attempt AS (
       INSERT INTO webhook_attempts (delivery_id, status_code, latency_ms, response_body, error, created_at)
       SELECT $1, $3::smallint, $4::int, $5, $6, $7::timestamptz WHERE EXISTS (SELECT 1 FROM webhook_deliveries WHERE id = $1)
         AND NOT EXISTS (SELECT 1 FROM webhook_attempts WHERE delivery_id = $1 AND created_at = $7::timestamptz)
     ), delivery AS (
       UPDATE webhook_deliveries SET
         attempts = $8::int, status = $9, next_attempt_at = $10::timestamptz, locked_until = NULL,
         last_status_code = $3::smallint, last_error = $6,
         completed_at = CASE WHEN $9 = 'pending' THEN NULL ELSE $7::timestamptz END
       WHERE id = $1 AND ($11::timestamptz IS NULL OR locked_until = $11::timestamptz)
     ), endpoint AS (
       UPDATE webhook_endpoints SET
         failing_since = CASE WHEN $12::boolean THEN NULL ELSE COALESCE(failing_since, $7::timestamptz) END,
         is_active = CASE WHEN NOT $12::boolean AND failing_since <= $13::timestamptz THEN false ELSE is_active END,
         disabled_reason = CASE WHEN NOT $12::boolean AND failing_since <= $13::timestamptz THEN $14 ELSE disabled_reason END,
         updated_at = $7::timestamptz
       WHERE id = $2 AND $15::boolean AND (
         ($12::boolean AND failing_since IS NOT NULL)
         OR (NOT $12::boolean AND (failing_since IS NULL OR (is_active AND failing_since <= $13::timestamptz))))
       RETURNING NOT is_active AND disabled_reason IS NOT DISTINCT FROM $14 AS deactivated
     )
     SELECT COALESCE((SELECT deactivated FROM endpoint), false)
       OR EXISTS (SELECT 1 FROM webhook_endpoints WHERE id = $2 AND NOT is_active AND disabled_reason = $14) AS deactivated`,
    [
      record.deliveryId,
      record.endpointId,
      result.statusCode,
      result.latencyMs,
      result.responseBody,
      result.error,
      record.now,
      record.attempts,
      record.status,
      record.nextAttemptAt,
      record.lease,
      result.ok,
      // Without a cutoff the comparison is NULL: the streak is tracked but never deactivates.
      record.deactivateIfFailingSince,
      record.deactivationReason,
      record.trackEndpointHealth,
    ],
  );
  return { deactivated: row?.deactivated ?? false };
}

/** A successful attempt, written with others of its chain by recordSuccesses. */
export interface SuccessRecord {
  deliveryId: string;
  lease: Date;
  result: PostResult;
  attempts: number;
  at: Date;
}

/**
 * Writes a chain's successful attempts (all of one endpoint) in one statement: the attempt rows,
 * each delivery's `succeeded` state (only where the lease is still held), and the end of the
 * endpoint's failure streak. What recordAttempt does for one success, for many.
 */
export async function recordSuccesses(db: Queryable, endpointId: string, records: SuccessRecord[]): Promise<void> {
  if (records.length === 0) return;
  const col = <T>(pick: (r: SuccessRecord) => T) => records.map(pick);
  await db.query(
    `WITH s AS (
       SELECT * FROM unnest($2::text[], $3::timestamptz[], $4::smallint[], $5::int[], $6::text[], $7::int[], $8::timestamptz[])
         AS s(delivery_id, lease, status_code, latency_ms, response_body, attempts, at)
     ), attempt AS (
       INSERT INTO webhook_attempts (delivery_id, status_code, latency_ms, response_body, error, created_at)
       SELECT s.delivery_id, s.status_code, s.latency_ms, s.response_body, NULL, s.at FROM s
       WHERE EXISTS (SELECT 1 FROM webhook_deliveries d WHERE d.id = s.delivery_id)
         AND NOT EXISTS (SELECT 1 FROM webhook_attempts a WHERE a.delivery_id = s.delivery_id AND a.created_at = s.at)
     ), delivery AS (
       UPDATE webhook_deliveries d SET
         attempts = s.attempts, status = 'succeeded', next_attempt_at = NULL, locked_until = NULL,
         last_status_code = s.status_code, last_error = NULL, completed_at = s.at
       FROM s WHERE d.id = s.delivery_id AND d.locked_until = s.lease
     )
     UPDATE webhook_endpoints SET failing_since = NULL, updated_at = (SELECT max(at) FROM s)
     WHERE id = $1 AND failing_since IS NOT NULL`,
    [
      endpointId,
      col((r) => r.deliveryId),
      col((r) => r.lease.toISOString()),
      col((r) => r.result.statusCode),
      col((r) => r.result.latencyMs),
      col((r) => r.result.responseBody),
      col((r) => r.attempts),
      col((r) => r.at.toISOString()),
    ],
  );
}

/** Gives claimed deliveries back unsent (lease time running out, shutting down); they stay due. */
export async function releaseDeliveries(db: Queryable, ids: string[], lease: Date): Promise<void> {
  if (ids.length) await db.query('UPDATE webhook_deliveries SET locked_until = NULL WHERE id = ANY($1::text[]) AND locked_until = $2', [ids, lease]);
}

/** Ends deliveries that cannot be attempted (their endpoint is inactive); no request is made. */
export async function failDeliveries(db: Queryable, ids: string[], lease: Date, error: string, now: Date): Promise<void> {
  if (!ids.length) return;
  await db.query(
    `UPDATE webhook_deliveries SET status = 'failed', next_attempt_at = NULL, locked_until = NULL, last_error = $3, completed_at = $4
     WHERE id = ANY($1::text[]) AND locked_until = $2`,
    [ids, lease, error, now],
  );
}
