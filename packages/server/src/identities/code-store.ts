import type { Queryable } from '../db/connection.js';

export type CodeChannel = 'email' | 'sms';

export interface CodeRow {
  code_hash: string;
  attempts: number;
  expires_at: Date;
  /** When the code verified its contact; null while it waits. */
  used_at: Date | null;
}

/** A new code replaces the previous one of the channel, with a fresh attempt count. */
export async function replaceCode(db: Queryable, wallet: string, channel: CodeChannel, codeHash: string, expiresAt: Date): Promise<void> {
  await db.query(
    `INSERT INTO identity_codes (wallet, channel, code_hash, attempts, expires_at) VALUES ($1, $2, $3, 0, $4)
     ON CONFLICT (wallet, channel) DO UPDATE SET code_hash = EXCLUDED.code_hash, attempts = 0, expires_at = EXCLUDED.expires_at, used_at = NULL`,
    [wallet, channel, codeHash, expiresAt],
  );
}

export async function deleteCodes(db: Queryable, wallet: string, channels: CodeChannel[]): Promise<void> {
  if (channels.length === 0) return;
  await db.query('DELETE FROM identity_codes WHERE wallet = $1 AND channel = ANY($2::text[])', [wallet, channels]);
}

/** Marks the code that verified its contact; it is kept, so a retry of that call is answered alike. */
export async function markCodeUsed(db: Queryable, wallet: string, channel: CodeChannel, now: Date): Promise<void> {
  await db.query('UPDATE identity_codes SET used_at = $3 WHERE wallet = $1 AND channel = $2', [wallet, channel, now]);
}

/**
 * Spends one attempt of a live code (waiting, or used: a repeat of its verification spends a try
 * too) and returns it; undefined when there is no code, it has expired or its attempts are used
 * up. Spending before comparing bounds guesses under concurrency.
 */
export async function spendCodeAttempt(
  db: Queryable,
  wallet: string,
  channel: CodeChannel,
  maxAttempts: number,
  now: Date,
): Promise<CodeRow | undefined> {
  const [row] = await db.query<CodeRow>(
    `UPDATE identity_codes SET attempts = attempts + 1
     WHERE wallet = $1 AND channel = $2 AND attempts < $3 AND expires_at > $4
     RETURNING code_hash, attempts, expires_at, used_at`,
    [wallet, channel, maxAttempts, now],
  );
  return row;
}

export async function findCode(db: Queryable, wallet: string, channel: CodeChannel): Promise<CodeRow | undefined> {
  const [row] = await db.query<CodeRow>('SELECT code_hash, attempts, expires_at, used_at FROM identity_codes WHERE wallet = $1 AND channel = $2', [
    wallet,
    channel,
  ]);
  return row;
}
