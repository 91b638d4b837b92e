import { createHash } from 'node:crypto';
import { NotifyBody, type NotifyInput } from './schemas.js';

/** JSON with object keys sorted at every level, so equal payloads hash equally. */
export function canonical(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonical).join(',')}]`;
  if (value && typeof value === 'object') {
    const entries = Object.entries(value as Record<string, unknown>)
      .filter(([, v]) => v !== undefined)
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${canonical(v)}`).join(',')}}`;
  }
  return JSON.stringify(value);
}

/** The fields a send is made of; anything else in a request body is ignored, here as everywhere. */
const FIELDS = Object.keys(NotifyBody.properties).filter((field) => field !== 'idempotencyKey') as (keyof NotifyInput)[];

/**
 * What "the same payload" means for idempotency: every field of a send except the key, with
 * defaults applied (omitting `priority` equals sending "normal", omitting `receipt` equals
 * false, omitting `templateVariables` equals `{}`). Fields the API does not know are ignored, so
 * a client that starts sending one does not turn its retries into conflicts.
 */
export function payloadHash(input: NotifyInput): string {
  return sha256(canonical(comparedPayload(input)));
}

/**
 * The hash keys stored before 2026-11-25 carry: every field of the request as sent, unknown ones
 * and an empty `templateVariables` included. A retry of such a send still matches it.
 */
export function legacyPayloadHash(input: NotifyInput): string {
  const { idempotencyKey: _key, ...payload } = input;
  return sha256(canonical({ ...payload, priority: payload.priority ?? 'normal', receipt: payload.receipt ?? false }));
}

/**
 * Whether `stored` (a key's first payload hash) is the hash of this send, as either rule made it;
 * `hash` is payloadHash(input), computed already.
 */
export function samePayload(stored: string, input: NotifyInput, hash: string): boolean {
  return stored === hash || stored === legacyPayloadHash(input);
}

const sha256 = (text: string) => createHash('sha256').update(text).digest('hex');

function comparedPayload(input: NotifyInput): Record<string, unknown> {
  const payload: Record<string, unknown> = {};
  for (const field of FIELDS) payload[field] = input[field];
  payload.priority ??= 'normal';
  payload.receipt ??= false;
  // Omitted and empty hash alike (kept absent, as the legacy rule left an omitted one).
  if (payload.templateVariables && Object.keys(payload.templateVariables).length === 0) delete payload.templateVariables;
  return payload;
}
