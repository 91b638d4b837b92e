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

/** Defaults a request is compared with: omitting them equals sending them. */
const COMPARED_DEFAULTS: Record<string, unknown> = { priority: 'normal', receipt: false };

/**
 * The fields of a request (`fields`, those its route knows) as they are compared for
 * idempotency: `priority` and `receipt` defaulted, an empty `templateVariables` equal to none
 * (kept absent, as the legacy rule left an omitted one), unknown fields left out.
 */
export function comparablePayload(body: Record<string, unknown>, fields: readonly string[]): Record<string, unknown> {
  const payload: Record<string, unknown> = {};
  for (const field of fields) payload[field] = body[field] ?? COMPARED_DEFAULTS[field];
  const variables = payload.templateVariables;
  if (variables && typeof variables === 'object' && Object.keys(variables).length === 0) delete payload.templateVariables;
  return payload;
}

function comparedPayload(input: NotifyInput): Record<string, unknown> {
  return comparablePayload(input as unknown as Record<string, unknown>, FIELDS);
}
