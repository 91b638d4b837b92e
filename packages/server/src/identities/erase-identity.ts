import type { Deps } from '../deps.js';
import { walletNotRegistered } from '../wallet.js';
import { eraseWallet } from './identity-store.js';
import { checkSignedChallenge, useChallenge, type SignedChallenge } from './prove-ownership.js';

/** Erases a wallet's identity, contacts, pending codes, link tokens and every subscription. */
export async function eraseIdentity(deps: Pick<Deps, 'db' | 'now'>, proof: SignedChallenge) {
  const now = deps.now();
  await checkSignedChallenge(deps.db, proof, 'delete', now);
  await deps.db.transaction(async (tx) => {
    await useChallenge(tx, proof, now);
    // Thrown inside, so that a failed attempt changes nothing: the nonce, and the wallet's other
    // challenges (which erasure deletes), stay usable.
    if (!(await eraseWallet(tx, proof.wallet))) throw walletNotRegistered(proof.wallet);
  });
  return { deleted: true as const };
}
