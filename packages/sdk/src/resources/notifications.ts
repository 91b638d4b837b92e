import { PAGE } from '../answer-shape.js';
import { HeraldApiError, HeraldError, HeraldWaitTimeoutError } from '../errors.js';
import { eachDataItem } from '../paginate.js';
import type { ApiCall, RequestCore, RequestOptions } from '../request.js';

export type Category = 'defi' | 'governance' | 'system' | 'marketing' | 'security';
export type Priority = 'normal' | 'important' | 'critical';
export type Channel = 'email' | 'telegram' | 'sms';
/** `production` for a `hrld_live_` key, `sandbox` for a `hrld_test_` key. */
export type Environment = 'production' | 'sandbox';
/** Delivery status of a stored notification; the last four are final. */
export type NotificationStatus = 'queued' | 'sending' | 'delivered' | 'bounced' | 'failed' | 'opted_out';
/** What a send reported at once: `duplicate` = an idempotency key already used with the same payload. */
export type SubmissionStatus = 'queued' | 'opted_out' | 'duplicate' | 'failed';
export type ReceiptStatus = 'disabled' | 'pending' | 'confirmed' | 'failed';

/** Body of `POST /v1/notify`, and each entry of a bulk send. */
export interface NotificationParams {
  /** Solana wallet address (base58, 32 bytes); it must be registered with Herald. */
  wallet: string;
  /** Up to 998 characters; about 100 is advised. */
  subject: string;
  /** Markdown; the size limit depends on the tier. */
  body: string;
  category: Category;
  /** Default `normal`; `critical` falls back to SMS when the chosen channel fails or bounces. */
  priority?: Priority;
  /** A hint: used when the wallet can be reached on it. */
  preferredChannel?: Channel;
  /** Request an on-chain proof of delivery. */
  receipt?: boolean;
  /** Email template id (`tmpl_…`); Growth tier and above. */
  templateId?: string;
  templateVariables?: Record<string, unknown>;
  /** Up to 255 characters: the same key and payload within 24 h answer `duplicate` with the first id. */
  idempotencyKey?: string;
}

/** One element of `POST /v1/notify/bulk`'s `results`. */
export interface BulkSubmission {
  notificationId: string;
  status: SubmissionStatus;
  recipientRegistered: boolean;
  /** Null when nothing was queued for delivery. */
  estimatedDeliveryMs: number | null;
  deliveryChannel: Channel | null;
}

/** `POST /v1/notify`'s answer. */
export interface Submission extends BulkSubmission {
  environment: Environment;
}

export interface BulkResult {
  /** In the order of the notifications sent. */
  results: BulkSubmission[];
}

/** One delivery attempt of a notification. */
export interface NotificationAttempt {
  attempt: number;
  channel: Channel;
  /** `smtp`, `telegram`, `twilio` or `capture`. */
  provider: string;
  outcome: string;
  error: string | null;
  provider_response: string | null;
  duration_ms: number;
  created_at: string;
}

/** `GET /v1/notifications/:id`: the status record (snake_case, as the API sends it). */
export interface Notification {
  notification_id: string;
  wallet: string;
  subject: string;
  status: NotificationStatus;
  delivery_channel: Channel | null;
  /** ISO 8601 timestamps. */
  delivered_at: string | null;
  created_at: string;
  write_receipt: boolean;
  receipt_status: ReceiptStatus;
  receipt_tx: string | null;
  receipt_failure_reason: string | null;
  last_receipt_attempt_at: string | null;
  category: Category;
  priority: Priority;
  environment: Environment;
  preferred_channel: Channel | null;
  /** `sms` once a critical notification fell back to it. */
  fallback_channel: Channel | null;
  template_id: string | null;
  template_version: number | null;
  broadcast_id: string | null;
  schedule_id: string | null;
  /** The last delivery error. */
  error: string | null;
  receipt_requested_at: string | null;
  attempts: NotificationAttempt[];
}

/** An entry of `GET /v1/notifications`. */
export interface NotificationListItem {
  notification_id: string;
  wallet: string;
  subject: string;
  status: NotificationStatus;
  delivery_channel: Channel | null;
  receipt_status: ReceiptStatus;
  receipt_tx: string | null;
  created_at: string;
}

export interface NotificationList {
  data: NotificationListItem[];
  total: number;
  page: number;
}

export interface ListNotificationsParams {
  /** From 1; default 1. */
  page?: number;
  /** 1 to 100; default 20. */
  limit?: number;
  status?: NotificationStatus;
  wallet?: string;
}

/** Body of `POST /v1/preview`. */
export type PreviewParams = Pick<NotificationParams, 'wallet' | 'subject' | 'body' | 'category' | 'templateId' | 'templateVariables'>;

/** The message as each channel would carry it. */
export interface Preview {
  renderedHtml: string;
  telegramText: string;
  smsText: string;
  subject: string;
  sms: { encoding: string; segments: number; characters: number };
}

export interface WaitForDeliveryOptions {
  /** Give up after this long (default 60 000 ms), rejecting with HeraldWaitTimeoutError. */
  timeoutMs?: number;
  /** Between two reads of the record (default 1 000 ms; 0, negative or NaN is a RangeError). */
  intervalMs?: number;
  /** Stops waiting at once; the signal's reason is thrown. */
  signal?: AbortSignal;
}

/** `notifications.send`'s per-call options: the common ones plus the idempotency key. */
export interface SendOptions extends RequestOptions {
  /** The same as `params.idempotencyKey` (give one or the other): it goes in the body. */
  idempotencyKey?: string;
}

/** How long a read under way when a wait's `timeoutMs` passes may still take. */
const READ_GRACE_MS = 1000;

/** The record a waitForDelivery had last read when a read failed, by the error it then threw. */
const lastReads = new WeakMap<HeraldError, Notification>();

/**
 * The record as last read by the `waitForDelivery` that threw `error`: its `notification` for a
 * HeraldWaitTimeoutError; for a read that failed (a HeraldApiError or HeraldNetworkError: the
 * gateway became unreachable, the key was revoked…) the record an earlier read answered with.
 * Undefined when no read answered, or for an error from anything else.
 * @example catch (error) { const status = lastReadOf(error)?.status; }
 */
export function lastReadOf(error: unknown): Notification | undefined {
  if (error instanceof HeraldWaitTimeoutError) return error.notification;
  return error instanceof HeraldError ? lastReads.get(error) : undefined;
}

const isRateLimited = (error: unknown): error is HeraldApiError => error instanceof HeraldApiError && error.statusCode === 429;

/** Statuses a notification never leaves. */
export const FINAL_STATUSES: ReadonlySet<NotificationStatus> = new Set(['delivered', 'bounced', 'failed', 'opted_out']);

/** Sending notifications and following them to delivery. */
export class Notifications {
  constructor(private readonly core: RequestCore) {}

  /**
   * Queues one notification (202). An idempotency key, given in `params` or `options`, goes in the
   * body's `idempotencyKey` and makes the call safe to retry: every retry carries the same key, so
   * the gateway answers a repeat with `duplicate` and the first notification's id.
   * @example const { notificationId, status } = await herald.notifications.send({ wallet, subject: 'Hi', body: 'Hello', category: 'system', idempotencyKey: 'order-42' });
   */
  async send(params: NotificationParams, options: SendOptions = {}): Promise<Submission> {
    const { idempotencyKey: optionKey, ...requestOptions } = options;
    const key = params.idempotencyKey ?? optionKey;
    // An empty key (an unset environment variable) is a key given, not one left out.
    if (params.idempotencyKey !== undefined && optionKey !== undefined && params.idempotencyKey !== optionKey) {
      throw new TypeError('send: params.idempotencyKey and options.idempotencyKey differ; give one');
    }
    const body = key !== undefined ? { ...params, idempotencyKey: key } : params;
    return this.core.request({ method: 'POST', path: '/v1/notify', body, retrySafe: Boolean(key), answer: { notificationId: 'string', status: 'string' } }, requestOptions);
  }

  /**
   * Queues 1 to 100 notifications in one all-or-nothing request; results come back in input order.
   * When every notification has an `idempotencyKey` the call is retried like a GET on 5xx and timeouts.
   * @example const { results } = await herald.notifications.sendBulk(items.map((n, i) => ({ ...n, idempotencyKey: `run-7-${i}` })));
   */
  sendBulk(notifications: NotificationParams[], options?: RequestOptions): Promise<BulkResult> {
    const retrySafe = notifications.length > 0 && notifications.every((n) => Boolean(n.idempotencyKey));
    return this.core.request({ method: 'POST', path: '/v1/notify/bulk', body: { notifications }, retrySafe, answer: { results: 'objects' } }, options);
  }

  /**
   * The status record of one notification, with every delivery attempt; an unknown id throws
   * HeraldApiError 404 `NOTIFICATION_NOT_FOUND`.
   * @example const { status, delivery_channel } = await herald.notifications.get(notificationId);
   */
  get(id: string, options?: RequestOptions): Promise<Notification> {
    return this.read(id, options);
  }

  private read(id: string, options?: RequestOptions, onFailedAttempt?: ApiCall['onFailedAttempt']): Promise<Notification> {
    return this.core.request({ method: 'GET', path: `/v1/notifications/${encodeURIComponent(id)}`, answer: { notification_id: 'string', status: 'string', attempts: 'objects' }, ...(onFailedAttempt ? { onFailedAttempt } : {}) }, options);
  }

  /**
   * The protocol's notifications, newest first, optionally of one status or wallet.
   * @example const { data, total } = await herald.notifications.list({ status: 'failed', limit: 50 });
   */
  list(params: ListNotificationsParams = {}, options?: RequestOptions): Promise<NotificationList> {
    const { page, limit, status, wallet } = params;
    return this.core.request({ method: 'GET', path: '/v1/notifications', query: { page, limit, status, wallet }, answer: PAGE }, options);
  }

  /**
   * Every notification the filters match, newest first, each once, a page (`limit`, default 100)
   * fetched at a time as the loop reads; those sent while it runs are left out (see docs/sdk.md,
   * "Listing everything").
   * @example for await (const n of herald.notifications.listAll({ status: 'failed' })) console.log(n.notification_id);
   */
  listAll(params: Omit<ListNotificationsParams, 'page'> = {}, options?: RequestOptions): AsyncGenerator<NotificationListItem, void, undefined> {
    return eachDataItem((page, limit) => this.list({ ...params, page, limit }, options), (n) => n.notification_id, params.limit);
  }

  /**
   * Renders a notification for email, Telegram and SMS without sending it or counting it.
   * @example const { renderedHtml, smsText, sms } = await herald.notifications.preview({ wallet, subject, body, category: 'defi' });
   */
  preview(params: PreviewParams, options?: RequestOptions): Promise<Preview> {
    return this.core.request({ method: 'POST', path: '/v1/preview', body: params, answer: { renderedHtml: 'string', sms: 'object' } }, options);
  }

  /**
   * Reads the record every `intervalMs` until its status is final (`delivered`, `bounced`,
   * `failed` or `opted_out`) and resolves with it, whichever that is: check `status`. Rejects with
   * HeraldWaitTimeoutError after `timeoutMs`, carrying the last record read: a read still under
   * way then (its retries included) is given at most a second more, and a rate limit still in
   * force is sat out until then. A read that fails otherwise throws its error, from which
   * `lastReadOf` gives the record as last read.
   * @example const record = await herald.notifications.waitForDelivery(notificationId, { timeoutMs: 30_000 });
   */
  async waitForDelivery(id: string, wait: WaitForDeliveryOptions = {}, options: RequestOptions = {}): Promise<Notification> {
    const { timeoutMs = 60_000, intervalMs = 1000, signal = options.signal } = wait;
    // Infinity waits until the status is final.
    if (!(timeoutMs >= 0)) throw new RangeError(`timeoutMs must be a number of milliseconds ≥ 0, got ${timeoutMs}`);
    // 0, a negative number or NaN polled in a tight loop, spending the protocol's rate limit.
    if (!(Number.isFinite(intervalMs) && intervalMs > 0)) throw new RangeError(`intervalMs must be a number of milliseconds > 0, got ${intervalMs}`);
    const deadline = this.core.now() + timeoutMs;
    let last: Notification | undefined;
    // The rate limit's refusal, when it was the last answer the read under way (or just ended)
    // got: the cause of a timeout.
    let refused: HeraldApiError | undefined;
    const onFailedAttempt = (error: HeraldError) => void (refused = isRateLimited(error) ? error : undefined);
    const timedOut = () => new HeraldWaitTimeoutError(id, timeoutMs, last, refused && { cause: refused });
    for (;;) {
      const left = deadline - this.core.now();
      // The wait's own deadline ends a read under way, retries and all (a second's grace past it).
      const readDeadline = Number.isFinite(left) ? AbortSignal.timeout(Math.max(left, 0) + READ_GRACE_MS) : undefined;
      const readSignal = readDeadline && signal ? AbortSignal.any([signal, readDeadline]) : (readDeadline ?? signal);
      refused = undefined;
      try {
        last = await this.read(id, { ...options, signal: readSignal }, onFailedAttempt);
        refused = undefined;
      } catch (error) {
        // The time ran out on the read under way: `refused` is the rate limit's refusal when that
        // was the last answer the read got (it was sitting out the refusal between its own
        // retries, or its retry after it got no answer in time), and unset when it got none.
        if (readDeadline?.aborted && !signal?.aborted) throw timedOut();
        // Still rate-limited after the read's own retries (other calls of the protocol share the
        // limit): the wait sits it out rather than failing while the notification is on its way.
        if (!isRateLimited(error)) {
          if (last && error instanceof HeraldError) lastReads.set(error, last);
          throw error;
        }
        const rest = deadline - this.core.now();
        if (rest <= 0) throw timedOut();
        await this.core.wait(Math.min(Math.max((error.retryAfterSeconds ?? 0) * 1000, intervalMs), rest), signal);
        continue;
      }
      if (FINAL_STATUSES.has(last.status)) return last;
      const remaining = deadline - this.core.now();
      if (remaining <= 0) throw timedOut();
      await this.core.wait(Math.min(intervalMs, remaining), signal);
    }
  }
}
