import { oneYearAfter } from '../calendar-date.js';
import { displayPrefix, generateApiKey, hashApiKey, type Environment } from '../auth/api-keys.js';
import type { Database, Queryable } from '../db/connection.js';
import { ApiError } from '../http/errors.js';
import { newId } from '../ids.js';
import { tierOf } from '../tiers.js';
import {
  findProtocol,
  insertApiKey,
  insertProtocol,
  revokeApiKey,
  updateProtocol,
  type ApiKeyRow,
  type ProtocolRow,
} from '../account/protocol-store.js';

export interface ProtocolView {
  id: string;
  name: string;
  tier: number;
  tierName: string;
  overageEnabled: boolean;
  subscriptionExpiresAt: string;
  createdAt: string;
  updatedAt: string;
}

export function protocolView(row: ProtocolRow): ProtocolView {
  return {
    id: row.id,
    name: row.name,
    tier: row.tier,
    tierName: tierOf(row.tier).name,
    overageEnabled: row.overage_enabled,
    subscriptionExpiresAt: row.subscription_expires_at.toISOString(),
    createdAt: row.created_at.toISOString(),
    updatedAt: row.updated_at.toISOString(),
  };
}

export function keyView(row: ApiKeyRow) {
  return {
    id: row.id,
    prefix: row.key_prefix,
    environment: row.environment,
    createdAt: row.created_at.toISOString(),
    revokedAt: row.revoked_at?.toISOString() ?? null,
  };
}

async function issueKey(db: Queryable, protocolId: string, environment: Environment) {
  const apiKey = generateApiKey(environment);
  const row = await insertApiKey(db, {
    id: newId.apiKey(),
    protocolId,
    hash: hashApiKey(apiKey),
    prefix: displayPrefix(apiKey),
    environment,
  });
  return { apiKey, row };
}

/**
 * `subscriptionExpiresAt` as an instant. Years before 1970 are refused with those past 9999: the
 * database has no year 0 and would store years 1 to 99 in another century.
 */
function expiryOf(text: string): Date {
  const at = new Date(text);
  const year = at.getUTCFullYear();
  if (!(year >= 1970 && year <= 9999)) throw new ApiError('VALIDATION_ERROR', `subscriptionExpiresAt must be an instant in the years 1970 to 9999, got "${text}"`);
  return at;
}

/** A new protocol with one live and one sandbox key; the keys are returned here and never again. */
export async function createProtocol(
  db: Database,
  input: { name: string; tier: number; overageEnabled?: boolean; subscriptionExpiresAt?: string },
  now: Date,
) {
  return db.transaction(async (tx) => {
    const protocol = await insertProtocol(tx, {
      id: newId.protocol(),
      name: input.name,
      tier: input.tier,
      overage_enabled: input.overageEnabled ?? false,
      subscription_expires_at: input.subscriptionExpiresAt ? expiryOf(input.subscriptionExpiresAt) : oneYearAfter(now),
    });
    const live = await issueKey(tx, protocol.id, 'production');
    const sandbox = await issueKey(tx, protocol.id, 'sandbox');
    return { ...protocolView(protocol), apiKey: live.apiKey, sandboxApiKey: sandbox.apiKey };
  });
}

export async function getProtocol(db: Queryable, id: string): Promise<ProtocolRow> {
  const row = await findProtocol(db, id);
  if (!row) throw new ApiError('PROTOCOL_NOT_FOUND', `No protocol ${id}`);
  return row;
}

export async function changeProtocol(
  db: Queryable,
  id: string,
  input: { name?: string; tier?: number; overageEnabled?: boolean; subscriptionExpiresAt?: string },
): Promise<ProtocolRow> {
  const row = await updateProtocol(db, id, {
    name: input.name,
    tier: input.tier,
    overage_enabled: input.overageEnabled,
    subscription_expires_at: input.subscriptionExpiresAt ? expiryOf(input.subscriptionExpiresAt) : undefined,
  });
  if (!row) throw new ApiError('PROTOCOL_NOT_FOUND', `No protocol ${id}`);
  return row;
}

export async function createKey(db: Queryable, protocolId: string, environment: Environment) {
  await getProtocol(db, protocolId);
  const { apiKey, row } = await issueKey(db, protocolId, environment);
  return { ...keyView(row), apiKey };
}

export async function revokeKey(db: Queryable, protocolId: string, keyId: string) {
  const row = await revokeApiKey(db, protocolId, keyId);
  if (!row) {
    await getProtocol(db, protocolId);
    throw new ApiError('API_KEY_NOT_FOUND', `API key ${keyId} not found on protocol ${protocolId}`);
  }
  return keyView(row);
}
