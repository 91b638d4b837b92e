import type { Deps } from '../deps.js';
import { ApiError } from '../http/errors.js';
import { eraseWallet } from './identity-store.js';
import { checkSignedChallenge, useChallenge, type SignedChallenge } from './prove-ownership.js';

/** Erases a wallet's identity, contacts, pending codes, link tokens and every subscription. */
export async function eraseIdentity(deps: Pick<Deps, 'db' | 'now'>, proof: SignedChallenge) {
  const now = deps.now();
  await checkSignedChallenge(deps.db, proof, 'delete', now);
  const existed = await deps.db.transaction(async (tx) => {
    await useChallenge(tx, proof, now);
    return eraseWallet(tx, proof.wallet);
  });
  if (!existed) throw new ApiError('WALLET_NOT_REGISTERED', `Wallet ${proof.wallet} is not registered`);
  return { deleted: true as const };
}
