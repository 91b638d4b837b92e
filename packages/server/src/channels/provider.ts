export type Channel = 'email' | 'telegram' | 'sms';
export const CHANNELS: readonly Channel[] = ['email', 'telegram', 'sms'];

/** A rendered message addressed to one contact, ready for a provider. */
export interface OutboundMessage {
  channel: Channel;
  /** Email address, Telegram chat id or E.164 phone number. */
  to: string;
  subject?: string;
  html?: string;
  text: string;
  /** Extra headers (email only), e.g. List-Unsubscribe. */
  headers?: Record<string, string>;
  /** Stable id for the provider (email Message-ID is derived from it). */
  messageId?: string;
  /** Who the message is for: kept by the capture provider, never sent to a provider. */
  meta: { protocolId: string; notificationId?: string; wallet: string; environment: 'production' | 'sandbox' };
}

/**
 * What a provider made of a send. `retry` is transient (try again later, `retryAfterMs` when the
 * provider said how long); `failed` and `bounced` are final.
 */
export type SendOutcome =
  | { kind: 'delivered'; providerResponse: string }
  | { kind: 'bounced'; error: string; providerResponse?: string }
  /**
   * `softBounce`: the recipient's server deferred this recipient or message (an SMTP 4xx to RCPT TO
   * or DATA: a full mailbox, greylisting); when the retries run out the email has bounced, softly.
   */
  | { kind: 'retry'; error: string; retryAfterMs?: number; providerResponse?: string; softBounce?: true }
  /**
   * `unreachable`: the destination itself cannot take messages (an invalid or opted-out number), not the setup.
   * `setup`: the provider refused this gateway's settings (credentials, sender, host): every message
   * of the channel fails until the operator fixes them.
   */
  | { kind: 'failed'; error: string; providerResponse?: string; unreachable?: true; setup?: true };

export interface ChannelProvider {
  /** `smtp`, `telegram`, `twilio`, `capture`. */
  readonly name: string;
  /**
   * Sends it carries at once, when it has a limit of its own (a connection pool). The worker starts
   * no more than that: a send queued inside the provider counts as started, so a stopping worker
   * could neither give it back nor wait for it.
   */
  readonly maxConcurrency?: number;
  send(message: OutboundMessage): Promise<SendOutcome>;
  close?(): Promise<void>;
}

/** The User-Agent of requests to the Telegram Bot API and to Twilio. */
export const PROVIDER_USER_AGENT = 'Herald/1.0';
