import type { Database, Queryable } from '../db/connection.js';
import { findKeyOwner, type KeyOwner } from '../account/protocol-store.js';
import { hashApiKey, parseApiKey } from './api-keys.js';

const MAX_ENTRIES = 10_000;

/** Share of an entry's life after which a request that uses it also has it looked up again. */
const REFRESH_AFTER = 0.8;

interface Entry {
  owner: KeyOwner | null;
  expires: number;
  refreshAt: number;
}

/**
 * Resolves `Authorization: Bearer <key>` to its protocol through a short-lived cache, so a hot key
 * costs one map lookup. The cache is keyed by the header as sent and lives in this process only
 * (the database holds nothing but key hashes); an entry lasts `ttlMs`. Unknown keys are cached too
 * (as misses), so guessing keys cannot hammer the database. A revoked key stops working within
 * `ttlMs` everywhere, at once here.
 *
 * A key in use never leaves the cache: once an entry is past 80% of its life, the next request
 * that uses it starts a lookup in the background and is answered from the entry, which is still
 * valid. A key that is not cached is looked up once however many requests wait for it. Without
 * both, every busy key expired at once (they are cached as traffic starts) and each of its
 * requests during the lookup made a lookup of its own: a thousand queries a second for 200 keys.
 */
export class Authenticator {
  private readonly cache = new Map<string, Entry>();
  private readonly lookups = new Map<string, Promise<KeyOwner | null>>();
  /** Bumped by invalidate(), so a lookup that started before it cannot cache what it read. */
  private generation = 0;

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
    if (!cached) return undefined;
    const now = this.now();
    if (cached.expires <= now) return undefined;
    if (cached.refreshAt <= now && !this.lookups.has(header)) this.lookup(header).catch(() => {});
    return cached.owner;
  }

  async authenticate(header: string | undefined): Promise<KeyOwner | null> {
    const known = this.peek(header);
    if (known !== undefined) return known;
    return this.lookup(header!);
  }

  /** Forget everything cached, after a key is revoked or a protocol changes (changeKeys). */
  invalidate(): void {
    this.generation++;
    this.cache.clear();
    this.lookups.clear();
  }

  /** One lookup per header at a time: concurrent callers share it. */
  private lookup(header: string): Promise<KeyOwner | null> {
    let pending = this.lookups.get(header);
    if (!pending) {
      const settled = () => {
        if (this.lookups.get(header) === pending) this.lookups.delete(header);
      };
      pending = this.load(header);
      pending.then(settled, settled);
      this.lookups.set(header, pending);
    }
    return pending;
  }

  private async load(header: string): Promise<KeyOwner | null> {
    const key = bearerToken(header);
    if (!key || !parseApiKey(key)) return null;
    const generation = this.generation;
    const owner = (await findKeyOwner(this.db, hashApiKey(key))) ?? null;
    if (this.ttlMs > 0 && generation === this.generation) {
      if (!this.cache.has(header) && this.cache.size >= MAX_ENTRIES) this.cache.delete(this.cache.keys().next().value!);
      const now = this.now();
      this.cache.set(header, { owner, expires: now + this.ttlMs, refreshAt: now + this.ttlMs * REFRESH_AFTER });
    }
    return owner;
  }
}

/** The PostgreSQL channel on which a change to a protocol or its keys reaches every process. */
const KEY_CHANGES = 'herald_key_changes';

/**
 * Runs a change to a protocol or its keys in a transaction that announces it: at its commit every
 * process listening (`listenForKeyChanges`) forgets its cached keys, and this one does too
 * (PGlite serves this process alone).
 */
export async function changeKeys<T>(db: Database, authenticator: Authenticator, change: (tx: Queryable) => Promise<T>): Promise<T> {
  const changed = await db.transaction(async (tx) => {
    const result = await change(tx);
    if (db.engine === 'postgres') await tx.query('SELECT pg_notify($1, $2)', [KEY_CHANGES, '']);
    return result;
  });
  authenticator.invalidate();
  return changed;
}

/**
 * Makes this process's authenticator forget its cache whenever another process announces a key
 * change, so a revoked key, a new tier or a change of overage holds everywhere at the commit
 * rather than when cached entries expire. A notification lost while the listening connection is
 * down leaves the cache's own lifetime (HERALD_AUTH_CACHE_MS) as the bound.
 */
export async function listenForKeyChanges(db: Database, authenticator: Authenticator): Promise<void> {
  if (db.engine === 'postgres') await db.listen(KEY_CHANGES, () => authenticator.invalidate());
}

export function bearerToken(header: string | undefined): string | null {
  if (!header) return null;
  const match = /^Bearer\s+(\S+)\s*$/i.exec(header);
  return match ? match[1] : null;
}
