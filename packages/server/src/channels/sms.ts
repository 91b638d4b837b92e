import { PROVIDER_USER_AGENT, type ChannelProvider, type OutboundMessage, type SendOutcome } from './provider.js';
import { redactProviderText } from './redact-contact.js';

export interface TwilioOptions {
  accountSid: string;
  authToken: string;
  /** An E.164 sender number, or a Messaging Service SID (`MG…`) which Twilio takes as MessagingServiceSid. */
  from: string;
  /** `https://api.twilio.com` in production. */
  apiUrl: string;
  timeoutMs?: number;
}

interface TwilioAnswer {
  sid?: string;
  status?: string;
  code?: number;
  message?: string;
}

/**
 * SMS through the Twilio Messages API (form-encoded POST, HTTP basic auth).
 *
 * | Twilio answer                                              | Outcome                             |
 * |------------------------------------------------------------|-------------------------------------|
 * | 201 Created                                                | delivered (`sid`, `status`)         |
 * | 429 Too Many Requests                                      | retry, after `Retry-After` if given |
 * | 5xx, no answer, timeout                                    | retry, after `Retry-After` if given |
 * | 400 21211 invalid To, 21614 not a mobile number            | failed                              |
 * | 400 21610 recipient replied STOP, 21408 region not enabled | failed                              |
 * | any other 4xx (404 unknown account, 400 other codes)       | failed                              |
 * | 401, 403: credentials refused, account suspended           | failed, names the settings to check |
 *
 * Twilio "accepted" (201, status `queued`/`accepted`) is where our knowledge ends: carrier
 * delivery reports need a status callback, which this provider does not register.
 */
export class TwilioProvider implements ChannelProvider {
  readonly name = 'twilio';
  private readonly endpoint: string;
  private readonly authorization: string;

  constructor(private readonly options: TwilioOptions) {
    this.endpoint = `${options.apiUrl.replace(/\/+$/, '')}/2010-04-01/Accounts/${encodeURIComponent(options.accountSid)}/Messages.json`;
    this.authorization = `Basic ${Buffer.from(`${options.accountSid}:${options.authToken}`).toString('base64')}`;
  }

  async send(message: OutboundMessage): Promise<SendOutcome> {
    const form = new URLSearchParams({ To: message.to, Body: message.text });
    form.set(this.options.from.startsWith('MG') ? 'MessagingServiceSid' : 'From', this.options.from);
    let response: Response;
    let answer: TwilioAnswer | undefined;
    try {
      response = await fetch(this.endpoint, {
        method: 'POST',
        headers: {
          authorization: this.authorization,
          'content-type': 'application/x-www-form-urlencoded',
          accept: 'application/json',
          'user-agent': PROVIDER_USER_AGENT,
        },
        body: form,
        signal: AbortSignal.timeout(this.options.timeoutMs ?? 10_000),
        redirect: 'error',
      });
      answer = (await response.json().catch(() => undefined)) as TwilioAnswer | undefined;
    } catch (error) {
      return { kind: 'retry', error: `Twilio unreachable: ${this.describeNetworkError(error)}` };
    }
    const outcome = twilioOutcome(response.status, answer, response.headers.get('retry-after'));
    if (outcome.kind === 'delivered') return outcome;
    const clean = (text: string) => redactProviderText(text, [this.options.authToken], 'sms', message.to);
    return { ...outcome, error: clean(outcome.error), ...(outcome.providerResponse ? { providerResponse: clean(outcome.providerResponse) } : {}) };
  }

  private describeNetworkError(error: unknown): string {
    const err = error as Error & { cause?: { code?: string } };
    if (err.name === 'TimeoutError') return `no answer within ${this.options.timeoutMs ?? 10_000} ms`;
    return err.cause?.code ?? err.name ?? 'network error';
  }
}

export function twilioOutcome(status: number, answer: TwilioAnswer | undefined, retryAfter: string | null, now = Date.now()): SendOutcome {
  if (status === 201 || (status >= 200 && status < 300 && answer?.sid)) {
    return { kind: 'delivered', providerResponse: `sid ${answer?.sid} status ${answer?.status}` };
  }
  const detail = answer?.code ? `${answer.code} ${answer.message ?? ''}`.trim() : (answer?.message ?? 'no Twilio answer');
  const providerResponse = `${status} ${detail}`;
  if (status === 429 || status >= 500 || status < 400) {
    const outcome: SendOutcome = { kind: 'retry', error: `Twilio ${status}: ${detail}`, providerResponse };
    const wait = retryAfterMs(retryAfter, now);
    if (wait !== undefined) outcome.retryAfterMs = wait;
    return outcome;
  }
  if (status === 401 || status === 403) {
    return { kind: 'failed', error: `Twilio refused the credentials (${status} ${detail}), check TWILIO_ACCOUNT_SID and TWILIO_AUTH_TOKEN`, providerResponse, setup: true };
  }
  const outcome: SendOutcome = { kind: 'failed', error: `Twilio ${status}: ${detail}`, providerResponse };
  if (answer?.code !== undefined && UNREACHABLE_NUMBER_CODES.has(answer.code)) outcome.unreachable = true;
  return outcome;
}

/**
 * Twilio errors about the number itself, whatever the sender: invalid (21211), opted out by STOP
 * (21610), not a mobile number (21614). Not 21612 (cannot route): it depends on TWILIO_FROM too.
 */
const UNREACHABLE_NUMBER_CODES = new Set([21211, 21610, 21614]);

/** `Retry-After` as seconds or as an HTTP date. */
export function retryAfterMs(header: string | null, now: number): number | undefined {
  if (!header) return undefined;
  if (/^\d+$/.test(header.trim())) return Number(header.trim()) * 1000;
  const at = Date.parse(header);
  return Number.isNaN(at) ? undefined : Math.max(0, at - now);
}
