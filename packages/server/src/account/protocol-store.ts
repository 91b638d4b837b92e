import type { Queryable } from '../db/connection.js';
import { countAndPage } from '../db/count-and-page.js';
import type { Environment } from '../auth/api-keys.js';

export interface ProtocolRow {
  id: string;
  name: string;
  tier: number;
  overage_enabled: boolean;
  subscription_expires_at: Date;
  created_at: Date;
  updated_at: Date;
}

export interface ApiKeyRow {
  id: string;
  protocol_id: string;
  key_prefix: string;
  environment: Environment;
  created_at: Date;
  last_used_at: Date | null;
  revoked_at: Date | null;
}

export interface KeyOwner {
  keyId: string;
  environment: Environment;
  protocol: ProtocolRow;
}

export async function insertProtocol(
  db: Queryable,
  row: Pick<ProtocolRow, 'id' | 'name' | 'tier' | 'overage_enabled' | 'subscription_expires_at'>,
): Promise<ProtocolRow> {
  const [created] = await db.query<ProtocolRow>(
    `INSERT INTO protocols (id, name, tier, overage_enabled, subscription_expires_at)
     VALUES ($1, $2, $3, $4, $5) RETURNING *`,
    [row.id, row.name, row.tier, row.overage_enabled, row.subscription_expires_at],
  );
  return created;
}

export async function findProtocol(db: Queryable, id: string): Promise<ProtocolRow | undefined> {
  const [row] = await db.query<ProtocolRow>('SELECT * FROM protocols WHERE id = $1', [id]);
  return row;
}

export async function listProtocols(db: Queryable, limit: number, offset: number): Promise<{ rows: ProtocolRow[]; total: number }> {
  return countAndPage<ProtocolRow>(
    db,
    { text: 'SELECT count(*)::int AS total FROM protocols', params: [] },
    { text: 'SELECT * FROM protocols ORDER BY created_at DESC, id DESC LIMIT $1 OFFSET $2', params: [limit, offset] },
  );
}

export async function updateProtocol(
  db: Queryable,
  id: string,
  changes: Partial<Pick<ProtocolRow, 'name' | 'tier' | 'overage_enabled' | 'subscription_expires_at'>>,
): Promise<ProtocolRow | undefined> {
  const [row] = await db.query<ProtocolRow>(
    `UPDATE protocols SET
       name = COALESCE($2, name),
       tier = COALESCE($3, tier),
       overage_enabled = COALESCE($4, overage_enabled),
       subscription_expires_at = COALESCE($5, subscription_expires_at),
       updated_at = now()
     WHERE id = $1 RETURNING *`,
    [id, changes.name ?? null, changes.tier ?? null, changes.overage_enabled ?? null, changes.subscription_expires_at ?? null],
  );
  return row;
}

export async function insertApiKey(
  db: Queryable,
  key: { id: string; protocolId: string; hash: string; prefix: string; environment: Environment },
): Promise<ApiKeyRow> {
  const [row] = await db.query<ApiKeyRow>(
    `INSERT INTO api_keys (id, protocol_id, key_hash, key_prefix, environment)
     VALUES ($1, $2, $3, $4, $5)
     RETURNING id, protocol_id, key_prefix, environment, created_at, last_used_at, revoked_at`,
    [key.id, key.protocolId, key.hash, key.prefix, key.environment],
  );
  return row;
}

export async function listApiKeys(db: Queryable, protocolId: string): Promise<ApiKeyRow[]> {
  return db.query<ApiKeyRow>(
    `SELECT id, protocol_id, key_prefix, environment, created_at, last_used_at, revoked_at
     FROM api_keys WHERE protocol_id = $1 ORDER BY created_at, id`,
    [protocolId],
  );
}

export async function revokeApiKey(db: Queryable, protocolId: string, keyId: string): Promise<ApiKeyRow | undefined> {
  const [row] = await db.query<ApiKeyRow>(
    `UPDATE api_keys SET revoked_at = COALESCE(revoked_at, now())
     WHERE protocol_id = $1 AND id = $2
     RETURNING id, protocol_id, key_prefix, environment, created_at, last_used_at, revoked_at`,
    [protocolId, keyId],
  );
  return row;
}

/** The protocol behind an active key, by the key's hash. */
export async function findKeyOwner(db: Queryable, keyHash: string): Promise<KeyOwner | undefined> {
  const [row] = await db.query<ProtocolRow & { key_id: string; environment: Environment }>(
    `SELECT p.*, k.id AS key_id, k.environment
     FROM api_keys k JOIN protocols p ON p.id = k.protocol_id
     WHERE k.key_hash = $1 AND k.revoked_at IS NULL`,
    [keyHash],
  );
  if (!row) return undefined;
  const { key_id, environment, ...protocol } = row;
  return { keyId: key_id, environment, protocol };
}
