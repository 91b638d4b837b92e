import type { Queryable } from '../db/connection.js';

/** The newest link wins: issuing one retires the wallet's earlier tokens. */
export async function replaceLinkToken(db: Queryable, wallet: string, tokenHash: string, expiresAt: Date): Promise<void> {
  await db.query('DELETE FROM telegram_link_tokens WHERE wallet = $1', [wallet]);
  await db.query('INSERT INTO telegram_link_tokens (token_hash, wallet, expires_at) VALUES ($1, $2, $3)', [tokenHash, wallet, expiresAt]);
}

/** Uses a live token once and returns its wallet; undefined when unknown, used or expired. */
export async function consumeLinkToken(db: Queryable, tokenHash: string, now: Date): Promise<string | undefined> {
  const [row] = await db.query<{ wallet: string }>(
    `UPDATE telegram_link_tokens SET used_at = $2
     WHERE token_hash = $1 AND used_at IS NULL AND expires_at > $2
     RETURNING wallet`,
    [tokenHash, now],
  );
  return row?.wallet;
}

/** The wallet of a token already used, whatever its expiry; undefined when unknown or unused. */
export async function walletOfUsedLinkToken(db: Queryable, tokenHash: string): Promise<string | undefined> {
  const [row] = await db.query<{ wallet: string }>('SELECT wallet FROM telegram_link_tokens WHERE token_hash = $1 AND used_at IS NOT NULL', [tokenHash]);
  return row?.wallet;
}
