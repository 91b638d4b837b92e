import type { Queryable } from '../db/connection.js';

/** A creation call's key, scoped to its protocol and environment, with the hash of what it asks for. */
export interface CreationKey {
  protocolId: string;
  environment: string;
  key: string;
  payloadHash: string;
}

/** A key's row: the hash of the first request that used it and that request's answer. */
export interface CreationKeyRow<T> {
  payload_hash: string;
  response: T;
  /** When the request that created something used the key. */
  created_at: Date;
}

const pk = (key: CreationKey) => [key.protocolId, key.environment, key.key];

/** The key's row, if a request that created something used it. */
export async function findCreationKey<T>(db: Queryable, key: CreationKey): Promise<CreationKeyRow<T> | undefined> {
  const [row] = await db.query<CreationKeyRow<T>>(
    'SELECT payload_hash, response, created_at FROM creation_keys WHERE protocol_id = $1 AND environment = $2 AND idempotency_key = $3',
    pk(key),
  );
  return row;
}

/**
 * Takes the key for this transaction: true when it was free. Its answer is a placeholder until
 * rememberAnswer, in the same transaction, so no other transaction ever reads it. A concurrent
 * claim waits on the primary key until this transaction ends, then finds the key taken (commit)
 * or takes it (rollback).
 */
export async function claimCreationKey(tx: Queryable, key: CreationKey, now: Date): Promise<boolean> {
  const claimed = await tx.query(
    `INSERT INTO creation_keys (protocol_id, environment, idempotency_key, payload_hash, response, created_at)
     VALUES ($1, $2, $3, $4, 'null'::jsonb, $5)
     ON CONFLICT (protocol_id, environment, idempotency_key) DO NOTHING
     RETURNING 1`,
    [...pk(key), key.payloadHash, now],
  );
  return claimed.length === 1;
}

/** Keeps the answer of the request that claimed the key (the placeholder's replacement). */
export async function rememberAnswer(tx: Queryable, key: CreationKey, answer: unknown): Promise<void> {
  await tx.query(
    'UPDATE creation_keys SET response = $4::jsonb WHERE protocol_id = $1 AND environment = $2 AND idempotency_key = $3',
    [...pk(key), JSON.stringify(answer)],
  );
}
