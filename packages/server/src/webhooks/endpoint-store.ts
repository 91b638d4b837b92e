import type { Queryable } from '../db/connection.js';

export interface EndpointRow {
  id: string;
  protocol_id: string;
  url: string;
  events: string[];
  is_active: boolean;
  secret_enc: string;
  /** The secret a rotation replaced, still signed with until previous_secret_expires_at. */
  previous_secret_enc: string | null;
  previous_secret_expires_at: Date | null;
  failing_since: Date | null;
  disabled_reason: string | null;
  created_at: Date;
  updated_at: Date;
}

/** Takes the protocol's row lock for the transaction, so endpoint creations count one at a time. */
export async function lockProtocol(tx: Queryable, protocolId: string): Promise<void> {
  await tx.query('SELECT id FROM protocols WHERE id = $1 FOR UPDATE', [protocolId]);
}

export async function countEndpoints(db: Queryable, protocolId: string): Promise<number> {
  const [{ n }] = await db.query<{ n: number }>('SELECT count(*)::int AS n FROM webhook_endpoints WHERE protocol_id = $1', [protocolId]);
  return n;
}

export async function insertEndpoint(
  db: Queryable,
  row: Pick<EndpointRow, 'id' | 'protocol_id' | 'url' | 'events' | 'is_active' | 'secret_enc'> & { now: Date },
): Promise<EndpointRow> {
  const [created] = await db.query<EndpointRow>(
    `INSERT INTO webhook_endpoints (id, protocol_id, url, events, is_active, secret_enc, created_at, updated_at)
     VALUES ($1, $2, $3, $4::text[], $5, $6, $7, $7) RETURNING *`,
    [row.id, row.protocol_id, row.url, row.events, row.is_active, row.secret_enc, row.now],
  );
  return created;
}

/** Oldest first, the order they were registered in. */
export async function listEndpoints(db: Queryable, protocolId: string): Promise<EndpointRow[]> {
  return db.query<EndpointRow>('SELECT * FROM webhook_endpoints WHERE protocol_id = $1 ORDER BY created_at, id', [protocolId]);
}

export async function findEndpoint(db: Queryable, protocolId: string, id: string): Promise<EndpointRow | undefined> {
  const [row] = await db.query<EndpointRow>('SELECT * FROM webhook_endpoints WHERE id = $1 AND protocol_id = $2', [id, protocolId]);
  return row;
}

/**
 * Changes url, events and/or the active flag. Turning an endpoint on again forgets its failure
 * streak; turning it off records who did it.
 */
export async function updateEndpoint(
  db: Queryable,
  protocolId: string,
  id: string,
  changes: { url?: string; events?: string[]; isActive?: boolean; now: Date },
): Promise<EndpointRow | undefined> {
  const [row] = await db.query<EndpointRow>(
    `UPDATE webhook_endpoints SET
       url = COALESCE($3, url),
       events = COALESCE($4::text[], events),
       failing_since = CASE WHEN $5::boolean IS NOT NULL AND $5::boolean <> is_active THEN NULL ELSE failing_since END,
       disabled_reason = CASE
         WHEN $5::boolean IS TRUE THEN NULL
         WHEN $5::boolean IS FALSE AND is_active THEN 'deactivated through the API'
         ELSE disabled_reason END,
       is_active = COALESCE($5::boolean, is_active),
       updated_at = $6
     WHERE id = $1 AND protocol_id = $2
     RETURNING *`,
    [id, protocolId, changes.url ?? null, changes.events ?? null, changes.isActive ?? null, changes.now],
  );
  return row;
}

/**
 * Replaces the secret, keeping the one replaced until `previousExpiresAt` (a past or present
 * instant drops it at once). A secret replaced before and still valid is dropped: only the last
 * one stays valid beside the new one.
 */
export async function rotateEndpointSecret(
  db: Queryable,
  protocolId: string,
  id: string,
  change: { secretEnc: string; previousExpiresAt: Date; now: Date },
): Promise<EndpointRow | undefined> {
  const [row] = await db.query<EndpointRow>(
    `UPDATE webhook_endpoints SET
       previous_secret_enc = CASE WHEN $4::timestamptz > $5::timestamptz THEN secret_enc END,
       previous_secret_expires_at = CASE WHEN $4::timestamptz > $5::timestamptz THEN $4::timestamptz END,
       secret_enc = $3,
       updated_at = $5
     WHERE id = $1 AND protocol_id = $2
     RETURNING *`,
    [id, protocolId, change.secretEnc, change.previousExpiresAt, change.now],
  );
  return row;
}

export async function deleteEndpoint(db: Queryable, protocolId: string, id: string): Promise<boolean> {
  const rows = await db.query('DELETE FROM webhook_endpoints WHERE id = $1 AND protocol_id = $2 RETURNING id', [id, protocolId]);
  return rows.length === 1;
}
