/** What a signed challenge allows: registering (or updating) contacts, or erasing the identity. */
export type ChallengePurpose = 'register' | 'delete';

export const CHALLENGE_TTL_MS = 5 * 60 * 1000;

const PURPOSE_TEXT: Record<ChallengePurpose, string> = {
  register: 'register or update the contacts of this wallet',
  delete: 'delete this wallet, its contacts and its subscriptions',
};

export interface ChallengeFields {
  gateway: string;
  purpose: ChallengePurpose;
  wallet: string;
  nonce: string;
  issuedAt: Date;
  expiresAt: Date;
}

/**
 * The exact text a wallet signs (UTF-8, lines joined by "\n", no trailing newline). Every field a
 * signature commits to is spelled out, so the owner sees what they approve:
 *
 *   Herald identity verification
 *
 *   Sign this message to prove you own the wallet below. Signing sends no transaction and costs nothing.
 *
 *   Gateway: https://herald.example.com
 *   Purpose: register or update the contacts of this wallet
 *   Wallet: <base58 wallet>
 *   Nonce: <32 hex characters>
 *   Issued at: 2026-05-01T12:00:00.000Z
 *   Expires at: 2026-05-01T12:05:00.000Z
 */
export function formatChallengeMessage(fields: ChallengeFields): string {
  return [
    'Herald identity verification',
    '',
    'Sign this message to prove you own the wallet below. Signing sends no transaction and costs nothing.',
    '',
    `Gateway: ${fields.gateway}`,
    `Purpose: ${PURPOSE_TEXT[fields.purpose]}`,
    `Wallet: ${fields.wallet}`,
    `Nonce: ${fields.nonce}`,
    `Issued at: ${fields.issuedAt.toISOString()}`,
    `Expires at: ${fields.expiresAt.toISOString()}`,
  ].join('\n');
}
