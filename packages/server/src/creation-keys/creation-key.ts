import { createHash } from 'node:crypto';
import { Type } from '@sinclair/typebox';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Database, Queryable } from '../db/connection.js';
import { ApiError } from '../http/errors.js';
import { bodyFieldRefused } from '../http/refuse-body-field.js';
import { canonical, comparablePayload } from '../notifications/payload-hash.js';
import { claimCreationKey, findCreationKey, rememberAnswer, type CreationKey, type CreationKeyRow } from './creation-key-store.js';

export type { CreationKey } from './creation-key-store.js';

/** Set to `true` on an answer given again for a repeated Idempotency-Key, as Stripe does. */
export const REPLAYED_HEADER = 'idempotent-replayed';

/** Printable ASCII, no space at either end: what any HTTP client can send as a header value. */
export const KEY_CHARACTERS = /^[!-~](?:[ -~]*[!-~])?$/;

/** The optional Idempotency-Key header of the calls that create something: a broadcast, a schedule, a template or one of its versions. */
export const IdempotencyKeyHeaders = Type.Object({
  'idempotency-key': Type.Optional(
    Type.String({
      minLength: 1,
      maxLength: 255,
      description:
        'Printable ASCII (a UUID, say). Makes a retry safe: a request repeating a key this protocol (and environment) already used with the same body gets the first answer again, with `Idempotent-Replayed: true`, and creates nothing; with another body, 409 DUPLICATE_IDEMPOTENCY_KEY.',
    }),
  ),
});

/**
 * The preValidation hook of a creation route: unknown fields are ignored, but a key in the body,
 * where sends take theirs, would be too, and every retry would create again. It is refused before
 * the body's own checks, as the mistake that matters most.
 */
export const refuseBodyKey = (call: string) =>
  bodyFieldRefused('idempotencyKey', `${call} takes its key in the Idempotency-Key header; a key in the body would be ignored`);

/**
 * The key of a creation request, or undefined without the header. "The same payload" is the
 * call (method and route) and the body's fields the route knows (`fields`), compared as a send's
 * are (comparablePayload): defaults applied, unknown fields ignored, key order irrelevant.
 */
export function creationKeyOf(request: FastifyRequest, call: string, fields: readonly string[]): CreationKey | undefined {
  const given = request.raw.headersDistinct['idempotency-key'];
  if (given === undefined) return undefined;
  // Node joins repeated headers with ", ": two keys would silently become a third.
  if (given.length > 1) throw new ApiError('VALIDATION_ERROR', 'Idempotency-Key must be sent once');
  const key = request.headers['idempotency-key'] as string;
  if (!KEY_CHARACTERS.test(key)) {
    throw new ApiError('VALIDATION_ERROR', 'Idempotency-Key must be printable ASCII (letters, digits, punctuation and inner spaces)');
  }
  const payload = comparablePayload(request.body as Record<string, unknown>, fields);
  const payloadHash = createHash('sha256').update(canonical([call, payload])).digest('hex');
  const { protocol, environment } = request.auth!;
  return { protocolId: protocol.id, environment, key, payloadHash };
}

function answerOf<T>(key: CreationKey, row: CreationKeyRow<T>): T {
  if (row.payload_hash !== key.payloadHash) {
    throw new ApiError('DUPLICATE_IDEMPOTENCY_KEY', `Idempotency-Key "${key.key}" was already used with another request; use a new key for a new request`);
  }
  return row.response;
}

/**
 * The answer already given for this key, if any (409 DUPLICATE_IDEMPOTENCY_KEY when it was given
 * to another payload). Read before the handler checks anything, so a retry gets the first answer
 * even when its own checks would now refuse it (a schedule's time has passed, say).
 */
export async function answeredBefore<T>(db: Queryable, key: CreationKey | undefined): Promise<T | undefined> {
  return (await keptAnswer<T>(db, key))?.answer;
}

/** answeredBefore, with when the key was used. */
export async function keptAnswer<T>(db: Queryable, key: CreationKey | undefined): Promise<{ answer: T; keptAt: Date } | undefined> {
  if (!key) return undefined;
  const row = await findCreationKey<T>(db, key);
  return row ? { answer: answerOf(key, row), keptAt: row.created_at } : undefined;
}

/** An answer, and whether it is the first answer given again for a repeated Idempotency-Key. */
export interface Keyed<T> {
  answer: T;
  replayed: boolean;
}

/** The answer of a call made once per Idempotency-Key, marked on the reply when given again. */
export function keyedAnswer<T>(reply: FastifyReply, { answer, replayed }: Keyed<T>): T {
  if (replayed) reply.header(REPLAYED_HEADER, 'true');
  return answer;
}

/**
 * Runs `create` in one transaction with the key's row, and keeps its answer with the key. A
 * concurrent request with the same key waits on the key's unique index until this transaction
 * ends: it then reads the answer committed here (`replayed`), or, when this one failed and wrote
 * nothing, creates in its turn. Without a key, `create` runs in a transaction of its own.
 *
 * On PGlite every query waits for an open transaction to end: `create` must run its statements on
 * `tx` only, never await one on the database itself.
 */
export async function createOnce<T>(
  db: Database,
  key: CreationKey | undefined,
  now: Date,
  create: (tx: Queryable) => Promise<T>,
): Promise<Keyed<T>> {
  return db.transaction(async (tx) => {
    if (key && !(await claimCreationKey(tx, key, now))) {
      const row = await findCreationKey<T>(tx, key);
      if (!row) throw new Error(`creation key ${key.key} was taken, then vanished`);
      return { answer: answerOf(key, row), replayed: true };
    }
    const answer = await create(tx);
    if (key) await rememberAnswer(tx, key, answer);
    return { answer, replayed: false };
  });
}
