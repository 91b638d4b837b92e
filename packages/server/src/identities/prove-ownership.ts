import type { Queryable } from '../db/connection.js';
import { ApiError } from '../http/errors.js';
import type { ChallengePurpose } from './challenge-message.js';
import { consumeChallenge, findChallenge, releaseChallenge } from './challenge-store.js';
import { decodeSignature, isWalletSignature } from './wallet-signature.js';

export interface SignedChallenge {
  wallet: string;
  nonce: string;
  signature: string;
}

/**
 * Checks that `signature` is the wallet's signature of a live challenge issued to it for `purpose`.
 * It does not use the challenge up: a forged attempt must not burn the owner's nonce. The caller
 * then calls useChallenge inside the transaction that acts on the proof.
 */
export async function checkSignedChallenge(db: Queryable, proof: SignedChallenge, purpose: ChallengePurpose, now: Date): Promise<void> {
  const signatures = decodeSignature(proof.signature);
  if (signatures.length === 0) {
    throw new ApiError('VALIDATION_ERROR', 'signature must be a 64-byte ed25519 signature in base58 or base64');
  }
  const challenge = await findChallenge(db, proof.nonce);
  if (!challenge) throw new ApiError('INVALID_SIGNATURE', 'Unknown challenge nonce; request a challenge first');
  if (challenge.wallet !== proof.wallet) throw new ApiError('INVALID_SIGNATURE', 'This challenge was issued for another wallet');
  if (challenge.purpose !== purpose) {
    throw new ApiError('INVALID_SIGNATURE', `This challenge was issued to ${challenge.purpose}; request one with purpose "${purpose}"`);
  }
  if (challenge.used_at) throw new ApiError('INVALID_SIGNATURE', 'This challenge has already been used; request a new one');
  if (challenge.expires_at.getTime() <= now.getTime()) throw new ApiError('INVALID_SIGNATURE', 'This challenge has expired; request a new one');
  if (!isWalletSignature(proof.wallet, challenge.message, signatures)) {
    throw new ApiError('INVALID_SIGNATURE', 'The signature is not the wallet’s signature of the challenge message');
  }
}

/** Uses the challenge once, inside the caller's transaction; a concurrent replay loses here. */
export async function useChallenge(tx: Queryable, proof: SignedChallenge, now: Date): Promise<void> {
  if (!(await consumeChallenge(tx, proof.nonce, proof.wallet, now))) {
    throw new ApiError('INVALID_SIGNATURE', 'This challenge has already been used; request a new one');
  }
}

/**
 * Uses the challenge for an action with effects outside the database (sending codes): taken first,
 * so of concurrent uses only one goes on to those effects, and given back when `act` fails, so the
 * owner can retry with the same challenge.
 */
export async function withChallengeUsed<T>(db: Queryable, proof: SignedChallenge, now: Date, act: () => Promise<T>): Promise<T> {
  await useChallenge(db, proof, now);
  try {
    return await act();
  } catch (error) {
    await releaseChallenge(db, proof.nonce, now);
    throw error;
  }
}
