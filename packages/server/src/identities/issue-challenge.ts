import type { Deps } from '../deps.js';
import { CHALLENGE_TTL_MS, formatChallengeMessage, type ChallengePurpose } from './challenge-message.js';
import { insertChallenge, sweepChallenges } from './challenge-store.js';
import { newNonce } from './one-time-secrets.js';

/** A single-use message for the wallet to sign, valid for 5 minutes. */
export async function issueChallenge(deps: Pick<Deps, 'db' | 'config' | 'now'>, wallet: string, purpose: ChallengePurpose) {
  const issuedAt = deps.now();
  const expiresAt = new Date(issuedAt.getTime() + CHALLENGE_TTL_MS);
  const nonce = newNonce();
  const message = formatChallengeMessage({ gateway: deps.config.publicUrl, purpose, wallet, nonce, issuedAt, expiresAt });
  await sweepChallenges(deps.db, issuedAt);
  await insertChallenge(deps.db, { nonce, wallet, purpose, message, expires_at: expiresAt });
  return { message, nonce, expiresAt: expiresAt.toISOString() };
}
