import * as crypto from 'node:crypto';
import type { Queryable } from '../db/connection.js';
import { findKeyOwner, type KeyOwner } from '../account/protocol-store.js';
import { hashApiKey, parseApiKey } from './api-keys.js';

const MAX_ENTRIES = 10_000;

// The cache is keyed by a digest of the key, never the key itself. crypto.hash (Node >= 20.12)
// makes that digest without building a Hash object, about four times cheaper on every request;
// the stored hash (hashApiKey) is computed only on a cache miss.
const cacheKeyOf: (key: string) => string =
  typeof crypto.hash === 'function'
    ? (key) => crypto.hash('sha256', key, 'base64')
    : (key) => crypto.createHash('sha256').update(key).digest('base64');

/**
 * Resolves `Authorization: Bearer <key>` to its protocol through a short-lived cache, so a hot key
 * costs one digest and one map lookup. Unknown keys are cached too (as misses), so guessing keys
 * cannot hammer the database. A revoked key stops working within `ttlMs` everywhere, at once here.
 */
export class Authenticator {
  private readonly cache = new Map<string, { owner: KeyOwner | null; expires: number }>();

  constructor(
    private readonly db: Queryable,
    private readonly ttlMs: number,
    private readonly now: () => number = Date.now,
  ) {}

  async authenticate(header: string | undefined): Promise<KeyOwner | null> {
    const key = bearerToken(header);
    if (!key || !parseApiKey(key)) return null;
    const cacheKey = cacheKeyOf(key);
    const cached = this.cache.get(cacheKey);
    const now = this.now();
    if (cached && cached.expires > now) return cached.owner;
    const owner = (await findKeyOwner(this.db, hashApiKey(key))) ?? null;
    if (this.ttlMs > 0) {
      if (this.cache.size >= MAX_ENTRIES) this.cache.delete(this.cache.keys().next().value!);
      this.cache.set(cacheKey, { owner, expires: now + this.ttlMs });
    }
    return owner;
  }

  /** Forget everything cached, after a key is revoked or a protocol changes tier in this process. */
  invalidate(): void {
    this.cache.clear();
  }
}

export function bearerToken(header: string | undefined): string | null {
  if (!header) return null;
  const match = /^Bearer\s+(\S+)\s*$/i.exec(header);
  return match ? match[1] : null;
}
