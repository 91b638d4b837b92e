import type { Queryable } from '../db/connection.js';
import { findKeyOwner, type KeyOwner } from '../account/protocol-store.js';
import { hashApiKey, parseApiKey } from './api-keys.js';

const MAX_ENTRIES = 10_000;

/**
 * Resolves `Authorization: Bearer <key>` to its protocol through a short-lived cache, so a hot key
 * costs one map lookup. The cache is keyed by the header as sent and lives in this process only
 * (the database holds nothing but key hashes); an entry lasts `ttlMs`. Unknown keys are cached too
 * (as misses), so guessing keys cannot hammer the database. A revoked key stops working within
 * `ttlMs` everywhere, at once here.
 */
export class Authenticator {
  private readonly cache = new Map<string, { owner: KeyOwner | null; expires: number }>();

  constructor(
    private readonly db: Queryable,
    private readonly ttlMs: number,
    private readonly now: () => number = Date.now,
  ) {}

  /**
   * The answer for this header without waiting: the owner, `null` for a refusal, or `undefined`
   * when only `authenticate` can tell (the key must be looked up).
   */
  peek(header: string | undefined): KeyOwner | null | undefined {
    if (!header) return null;
    const cached = this.cache.get(header);
    if (cached && cached.expires > this.now()) return cached.owner;
    return undefined;
  }

  async authenticate(header: string | undefined): Promise<KeyOwner | null> {
    const known = this.peek(header);
    if (known !== undefined) return known;
    const key = bearerToken(header);
    if (!key || !parseApiKey(key)) return null;
    const owner = (await findKeyOwner(this.db, hashApiKey(key))) ?? null;
    if (this.ttlMs > 0) {
      if (this.cache.size >= MAX_ENTRIES) this.cache.delete(this.cache.keys().next().value!);
      this.cache.set(header!, { owner, expires: this.now() + this.ttlMs });
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
