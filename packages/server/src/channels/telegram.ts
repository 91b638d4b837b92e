import { PROVIDER_USER_AGENT, type ChannelProvider, type OutboundMessage, type SendOutcome } from './provider.js';
import { redactProviderText } from './redact-contact.js';
import { SendPacer } from './send-pacer.js';

/** The shortest token secret masked on its own: a shorter one (a test's) would mask unrelated text. */
const MIN_SECRET_LENGTH = 16;

export interface TelegramOptions {
  token: string;
  /** Bot API base URL, `https://api.telegram.org` in production. */
  apiUrl: string;
  /** Messages per second for this process; sends beyond it wait their turn. */
  ratePerSecond: number;
  timeoutMs?: number;
}

interface BotApiAnswer {
  ok?: boolean;
  result?: { message_id?: number };
  error_code?: number;
  description?: string;
  parameters?: { retry_after?: number; migrate_to_chat_id?: number };
}

/**
 * Telegram through the Bot API `sendMessage`, HTML parse mode (the text arrives already rendered
 * and escaped for it).
 *
 * | Bot API answer                                  | Outcome                                 |
 * |-------------------------------------------------|-----------------------------------------|
 * | 200 `ok: true`                                  | delivered (`message_id`)                |
 * | 429 `parameters.retry_after: N`                 | retry after N s                         |
 * | 403 bot blocked / kicked, 400 chat not found    | failed: retrying cannot help            |
 * | 401, 404: the token is wrong                    | failed, names TELEGRAM_BOT_TOKEN        |
 * | other 4xx                                       | failed                                  |
 * | 5xx, no answer, timeout, unreadable answer      | retry                                   |
 *
 * The token is part of the URL, so no URL and no raw fetch error text ever reaches an outcome.
 */
export class TelegramProvider implements ChannelProvider {
  readonly name = 'telegram';
  private readonly pacer: SendPacer;
  private readonly endpoint: string;
  private readonly secrets: string[];

  constructor(private readonly options: TelegramOptions) {
    this.pacer = new SendPacer(options.ratePerSecond);
    const secret = options.token.slice(options.token.indexOf(':') + 1);
    this.secrets = secret.length >= MIN_SECRET_LENGTH ? [options.token, secret] : [options.token];
    this.endpoint = `${options.apiUrl.replace(/\/+$/, '')}/bot${options.token}/sendMessage`;
  }

  async send(message: OutboundMessage): Promise<SendOutcome> {
    await this.pacer.take();
    let response: Response;
    let answer: BotApiAnswer | undefined;
    try {
      response = await fetch(this.endpoint, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'user-agent': PROVIDER_USER_AGENT },
        body: JSON.stringify({ chat_id: message.to, text: message.text, parse_mode: 'HTML', link_preview_options: { is_disabled: true } }),
        signal: AbortSignal.timeout(this.options.timeoutMs ?? 10_000),
        redirect: 'error',
      });
      answer = (await response.json().catch(() => undefined)) as BotApiAnswer | undefined;
    } catch (error) {
      return { kind: 'retry', error: `Telegram unreachable: ${this.describeNetworkError(error)}` };
    }
    return this.scrub(telegramOutcome(response.status, answer), message.to);
  }

  private describeNetworkError(error: unknown): string {
    const err = error as Error & { cause?: { code?: string } };
    if (err.name === 'TimeoutError') return `no answer within ${this.options.timeoutMs ?? 10_000} ms`;
    return err.cause?.code ?? err.name ?? 'network error';
  }

  /**
   * Telegram's descriptions never contain the token, but a proxy or a self-hosted Bot API server
   * may echo the path, and an outcome is shown to users: make sure. The part after the colon is
   * the secret, masked alone too (the bot id before it is public).
   */
  private scrub(outcome: SendOutcome, to: string): SendOutcome {
    const clean = (text: string) => redactProviderText(text, this.secrets, 'telegram', to);
    if (outcome.kind === 'delivered') return outcome;
    return { ...outcome, error: clean(outcome.error), ...(outcome.providerResponse ? { providerResponse: clean(outcome.providerResponse) } : {}) };
  }
}

export function telegramOutcome(status: number, answer: BotApiAnswer | undefined): SendOutcome {
  if (status === 200 && answer?.ok) return { kind: 'delivered', providerResponse: `message_id ${answer.result?.message_id}` };
  const description = answer?.description ?? 'no Bot API answer';
  const providerResponse = `${status} ${description}`;
  if (status === 429) {
    const seconds = answer?.parameters?.retry_after;
    const outcome: SendOutcome = { kind: 'retry', error: `Telegram rate limit: ${description}`, providerResponse };
    if (typeof seconds === 'number' && seconds >= 0) outcome.retryAfterMs = seconds * 1000;
    return outcome;
  }
  if (status === 401 || status === 404) {
    return { kind: 'failed', error: `Telegram refused the bot token (${status} ${description}), check TELEGRAM_BOT_TOKEN`, providerResponse, setup: true };
  }
  if (status >= 400 && status < 500) {
    const outcome: SendOutcome = { kind: 'failed', error: `Telegram ${status}: ${description}`, providerResponse };
    // The user's own doing, whatever the bot: it was blocked or kicked, or the account is gone.
    // ("chat not found" and "can't initiate conversation" are what another bot's token gets too.)
    if (status === 403 && /blocked by the user|user is deactivated|kicked/i.test(description)) outcome.unreachable = true;
    return outcome;
  }
  return { kind: 'retry', error: `Telegram ${status}: ${description}`, providerResponse };
}
