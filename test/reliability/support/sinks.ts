/**
 * The outside world of a reliability run: a real SMTP server, a Telegram Bot API, a Twilio API and
 * a webhook receiver, all on 127.0.0.1, plus a ledger that counts what each received per
 * notification. The sinks keep every message they get; the ledger drains them as it goes, so a soak
 * run of 20,000 messages does not hold 20,000 raw emails in memory.
 */
import { verifyWebhookSignature } from '../../../packages/sdk/src/webhooks.js';
import { startSmtpServer, type TestSmtpServer } from '../../support/smtp-server.js';
import { startTelegramApi, type TestTelegramApi } from '../../support/telegram-api.js';
import { startTwilioApi, type TestTwilioApi } from '../../support/twilio-api.js';
import { startReceiver, type Receiver } from '../../webhooks/receiver.js';

export type Channel = 'email' | 'telegram' | 'sms';
export const CHANNELS: Channel[] = ['email', 'telegram', 'sms'];

export interface Sinks {
  smtp: TestSmtpServer;
  telegram: TestTelegramApi;
  twilio: TestTwilioApi;
  receiver: Receiver;
  /** The gateway settings that point every channel at these servers. */
  env: Record<string, string>;
  close(): Promise<void>;
}

export const TWILIO_FROM = '+15005550006';

export async function startSinks(options: { smtpUser?: string; smtpPassword?: string } = {}): Promise<Sinks> {
  const [smtp, telegram, twilio, receiver] = await Promise.all([
    startSmtpServer({ user: options.smtpUser, password: options.smtpPassword }),
    startTelegramApi(),
    startTwilioApi(),
    startReceiver(),
  ]);
  return {
    smtp,
    telegram,
    twilio,
    receiver,
    env: {
      SMTP_URL: smtp.url,
      EMAIL_FROM: 'Herald <notifications@herald.test>',
      TELEGRAM_BOT_TOKEN: telegram.token,
      TELEGRAM_API_URL: telegram.url,
      // Telegram's public bulk limit (30/s per bot) would make the run measure the token bucket.
      TELEGRAM_RATE_LIMIT: '5000',
      TWILIO_ACCOUNT_SID: twilio.accountSid,
      TWILIO_AUTH_TOKEN: twilio.authToken,
      TWILIO_FROM,
      TWILIO_API_URL: twilio.url,
    },
    async close() {
      await Promise.all([smtp.close(), telegram.close(), twilio.close(), receiver.close()]);
    },
  };
}

/** The subject every load notification carries: its sequence number is how Telegram and SMS arrivals are told apart. */
export const subjectFor = (seq: number) => `Reliability #${seq}`;
const SEQ = /Reliability #(\d+)\b/;

/** Counts, per notification, what reached the providers and the webhook receiver. */
export class Ledger {
  /** Accepted (202, queued) notifications: sequence number → id, and id → channel. */
  readonly idBySeq = new Map<number, string>();
  readonly channelById = new Map<string, Channel>();
  /** Sequence numbers sent in a request whose answer never came (timeout, reset): maybe accepted. */
  readonly unacknowledged = new Set<number>();

  /** Provider arrivals by sequence number (every channel), and email Message-IDs by sequence. */
  private readonly arrivals = new Map<number, number>();
  private readonly arrivalChannel = new Map<number, Channel>();
  private readonly emailIds = new Map<number, Set<string>>();
  private readonly unparsed: string[] = [];

  /** Webhook events: per notification id, per event type, the distinct event ids; and how often each event id came. */
  private readonly events = new Map<string, Map<string, Set<string>>>();
  private readonly eventIdCounts = new Map<string, number>();
  badSignatures = 0;
  webhookRequests = 0;

  constructor(
    private readonly sinks: Sinks,
    private readonly webhookSecret: () => string | undefined = () => undefined,
  ) {}

  accept(seq: number, id: string, channel: Channel): void {
    this.idBySeq.set(seq, id);
    this.channelById.set(id, channel);
  }

  private arrive(text: string, channel: Channel): number | undefined {
    const match = SEQ.exec(text);
    if (!match) {
      this.unparsed.push(`${channel}: ${text.slice(0, 80)}`);
      return undefined;
    }
    const seq = Number(match[1]);
    this.arrivals.set(seq, (this.arrivals.get(seq) ?? 0) + 1);
    this.arrivalChannel.set(seq, channel);
    return seq;
  }

  /** Moves everything the sinks received so far into the counters. */
  drain(): void {
    for (const mail of this.sinks.smtp.received.splice(0)) {
      const seq = this.arrive(mail.subject, 'email');
      const messageId = /^<([^@>]+)@/.exec(mail.headers['message-id'] ?? '')?.[1];
      if (seq !== undefined && messageId) {
        const ids = this.emailIds.get(seq) ?? new Set<string>();
        ids.add(messageId);
        this.emailIds.set(seq, ids);
      }
    }
    for (const request of this.sinks.telegram.received.splice(0)) {
      if (request.status === 200) this.arrive(String(request.body.text ?? ''), 'telegram');
    }
    for (const request of this.sinks.twilio.received.splice(0)) {
      if (request.status === 201) this.arrive(request.form.Body ?? '', 'sms');
    }
    const secret = this.webhookSecret();
    for (const request of this.sinks.receiver.requests.splice(0)) {
      this.webhookRequests += 1;
      const header = request.headers['x-service-signature'];
      // The signature is checked on arrival time's clock, with the SDK's default 5-minute tolerance.
      if (!secret || !verifyWebhookSignature(request.body, typeof header === 'string' ? header : undefined, secret)) {
        this.badSignatures += 1;
        continue;
      }
      const event = JSON.parse(request.body) as { id: string; type: string; data: { notification_id?: string } };
      this.eventIdCounts.set(event.id, (this.eventIdCounts.get(event.id) ?? 0) + 1);
      const id = event.data.notification_id;
      if (!id) continue;
      const byType = this.events.get(id) ?? new Map<string, Set<string>>();
      byType.set(event.type, (byType.get(event.type) ?? new Set<string>()).add(event.id));
      this.events.set(id, byType);
    }
  }

  /** How often the notification with sequence number `seq` reached its provider. */
  arrivalsOf(seq: number): number {
    this.drain();
    return this.arrivals.get(seq) ?? 0;
  }

  /** How many accepted notifications reached their provider at least once. */
  deliveredCount(): number {
    this.drain();
    let count = 0;
    for (const seq of this.idBySeq.keys()) if ((this.arrivals.get(seq) ?? 0) > 0) count += 1;
    return count;
  }

  /** How many accepted notifications have a signed `notification.delivered` event. */
  reportedCount(): number {
    this.drain();
    let count = 0;
    for (const id of this.channelById.keys()) if (this.events.get(id)?.get('notification.delivered')?.size) count += 1;
    return count;
  }

  /** The figures a run reports. */
  summary() {
    this.drain();
    let lost = 0;
    let duplicated = 0;
    let extraSends = 0;
    let wrongChannel = 0;
    let wrongMessageId = 0;
    let unreported = 0;
    let otherEvents = 0;
    for (const [seq, id] of this.idBySeq) {
      const count = this.arrivals.get(seq) ?? 0;
      if (count === 0) lost += 1;
      if (count > 1) {
        duplicated += 1;
        extraSends += count - 1;
      }
      const channel = this.channelById.get(id);
      if (count > 0 && this.arrivalChannel.get(seq) !== channel) wrongChannel += 1;
      if (channel === 'email' && count > 0) {
        const ids = this.emailIds.get(seq);
        if (!ids || ids.size !== 1 || !ids.has(id)) wrongMessageId += 1;
      }
      const events = this.events.get(id);
      if (!events?.get('notification.delivered')?.size) unreported += 1;
      for (const [type, ids] of events ?? []) if (type !== 'notification.delivered') otherEvents += ids.size;
    }
    let unexpected = 0;
    let unacknowledgedArrived = 0;
    for (const seq of this.arrivals.keys()) {
      if (this.idBySeq.has(seq)) continue;
      if (this.unacknowledged.has(seq)) unacknowledgedArrived += 1;
      else unexpected += 1;
    }
    let repeatedEvents = 0;
    for (const n of this.eventIdCounts.values()) repeatedEvents += n - 1;
    let duplicateDeliveredEvents = 0;
    for (const byType of this.events.values()) duplicateDeliveredEvents += Math.max(0, (byType.get('notification.delivered')?.size ?? 0) - 1);
    return {
      accepted: this.idBySeq.size,
      lost,
      duplicated,
      extraSends,
      wrongChannel,
      wrongMessageId,
      unexpected,
      unacknowledged: this.unacknowledged.size,
      unacknowledgedArrived,
      unparsed: this.unparsed.length,
      webhookRequests: this.webhookRequests,
      badSignatures: this.badSignatures,
      unreported,
      otherEvents,
      repeatedEvents,
      duplicateDeliveredEvents,
    };
  }
}
