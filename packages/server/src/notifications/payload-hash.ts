import { createHash } from 'node:crypto';
import type { NotifyInput } from './schemas.js';

/** JSON with object keys sorted at every level, so equal payloads hash equally. */
function canonical(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonical).join(',')}]`;
  if (value && typeof value === 'object') {
    const entries = Object.entries(value as Record<string, unknown>)
      .filter(([, v]) => v !== undefined)
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${canonical(v)}`).join(',')}}`;
  }
  return JSON.stringify(value);
}

/**
 * What "the same payload" means for idempotency: every field of the request except the key,
 * with defaults applied (omitting `priority` equals sending "normal").
 */
export function payloadHash(input: NotifyInput): string {
  const { idempotencyKey: _key, ...payload } = input;
  const normalised = { ...payload, priority: payload.priority ?? 'normal', receipt: payload.receipt ?? false };
  return createHash('sha256').update(canonical(normalised)).digest('hex');
}
