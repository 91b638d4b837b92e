import type { Deps } from '../deps.js';
import { ApiError } from '../http/errors.js';
import { reserveCodeSends } from './code-send-budget.js';
import type { CodeChannel } from './code-store.js';
import { deleteCodes, replaceCode } from './code-store.js';
import { findIdentity, saveIdentity, type IdentityFields, type IdentityRow } from './identity-store.js';
import { replaceLinkToken } from './link-token-store.js';
import { CODE_TTL_MS, hashLinkToken, LINK_TOKEN_TTL_MS, newLinkToken, newVerificationCode } from './one-time-secrets.js';
import { planContact, type ContactPlan } from './plan-contact.js';
import { checkSignedChallenge, withChallengeUsed, type SignedChallenge } from './prove-ownership.js';
import { sendVerificationCode } from './send-verification-code.js';
import { codeDigest } from './verify-contact.js';

export interface Registration extends SignedChallenge {
  email?: string | null;
  phone?: string | null;
}

export type ChannelState = 'verified' | 'pending' | 'none';

type RegistrationDeps = Pick<Deps, 'db' | 'secrets' | 'channels' | 'config' | 'now' | 'log'>;

const CONTACTS = [
  { channel: 'email', enc: 'email_enc', at: 'email_verified_at', replacement: 'email_pending_enc' },
  { channel: 'sms', enc: 'phone_enc', at: 'phone_verified_at', replacement: 'phone_pending_enc' },
] as const;

export function channelStates(row: IdentityRow): Record<'email' | 'telegram' | 'sms', ChannelState> {
  const state = (value: string | null, at: Date | null): ChannelState => (value ? (at ? 'verified' : 'pending') : 'none');
  return {
    email: state(row.email_enc, row.email_verified_at),
    telegram: row.telegram_chat_enc && row.telegram_linked_at ? 'verified' : 'none',
    sms: state(row.phone_enc, row.phone_verified_at),
  };
}

/** The contacts a code is awaited for: unverified ones, and replacements of verified ones. */
export function awaitingVerification(row: IdentityRow): CodeChannel[] {
  return CONTACTS.filter(({ enc, at, replacement }) => row[replacement] || (row[enc] && !row[at])).map(({ channel }) => channel);
}

function planContacts(deps: RegistrationDeps, stored: IdentityRow | undefined, input: Registration): Map<CodeChannel, ContactPlan> {
  const plans = new Map<CodeChannel, ContactPlan>();
  for (const { channel, enc, at } of CONTACTS) {
    const value = stored?.[enc] ? deps.secrets.decrypt(stored[enc]) : null;
    plans.set(channel, planContact({ value, verified: Boolean(value && stored?.[at]) }, channel === 'email' ? input.email : input.phone));
  }
  return plans;
}

async function sendCodes(deps: RegistrationDeps, wallet: string, plans: Map<CodeChannel, ContactPlan>, now: Date): Promise<Map<CodeChannel, string>> {
  const codes = new Map<CodeChannel, string>();
  const sends = [...plans].flatMap(([channel, plan]) => (plan.sendCodeTo ? [{ wallet, channel, to: plan.sendCodeTo }] : []));
  const giveBack = await reserveCodeSends(deps.db, deps.secrets, sends, now);
  try {
    for (const send of sends) {
      const code = newVerificationCode();
      const outcome = await sendVerificationCode(deps.channels, { ...send, code });
      if (outcome.kind !== 'delivered') {
        deps.log.warn({ wallet, channel: send.channel, outcome: outcome.kind, error: outcome.error }, 'verification code not sent');
        // A destination that refuses for good (a bounce, an invalid or opted-out number) is the
        // request's mistake: retrying it could never work. Anything else may pass later.
        if (outcome.kind === 'bounced' || (outcome.kind === 'failed' && outcome.unreachable)) {
          const field = send.channel === 'email' ? 'email' : 'phone';
          throw new ApiError('VALIDATION_ERROR', `${field} cannot receive the verification code: the provider refused it for good (${outcome.error}); nothing was changed`);
        }
        const message = `The verification code could not be sent by ${send.channel}; nothing was changed, retry with the same challenge`;
        throw new ApiError('SERVICE_UNAVAILABLE', message, { 'Retry-After': '30' });
      }
      codes.set(send.channel, code);
    }
  } finally {
    // Codes that went out count against the limits, the registration going through or not; the
    // places of the others are given back. A failure to give them back leaves them taken for the
    // hour, and must not hide the answer this registration gets.
    await giveBack(sends.filter((send) => !codes.has(send.channel))).catch((error: unknown) =>
      deps.log.warn({ err: error, wallet }, 'verification code places not given back'),
    );
  }
  return codes;
}

/**
 * Registers a wallet, or updates its contacts, on proof of ownership. The challenge is taken
 * before any code is sent, so concurrent uses of one challenge send one set of codes; when a
 * provider fails, nothing changes and the challenge is given back, to be retried.
 */
export async function registerIdentity(deps: RegistrationDeps, input: Registration) {
  const now = deps.now();
  await checkSignedChallenge(deps.db, input, 'register', now);
  const token = newLinkToken();
  const linkExpiresAt = new Date(now.getTime() + LINK_TOKEN_TTL_MS);
  const row = await withChallengeUsed(deps.db, input, now, async () => {
    const stored = await findIdentity(deps.db, input.wallet);
    const codes = await sendCodes(deps, input.wallet, planContacts(deps, stored, input), now);
    return deps.db.transaction(async (tx) => {
      // Planned again from the row as it is now: a verification that landed while the codes went
      // out must not be undone by a plan made before it. Registrations of one wallet take their
      // turn here (the row may not exist yet, so the lock is on the wallet, not the row).
      await tx.query("SELECT pg_advisory_xact_lock(hashtextextended('identity:' || $1, 0))", [input.wallet]);
      const current = await findIdentity(tx, input.wallet, true);
      const plans = planContacts(deps, current, input);
      for (const [channel, plan] of plans) {
        if (plan.sendCodeTo !== undefined && !codes.has(channel)) {
          throw new ApiError('CONFLICT', "The wallet's contacts changed while this registration was sending its codes (a verification at the same moment); nothing was changed, send the same challenge again");
        }
      }
      const fields: IdentityFields = {};
      for (const { channel, enc, at, replacement } of CONTACTS) {
        const plan = plans.get(channel)!;
        if (plan.value === undefined && plan.replacement === undefined) continue;
        if (plan.value !== undefined) {
          fields[enc] = plan.value === null ? null : deps.secrets.encrypt(plan.value);
          fields[at] = plan.verified ? (current?.[at] ?? now) : null;
        }
        if (plan.replacement !== undefined) fields[replacement] = plan.replacement === null ? null : deps.secrets.encrypt(plan.replacement);
        // One code per channel, for the contact it was sent to; a withdrawn or removed one's dies,
        // and so does one sent for a contact that meanwhile needs none (verified at the same moment).
        const code = plan.sendCodeTo === undefined ? undefined : codes.get(channel);
        if (code) {
          const digest = codeDigest(deps.secrets, input.wallet, channel, code);
          await replaceCode(tx, input.wallet, channel, digest, new Date(now.getTime() + CODE_TTL_MS));
        } else {
          await deleteCodes(tx, input.wallet, [channel]);
        }
      }
      await replaceLinkToken(tx, input.wallet, hashLinkToken(token), linkExpiresAt);
      return saveIdentity(tx, input.wallet, fields, now);
    });
  });

  return {
    wallet: input.wallet,
    registered: true as const,
    channels: channelStates(row),
    awaitingVerification: awaitingVerification(row),
    telegramLink: `https://t.me/${deps.config.telegramBotUsername}?start=${token}`,
    telegramLinkExpiresAt: linkExpiresAt.toISOString(),
  };
}
