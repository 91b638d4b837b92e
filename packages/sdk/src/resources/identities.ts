import type { RequestCore, RequestOptions } from '../request.js';

/** What a signed challenge will allow. */
export type ChallengePurpose = 'register' | 'delete';
/** A channel's state for the wallet. */
export type ChannelState = 'verified' | 'pending' | 'none';

export interface Challenge {
  /** The exact text the wallet signs (UTF-8 bytes, ed25519). */
  message: string;
  nonce: string;
  /** ISO 8601; the challenge is single use and lasts 5 minutes. */
  expiresAt: string;
}

export interface RegisterIdentityParams {
  wallet: string;
  nonce: string;
  /** The wallet's ed25519 signature of the challenge message, base58 or base64. */
  signature: string;
  /** Omit to keep the current address, null to remove it; a new address gets a 6-digit code. */
  email?: string | null;
  /** E.164 (+14155550123); omit to keep, null to remove; a new number gets a 6-digit code. */
  phone?: string | null;
}

export interface RegisteredIdentity {
  wallet: string;
  registered: true;
  channels: { email: ChannelState; telegram: ChannelState; sms: ChannelState };
  /**
   * Contacts waiting for their code: new ones (`pending` in `channels`), and replacements of
   * verified ones, which keep carrying messages (and read `verified`) until the new one is verified.
   */
  awaitingVerification: ('email' | 'sms')[];
  /** Opening it links a Telegram chat; single use. */
  telegramLink: string;
  telegramLinkExpiresAt: string;
}

export interface VerifyContactParams {
  wallet: string;
  channel: 'email' | 'sms';
  /** The six digits that were sent. */
  code: string;
}

export interface VerifiedContact {
  wallet: string;
  channel: string;
  verified: true;
}

/** A challenge signed for the purpose `delete`. */
export interface DeleteIdentityParams {
  nonce: string;
  signature: string;
}

/**
 * Wallet self-registration. These routes are public: they need no API key and the client sends
 * none, so they can run where the wallet is (a browser or an app) with `new Herald({ baseUrl })`.
 */
export class Identities {
  constructor(private readonly core: RequestCore) {}

  /**
   * A message for the wallet to sign, proving it owns the address.
   * @example const { message, nonce } = await herald.identities.challenge({ wallet });
   */
  challenge(params: { wallet: string; purpose?: ChallengePurpose }, options?: RequestOptions): Promise<Challenge> {
    return this.core.request({ method: 'POST', path: '/v1/identities/challenge', body: params, anonymous: true, answer: { message: 'string', nonce: 'string' } }, options);
  }

  /**
   * Registers the wallet (or changes its contacts) with a signed challenge.
   * @example const { channels, telegramLink } = await herald.identities.register({ wallet, nonce, signature, email: 'me@example.com' });
   */
  register(params: RegisterIdentityParams, options?: RequestOptions): Promise<RegisteredIdentity> {
    return this.core.request({ method: 'POST', path: '/v1/identities', body: params, anonymous: true, answer: { wallet: 'string', channels: 'object' } }, options);
  }

  /**
   * Confirms an email address or phone number with the code sent to it. Retried like a GET: the
   * gateway answers a repeat of a verification that succeeded alike, while the code is valid.
   * @example await herald.identities.verify({ wallet, channel: 'email', code: '123456' });
   */
  verify(params: VerifyContactParams, options?: RequestOptions): Promise<VerifiedContact> {
    return this.core.request({ method: 'POST', path: '/v1/identities/verify', body: params, anonymous: true, retrySafe: true, answer: { wallet: 'string', verified: 'boolean' } }, options);
  }

  /**
   * Erases the wallet's identity: contacts, codes, Telegram links and every subscription. Not
   * retried after a 5xx, a timeout or a reset: the first attempt may have used the challenge up.
   * @example await herald.identities.delete(wallet, { nonce, signature }); // challenge with purpose 'delete'
   */
  delete(wallet: string, params: DeleteIdentityParams, options?: RequestOptions): Promise<{ deleted: true }> {
    const path = `/v1/identities/${encodeURIComponent(wallet)}`;
    return this.core.request({ method: 'DELETE', path, body: params, anonymous: true, repeatsWork: true, answer: { deleted: 'boolean' } }, options);
  }
}
