import type { Queryable } from '../db/connection.js';

/** The current version of each live (not deleted) template of the protocol, by id. */
export async function currentTemplateVersions(db: Queryable, protocolId: string, ids: string[]): Promise<Map<string, number>> {
  if (ids.length === 0) return new Map();
  const rows = await db.query<{ id: string; current_version: number }>(
    'SELECT id, current_version FROM email_templates WHERE protocol_id = $1 AND id = ANY($2::text[]) AND deleted_at IS NULL',
    [protocolId, ids],
  );
  return new Map(rows.map((r) => [r.id, r.current_version]));
}
