import type { Queryable } from '../db/connection.js';
import type { ChallengePurpose } from './challenge-message.js';

export interface ChallengeRow {
  nonce: string;
  wallet: string;
  purpose: ChallengePurpose;
  message: string;
  expires_at: Date;
  used_at: Date | null;
}

// Expired challenges are kept this long so a late answer still gets "expired", not "unknown".
const KEEP_EXPIRED_MS = 60 * 60 * 1000;

export async function insertChallenge(db: Queryable, row: Omit<ChallengeRow, 'used_at'>): Promise<void> {
  await db.query('INSERT INTO identity_challenges (nonce, wallet, purpose, message, expires_at) VALUES ($1, $2, $3, $4, $5)', [
    row.nonce,
    row.wallet,
    row.purpose,
    row.message,
    row.expires_at,
  ]);
}

/** Deletes long-expired challenges; run on every issue, its cost is amortised over the inserts. */
export async function sweepChallenges(db: Queryable, now: Date): Promise<void> {
  await db.query('DELETE FROM identity_challenges WHERE expires_at < $1', [new Date(now.getTime() - KEEP_EXPIRED_MS)]);
}

export async function findChallenge(db: Queryable, nonce: string): Promise<ChallengeRow | undefined> {
  const [row] = await db.query<ChallengeRow>('SELECT * FROM identity_challenges WHERE nonce = $1', [nonce]);
  return row;
}

/** Marks the challenge used; false when another request used it first or it has expired meanwhile. */
export async function consumeChallenge(db: Queryable, nonce: string, wallet: string, now: Date): Promise<boolean> {
  const rows = await db.query(
    `UPDATE identity_challenges SET used_at = $3
     WHERE nonce = $1 AND wallet = $2 AND used_at IS NULL AND expires_at > $3
     RETURNING nonce`,
    [nonce, wallet, now],
  );
  return rows.length === 1;
}

/** Gives a challenge marked used at `usedAt` back, for a registration that could not go through. */
export async function releaseChallenge(db: Queryable, nonce: string, usedAt: Date): Promise<void> {
  await db.query('UPDATE identity_challenges SET used_at = NULL WHERE nonce = $1 AND used_at = $2', [nonce, usedAt]);
}
