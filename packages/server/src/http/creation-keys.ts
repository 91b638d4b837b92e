import { createHash } from 'node:crypto';
import { Type } from '@sinclair/typebox';
import type { Database, Queryable } from '../db/connection.js';
import { canonical } from '../notifications/payload-hash.js';
import { ApiError } from './errors.js';

/** Set to `true` on an answer given again for a repeated Idempotency-Key, as Stripe does. */
export const REPLAYED_HEADER = 'idempotent-replayed';

/** The optional Idempotency-Key header of the calls that create a broadcast or a schedule. */
export const IdempotencyKeyHeaders = Type.Object({
  'idempotency-key': Type.Optional(
    Type.String({
      minLength: 1,
      maxLength: 255,
      description:
        'Makes a retry safe: a request repeating a key this protocol (and environment) already used with the same body gets the first answer again, with `Idempotent-Replayed: true`, and creates nothing; with another body, 409 DUPLICATE_IDEMPOTENCY_KEY.',
    }),
  ),
});

/** A creation call's key, scoped to its protocol and environment, with the hash of what it asks for. */
export interface CreationKey {
  protocolId: string;
  environment: string;
  key: string;
  payloadHash: string;
}

/** The first answer given for a key. */
export interface StoredAnswer<T> {
  statusCode: number;
  body: T;
}

/** The defaults a creation body is compared with: omitting them equals sending them. */
const DEFAULTS: Record<string, unknown> = { priority: 'normal', receipt: false };

/**
 * The key of a creation request, or undefined without the header. "The same payload" is the
 * call (method and route) and the body's fields the route knows (`fields`), with the defaults
 * applied and an empty `templateVariables` equal to none: unknown fields are ignored here as
 * everywhere, so a client that starts sending one does not turn its retries into conflicts.
 */
export function creationKey(
  sender: { protocol: { id: string }; environment: string },
  key: string | undefined,
  call: string,
  fields: readonly string[],
  body: Record<string, unknown>,
): CreationKey | undefined {
  if (key === undefined) return undefined;
  const payload: Record<string, unknown> = {};
  for (const field of fields) payload[field] = body[field] ?? DEFAULTS[field];
  const variables = payload.templateVariables;
  if (variables && typeof variables === 'object' && Object.keys(variables).length === 0) delete payload.templateVariables;
  const payloadHash = createHash('sha256').update(canonical([call, payload])).digest('hex');
  return { protocolId: sender.protocol.id, environment: sender.environment, key, payloadHash };
}

function conflict(key: CreationKey): ApiError {
  return new ApiError('DUPLICATE_IDEMPOTENCY_KEY', `Idempotency-Key "${key.key}" was already used with another request; use a new key for a new request`);
}

function answerOf<T>(key: CreationKey, row: { payload_hash: string; status_code: number; response: T }): StoredAnswer<T> {
  if (row.payload_hash !== key.payloadHash) throw conflict(key);
  return { statusCode: row.status_code, body: row.response };
}

const SELECT = `SELECT payload_hash, status_code, response FROM creation_keys
                WHERE protocol_id = $1 AND environment = $2 AND idempotency_key = $3`;

/**
 * The answer already given for this key, if any (409 DUPLICATE_IDEMPOTENCY_KEY when it was given
 * to another payload). Read before anything else is checked, so a retry gets the first answer even
 * when the request would no longer be accepted (a schedule's time has passed, say).
 */
export async function answeredBefore<T>(db: Queryable, key: CreationKey | undefined): Promise<StoredAnswer<T> | undefined> {
  if (!key) return undefined;
  const [row] = await db.query<{ payload_hash: string; status_code: number; response: T }>(SELECT, [key.protocolId, key.environment, key.key]);
  return row ? answerOf(key, row) : undefined;
}

/**
 * Runs `create` in one transaction with the key's row, and keeps its answer with the key. A
 * concurrent request with the same key waits on the key's unique index until this transaction
 * ends: it then reads the answer committed here (`replayed`), or, when this one failed and wrote
 * nothing, creates in its turn. Without a key, `create` runs in a transaction of its own.
 */
export async function createOnce<T>(
  db: Database,
  key: CreationKey | undefined,
  statusCode: number,
  now: Date,
  create: (tx: Queryable) => Promise<T>,
): Promise<{ answer: StoredAnswer<T>; replayed: boolean }> {
  return db.transaction(async (tx) => {
    if (key) {
      const claimed = await tx.query(
        `INSERT INTO creation_keys (protocol_id, environment, idempotency_key, payload_hash, status_code, response, created_at)
         VALUES ($1, $2, $3, $4, $5, 'null'::jsonb, $6)
         ON CONFLICT (protocol_id, environment, idempotency_key) DO NOTHING
         RETURNING 1`,
        [key.protocolId, key.environment, key.key, key.payloadHash, statusCode, now],
      );
      if (claimed.length === 0) {
        const [row] = await tx.query<{ payload_hash: string; status_code: number; response: T }>(SELECT, [key.protocolId, key.environment, key.key]);
        if (!row) throw new Error(`creation key ${key.key} was taken, then vanished`);
        return { answer: answerOf(key, row), replayed: true };
      }
    }
    const body = await create(tx);
    if (key) {
      await tx.query(
        'UPDATE creation_keys SET response = $4::jsonb WHERE protocol_id = $1 AND environment = $2 AND idempotency_key = $3',
        [key.protocolId, key.environment, key.key, JSON.stringify(body)],
      );
    }
    return { answer: { statusCode, body }, replayed: false };
  });
}
