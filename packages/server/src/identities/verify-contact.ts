import type { SecretBox } from '../crypto/secret-box.js';
import type { Deps } from '../deps.js';
import { ApiError } from '../http/errors.js';
import { walletNotRegistered } from '../wallet.js';
import { deleteCodes, findCode, markCodeUsed, spendCodeAttempt, type CodeChannel } from './code-store.js';
import { contactVerified, findIdentity, markContactVerified } from './identity-store.js';
import { CODE_MAX_ATTEMPTS, sameDigest } from './one-time-secrets.js';

/**
 * Codes have a million values, so a plain hash would fall to brute force from a copied table; a
 * digest keyed with the encryption key (and bound to wallet and channel) does not.
 */
export function codeDigest(secrets: SecretBox, wallet: string, channel: CodeChannel, code: string): string {
  return secrets.digest(`identity-code:${wallet}:${channel}:${code}`);
}

type Outcome = { kind: 'verified' } | { kind: 'wrong'; triesLeft: number } | { kind: 'no-code' | 'dead' | 'unregistered' | 'contact-gone' };

/**
 * Checks a code; every check spends one of the code's 5 tries, right or wrong. A repeat of a check
 * that verified (the same code, while it is valid and has tries) answers `verified` again, as long
 * as the contact it verified still is (a provider refusing it for good takes the mark away).
 */
export async function verifyContact(deps: Pick<Deps, 'db' | 'secrets' | 'now'>, input: { wallet: string; channel: CodeChannel; code: string }) {
  const now = deps.now();
  const digest = codeDigest(deps.secrets, input.wallet, input.channel, input.code);
  const outcome = await deps.db.transaction(async (tx): Promise<Outcome> => {
    const live = await spendCodeAttempt(tx, input.wallet, input.channel, CODE_MAX_ATTEMPTS, now);
    if (!live) {
      const code = await findCode(tx, input.wallet, input.channel);
      if (code && !code.used_at) return { kind: 'dead' };
      return { kind: (await findIdentity(tx, input.wallet)) ? 'no-code' : 'unregistered' };
    }
    if (live.used_at) {
      // Nothing waits: only a repeat of the verification that used the code is answered.
      const repeat = sameDigest(live.code_hash, digest) && (await contactVerified(tx, input.wallet, input.channel));
      return { kind: repeat ? 'verified' : 'no-code' };
    }
    if (!sameDigest(live.code_hash, digest)) return { kind: 'wrong', triesLeft: CODE_MAX_ATTEMPTS - live.attempts };
    if (!(await markContactVerified(tx, input.wallet, input.channel, now))) {
      await deleteCodes(tx, input.wallet, [input.channel]);
      return { kind: 'contact-gone' };
    }
    await markCodeUsed(tx, input.wallet, input.channel, now);
    return { kind: 'verified' };
  });
  const what = input.channel === 'email' ? 'email address' : 'phone number';
  switch (outcome.kind) {
    case 'verified':
      return { wallet: input.wallet, channel: input.channel, verified: true as const };
    case 'wrong':
      throw new ApiError(
        'VALIDATION_ERROR',
        outcome.triesLeft > 0
          ? `Wrong code; ${outcome.triesLeft} ${outcome.triesLeft === 1 ? 'try' : 'tries'} left`
          : 'Wrong code; no tries left: register again to get a new code',
      );
    case 'dead':
      throw new ApiError('VALIDATION_ERROR', `The code for this ${what} has expired or has no tries left; register again to get a new code`);
    case 'unregistered':
      throw walletNotRegistered(input.wallet);
    case 'no-code':
    case 'contact-gone':
      throw new ApiError('VALIDATION_ERROR', `No ${what} is waiting for verification on this wallet; register one first`);
  }
}
